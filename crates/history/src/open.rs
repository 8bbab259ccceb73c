//! How a `--store` value picks a store, and where the default one lives.

use crate::pg::{PgConnector, PgStore};
use crate::sqlite::SqliteStore;
use crate::store::{HistoryError, Store};
use std::path::{Path, PathBuf};

/// `$XDG_DATA_HOME/dbdelta/history.sqlite`, else `$HOME/.local/share/dbdelta/history.sqlite`.
pub fn default_store_path() -> Result<PathBuf, HistoryError> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let base = match env("XDG_DATA_HOME") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env("HOME").ok_or(HistoryError::NoDataDir)?).join(".local/share"),
    };
    Ok(base.join("dbdelta").join("history.sqlite"))
}

/// Opens a store: `postgres://…` or `postgresql://…` is a PostgreSQL database, reached
/// through `connect_pg` (the caller's PostgreSQL client: the history names no engine), whose
/// table `dbdelta_history` is created on first use; anything else is a SQLite file path
/// (created with its directory).
pub fn open_store(spec: &str, connect_pg: &PgConnector) -> Result<Box<dyn Store>, HistoryError> {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        Ok(Box::new(PgStore::open(spec, connect_pg)?))
    } else {
        Ok(Box::new(SqliteStore::open(Path::new(spec))?))
    }
}
