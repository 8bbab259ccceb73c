//! Backend messages (server to client) from bytes: framing by the 5-byte header, and the
//! parsers of the message bodies dbdelta reads (PostgreSQL's protocol docs, "Message
//! Formats"). Nothing here reads a socket or allocates on the per-statement path.

use super::ProtoError;

/// The largest backend message accepted (the server's own limit for a field is 1 GiB);
/// a larger claimed length means a corrupt stream, not a big row.
pub const MAX_MESSAGE: usize = 1 << 30;

/// The length a message header claims (it counts itself, not the type byte), checked
/// against 4 ..= [`MAX_MESSAGE`] before anything is read or allocated for it.
#[inline]
pub fn header(head: &[u8; 5]) -> Result<(u8, usize), ProtoError> {
    let tag = head[0];
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if !(4..=MAX_MESSAGE).contains(&len) {
        return Err(ProtoError::Length { tag, len });
    }
    Ok((tag, len))
}

/// A whole message at the front of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framed<'a> {
    /// The message type byte (`D` DataRow, `Z` ReadyForQuery, …).
    pub tag: u8,
    /// The body, after the length.
    pub body: &'a [u8],
    /// Bytes the whole message takes in the input (type byte, length and body).
    pub len: usize,
}

/// Splits the next whole message off `input`; `None` when more bytes are needed.
#[inline]
pub fn frame(input: &[u8]) -> Result<Option<Framed<'_>>, ProtoError> {
    let Some(head) = input.first_chunk::<5>() else {
        return Ok(None);
    };
    let (tag, len) = header(head)?;
    Ok(input.get(5..1 + len).map(|body| Framed {
        tag,
        body,
        len: 1 + len,
    }))
}

/// Reads a big-endian i16 at `at`.
#[inline]
pub fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(*b.get(at..)?.first_chunk::<2>()?))
}

/// Reads a big-endian i32 at `at`.
#[inline]
pub fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(*b.get(at..)?.first_chunk::<4>()?))
}

/// Splits a NUL-terminated string off the front of `b`.
#[inline]
pub fn take_cstr(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let nul = b.iter().position(|c| *c == 0)?;
    Some((&b[..nul], &b[nul + 1..]))
}

/// Affected rows from a CommandComplete tag (`UPDATE 3`, `INSERT 0 1`, `DELETE 1`).
/// SELECT and utility commands report 0.
#[inline]
pub fn command_rows(tag: &[u8]) -> u64 {
    let tag = tag.strip_suffix(b"\0").unwrap_or(tag);
    let counted = [&b"INSERT "[..], b"UPDATE ", b"DELETE ", b"MERGE ", b"COPY "];
    if !counted.iter().any(|p| tag.starts_with(p)) {
        return 0;
    }
    let start = tag.iter().rposition(|b| *b == b' ').map_or(0, |i| i + 1);
    tag[start..]
        .iter()
        .try_fold(0u64, |acc, b| {
            b.is_ascii_digit()
                .then(|| acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0')))
        })
        .unwrap_or(0)
}

/// The columns of a DataRow, each `None` for NULL, in order.
#[derive(Debug, Clone)]
pub struct DataRow<'a> {
    rest: &'a [u8],
    left: usize,
}

/// Reads a DataRow body's column count; a negative one is malformed.
pub fn data_row(body: &[u8]) -> Result<DataRow<'_>, ProtoError> {
    let n = be_i16(body, 0).ok_or(ProtoError::Malformed("bad DataRow"))?;
    let left = usize::try_from(n).map_err(|_| ProtoError::Malformed("bad DataRow"))?;
    Ok(DataRow {
        rest: &body[2..],
        left,
    })
}

impl DataRow<'_> {
    /// Columns not yet read.
    pub fn remaining(&self) -> usize {
        self.left
    }
}

impl<'a> Iterator for DataRow<'a> {
    type Item = Result<Option<&'a [u8]>, ProtoError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let bad = || Some(Err(ProtoError::Malformed("bad DataRow")));
        let Some(len) = be_i32(self.rest, 0) else {
            self.left = 0;
            return bad();
        };
        self.rest = &self.rest[4..];
        if len < 0 {
            return Some(Ok(None));
        }
        let Some(value) = self.rest.get(..len as usize) else {
            self.left = 0;
            return bad();
        };
        self.rest = &self.rest[len as usize..];
        Some(Ok(Some(value)))
    }
}

/// The fields of an ErrorResponse (or NoticeResponse) that dbdelta reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerError {
    /// ERROR, FATAL, PANIC.
    pub severity: String,
    /// SQLSTATE.
    pub code: String,
    /// Primary message.
    pub message: String,
    /// Optional detail.
    pub detail: Option<String>,
}

impl ServerError {
    /// Parses an ErrorResponse (or NoticeResponse) body: `(type byte, cstring)*` then NUL.
    /// A truncated body keeps the fields read so far.
    pub fn parse(mut body: &[u8]) -> ServerError {
        let mut e = ServerError::default();
        while let Some((&kind, rest)) = body.split_first() {
            if kind == 0 {
                break;
            }
            let Some((value, rest)) = take_cstr(rest) else {
                break;
            };
            let value = String::from_utf8_lossy(value).into_owned();
            match kind {
                // 'V' is the non-localized severity; prefer it over 'S'.
                b'V' => e.severity = value,
                b'S' if e.severity.is_empty() => e.severity = value,
                b'C' => e.code = value,
                b'M' => e.message = value,
                b'D' => e.detail = Some(value),
                _ => {}
            }
            body = rest;
        }
        e
    }

