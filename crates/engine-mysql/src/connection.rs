//! [`MysqlConnection`]: dbdelta's [`Connection`] over one protocol connection, which
//! splits into a [`MysqlSession`] and its socket for event-loop drivers, with `KILL QUERY`
//! on a side connection as the session's canceller.

use crate::bulk;
use crate::client::RawConn;
use crate::endpoint::{Endpoint, CONNECT_TIMEOUT};
use crate::errors::statement_error;
use crate::session::{check_params, MysqlSession, SessionStmt};
use dbdelta_engine::{
    text, Canceller, ConnectOptions, Connection, Dialect, EngineError, Outcome, RowSource, StmtId,
    Value,
};
use std::sync::Arc;
use std::time::Duration;

/// Kills the running statement of one connection from a new connection with the same
/// parameters (the password stays a `Secret`: `Debug` shows it masked).
#[derive(Debug, Clone)]
pub(crate) struct KillQuery {
    pub endpoint: Arc<Endpoint>,
    pub connection_id: u32,
    /// Bounds the side connection's handshake and the `KILL QUERY` itself, so a stalled
    /// server does not keep the cancelling thread forever.
    pub timeout: Duration,
}

impl Canceller for KillQuery {
    fn cancel(&self) -> Result<(), EngineError> {
        let opts = ConnectOptions {
            source: None,
            timeout: Some(self.timeout),
            io_timeout: Some(self.timeout),
        };
        let mut raw = self.endpoint.connect_raw_with(&opts)?;
        let sql = format!("KILL QUERY {}", self.connection_id);
        raw.query(sql.as_bytes())
            .map(|_| ())
            .map_err(|e| statement_error(e, &sql))
    }
}

/// One client connection to MySQL or MariaDB, used by one worker thread.
pub struct MysqlConnection {
    raw: RawConn,
    stmts: Vec<SessionStmt>,
    prepared: bool,
    text: String,
    endpoint: Arc<Endpoint>,
    /// The connect timeout this connection was opened with; its canceller uses it too.
    timeout: Duration,
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
            timeout: opts.timeout.unwrap_or(CONNECT_TIMEOUT),
        })
    }

    /// Runs a query and returns its rows as text (for settings and maintenance).
    pub(crate) fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        self.raw
            .query_rows(sql)
            .map_err(|e| statement_error(e, sql))
    }

    /// Global variable values by name (only those that exist; NULL reads as empty).
    pub(crate) fn globals<S: AsRef<str>>(
        &mut self,
        names: &[S],
    ) -> Result<Vec<(String, String)>, EngineError> {
        let list = names
            .iter()
            .map(|n| format!("'{}'", n.as_ref()))
            .collect::<Vec<_>>()
            .join(",");
        let rows = self.rows(&format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
        ))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                Some((it.next()??, it.next()?.unwrap_or_default()))
            })
            .collect())
    }
}

impl MysqlConnection {
    /// Executes a statement (prepared, or interpolated text without prepared statements),
    /// keeping the rows' values in `keep` when given.
    fn execute_keeping(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        let st = self
            .stmts
            .get_mut(stmt.0 as usize)
            .ok_or_else(|| EngineError::statement("unknown statement handle"))?;
        match &mut st.server {
            Some(server) => {
                check_params(server, params, &st.sql)?;
                self.raw
                    .execute(server, params, keep)
                    .map_err(|e| statement_error(e, &st.sql))
            }
            None => {
                text::interpolate(&st.sql, params, Dialect::Mysql, &mut self.text)?;
                self.raw
                    .query_keeping(self.text.as_bytes(), keep)
                    .map_err(|e| statement_error(e, &self.text))
            }
        }
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
            timeout: self.timeout,
        };
        let session = MysqlSession::new(
            std::mem::take(&mut self.stmts),
            false,
            Some(Arc::new(cancel)),
        );
        Ok(dbdelta_engine::SessionParts {
            socket,
            session: Box::new(session),
        })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    /// The connection's thread in `mysqld`/`mariadbd` on this host: `THREAD_OS_ID` of
    /// `performance_schema.threads` (MySQL's reference manual, "The threads Table"), read
    /// only when performance_schema is on (MariaDB 10.11 has it off by default) and every
    /// connection has a thread of its own (`thread_handling`: a thread pool serves a
    /// connection from whichever thread is free).
    fn server_thread(&mut self) -> Option<dbdelta_engine::ServerThread> {
        let local = match &self.endpoint.params.addr {
            dbdelta_kit::Addr::Unix { .. } => true,
            dbdelta_kit::Addr::Tcp { host, .. } => dbdelta_engine::ServerThread::loopback(host),
        };
        if !local {
            return None;
        }
        let handling = self.query_scalar("SELECT @@thread_handling").ok()??;
        let on = self.query_scalar("SELECT @@performance_schema").ok()??;
        if handling != "one-thread-per-connection" || !matches!(on.as_str(), "1" | "ON") {
            return None;
        }
        let tid: u32 = self
            .query_scalar(
                "SELECT THREAD_OS_ID FROM performance_schema.threads \
                 WHERE PROCESSLIST_ID = CONNECTION_ID()",
            )
            .ok()??
            .parse()
            .ok()?;
        let pid = dbdelta_engine::ServerThread::process_of(tid)?;
        dbdelta_engine::ServerThread::local(pid, tid, &["mysqld", "mariadbd"])
    }

