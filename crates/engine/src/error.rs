//! Engine errors, classified so the runner knows whether to retry, fail the step or stop.

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
}

impl EngineError {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            message: message.into(),
            code: None,
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
    pub fn unsupported(family: crate::Family, what: &str) -> Self {
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
