//! The default store: one SQLite file, one row per point (its id, its JSON document, and its
//! run, start, host and target as columns), at schema [`crate::SCHEMA_VERSION`].

use crate::point::Point;
use crate::prune::RunEntry;
use crate::schema::{self, Dialect};
use crate::store::{decode, encode, HistoryError, Store};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::Path;

/// A SQLite history file.
pub struct SqliteStore {
    conn: Connection,
    path: String,
}

impl SqliteStore {
    /// Opens (creating if needed) the file, and brings its schema to the current version.
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
        let mut store = SqliteStore { conn, path: shown };
        store.migrate()?;
        Ok(store)
    }

    fn err(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The version of an unversioned file: 1 when it has the history table, else 0 (new).
    fn found_version(conn: &Connection) -> rusqlite::Result<u32> {
        let versioned: bool = conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'dbdelta_schema_version'",
            [],
            |r| r.get(0),
        )?;
        if versioned {
            let v: Option<u32> = conn
                .query_row("SELECT max(version) FROM dbdelta_schema_version", [], |r| {
                    r.get(0)
                })
                .optional()?
                .flatten();
            if let Some(v) = v {
                return Ok(v);
            }
        }
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'dbdelta_history'",
            [],
            |r| r.get::<_, u32>(0).map(|n| n.min(1)),
        )
    }

    /// Applies the missing schema steps in one immediate transaction (a second process
    /// opening the file at the same time waits, then finds the schema current).
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let found = Self::found_version(&tx).map_err(err)?;
        if found > schema::CURRENT {
            return Err(HistoryError::NewerSchema {
                store: path.clone(),
                found,
                supported: schema::CURRENT,
            });
        }
        if found < schema::CURRENT {
            for sql in schema::migration(found, Dialect::Sqlite) {
                tx.execute_batch(&sql).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }
}

impl Store for SqliteStore {
    fn add(&mut self, points: &[Point]) -> Result<usize, HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare(
                    "INSERT INTO dbdelta_history (id, doc, run_id, run_started, host, target) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO NOTHING",
                )
                .map_err(err)?;
            for p in points {
                let doc = encode(&path, p)?;
                added += stmt
                    .execute(params![
                        p.id(),
                        doc,
                        p.run_id,
                        p.run_started,
                        p.host,
                        p.target
                    ])
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
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

    fn runs(&mut self) -> Result<Vec<RunEntry>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT run_started, run_id, target, host, count(*) FROM dbdelta_history \
                 GROUP BY run_started, run_id, target, host ORDER BY run_started, run_id, target, host",
            )
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| {
            Ok(RunEntry {
                run_started: r.get(0)?,
                run_id: r.get(1)?,
                target: r.get(2)?,
                host: r.get(3)?,
                points: r.get(4)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| HistoryError::Sqlite {
            path: self.path.clone(),
            source: e,
        })
    }

    fn remove(&mut self, runs: &[RunEntry]) -> Result<usize, HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        let mut removed = 0;
        {
            let mut stmt = tx
                .prepare("DELETE FROM dbdelta_history WHERE run_id = ?1 AND target = ?2")
                .map_err(err)?;
            for r in runs {
                removed += stmt.execute(params![r.run_id, r.target]).map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(removed)
    }

    fn schema_version(&mut self) -> Result<u32, HistoryError> {
        Self::found_version(&self.conn).map_err(|e| self.err(e))
    }

    fn describe(&self) -> String {
        self.path.clone()
    }
}
