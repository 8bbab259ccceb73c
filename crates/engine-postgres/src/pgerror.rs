//! Errors of the connection as the runner sees them: a server's ErrorResponse classified
//! by SQLSTATE, a lost or stalled socket, a violation of the protocol.

use crate::proto::backend::ServerError;
use crate::proto::ProtoError;
use dbdelta_engine::{EngineError, ErrorKind};
use std::io;

/// How the runner treats a server's ErrorResponse, and its text in dbdelta's messages.
impl ServerError {
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
    if dbdelta_kit::net::is_timeout(&e) {
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

/// Bytes that are not a protocol message: the stream is unusable.
impl From<ProtoError> for EngineError {
    fn from(e: ProtoError) -> Self {
        protocol_error(&e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::server::fields as body;

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
