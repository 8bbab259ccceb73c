//! PostgreSQL's frontend/backend protocol version 3.0 as bytes, without I/O (the layout of
//! `postgres-protocol`): [`frontend`] appends one message per function to a buffer the caller
//! sends; [`backend`] frames and parses the server's messages from bytes the caller read.
//! Message layouts follow PostgreSQL's protocol docs, "Message Formats".

pub mod backend;
pub mod frontend;

/// Bytes that cannot be written as, or read as, a protocol message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// A string sent as a NUL-terminated field contains a NUL byte itself.
    #[error("string contains embedded null")]
    EmbeddedNul,
    /// A backend message header claims a length outside 4 ..= [`backend::MAX_MESSAGE`].
    #[error("message '{}' claims length {len}", char::from(*tag))]
    Length {
        /// The message type byte.
        tag: u8,
        /// The length the header claims (it counts itself, not the type byte).
        len: usize,
    },
    /// A backend message too short for, or inconsistent with, its own format.
    #[error("{0}")]
    Malformed(&'static str),
}

/// Backend messages as a server writes them, for the tests of the layers that read them.
#[cfg(test)]
pub(crate) mod server {
    /// A whole message: type byte, length, body.
    pub(crate) fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    /// A whole DataRow of one text column.
    pub(crate) fn one_column_row(value: &str) -> Vec<u8> {
        let mut b = 1i16.to_be_bytes().to_vec();
        b.extend_from_slice(&(value.len() as i32).to_be_bytes());
        b.extend_from_slice(value.as_bytes());
        message(b'D', &b)
    }

    /// The body of an ErrorResponse or NoticeResponse: `(type byte, cstring)*` then NUL.
    pub(crate) fn fields(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (k, v) in fields {
            b.push(*k);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }
}
