//! [`MysqlConnection`]: dbdelta's [`Connection`] over one protocol connection.

use crate::bulk;
use crate::client::{ConnectParams, RawConn, ServerStmt};
use crate::errors::{connect_error, statement_error};
use dbdelta_engine::{text, Connection, Dialect, EngineError, Outcome, RowSource, StmtId, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long a connection attempt may take before it fails.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a connection needs to open siblings (bulk loads) and to name itself in errors.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// Target name, for messages.
    pub target: String,
    /// Address, user, password, database.
    pub params: ConnectParams,
}

impl Endpoint {
    /// Opens a protocol connection, with errors that name the target.
    pub(crate) fn connect_raw(&self) -> Result<RawConn, EngineError> {
        RawConn::connect(&self.params, CONNECT_TIMEOUT).map_err(|e| {
            connect_error(
                e,
                &self.target,
                &self.params.addr.to_string(),
                &self.params.user,
            )
        })
    }
}

/// One prepared statement: its text, and its server handle in prepared mode.
struct Stmt {
    sql: String,
    server: Option<ServerStmt>,
}

/// One client connection to MySQL or MariaDB, used by one worker thread.
pub struct MysqlConnection {
    raw: RawConn,
    stmts: Vec<Stmt>,
    prepared: bool,
    text: String,
    endpoint: Arc<Endpoint>,
}

impl MysqlConnection {
    /// Opens a connection; `prepared` selects server-side prepared statements.
    pub(crate) fn open(endpoint: Arc<Endpoint>, prepared: bool) -> Result<Self, EngineError> {
        Ok(MysqlConnection {
            raw: endpoint.connect_raw()?,
            stmts: Vec::new(),
            prepared,
            text: String::with_capacity(1024),
            endpoint,
        })
    }

    /// Runs a query and returns its rows as text (for settings and maintenance).
    pub(crate) fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        self.raw
            .query_rows(sql)
            .map_err(|e| statement_error(e, sql))
    }

    /// The endpoint this connection came from.
    pub(crate) fn endpoint(&self) -> &Arc<Endpoint> {
        &self.endpoint
    }
}

impl Connection for MysqlConnection {
    fn into_session(
        self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        Err(self)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        let server = if self.prepared {
            Some(self.raw.prepare(sql).map_err(|e| statement_error(e, sql))?)
        } else {
            None
        };
        self.stmts.push(Stmt {
            sql: sql.to_string(),
            server,
        });
        Ok(StmtId(self.stmts.len() as u32 - 1))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        let st = self
            .stmts
            .get_mut(stmt.0 as usize)
            .ok_or_else(|| EngineError::statement("unknown statement handle"))?;
        match &mut st.server {
            Some(server) => {
                if usize::from(server.params) != params.len() {
                    return Err(EngineError::statement(format!(
                        "statement has {} placeholders but got {} parameters: {}",
                        server.params,
                        params.len(),
                        st.sql
                    )));
                }
                self.raw
                    .execute(server, params)
                    .map_err(|e| statement_error(e, &st.sql))
            }
            None => {
                text::interpolate(&st.sql, params, Dialect::Mysql, &mut self.text)?;
                self.raw
                    .query(self.text.as_bytes())
                    .map_err(|e| statement_error(e, &self.text))
            }
        }
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        self.raw
            .query(sql.as_bytes())
            .map_err(|e| statement_error(e, sql))
    }

    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        let rows = self.rows(sql)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .flatten())
    }

    fn bulk_insert(&mut self, table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        bulk::bulk_insert(self, table, rows)
    }
}
