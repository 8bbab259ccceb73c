//! The store seam and how a `--store` value picks one.

use crate::point::Point;
use std::path::PathBuf;

/// Why the history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The SQLite store failed.
    #[error("history store {path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// The cause.
        source: rusqlite::Error,
    },
    /// The PostgreSQL store failed.
    #[error("history store {url}: {message}")]
    Postgres {
        /// The URL with its password redacted.
        url: String,
        /// The cause.
        message: String,
    },
    /// A stored point could not be decoded.
    #[error("history store {store}: a stored point is unreadable ({source})")]
    Decode {
        /// The store.
        store: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// No user data directory to hold the default store.
    #[error("no data directory for the results history: set $DBDELTA_STORE or $HOME, or give --store PATH")]
    NoDataDir,
}

/// A results history.
pub trait Store {
    /// Adds points; points already stored (same [`Point::id`]) are kept, not duplicated.
    /// Returns how many were new.
    fn add(&mut self, points: &[Point]) -> Result<usize, HistoryError>;

    /// Every stored point.
    fn points(&mut self) -> Result<Vec<Point>, HistoryError>;

    /// Where the store is, for messages (passwords redacted).
    fn describe(&self) -> String;
}

/// `$XDG_DATA_HOME/dbdelta/history.sqlite`, else `$HOME/.local/share/dbdelta/history.sqlite`.
pub fn default_store_path() -> Result<PathBuf, HistoryError> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let base = match env("XDG_DATA_HOME") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env("HOME").ok_or(HistoryError::NoDataDir)?).join(".local/share"),
    };
    Ok(base.join("dbdelta").join("history.sqlite"))
}

/// Opens a store: `postgres://…` or `postgresql://…` is a PostgreSQL database (the table
/// `dbdelta_history` is created on first use); anything else is a SQLite file path (created
/// with its directory).
pub fn open_store(spec: &str) -> Result<Box<dyn Store>, HistoryError> {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        Ok(Box::new(crate::pg::PgStore::open(spec)?))
    } else {
        Ok(Box::new(crate::sqlite::SqliteStore::open(
            std::path::Path::new(spec),
        )?))
    }
}
