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
