//! Why chDB could not be loaded, opened or read.

use std::path::PathBuf;

/// A failure of the embedded chDB below the engine: loading the library, claiming its
/// storage path, opening the database, reading an Arrow column.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChdbError {
    /// A lock of the loader's or the database's state was poisoned by a panic.
    #[error("{0} poisoned")]
    Poisoned(&'static str),
    /// A shared library could not be loaded.
    #[error("cannot load {}: {source}", .path.display())]
    Load {
        path: PathBuf,
        source: libloading::Error,
    },
    /// The library has no `AdbcDriverInit`.
    #[error("{} has no ADBC entry point: {source}", .path.display())]
    NoEntryPoint {
        path: PathBuf,
        source: libloading::Error,
    },
    /// `AdbcDriverInit` returned an error status.
    #[error("AdbcDriverInit failed ({status}): {message}")]
    Init { status: u8, message: String },
    /// The driver table lacks functions dbdelta calls.
    #[error("the ADBC driver left functions dbdelta needs unset")]
    Incomplete,
    /// Another storage path is open in this process.
    #[error(
        "chDB allows one storage path per process and {} is open (another chdb target); \
         give the chdb targets of one run the same directory (chdb:/path/dir) or run them in separate runs",
        .open.display()
    )]
    PathTaken { open: PathBuf },
    /// The storage path holds a NUL byte.
    #[error(transparent)]
    Path(#[from] std::ffi::NulError),
    /// The ADBC database calls failed; chDB's own message.
    #[error("{0}")]
    Adbc(String),
    /// A column of an Arrow type this reader does not know.
    #[error(
        "chDB returned a column of Arrow type '{format}', which dbdelta does not read; \
         select it as a SELECT (dbdelta then reads chDB's own text rendering) or cast it with toString()"
    )]
    ArrowType { format: String },
}
