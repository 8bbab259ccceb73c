//! The client's errors ([`ClientError`]) and their classification into dbdelta's
//! [`EngineError`] kinds. The bottom of the crate: every layer returns these, and this
//! module names no other.
//!
//! Messages come from the server or the socket and never contain the password: servers say
//! only "using password: YES".

use dbdelta_engine::{EngineError, ErrorKind};
use std::io;

/// A client-side failure, from the protocol layer up to the connection.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// Socket error or the server went away.
    #[error("{0}")]
    Io(#[source] io::Error),
    /// An ERR packet.
    #[error("MySQL error {code} ({state}): {message}")]
    Server {
        /// MySQL error number.
        code: u16,
        /// SQLSTATE (may be empty during the handshake).
        state: String,
        /// The server's message.
        message: String,
    },
    /// The server sent something this client does not understand.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A feature this client does not implement (auth plugin, LOAD DATA LOCAL).
    #[error("{0}")]
    Unsupported(String),
    /// TLS could not be set up: the server refuses it or its certificate is not trusted.
    #[error("{reason}")]
    Tls {
        /// What failed and what to check.
        reason: String,
        /// The TLS handshake's own error, when there was one.
        #[source]
        source: Option<io::Error>,
    },
    /// Connecting (TCP, greeting, TLS, authentication) took longer than allowed.
    #[error("{reason}")]
    Timeout {
        /// What timed out and what to raise.
        reason: String,
        /// The socket timeout.
        #[source]
        source: io::Error,
    },
}

/// A break of the packet framing by the server (a wrong sequence id, a payload over the
/// limit). The socket layer carries it as the inner error of an [`io::Error`] of kind
/// `InvalidData`; [`ClientError`] reports it as a protocol error, not as a lost connection.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Violation(pub String);

impl Violation {
    /// The violation as the I/O error the socket layer returns.
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }
}

impl From<io::Error> for ClientError {
    /// A break of the packet framing by the server ([`Violation`]) becomes a protocol
    /// error; other socket errors stay I/O errors.
    fn from(e: io::Error) -> Self {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<Violation>())
        {
            Some(v) => ClientError::Protocol(v.0.clone()),
            None => ClientError::Io(e),
        }
    }
}

/// "malformed `what` packet from the server".
pub(crate) fn malformed(what: &str) -> ClientError {
    ClientError::Protocol(format!("malformed {what} packet from the server"))
}

/// Deadlock, lock wait timeout and "record changed": sysbench ignores these (1213, 1205,
/// 1020); a duplicate key (1062) is retried like the other engines' unique violations.
const RETRYABLE: [u16; 4] = [1213, 1205, 1020, 1062];

/// Server-side codes that mean the connection is gone: server shutdown (1053), connection
/// killed (1927), query interrupted by a kill of the connection (1317 is kept a statement).
const CONNECTION_LOST: [u16; 2] = [1053, 1927];

/// The kind of a server error code.
pub(crate) fn kind_of(code: u16) -> ErrorKind {
    match code {
        c if RETRYABLE.contains(&c) => ErrorKind::Retryable,
        c if CONNECTION_LOST.contains(&c) => ErrorKind::Connection,
        // Client-library codes, for completeness when a proxy relays them.
        2006 | 2013 => ErrorKind::Connection,
        1045 | 1044 | 1049 | 1698 => ErrorKind::Config,
        _ => ErrorKind::Statement,
    }
}

/// Converts an error of a statement (`sql` is shown shortened) into an [`EngineError`].
pub(crate) fn statement_error(e: ClientError, sql: &str) -> EngineError {
    match e {
        ClientError::Server {
            code,
            state,
            message,
        } => EngineError::new(
            kind_of(code),
            format!(
                "MySQL error {code} ({state}): {message} [in: {}]",
                shorten(sql)
            ),
        )
        .with_code(format!("MySQL {code}")),
        other => connect_or_io(other, None),
    }
}

