//! The default store: one SQLite file, one row per point (its id and its JSON).

use crate::point::Point;
use crate::store::{decode, encode, HistoryError, Store};
use rusqlite::{params, Connection};
use std::path::Path;

/// A SQLite history file.
pub struct SqliteStore {
    conn: Connection,
    path: String,
}

impl SqliteStore {
    /// Opens (creating if needed) the file and its table.
    pub fn open(path: &Path) -> Result<SqliteStore, HistoryError> {
        let shown = path.display().to_string();
        let err = |source| HistoryError::Sqlite {
            path: shown.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS dbdelta_history (id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
        )
        .map_err(err)?;
        Ok(SqliteStore { conn, path: shown })
    }

    fn err(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }
}

impl Store for SqliteStore {
    fn add(&mut self, points: &[Point]) -> Result<usize, HistoryError> {
        let tx = self.conn.transaction().map_err(|e| HistoryError::Sqlite {
            path: self.path.clone(),
            source: e,
        })?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare(
                    "INSERT INTO dbdelta_history (id, doc) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING",
                )
                .map_err(|e| HistoryError::Sqlite {
                    path: self.path.clone(),
                    source: e,
                })?;
            for p in points {
                let doc = encode(&self.path, p)?;
                added += stmt
                    .execute(params![p.id(), doc])
                    .map_err(|e| HistoryError::Sqlite {
                        path: self.path.clone(),
                        source: e,
                    })?;
            }
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(added)
    }

    fn points(&mut self) -> Result<Vec<Point>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare("SELECT doc FROM dbdelta_history ORDER BY id")
            .map_err(|e| self.err(e))?;
        let docs: Vec<String> = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| HistoryError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        decode(&self.path, docs.iter().map(String::as_str))
    }

    fn describe(&self) -> String {
        self.path.clone()
    }
}
