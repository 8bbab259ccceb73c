//! Why a call into librocksdb failed, kept typed until it becomes an engine error.

use dbdelta_engine::{EngineError, ErrorKind};

/// A failure below the engine: loading the library, a NUL in a path, RocksDB's own error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RocksError {
    /// No candidate library loaded; one error per path tried.
    #[error("{}", join(.tried))]
    Load { tried: Vec<libloading::Error> },
    /// The library lacks a function of the C API dbdelta calls.
    #[error("rocksdb_{name}: {source}")]
    Symbol {
        name: &'static str,
        source: libloading::Error,
    },
    /// A text handed to the C API holds a NUL byte.
    #[error("{text:?} contains a NUL byte")]
    Nul { text: String },
    /// More keys than one multi-get takes.
    #[error("a multi-get takes at most {max} keys, got {n}")]
    TooManyKeys { max: usize, n: usize },
    /// An option needs a function the loaded library's C API lacks.
    #[error("{option} needs {symbol} in the C API, which {version} lacks ({since}); {fix}")]
    Unsupported {
        option: &'static str,
        symbol: &'static str,
        version: String,
        since: &'static str,
        fix: &'static str,
    },
    /// RocksDB's own error text (its `errptr`).
    #[error("{0}")]
    Rocks(String),
}

fn join(errors: &[libloading::Error]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A failed operation: a statement error of the step, with the RocksDB error as its source.
pub(crate) fn statement(e: RocksError) -> EngineError {
    EngineError::with_source(ErrorKind::Statement, e.to_string(), e)
}