/// Converts an error while connecting to `target` at `addr` into an [`EngineError`].
pub(crate) fn connect_error(e: ClientError, target: &str, addr: &str, user: &str) -> EngineError {
    match e {
        ClientError::Server {
            code: code @ (1045 | 1698),
            message,
            ..
        } => EngineError::config(format!(
            "target '{target}': access denied for user '{user}' at {addr} (MySQL error {code}: {message}); check the user and the password (in the URL or MYSQL_PWD)"
        )),
        ClientError::Server {
            code: 1044,
            message,
            ..
        } => EngineError::config(format!(
            "target '{target}': user '{user}' may not use the database at {addr} (MySQL error 1044: {message}); grant it or name another database in the URL"
        )),
        ClientError::Server {
            code: 1049,
            message,
            ..
        } => EngineError::config(format!(
            "target '{target}': {message} at {addr}; create it (CREATE DATABASE) or name an existing one in the URL (mysql://user@host:port/db)"
        )),
        ClientError::Server {
            code,
            state,
            message,
        } => EngineError::new(
            kind_of(code),
            format!("target '{target}': connecting to {addr} failed: MySQL error {code} ({state}): {message}"),
        ),
        ClientError::Io(io) => EngineError::connection(format!(
            "target '{target}': cannot connect to MySQL/MariaDB at {addr}: {io}; is the server running and reachable?"
        )),
        ClientError::Tls { reason: m, .. } => EngineError::config(format!(
            "target '{target}': TLS with MySQL/MariaDB at {addr}: {m}"
        )),
        ClientError::Timeout { reason: m, .. } => EngineError::new(
            ErrorKind::Timeout,
            format!("target '{target}': MySQL/MariaDB at {addr}: {m}"),
        ),
        other => connect_or_io(other, Some(target)),
    }
}

fn connect_or_io(e: ClientError, target: Option<&str>) -> EngineError {
    let prefix = target
        .map(|t| format!("target '{t}': "))
        .unwrap_or_default();
    match e {
        ClientError::Io(io) => EngineError::connection(format!("{prefix}connection lost: {io}")),
        ClientError::Protocol(m) => EngineError::connection(format!("{prefix}protocol error: {m}")),
        ClientError::Unsupported(m) => EngineError::config(format!("{prefix}{m}")),
        ClientError::Tls { reason: m, .. } => EngineError::config(format!("{prefix}TLS: {m}")),
        ClientError::Timeout { reason: m, .. } => {
            EngineError::new(ErrorKind::Timeout, format!("{prefix}{m}"))
        }
        ClientError::Server {
            code,
            state,
            message,
        } => EngineError::new(
            kind_of(code),
            format!("{prefix}MySQL error {code} ({state}): {message}"),
        ),
    }
}

fn shorten(sql: &str) -> &str {
    match sql.char_indices().nth(200) {
        Some((i, _)) => &sql[..i],
        None => sql,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        for c in [1213, 1205, 1020, 1062] {
            assert_eq!(kind_of(c), ErrorKind::Retryable);
        }
        assert_eq!(kind_of(1045), ErrorKind::Config);
        assert_eq!(kind_of(1146), ErrorKind::Statement);
        assert_eq!(kind_of(2013), ErrorKind::Connection);
    }

    #[test]
    fn access_denied_is_config_without_password() {
        let e = connect_error(
            ClientError::Server {
                code: 1045,
                state: "28000".into(),
                message: "Access denied for user 'u'@'127.0.0.1' (using password: YES)".into(),
            },
            "prod",
            "127.0.0.1:3306",
            "u",
        );
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("access denied"), "{}", e.message);
    }

    #[test]
    fn long_sql_is_shortened() {
        let sql = "x".repeat(1000);
        let e = statement_error(
            ClientError::Server {
                code: 1064,
                state: "42000".into(),
                message: "syntax".into(),
            },
            &sql,
        );
        assert!(e.message.len() < 300);
        assert_eq!(e.kind, ErrorKind::Statement);
    }
}
