//! [`MysqlConnection`]: dbdelta's [`Connection`] over one protocol connection.

use crate::bulk;
use crate::client::{ConnectParams, RawConn};
use crate::errors::{connect_error, statement_error};
use crate::session::{check_params, KillQuery, MysqlSession, SessionStmt};
use dbdelta_engine::{
    text, ConnectOptions, Connection, Dialect, EngineError, Outcome, RowSource, StmtId, Value,
};
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
        self.connect_raw_with(&ConnectOptions::default())
    }

    /// [`Endpoint::connect_raw`] from a chosen source address, within a chosen timeout.
    pub(crate) fn connect_raw_with(&self, opts: &ConnectOptions) -> Result<RawConn, EngineError> {
        let timeout = opts.timeout.unwrap_or(CONNECT_TIMEOUT);
        RawConn::connect(&self.params, timeout, opts.source, opts.io_timeout).map_err(|e| {
            connect_error(
                e,
                &self.target,
                &self.params.addr.to_string(),
                &self.params.user,
            )
        })
    }
}

/// One client connection to MySQL or MariaDB, used by one worker thread.
pub struct MysqlConnection {
    raw: RawConn,
    stmts: Vec<SessionStmt>,
    prepared: bool,
    text: String,
    endpoint: Arc<Endpoint>,
}

impl MysqlConnection {
    /// Opens a connection; `prepared` selects server-side prepared statements.
    pub(crate) fn open(
        endpoint: Arc<Endpoint>,
        prepared: bool,
        opts: &ConnectOptions,
    ) -> Result<Self, EngineError> {
        Ok(MysqlConnection {
            raw: endpoint.connect_raw_with(opts)?,
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
        mut self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        let Some(socket) = self.raw.take_socket() else {
            return Err(self);
        };
        let cancel = KillQuery {
            endpoint: Arc::clone(&self.endpoint),
            connection_id: self.raw.connection_id,
        };
        let session = MysqlSession::new(std::mem::take(&mut self.stmts), false, Some(cancel));
        Ok(dbdelta_engine::SessionParts {
            socket,
            session: Box::new(session),
        })
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
        self.stmts.push(SessionStmt {
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
                check_params(server, params, &st.sql)?;
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
