//! One blocking client connection over the transport (`wire`): startup and
//! authentication, named prepared statements executed with Bind+Execute+Sync in one write,
//! the Simple Query protocol, COPY, and result consumption that counts DataRows without
//! decoding them. Messages are written by `proto::frontend`, responses decoded by the
//! session layer's decoder, so the blocking and multiplexed paths count alike.

use crate::auth::{Auth, Binding, ChannelBindingMode};
use crate::cancel::CancelKey;
use crate::copy;
use crate::pgerror::{io_error, protocol_error};
use crate::proto::backend::{self, ServerError};
use crate::proto::frontend::{self, Frame, Target};
use crate::session::{
    check_params, encode_execute, encode_simple, PgSession, ResponseDecoder, Step, Stmt,
};
use crate::wire::{Msg, Stream, Wire};
use dbdelta_engine::text::{interpolate, numbered_placeholders, placeholder_count};
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, EngineError, ErrorKind, Outcome, OwnedValue, RowSource,
    StmtId, Value,
};
pub(crate) use dbdelta_kit::Addr;
use dbdelta_model::Secret;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Everything needed to open a connection. `Debug` never shows the password.
#[derive(Clone)]
pub(crate) struct ConnParams {
    pub addr: Addr,
    pub user: String,
    pub password: Option<Secret>,
    pub database: String,
    pub prepared: bool,
    pub connect_timeout: Duration,
    pub tls: TlsOpt,
    /// The `channel_binding` parameter.
    pub channel_binding: ChannelBindingMode,
}

/// TLS client configuration shared by all connections of a target (`None` = plain).
#[cfg(feature = "tls")]
pub(crate) type TlsOpt = Option<Arc<crate::tls::TlsSetup>>;
/// TLS client configuration shared by all connections of a target (`None` = plain).
#[cfg(not(feature = "tls"))]
pub(crate) type TlsOpt = Option<Arc<()>>;

/// True when TLS is only preferred (`sslmode=prefer`): a transport without TLS, such as a
/// Unix socket, then simply goes plain.
#[cfg(feature = "tls")]
pub(crate) fn tls_optional(tls: &TlsOpt) -> bool {
    tls.as_ref()
        .is_some_and(|t| t.mode == dbdelta_kit::tls::TlsMode::Prefer)
}

/// True when TLS is only preferred (never in a build without TLS).
#[cfg(not(feature = "tls"))]
pub(crate) fn tls_optional(_: &TlsOpt) -> bool {
    false
}

impl fmt::Debug for ConnParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnParams")
            .field("addr", &self.addr)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("database", &self.database)
            .field("prepared", &self.prepared)
            .field("tls", &self.tls.is_some())
            .field("channel_binding", &self.channel_binding)
            .finish()
    }
}

/// One PostgreSQL connection, used by one worker thread.
pub struct PgConnection {
    pub(crate) wire: Wire,
    stmts: Vec<Stmt>,
    prepared: bool,
    text: String,
    broken: bool,
    backend_pid: i32,
    secret_key: i32,
    addr: Addr,
    cancel_timeout: Duration,
    server_version: String,
}

impl fmt::Debug for PgConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgConnection")
            .field("backend_pid", &self.backend_pid)
            .field("statements", &self.stmts.len())
            .field("prepared", &self.prepared)
            .finish()
    }
}

/// Opens a connection: socket, optional TLS, startup, authentication, ReadyForQuery.
pub(crate) fn connect(p: &ConnParams) -> Result<PgConnection, EngineError> {
    connect_with(p, &ConnectOptions::default())
}

/// [`connect`] from a chosen source address, with the whole handshake (TCP, TLS, startup,
/// authentication) bounded by the timeout: a server that accepts and never answers fails
/// here instead of hanging the run.
pub(crate) fn connect_with(
    p: &ConnParams,
    opts: &ConnectOptions,
) -> Result<PgConnection, EngineError> {
    let limit = opts.timeout.unwrap_or(p.connect_timeout);
    let peer = p.addr.to_string();
    let stream = match &p.addr {
        Addr::Tcp { host, port } => Stream::tcp(host, *port, opts.source, limit),
        Addr::Unix { path } => std::os::unix::net::UnixStream::connect(path).map(Stream::Unix),
    }
    .map_err(|e| EngineError::connection(format!("cannot connect to postgres at {peer}: {e}")))?;
    stream
        .set_deadline(Some(limit))
        .map_err(|e| EngineError::connection(format!("postgres at {peer}: {e}")))?;
    let mut conn = handshake(p, stream, &peer).map_err(|e| {
        if e.message.contains("timed out") || e.message.contains("temporarily unavailable") {
            EngineError::new(
                ErrorKind::Timeout,
                format!(
                    "postgres at {peer}: connect timeout: no answer within {:.1} s during \
                     startup or authentication (raise --connect-timeout if the server is slow)",
                    limit.as_secs_f64()
                ),
            )
        } else {
            e
        }
    })?;
    conn.wire
        .stream()
        .set_deadline(opts.io_timeout)
        .map_err(|e| EngineError::connection(format!("postgres at {peer}: {e}")))?;
    conn.cancel_timeout = limit;
    Ok(conn)
}

