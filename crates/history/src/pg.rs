//! A shared PostgreSQL store, through a connection the caller opens with dbdelta's own
//! PostgreSQL client: the table `dbdelta_history (id text primary key, doc text)` in the
//! URL's database.

use crate::point::Point;
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
    /// Connects (password from the URL, `PGPASSWORD` or `~/.pgpass`) and creates the table
    /// if needed.
    pub fn open(url: &str, connect: &PgConnector) -> Result<PgStore, HistoryError> {
        let spec = TargetSpec::parse(&format!("history={url}"))
            .map_err(|source| HistoryError::BadUrl { source })?;
        let shown = spec.redacted().trim_start_matches("history=").to_string();
        let err = |source: EngineError| HistoryError::Postgres {
            url: shown.clone(),
            source,
        };
        let mut conn = connect(&spec).map_err(err)?;
        conn.batch(
            "CREATE TABLE IF NOT EXISTS dbdelta_history (id text PRIMARY KEY, doc text NOT NULL)",
        )
        .map_err(err)?;
        Ok(PgStore { conn, url: shown })
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
                "INSERT INTO dbdelta_history (id, doc) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
            )
            .map_err(|e| self.err(e))?;
        let mut added = 0;
        self.conn.query("BEGIN").map_err(|e| self.err(e))?;
        for p in points {
            let doc = encode(&self.url, p)?;
            let id = p.id();
            let out = self
                .conn
                .execute(stmt, &[Value::Text(&id), Value::Text(&doc)]);
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

    fn describe(&self) -> String {
        self.url.clone()
    }
}
