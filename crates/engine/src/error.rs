//! Engine errors, classified so the runner knows whether to retry, fail the step or stop.

use crate::family::Family;

/// The cause behind an [`EngineError`]: an I/O error, a driver's own error.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// How the runner should treat an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Deadlock, lock wait timeout, serialization failure, busy, duplicate key: roll back,
    /// count and retry the event (sysbench's ignorable errors).
    Retryable,
    /// The statement failed; the step fails after too many of these.
    Statement,
    /// The connection or server is gone.
    Connection,
    /// Bad configuration of the target (wrong path, bad setting): exit code 2.
    Config,
    /// The engine does not serve the operation's family: the step is reported as not
    /// supported and the run goes on.
    Unsupported,
    /// The operation or connect exceeded its timeout (the server was asked to cancel).
    Timeout,
}

impl ErrorKind {
    /// Short name, the key errors without a server code are counted under.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Retryable => "retryable",
            ErrorKind::Statement => "statement",
            ErrorKind::Connection => "connection",
            ErrorKind::Config => "config",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Timeout => "timeout",
        }
    }
}

/// An error from an engine. Messages never contain passwords.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// Classification.
    pub kind: ErrorKind,
    /// Human-readable message naming what failed and, for config errors, the fix.
    pub message: String,
    /// The server's error code when it gave one (`SQLSTATE 40P01`, `MySQL 1213`,
    /// `SQLite 5`): results count errors by it.
    pub code: Option<String>,
    /// The lower-level error this one was made from, when there is one (an I/O error of the
    /// socket, the embedded library's own error); the message already says what it means.
    #[source]
    pub source: Option<Source>,
}

impl EngineError {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            message: message.into(),
            code: None,
            source: None,
        }
    }
    /// A new error of the given kind made from a lower-level `source`, which stays
    /// reachable through [`std::error::Error::source`].
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl Into<Source>,
    ) -> Self {
        EngineError {
            source: Some(source.into()),
            ..Self::new(kind, message)
        }
    }
    /// The same error, with the server's code.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }
    /// What results count this error under: its server code, else its kind.
    pub fn count_key(&self) -> String {
        self.code
            .clone()
            .unwrap_or_else(|| self.kind.name().to_string())
    }
    /// A configuration error (bad target or setting).
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }
    /// A statement error.
    pub fn statement(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Statement, message)
    }
    /// A lost connection or server.
    pub fn connection(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Connection, message)
    }
    /// An operation of a family the engine does not serve ("not supported by <engine>").
    pub fn unsupported(family: Family, what: &str) -> Self {
        Self::new(
            ErrorKind::Unsupported,
            format!(
                "{what}: {} operations are not supported by this engine",
                family.name()
            ),
        )
    }
    /// True when the runner should roll back and retry the event.
    pub fn is_retryable(&self) -> bool {
        self.kind == ErrorKind::Retryable
    }
    /// True for the failures a transaction may be re-run after, as pgbench's
    /// `--max-tries` does: serialization failures and deadlocks (PostgreSQL 40001 and
    /// 40P01; MySQL/MariaDB 1213 deadlock and 1020 record changed; SQLite busy/locked).
    pub fn is_serialization(&self) -> bool {
        self.kind == ErrorKind::Retryable
            && matches!(
                self.code.as_deref(),
                Some(
                    "SQLSTATE 40001"
                        | "SQLSTATE 40P01"
                        | "MySQL 1213"
                        | "MySQL 1020"
                        | "SQLite 5"
                        | "SQLite 6"
                        | "SQLite 517"
                )
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn source_is_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let e = EngineError::with_source(ErrorKind::Connection, "the server went away", io)
            .with_code("X1");
        assert_eq!(e.to_string(), "the server went away");
        assert_eq!(e.code.as_deref(), Some("X1"));
        assert_eq!(
            e.source().map(|s| s.to_string()).as_deref(),
            Some("reset by peer")
        );
        assert!(EngineError::config("bad").source().is_none());
    }
}