fn handshake(p: &ConnParams, stream: Stream, peer: &str) -> Result<PgConnection, EngineError> {
    let peer = peer.to_string();
    #[allow(unused_mut)]
    let mut wire = Wire::new(stream);
    #[allow(unused_mut)]
    let mut binding = Binding::default();
    if let Some(_tls) = &p.tls {
        #[cfg(feature = "tls")]
        {
            let host = match &p.addr {
                Addr::Tcp { host, .. } => host.as_str(),
                Addr::Unix { .. } => "localhost",
            };
            (wire, binding) = crate::tls::start(wire, _tls, host, &peer)?;
        }
        #[cfg(not(feature = "tls"))]
        return Err(EngineError::config(
            "TLS is not supported by this build of dbdelta (enable the 'tls' feature of dbdelta-engine-postgres)",
        ));
    }
    // Until ReadyForQuery every message is small (see STARTUP_MAX_MESSAGE).
    wire.set_max_message(crate::wire::STARTUP_MAX_MESSAGE);
    frontend::startup(
        [
            ("user", p.user.as_str()),
            ("database", p.database.as_str()),
            ("client_encoding", "UTF8"),
            ("application_name", "dbdelta"),
        ],
        &mut wire.wbuf,
    )
    .map_err(|e| {
        EngineError::config(format!(
            "postgres at {peer}: bad user or database name: {e}"
        ))
    })?;
    wire.send().map_err(|e| io_error("write", e))?;

    binding.mode = p.channel_binding;
    let mut auth = Auth::new(&p.user, p.password.as_ref(), &peer, binding);
    let mut backend_pid = 0;
    let mut secret_key = 0;
    let mut server_version = String::new();
    loop {
        let m = wire.next().map_err(|e| {
            EngineError::connection(format!("postgres at {peer}: during startup: {e}"))
        })?;
        match m.tag {
            b'R' => {
                let (body, answer) = wire.body_and_wbuf(m);
                auth.step(body, answer)?;
                if !wire.wbuf.is_empty() {
                    wire.send().map_err(|e| io_error("write", e))?;
                }
            }
            b'E' => return Err(startup_error(ServerError::parse(wire.body(m)), p, &peer)),
            b'K' => (backend_pid, secret_key) = backend::backend_key_data(wire.body(m)),
            b'S' => {
                if let Some((b"server_version", v)) = backend::parameter_status(wire.body(m)) {
                    server_version = String::from_utf8_lossy(v).into_owned();
                }
            }
            b'N' | b'v' => {}
            b'Z' => {
                wire.set_max_message(backend::MAX_MESSAGE);
                break;
            }
            t => {
                return Err(protocol_error(&format!(
                    "unexpected message '{}' during startup",
                    t as char
                )))
            }
        }
    }
    Ok(PgConnection {
        wire,
        stmts: Vec::new(),
        prepared: p.prepared,
        text: String::with_capacity(1024),
        broken: false,
        backend_pid,
        secret_key,
        addr: p.addr.clone(),
        cancel_timeout: p.connect_timeout,
        server_version,
    })
}

/// Explains a startup failure; auth and missing-database errors name the fix.
fn startup_error(e: ServerError, p: &ConnParams, peer: &str) -> EngineError {
    match e.code.as_str() {
        "28P01" | "28000" => EngineError::config(format!(
            "postgres at {peer}: authentication failed for user \"{}\": {}; check the password \
             (target URL, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf",
            p.user,
            e.describe()
        )),
        "3D000" => EngineError::config(format!(
            "postgres at {peer}: database \"{}\" does not exist ({}); create it or name an existing \
             database in the target URL (postgres://user@host/DB)",
            p.database,
            e.describe()
        )),
        _ => EngineError::new(e.kind(), format!("postgres at {peer}: {}", e.describe())),
    }
}

