//! The store seam: what a results history does, and why it can fail.

use crate::point::Point;
use crate::prune::RunEntry;
use dbdelta_engine::EngineError;
use dbdelta_model::TargetError;

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
    /// A `--store postgres://…` value that is not a PostgreSQL URL.
    #[error("history store --store: {source}; write postgres://user@host:port/database")]
    BadUrl {
        /// Why the URL was refused.
        source: TargetError,
    },
    /// The PostgreSQL store failed.
    #[error("history store {url}: {source}")]
    Postgres {
        /// The URL with its password redacted.
        url: String,
        /// The cause.
        source: EngineError,
    },
    /// A stored point could not be decoded.
    #[error("history store {store}: a stored point is unreadable ({source})")]
    Decode {
        /// The store.
        store: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// The store was written by a newer dbdelta, whose schema this build does not know.
    #[error("history store {store}: schema version {found} is newer than this dbdelta's ({supported}); use a newer dbdelta or another --store")]
    NewerSchema {
        /// The store.
        store: String,
        /// Its schema version.
        found: u32,
        /// The newest this build knows.
        supported: u32,
    },
    /// The store's answer to a listing could not be read.
    #[error("history store {store}: unreadable listing ({source})")]
    Listing {
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

    /// Every (run, target) the store holds, with its start, host and point count, ordered by
    /// start then run then target.
    fn runs(&mut self) -> Result<Vec<RunEntry>, HistoryError>;

    /// Removes every point of the given (run, target) pairs in one transaction; returns how
    /// many points went.
    fn remove(&mut self, runs: &[RunEntry]) -> Result<usize, HistoryError>;

    /// The schema version the store is at (after opening: [`crate::SCHEMA_VERSION`]).
    fn schema_version(&mut self) -> Result<u32, HistoryError>;

    /// Where the store is, for messages (passwords redacted).
    fn describe(&self) -> String;
}

/// A point as the JSON document every store keeps.
pub(crate) fn encode(store: &str, point: &Point) -> Result<String, HistoryError> {
    serde_json::to_string(point).map_err(|source| HistoryError::Decode {
        store: store.to_string(),
        source,
    })
}

/// The points of stored JSON documents.
pub(crate) fn decode<'a>(
    store: &str,
    docs: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Point>, HistoryError> {
    docs.into_iter()
        .map(|d| {
            serde_json::from_str(d).map_err(|source| HistoryError::Decode {
                store: store.to_string(),
                source,
            })
        })
        .collect()
}