    fn table_engine(&self) -> Option<&str> {
        self.endpoint.table_engine
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
        self.execute_keeping(stmt, params, None)
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        self.raw
            .query(sql.as_bytes())
            .map_err(|e| statement_error(e, sql))
    }

    fn run_rows(
        &mut self,
        op: &dbdelta_engine::Op<'_>,
        rows: &mut dbdelta_engine::Rows,
    ) -> Result<Outcome, EngineError> {
        use dbdelta_engine::Op;
        match op {
            Op::Execute { stmt, params } => self.execute_keeping(*stmt, params, Some(rows)),
            Op::Query(sql) => self
                .raw
                .query_keeping(sql.as_bytes(), Some(rows))
                .map_err(|e| statement_error(e, sql)),
            Op::Kv(kv) => Err(EngineError::unsupported(
                dbdelta_engine::Family::KeyValue,
                kv.kind.name(),
            )),
        }
    }

    /// InnoDB's `data_length` and `index_length` after `ANALYZE TABLE` (fresh statistics),
    /// plus the tablespaces of the table's FULLTEXT auxiliary tables (`FTS_<table id>_…`),
    /// which `index_length` leaves out; `None` when the table does not exist.
    fn table_size(
        &mut self,
        table: &str,
    ) -> Result<Option<dbdelta_engine::TableSize>, EngineError> {
        let lit = dbdelta_kit::quote::literal(table, Dialect::Mysql);
        let Some(sizes) = self.query_scalar(&format!(
            "SELECT CONCAT(data_length, ' ', index_length) FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = {lit}"
        ))?
        else {
            return Ok(None);
        };
        let _ = self.query(&format!(
            "ANALYZE TABLE {}",
            dbdelta_kit::quote::ident(table, Dialect::Mysql)
        ));
        let sizes = self
            .query_scalar(&format!(
                "SELECT CONCAT(data_length, ' ', index_length) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = {lit}"
            ))?
            .unwrap_or(sizes);
        let mut it = sizes.split(' ').map(|v| v.parse::<u64>().unwrap_or(0));
        let (data, index) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
        // FULLTEXT indexes live in auxiliary tables named after the table id in hex.
        let fts = self
            .query_scalar(&format!(
                "SELECT COALESCE(SUM(s.allocated_size), 0) FROM information_schema.innodb_sys_tables t \
                 JOIN information_schema.innodb_sys_tablespaces s ON s.name LIKE \
                 CONCAT(DATABASE(), '/FTS\\_', LPAD(LOWER(HEX(t.table_id)), 16, '0'), '\\_%') \
                 WHERE t.name = CONCAT(DATABASE(), '/', {lit})"
            ))
            .ok()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        Ok(Some(dbdelta_engine::TableSize {
            data_bytes: data,
            index_bytes: Some(index + fts),
            uncompressed_bytes: None,
        }))
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
        let endpoint = Arc::clone(&self.endpoint);
        bulk::bulk_insert(self, &endpoint, table, rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Addr, ConnectParams};
    use dbdelta_engine::Session;
    use dbdelta_model::Secret;

    #[test]
    fn the_canceller_never_shows_the_password() {
        let endpoint = Endpoint {
            target: "prod".into(),
            params: ConnectParams {
                addr: Addr::Tcp {
                    host: "127.0.0.1".into(),
                    port: 3306,
                },
                user: "bench".into(),
                password: Some(Secret::new("hunter2-secret".to_string())),
                database: None,
                tls: None,
                compress: false,
                key_exchange: crate::auth::KeyExchange::default(),
            },
            table_engine: None,
        };
        let kill = KillQuery {
            endpoint: Arc::new(endpoint),
            connection_id: 12,
            timeout: Duration::from_secs(1),
        };
        let s = MysqlSession::new(Vec::new(), false, Some(Arc::new(kill.clone())));
        assert!(s.canceller().is_some());
        let shown = format!("{kill:?} {s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("12"), "{shown}");
    }
}