impl PgConnection {
    /// The backend process id serving this connection.
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// The server version string from the startup ParameterStatus.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    fn check_usable(&self) -> Result<(), EngineError> {
        if self.broken {
            return Err(EngineError::connection(
                "postgres connection is broken after an earlier error; reconnect",
            ));
        }
        Ok(())
    }

    /// Marks the connection unusable and wraps an I/O error.
    #[cold]
    fn lost(&mut self, what: &str, e: io::Error) -> EngineError {
        self.broken = true;
        io_error(what, e)
    }

    pub(crate) fn send(&mut self) -> Result<(), EngineError> {
        match self.wire.send() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.lost("write", e)),
        }
    }

    #[inline]
    pub(crate) fn next_msg(&mut self) -> Result<Msg, EngineError> {
        match self.wire.next() {
            Ok(m) => Ok(m),
            Err(e) => Err(self.lost("read", e)),
        }
    }

    /// Handles an ErrorResponse: fatal ones end the connection at once (no ReadyForQuery
    /// follows), others are kept until ReadyForQuery.
    #[cold]
    fn server_error(&mut self, m: Msg) -> Result<ServerError, EngineError> {
        let e = ServerError::parse(self.wire.body(m));
        if e.is_fatal() {
            self.broken = true;
            return Err(e.into_engine_error());
        }
        Ok(e)
    }

    /// Consumes one response up to ReadyForQuery, counting rows and summing affected rows
    /// (the decoder the sessions use, so both paths count alike).
    #[inline]
    pub(crate) fn read_result(&mut self) -> Result<Outcome, EngineError> {
        self.read_result_keeping(None)
    }

    /// [`PgConnection::read_result`], keeping the rows' values in `keep` when given.
    fn read_result_keeping(
        &mut self,
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        let mut dec = ResponseDecoder::default();
        let mut keep = keep;
        if let Some(k) = keep.as_deref_mut() {
            k.clear();
            std::mem::swap(&mut dec.rows, k);
            dec.capture = true;
        }
        loop {
            let m = self.next_msg()?;
            match dec.message(m.tag, self.wire.body(m)) {
                Ok(Step::More) => {}
                Ok(Step::Done(result)) => {
                    if let Some(k) = keep {
                        std::mem::swap(&mut dec.rows, k);
                    }
                    return result;
                }
                Ok(Step::CopyIn) => {
                    // COPY FROM STDIN sent as a plain statement: refuse the data.
                    self.refuse_copy("dbdelta: use bulk_insert for COPY FROM STDIN")?;
                }
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// Sends `sql` with the Simple Query protocol and consumes the response, keeping the
    /// rows' values in `keep` when given.
    fn simple(
        &mut self,
        sql: &str,
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        self.check_usable()?;
        encode_simple(&mut self.wire.wbuf, sql)?;
        self.send()?;
        self.read_result_keeping(keep)
    }

    /// Runs a Simple Query and decodes every row as text (for info and scalars).
    pub(crate) fn query_rows(
        &mut self,
        sql: &str,
    ) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        self.check_usable()?;
        encode_simple(&mut self.wire.wbuf, sql)?;
        self.send()?;
        let mut rows = Vec::new();
        let mut err = None;
        loop {
            let m = self.next_msg()?;
            match m.tag {
                b'D' => rows.push(decode_row(self.wire.body(m))?),
                b'Z' => break,
                b'E' => {
                    let e = self.server_error(m)?;
                    err.get_or_insert(e);
                }
                b'G' | b'W' => self.refuse_copy("dbdelta: COPY FROM STDIN not expected")?,
                _ => {}
            }
        }
        match err {
            Some(e) => Err(e.into_engine_error()),
            None => Ok(rows),
        }
    }

    /// Answers CopyInResponse with CopyFail.
    fn refuse_copy(&mut self, why: &str) -> Result<(), EngineError> {
        frontend::copy_fail(why, &mut self.wire.wbuf)
            .map_err(|e| protocol_error(&format!("CopyFail: {e}")))?;
        self.send()
    }

    /// Loads `rows` into `table` with COPY; returns the row count the server reports.
    fn copy_in(&mut self, table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        let sql = copy::statement(table, rows)?;
        encode_simple(&mut self.wire.wbuf, &sql)?;
        self.send()?;
        // Wait for CopyInResponse, or an error (bad table) followed by ReadyForQuery.
        loop {
            let m = self.next_msg()?;
            match m.tag {
                b'G' => break,
                b'E' => {
                    let e = ServerError::parse(self.wire.body(m));
                    self.read_result().ok();
                    let mut ee = e.into_engine_error();
                    ee.message = format!("{} — {sql}", ee.message);
                    return Err(ee);
                }
                _ => {}
            }
        }
        let mut row: Vec<OwnedValue> = Vec::new();
        let mut sent = 0u64;
        let mut data = Frame::begin(&mut self.wire.wbuf, b'd');
        loop {
            row.clear();
            if !rows.next_row(&mut row) {
                break;
            }
            copy::put_row(&mut self.wire.wbuf, &row);
            sent += 1;
            if self.wire.wbuf.len() >= copy::CHUNK {
                data.end(&mut self.wire.wbuf);
                self.send()?;
                data = Frame::begin(&mut self.wire.wbuf, b'd');
            }
        }
        if data.body_len(&self.wire.wbuf) > 0 {
            data.end(&mut self.wire.wbuf);
        } else {
            self.wire.wbuf.clear();
        }
        frontend::copy_done(&mut self.wire.wbuf);
        self.send()?;
        let out = self.read_result()?;
        // read_result parses the CommandComplete tag "COPY n" as affected rows.
        let loaded = out.affected;
        if loaded != sent {
            return Err(EngineError::statement(format!(
                "bulk load into {table}: sent {sent} rows but the server loaded {loaded}"
            )));
        }
        Ok(loaded)
    }

    fn stmt(&self, id: StmtId) -> Result<&Stmt, EngineError> {
        self.stmts
            .get(id.0 as usize)
            .ok_or_else(|| EngineError::statement(format!("unknown statement handle {}", id.0)))
    }
}

impl PgConnection {
    /// Executes a statement (prepared, or interpolated text with `--no-prepared`), keeping
    /// the rows' values in `keep` when given.
    #[inline]
    fn execute_keeping(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        self.check_usable()?;
        let st = self.stmt(stmt)?;
        check_params(st, params)?;
        let returns_rows = st.returns_rows;
        if !self.prepared {
            let mut text = std::mem::take(&mut self.text);
            let r = interpolate(
                &self.stmts[stmt.0 as usize].sql,
                params,
                Dialect::Postgres,
                &mut text,
            )
            .and_then(|()| self.simple(&text, keep));
            self.text = text;
            return r;
        }
        encode_execute(&mut self.wire.wbuf, &self.stmts[stmt.0 as usize], params)?;
        self.send()?;
        let mut out = self.read_result_keeping(keep)?;
        out.has_result = returns_rows;
        Ok(out)
    }
}

/// Decodes a text-format DataRow into owned text.
fn decode_row(body: &[u8]) -> Result<Vec<Option<String>>, EngineError> {
    let cols = backend::data_row(body)?;
    let mut row = Vec::with_capacity(cols.remaining());
    for col in cols {
        row.push(col?.map(|v| String::from_utf8_lossy(v).into_owned()));
    }
    Ok(row)
}

impl Connection for PgConnection {
    fn into_session(
        mut self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        if self.broken {
            return Err(self);
        }
        let Some(socket) = self.wire.take_socket() else {
            return Err(self);
        };
        // The session owns the socket now: no Terminate from this side on drop.
        self.broken = true;
        let cancel = (self.backend_pid != 0).then(|| CancelKey {
            addr: self.addr.clone(),
            pid: self.backend_pid,
            secret: self.secret_key,
            timeout: self.cancel_timeout,
        });
        let session = PgSession::new(std::mem::take(&mut self.stmts), self.prepared, cancel);
        Ok(dbdelta_engine::SessionParts {
            socket,
            session: Box::new(session),
        })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    /// The backend process named by BackendKeyData (PostgreSQL's protocol docs, "Start-up"),
    /// when it is a PostgreSQL backend on this host: the socket is a Unix one or a
    /// loopback address, the process's command name is `postgres` and its title a
    /// backend's (`postgres: user database …`). Behind pgbouncer the key is pgbouncer's own
    /// (its process id part names no backend): none.
    fn server_thread(&mut self) -> Option<dbdelta_engine::ServerThread> {
        let local = match &self.addr {
            Addr::Unix { .. } => true,
            Addr::Tcp { host, .. } => dbdelta_engine::ServerThread::loopback(host),
        };
        let pid = u32::try_from(self.backend_pid).ok().filter(|_| local)?;
        let thread = dbdelta_engine::ServerThread::local(pid, pid, &["postgres"])?;
        let title = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        title.starts_with(b"postgres: ").then_some(thread)
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        self.check_usable()?;
        let id = StmtId(self.stmts.len() as u32);
        if !self.prepared {
            self.stmts.push(Stmt {
                name: String::new(),
                sql: sql.to_string(),
                params: placeholder_count(sql),
                returns_rows: false,
            });
            return Ok(id);
        }
        let name = format!("s{}", id.0);
        let text = numbered_placeholders(sql);
        let w = &mut self.wire.wbuf;
        // Parameter types 0: the server infers them from the statement (INTEGER columns
        // get int4), and we send every value as text, like libpq callers such as sysbench.
        frontend::parse(&name, &text, w)
            .and_then(|()| frontend::describe(Target::Statement, &name, w))
            .map_err(|e| EngineError::statement(format!("cannot prepare {sql}: {e}")))?;
        frontend::sync(w);
        self.send()?;
        let mut params = 0;
        let mut returns_rows = false;
        let mut err = None;
        loop {
            let m = self.next_msg()?;
            match m.tag {
                b't' => params = backend::parameter_count(self.wire.body(m)),
                b'T' => returns_rows = true,
                b'Z' => break,
                b'E' => {
                    let e = self.server_error(m)?;
                    err.get_or_insert(e);
                }
                _ => {}
            }
        }
        if let Some(e) = err {
            let mut ee = e.into_engine_error();
            ee.message = format!("{} — while preparing: {sql}", ee.message);
            return Err(ee);
        }
        self.stmts.push(Stmt {
            name,
            sql: sql.to_string(),
            params,
            returns_rows,
        });
        Ok(id)
    }

    #[inline]
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        self.execute_keeping(stmt, params, None)
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        self.simple(sql, None)
    }

    fn run_rows(
        &mut self,
        op: &dbdelta_engine::Op<'_>,
        rows: &mut dbdelta_engine::Rows,
    ) -> Result<Outcome, EngineError> {
        use dbdelta_engine::Op;
        match op {
            Op::Execute { stmt, params } => self.execute_keeping(*stmt, params, Some(rows)),
            Op::Query(sql) => self.simple(sql, Some(rows)),
            Op::Kv(kv) => Err(EngineError::unsupported(
                dbdelta_engine::Family::KeyValue,
                kv.kind.name(),
            )),
        }
    }

    /// `pg_table_size` (heap, TOAST, free-space and visibility maps) and
    /// `pg_indexes_size`; `None` when no such table is visible.
    fn table_size(
        &mut self,
        table: &str,
    ) -> Result<Option<dbdelta_engine::TableSize>, EngineError> {
        let lit = dbdelta_kit::quote::literal(table, dbdelta_model::Dialect::Postgres);
        let Some(sizes) = self.query_scalar(&format!(
            "SELECT pg_table_size(c.oid) || ' ' || pg_indexes_size(c.oid) FROM pg_class c \
             WHERE c.oid = to_regclass({lit})"
        ))?
        else {
            return Ok(None);
        };
        let mut it = sizes.split(' ').map(|v| v.parse::<u64>().unwrap_or(0));
        Ok(Some(dbdelta_engine::TableSize {
            data_bytes: it.next().unwrap_or(0),
            index_bytes: it.next(),
            uncompressed_bytes: None,
        }))
    }

    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        let rows = self.query_rows(sql)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    fn bulk_insert(&mut self, table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        self.check_usable()?;
        self.copy_in(table, rows)
    }

    fn rollback(&mut self) -> Result<(), EngineError> {
        if self.broken {
            return Err(EngineError::new(
                ErrorKind::Connection,
                "postgres connection is broken",
            ));
        }
        self.simple("ROLLBACK", None).map(|_| ())
    }
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        if !self.broken {
            frontend::terminate(&mut self.wire.wbuf);
            let _ = self.wire.send();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_decode() {
        let mut b = Vec::new();
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"hi");
        b.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            decode_row(&b).ok(),
            Some(vec![Some("hi".to_string()), None])
        );
        assert!(decode_row(&b[..5]).is_err());
        // Found by fuzzing: a negative column count panicked (capacity overflow).
        assert!(decode_row(&(-1i16).to_be_bytes()).is_err());
        assert_eq!(decode_row(&0i16.to_be_bytes()).ok(), Some(vec![]));
    }
}
