//! A connection to a ClickHouse server over HTTP: every statement is one `POST`, the
//! target's settings and the connection's `SET`s travel as URL parameters.

use crate::http::{push_query_value, HttpConn, HttpTarget, Response};
use crate::{sql, tsv};
use dbdelta_engine::{
    text, ConnectOptions, Connection, Dialect, EngineError, Op, Outcome, Rows, SessionParts,
    StatementTexts, StmtId, TableSize, Value,
};
use std::time::Duration;

/// What every connection of one server target shares.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// Host, port and credentials.
    pub(crate) http: HttpTarget,
    /// The database statements run in (`database=` on every request).
    pub(crate) database: String,
    /// Settings sent with every request (the target's parameters).
    pub(crate) settings: Vec<(String, String)>,
    /// Limit on connecting.
    pub(crate) connect_timeout: Duration,
}

/// One HTTP connection (one worker).
pub struct HttpConnection {
    endpoint: Endpoint,
    http: HttpConn,
    /// `SET`s of this connection, sent with each later request.
    session: Vec<(String, String)>,
    /// `/?database=…&setting=…`, rebuilt when a `SET` changes it.
    path: String,
    texts: StatementTexts,
    sql: String,
    body: Vec<u8>,
    scratch: Vec<u8>,
    /// Most bytes of a result held in memory ([`HELD_BODY_LIMIT`], less for the admin
    /// connection of a target's start).
    held_limit: u64,
}

impl std::fmt::Debug for HttpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConnection")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl HttpConnection {
    /// Opens a connection and checks that the server answers.
    pub(crate) fn open(endpoint: &Endpoint, opts: &ConnectOptions) -> Result<Self, EngineError> {
        let http = HttpConn::new(
            endpoint.http.clone(),
            opts.source,
            opts.timeout.unwrap_or(endpoint.connect_timeout),
            opts.io_timeout,
        );
        let mut c = HttpConnection {
            endpoint: endpoint.clone(),
            http,
            session: Vec::new(),
            path: String::new(),
            texts: StatementTexts::default(),
            sql: String::new(),
            body: Vec::new(),
            scratch: Vec::new(),
            held_limit: HELD_BODY_LIMIT,
        };
        c.rebuild_path();
        c.http.connect()?;
        Ok(c)
    }

    /// A connection without a database (to create it) whose every read and write is
    /// bounded by the endpoint's connect timeout: a port that accepts and never answers
    /// fails the target's start instead of hanging it.
    pub(crate) fn open_without_database(endpoint: &Endpoint) -> Result<Self, EngineError> {
        let mut e = endpoint.clone();
        e.database.clear();
        let opts = ConnectOptions {
            io_timeout: Some(endpoint.connect_timeout),
            ..ConnectOptions::default()
        };
        let mut c = Self::open(&e, &opts)?;
        // Its answers (a version, a count, a setting) are a few bytes.
        c.held_limit = ADMIN_BODY_LIMIT;
        Ok(c)
    }

    fn rebuild_path(&mut self) {
        let mut p = String::from("/?");
        if !self.endpoint.database.is_empty() {
            p.push_str("database=");
            push_query_value(&mut p, &self.endpoint.database);
        }
        for (k, v) in self.endpoint.settings.iter().chain(&self.session) {
            if p.len() > 2 {
                p.push('&');
            }
            push_query_value(&mut p, k);
            p.push('=');
            push_query_value(&mut p, v);
        }
        self.path = p;
    }

    /// Runs `sql`, handing at most `limit` bytes of result body to `sink`; errors carry the
    /// server's code.
    fn send(
        &mut self,
        sql: &str,
        limit: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<Response, EngineError> {
        let r = self.http.post(&self.path, sql.as_bytes(), limit, sink)?;
        if r.status == 200 {
            return Ok(r);
        }
        let target = &self.endpoint.http.target;
        Err(match sql::parse_exception(&r.error_body) {
            Some((code, msg)) => sql::server_error(target, code, &msg),
            None => {
                let mut e = EngineError::statement(format!(
                    "target '{target}': HTTP {} from ClickHouse: {}",
                    r.status,
                    r.error_body.trim()
                ));
                if let Some(code) = r.exception_code {
                    e = e.with_code(format!("ClickHouse {code}"));
                }
                if r.status == 401 || r.status == 403 {
                    e.kind = dbdelta_engine::ErrorKind::Config;
                    e.message.push_str(
                        " (check the user and password of the target URL, clickhouse://user:password@host:port)",
                    );
                }
                e
            }
        })
    }

    /// Handles a `SET` (kept for the connection's later requests) or a `USE` (the database
    /// of later requests); the server checks the change at once, and a refused one is
    /// undone. `None` when `sql` is neither.
    fn session_statement(&mut self, sql: &str) -> Option<Result<(), EngineError>> {
        let (session, database) = (self.session.clone(), self.endpoint.database.clone());
        if let Some(set) = sql::parse_set(sql) {
            let settings = match set {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            };
            for (k, v) in settings {
                self.session.retain(|(n, _)| *n != k);
                self.session.push((k, v));
            }
        } else if let Some(db) = sql::parse_use(sql) {
            self.endpoint.database = db;
        } else {
            return None;
        }
        self.rebuild_path();
        let checked = self
            .send("SELECT 1", PROBE_BODY_LIMIT, &mut |_| {})
            .map(|_| ());
        if checked.is_err() {
            self.session = session;
            self.endpoint.database = database;
            self.rebuild_path();
        }
        Some(checked)
    }

    /// Runs `sql` and keeps the whole body in `self.body`.
    fn fetch(&mut self, sql: &str) -> Result<Response, EngineError> {
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let limit = self.held_limit;
        let r = self.send(sql, limit, &mut |p| body.extend_from_slice(p));
        self.body = body;
        let r = r?;
        self.check_trailing(&self.body)?;
        Ok(r)
    }

    fn check_trailing(&self, tail: &[u8]) -> Result<(), EngineError> {
        match sql::trailing_exception(tail) {
            Some((code, msg)) => Err(sql::server_error(&self.endpoint.http.target, code, &msg)),
            None => Ok(()),
        }
    }
}

