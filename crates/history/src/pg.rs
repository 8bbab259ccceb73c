//! A shared PostgreSQL store, through a connection the caller opens with dbdelta's own
//! PostgreSQL client: the table `dbdelta_history` (one row per point: its id, its JSON
//! document, and its run, start, host and target as columns) in the URL's database, at schema
//! [`crate::SCHEMA_VERSION`].

use crate::point::Point;
use crate::prune::RunEntry;
use crate::schema::{self, Dialect};
use crate::store::{decode, encode, HistoryError, Store};
use dbdelta_engine::{Connection, EngineError, Value};
use dbdelta_model::TargetSpec;

/// Opens a connection to the PostgreSQL server a `--store postgres://…` URL names (the
/// URL is given as a target spec named `history`). The binary passes its PostgreSQL
/// engine's, so this crate depends on the seam only.
pub type PgConnector = dyn Fn(&TargetSpec) -> Result<Box<dyn Connection>, EngineError>;

/// A PostgreSQL history.
pub struct PgStore {
    conn: Box<dyn Connection>,
    url: String,
}

impl PgStore {
    /// Connects (password from the URL, `PGPASSWORD` or `~/.pgpass`) and brings the schema
    /// to the current version (creating the table in a new database).
    pub fn open(url: &str, connect: &PgConnector) -> Result<PgStore, HistoryError> {
        let spec = TargetSpec::parse(&format!("history={url}"))
            .map_err(|source| HistoryError::BadUrl { source })?;
        let shown = spec.redacted().trim_start_matches("history=").to_string();
        let err = |source: EngineError| HistoryError::Postgres {
            url: shown.clone(),
            source,
        };
        let conn = connect(&spec).map_err(err)?;
        let mut store = PgStore { conn, url: shown };
        store.migrate()?;
        Ok(store)
    }

    /// The version: the version table's, else 1 when the history table exists, else 0.
    fn found_version(&mut self) -> Result<u32, HistoryError> {
        let count = |s: &mut Self, table: &str| -> Result<bool, HistoryError> {
            let n = s
                .conn
                .query_scalar(&format!(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '{table}'"
                ))
                .map_err(|e| s.err(e))?;
            Ok(n.is_some_and(|n| n.trim() != "0"))
        };
        if count(self, "dbdelta_schema_version")? {
            let v = self
                .conn
                .query_scalar("SELECT max(version) FROM dbdelta_schema_version")
                .map_err(|e| self.err(e))?;
            if let Some(v) = v.and_then(|v| v.trim().parse().ok()) {
                return Ok(v);
            }
        }
        Ok(u32::from(count(self, "dbdelta_history")?))
    }

    /// Applies the missing schema steps in one transaction, under an advisory lock so that
    /// two dbdelta processes opening a new or old store at once migrate it once.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        self.conn.query("BEGIN").map_err(|e| self.err(e))?;
        let out = self.migrate_in_transaction();
        match out {
            Ok(()) => self
                .conn
                .query("COMMIT")
                .map(|_| ())
                .map_err(|e| self.err(e)),
            Err(e) => {
                let _ = self.conn.rollback();
                Err(e)
            }
        }
    }

    fn migrate_in_transaction(&mut self) -> Result<(), HistoryError> {
        // The key is arbitrary and fixed: "dbdelta" in ASCII, as one bigint.
        self.conn
            .query("SELECT pg_advisory_xact_lock(28539957049369953)")
            .map_err(|e| self.err(e))?;
        let found = self.found_version()?;
        if found > schema::CURRENT {
            return Err(HistoryError::NewerSchema {
                store: self.url.clone(),
                found,
                supported: schema::CURRENT,
            });
        }
        if found < schema::CURRENT {
            for sql in schema::migration(found, Dialect::Postgres) {
                self.conn.batch(&sql).map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    fn err(&self, source: EngineError) -> HistoryError {
        HistoryError::Postgres {
            url: self.url.clone(),
            source,
        }
    }
}

impl Store for PgStore {
    fn add(&mut self, points: &[Point]) -> Result<usize, HistoryError> {
        let stmt = self
            .conn
            .prepare(
                "INSERT INTO dbdelta_history (id, doc, run_id, run_started, host, target) \
                 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            )
            .map_err(|e| self.err(e))?;
        let mut added = 0;
        self.conn.query("BEGIN").map_err(|e| self.err(e))?;
        for p in points {
            let doc = encode(&self.url, p)?;
            let id = p.id();
            let out = self.conn.execute(
                stmt,
                &[
                    Value::Text(&id),
                    Value::Text(&doc),
                    Value::Text(&p.run_id),
                    Value::Text(&p.run_started),
                    Value::Text(&p.host),
                    Value::Text(&p.target),
                ],
            );
            match out {
                Ok(o) => added += o.affected as usize,
                Err(e) => {
                    let _ = self.conn.rollback();
                    return Err(self.err(e));
                }
            }
        }
        self.conn.query("COMMIT").map_err(|e| self.err(e))?;
        Ok(added)
    }

    fn points(&mut self) -> Result<Vec<Point>, HistoryError> {
        // One text value holding every document, one per line (JSON has no raw newlines).
        let all = self
            .conn
            .query_scalar("SELECT string_agg(doc, chr(10) ORDER BY id) FROM dbdelta_history")
            .map_err(|e| self.err(e))?
            .unwrap_or_default();
        decode(&self.url, all.lines().filter(|l| !l.is_empty()))
    }

    fn runs(&mut self) -> Result<Vec<RunEntry>, HistoryError> {
        // One JSON array of [started, run, target, host, points] rows.
        let text = self
            .conn
            .query_scalar(
                "SELECT coalesce(json_agg(json_build_array(run_started, run_id, target, host, n) \
                 ORDER BY run_started, run_id, target, host)::text, '[]') FROM \
                 (SELECT run_started, run_id, target, host, count(*) AS n FROM dbdelta_history \
                 GROUP BY run_started, run_id, target, host) s",
            )
            .map_err(|e| self.err(e))?
            .unwrap_or_else(|| "[]".to_string());
        let rows: Vec<(String, String, String, String, usize)> = serde_json::from_str(&text)
            .map_err(|source| HistoryError::Listing {
                store: self.url.clone(),
                source,
            })?;
        Ok(rows
            .into_iter()
            .map(|(run_started, run_id, target, host, points)| RunEntry {
                run_started,
                run_id,
                target,
                host,
                points,
            })
            .collect())
    }

    fn remove(&mut self, runs: &[RunEntry]) -> Result<usize, HistoryError> {
        let stmt = self
            .conn
            .prepare("DELETE FROM dbdelta_history WHERE run_id = ? AND target = ?")
            .map_err(|e| self.err(e))?;
        let mut removed = 0;
        self.conn.query("BEGIN").map_err(|e| self.err(e))?;
        for r in runs {
            match self
                .conn
                .execute(stmt, &[Value::Text(&r.run_id), Value::Text(&r.target)])
            {
                Ok(o) => removed += o.affected as usize,
                Err(e) => {
                    let _ = self.conn.rollback();
                    return Err(self.err(e));
                }
            }
        }
        self.conn.query("COMMIT").map_err(|e| self.err(e))?;
        Ok(removed)
    }

    fn schema_version(&mut self) -> Result<u32, HistoryError> {
        self.found_version()
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}
