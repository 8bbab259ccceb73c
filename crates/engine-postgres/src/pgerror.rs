//! Server errors (ErrorResponse) and their classification for the runner.

use crate::wire::take_cstr;
use dbdelta_engine::{EngineError, ErrorKind};
use std::io;

/// The fields of an ErrorResponse that dbdelta reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServerError {
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
    pub(crate) fn parse(mut body: &[u8]) -> ServerError {
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
    pub(crate) fn is_fatal(&self) -> bool {
        self.severity == "FATAL" || self.severity == "PANIC"
    }

    /// How the runner treats this error. sysbench ignores exactly 40P01, 40001 and 23505
    /// on PostgreSQL, so those are retryable.
    pub(crate) fn kind(&self) -> ErrorKind {
        match self.code.as_str() {
            "40P01" | "40001" | "23505" => ErrorKind::Retryable,
            "28P01" | "28000" | "3D000" => ErrorKind::Config,
            c if c.starts_with("08") || c.starts_with("57P") => ErrorKind::Connection,
            _ if self.is_fatal() => ErrorKind::Connection,
            _ => ErrorKind::Statement,
        }
    }

    /// `message (SQLSTATE xxxxx)` plus the detail, for error texts.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{} (SQLSTATE {})", self.message, self.code);
        if let Some(d) = &self.detail {
            s.push_str(": ");
            s.push_str(d);
        }
        s
    }

    /// The engine error for a failed statement.
    pub(crate) fn into_engine_error(self) -> EngineError {
        EngineError::new(self.kind(), format!("postgres: {}", self.describe()))
            .with_code(format!("SQLSTATE {}", self.code))
    }
}

/// An I/O failure on the connection: the connection is gone.
/// A socket timeout (the bound on blocking reads and writes: connect, statement timeout) is
/// a timeout, not a lost connection: the server stalled.
pub(crate) fn io_error(what: &str, e: io::Error) -> EngineError {
    if dbdelta_engine::net::is_timeout(&e) {
        return EngineError::new(
            ErrorKind::Timeout,
            format!(
                "timeout: postgres connection {what}: no answer within the connection's time limit (the server stalled)"
            ),
        );
    }
    EngineError::connection(format!("postgres connection {what}: {e}"))
}

/// A message the protocol does not allow at this point.
pub(crate) fn protocol_error(what: &str) -> EngineError {
    EngineError::connection(format!("postgres protocol error: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (k, v) in fields {
            b.push(*k);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }

    #[test]
    fn a_socket_timeout_is_a_timeout() {
        let e = io_error("read", io::Error::from(io::ErrorKind::WouldBlock));
        assert_eq!(e.kind, ErrorKind::Timeout);
        assert!(e
            .to_string()
            .starts_with("timeout: postgres connection read"));
        let e = io_error("read", io::Error::from(io::ErrorKind::ConnectionReset));
        assert_eq!(e.kind, ErrorKind::Connection);
    }

    #[test]
    fn parse_and_classify() {
        let e = ServerError::parse(&body(&[
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "23505"),
            (
                b'M',
                "duplicate key value violates unique constraint \"t_pkey\"",
            ),
            (b'D', "Key (id)=(1) already exists."),
        ]));
        assert_eq!(e.code, "23505");
        assert_eq!(e.kind(), ErrorKind::Retryable);
        assert!(e.describe().contains("already exists"));
        let k = |code: &str, sev: &str| {
            ServerError::parse(&body(&[(b'V', sev), (b'C', code), (b'M', "m")])).kind()
        };
        assert_eq!(k("40P01", "ERROR"), ErrorKind::Retryable);
        assert_eq!(k("40001", "ERROR"), ErrorKind::Retryable);
        assert_eq!(k("08006", "ERROR"), ErrorKind::Connection);
        assert_eq!(k("57P01", "FATAL"), ErrorKind::Connection);
        assert_eq!(k("28P01", "FATAL"), ErrorKind::Config);
        assert_eq!(k("3D000", "FATAL"), ErrorKind::Config);
        assert_eq!(k("42601", "ERROR"), ErrorKind::Statement);
        assert_eq!(k("XX000", "FATAL"), ErrorKind::Connection);
    }
}