/// Most bytes of a result held in memory (`run_rows`, `query_scalar`: catalog queries,
/// checks, the values a step reads back), far above what any of them returns.
const HELD_BODY_LIMIT: u64 = 256 * 1024 * 1024;
/// Most bytes of a result counted as it streams (`query`, `execute`): a query that returns
/// more is no benchmark answer, and an endless body must end.
const STREAMED_BODY_LIMIT: u64 = 4 * 1024 * 1024 * 1024;
/// Most bytes of a result held by the admin connection that starts a target.
const ADMIN_BODY_LIMIT: u64 = 1024 * 1024;
/// Most bytes of the answer to the `SELECT 1` that checks a session setting.
const PROBE_BODY_LIMIT: u64 = 64 * 1024;

/// Bytes of the end of a streamed body kept to find an exception written after the rows.
const TAIL: usize = 64 * 1024;

impl Connection for HttpConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Clickhouse
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        Ok(self.texts.add(sql))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        let mut sql = std::mem::take(&mut self.sql);
        let r = text::interpolate(self.texts.get(stmt)?, params, Dialect::Clickhouse, &mut sql)
            .and_then(|_| self.query(&sql));
        self.sql = sql;
        r
    }

    /// Runs `sql` and reads the whole result, counting its rows without keeping them.
    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        if let Some(done) = self.session_statement(sql) {
            return done.map(|_| Outcome::default());
        }
        let mut rows = 0u64;
        let mut bytes = 0u64;
        let mut tail = std::mem::take(&mut self.scratch);
        tail.clear();
        let r = self.send(sql, STREAMED_BODY_LIMIT, &mut |p| {
            rows += p.iter().filter(|b| **b == b'\n').count() as u64;
            bytes += p.len() as u64;
            if p.len() >= TAIL {
                tail.clear();
                tail.extend_from_slice(&p[p.len() - TAIL..]);
            } else {
                if tail.len() + p.len() > 2 * TAIL {
                    tail.drain(..tail.len() + p.len() - TAIL);
                }
                tail.extend_from_slice(p);
            }
        });
        let checked = r.and_then(|r| self.check_trailing(&tail).map(|_| r));
        self.scratch = tail;
        let r = checked?;
        Ok(Outcome {
            rows,
            affected: r.written_rows.unwrap_or(0),
            // An empty result set sends no bytes: tell it by the statement.
            has_result: bytes > 0 || sql::starts_with_word(sql, sql::RESULT_WORDS),
        })
    }

    fn batch(&mut self, script: &str) -> Result<(), EngineError> {
        for stmt in sql::split_statements(script) {
            self.query(stmt)?;
        }
        Ok(())
    }

    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        let mut rows = Rows::new();
        self.run_rows(&Op::Query(sql), &mut rows)?;
        Ok(rows.get(0, 0).map(str::to_string))
    }

    fn rollback(&mut self) -> Result<(), EngineError> {
        // ClickHouse has no transactions to roll back.
        Ok(())
    }

    fn run_rows(&mut self, op: &Op<'_>, rows: &mut Rows) -> Result<Outcome, EngineError> {
        rows.clear();
        let sql = match op {
            Op::Query(sql) => *sql,
            Op::Execute { stmt, params } => {
                let mut sql = String::new();
                text::interpolate(
                    self.texts.get(*stmt)?,
                    params,
                    Dialect::Clickhouse,
                    &mut sql,
                )?;
                return self.run_rows(&Op::Query(&sql), rows);
            }
            Op::Kv(kv) => {
                return Err(EngineError::unsupported(
                    dbdelta_engine::Family::KeyValue,
                    kv.kind.name(),
                ))
            }
        };
        if let Some(done) = self.session_statement(sql) {
            return done.map(|_| Outcome::default());
        }
        let r = self.fetch(sql)?;
        let n = tsv::push_rows(&self.body, rows, &mut self.scratch);
        Ok(Outcome {
            rows: n,
            affected: r.written_rows.unwrap_or(0),
            has_result: !self.body.is_empty() || sql::starts_with_word(sql, sql::RESULT_WORDS),
        })
    }

    fn table_size(&mut self, table: &str) -> Result<Option<TableSize>, EngineError> {
        let database = self.endpoint.database.clone();
        let (db, t) = sql::qualified(table, &database);
        let mut rows = Rows::new();
        self.run_rows(&Op::Query(&sql::parts_query(db, t)), &mut rows)?;
        let parts = [rows.get(0, 0), rows.get(0, 1), rows.get(0, 2)].map(|v| v.map(str::to_string));
        let engine = self.query_scalar(&sql::engine_query(db, t))?;
        sql::table_size(
            db,
            t,
            [
                parts[0].as_deref(),
                parts[1].as_deref(),
                parts[2].as_deref(),
            ],
            engine.as_deref(),
        )
    }

    fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>> {
        Err(self)
    }
}
