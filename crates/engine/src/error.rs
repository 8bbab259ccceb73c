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

/// An error from an engine. Messages never contain passwords.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// Classification.
    pub kind: ErrorKind,
    /// Human-readable message naming what failed and, for config errors, the fix.
    pub message: String,
}

impl EngineError {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            message: message.into(),
        }
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
}