    /// True when the server ends the session after this error.
    pub fn is_fatal(&self) -> bool {
        self.severity == "FATAL" || self.severity == "PANIC"
    }
}

/// An Authentication message: its request code (0 ok, 3 cleartext, 5 MD5, 10 SASL, 11
/// SASLContinue, 12 SASLFinal, …) and the data after it.
pub fn authentication(body: &[u8]) -> Result<(i32, &[u8]), ProtoError> {
    let code = be_i32(body, 0).ok_or(ProtoError::Malformed("short Authentication message"))?;
    Ok((code, &body[4..]))
}

/// The mechanism names of an AuthenticationSASL message's data, in the server's order.
pub fn sasl_mechanisms(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (m, r) = take_cstr(rest).filter(|(m, _)| !m.is_empty())?;
        rest = r;
        Some(m)
    })
}

/// BackendKeyData: the backend's process id and secret key (0 where the body is short).
pub fn backend_key_data(body: &[u8]) -> (i32, i32) {
    (be_i32(body, 0).unwrap_or(0), be_i32(body, 4).unwrap_or(0))
}

/// ParameterStatus: the parameter's name and value.
pub fn parameter_status(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let (name, rest) = take_cstr(body)?;
    let (value, _) = take_cstr(rest)?;
    Some((name, value))
}

/// ParameterDescription: how many parameters the statement takes (0 when malformed).
pub fn parameter_count(body: &[u8]) -> usize {
    be_i16(body, 0).unwrap_or(0).max(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::server::fields as error_body;

    #[test]
    fn command_tags() {
        assert_eq!(command_rows(b"UPDATE 3\0"), 3);
        assert_eq!(command_rows(b"INSERT 0 1\0"), 1);
        assert_eq!(command_rows(b"DELETE 12\0"), 12);
        assert_eq!(command_rows(b"COPY 10000\0"), 10000);
        assert_eq!(command_rows(b"SELECT 5\0"), 0);
        assert_eq!(command_rows(b"BEGIN\0"), 0);
        assert_eq!(command_rows(b"CREATE TABLE\0"), 0);
    }

    #[test]
    fn frames_need_the_whole_message_and_a_sane_length() {
        assert_eq!(frame(b"Z\0\0"), Ok(None));
        assert_eq!(frame(b"Z\0\0\0\x05"), Ok(None));
        let f = frame(b"Z\0\0\0\x05Irest").unwrap().unwrap();
        assert_eq!((f.tag, f.body, f.len), (b'Z', &b"I"[..], 6));
        assert_eq!(
            frame(b"D\0\0\0\x02"),
            Err(ProtoError::Length { tag: b'D', len: 2 })
        );
        let e = frame(b"D\xff\xff\xff\xff").unwrap_err();
        assert_eq!(e.to_string(), "message 'D' claims length 4294967295");
    }

    #[test]
    fn data_rows() {
        let mut b = 2i16.to_be_bytes().to_vec();
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"hi");
        b.extend_from_slice(&(-1i32).to_be_bytes());
        let cols: Result<Vec<_>, _> = data_row(&b).unwrap().collect();
        assert_eq!(cols.unwrap(), vec![Some(&b"hi"[..]), None]);
        let short: Result<Vec<_>, _> = data_row(&b[..5]).unwrap().collect();
        assert!(short.is_err());
        assert!(data_row(&(-1i16).to_be_bytes()).is_err());
        assert_eq!(data_row(&0i16.to_be_bytes()).unwrap().count(), 0);
    }

    #[test]
    fn error_fields() {
        let e = ServerError::parse(&error_body(&[
            (b'S', "FEHLER"),
            (b'V', "ERROR"),
            (b'C', "23505"),
            (b'M', "duplicate key"),
            (b'D', "Key (id)=(1) already exists."),
        ]));
        assert_eq!((e.severity.as_str(), e.code.as_str()), ("ERROR", "23505"));
        assert_eq!(e.detail.as_deref(), Some("Key (id)=(1) already exists."));
        assert!(!e.is_fatal());
    }

    #[test]
    fn startup_messages() {
        let mechs: Vec<_> = sasl_mechanisms(b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0").collect();
        assert_eq!(mechs, [&b"SCRAM-SHA-256-PLUS"[..], b"SCRAM-SHA-256"]);
        assert_eq!(
            parameter_status(b"server_version\x0015.4\0"),
            Some((&b"server_version"[..], &b"15.4"[..]))
        );
        assert_eq!(backend_key_data(&[0, 0, 0, 9, 0, 0, 0, 1]), (9, 1));
        assert_eq!(backend_key_data(&[0, 0]), (0, 0));
        assert_eq!(authentication(&[0, 0, 0, 5, 1]).unwrap(), (5, &[1u8][..]));
        assert!(authentication(&[0, 0]).is_err());
        assert_eq!(parameter_count(&[0, 2, 0, 0, 0, 23]), 2);
    }
}
