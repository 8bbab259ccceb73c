//! One client connection: startup and authentication, named prepared statements executed
//! with Bind+Execute+Sync in one write, the Simple Query protocol, and result consumption
//! that counts DataRows without decoding them.

use crate::auth::{Auth, Binding, ChannelBindingMode};
use crate::pgerror::{io_error, protocol_error, ServerError};
use crate::session::{
    check_params, encode_execute, encode_simple, CancelKey, PgSession, ResponseDecoder, Step, Stmt,
};
use crate::wire::{be_i16, be_i32, begin_msg, end_msg, put_cstr, Msg, Stream, Wire};
use dbdelta_engine::text::{interpolate, numbered_placeholders, placeholder_count};
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, EngineError, ErrorKind, Outcome, RowSource, StmtId, Value,
};
use dbdelta_model::Secret;
use postgres_protocol::message::frontend;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Addr {
    /// TCP host and port.
    Tcp { host: String, port: u16 },
    /// A Unix socket file (`<dir>/.s.PGSQL.<port>`).
    Unix { path: PathBuf },
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Addr::Tcp { host, port } => write!(f, "{host}:{port}"),
            Addr::Unix { path } => write!(f, "{}", path.display()),
        }
    }
}

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
        .is_some_and(|t| t.mode == dbdelta_engine::tls::TlsMode::Prefer)
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
    frontend::startup_message(
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
                let body = wire.body(m).to_vec();
                auth.step(&body, &mut wire)?;
            }
            b'E' => return Err(startup_error(ServerError::parse(wire.body(m)), p, &peer)),
            b'K' => {
                backend_pid = be_i32(wire.body(m), 0).unwrap_or(0);
                secret_key = be_i32(wire.body(m), 4).unwrap_or(0);
            }
            b'S' => {
                if let Some((k, rest)) = crate::wire::take_cstr(wire.body(m)) {
                    if k == b"server_version" {
                        if let Some((v, _)) = crate::wire::take_cstr(rest) {
                            server_version = String::from_utf8_lossy(v).into_owned();
                        }
                    }
                }
            }
            b'N' | b'v' => {}
            b'Z' => break,
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

/// Affected rows from a CommandComplete tag (`UPDATE 3`, `INSERT 0 1`, `DELETE 1`).
/// SELECT and utility commands report 0.
#[inline]
pub(crate) fn affected_rows(tag: &[u8]) -> u64 {
    let tag = tag.strip_suffix(b"\0").unwrap_or(tag);
    let counted = [&b"INSERT "[..], b"UPDATE ", b"DELETE ", b"MERGE ", b"COPY "];
    if !counted.iter().any(|p| tag.starts_with(p)) {
        return 0;
    }
    let start = tag.iter().rposition(|b| *b == b' ').map_or(0, |i| i + 1);
    tag[start..]
        .iter()
        .try_fold(0u64, |acc, b| {
            b.is_ascii_digit()
                .then(|| acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0')))
        })
        .unwrap_or(0)
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
                    frontend::copy_fail(
                        "dbdelta: use bulk_insert for COPY FROM STDIN",
                        &mut self.wire.wbuf,
                    )
                    .map_err(|e| io_error("write", e))?;
                    self.send()?;
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
        let w = &mut self.wire.wbuf;
        let at = begin_msg(w, b'Q');
        put_cstr(w, sql.as_bytes());
        end_msg(w, at);
        self.send()?;
        let mut rows = Vec::new();
        let mut err = None;
        loop {
            let m = self.next_msg()?;
            match m.tag {
                b'D' => rows.push(
                    decode_row(self.wire.body(m)).ok_or_else(|| protocol_error("bad DataRow"))?,
                ),
                b'Z' => break,
                b'E' => {
                    let e = self.server_error(m)?;
                    err.get_or_insert(e);
                }
                b'G' | b'W' => {
                    frontend::copy_fail(
                        "dbdelta: COPY FROM STDIN not expected",
                        &mut self.wire.wbuf,
                    )
                    .map_err(|e| io_error("write", e))?;
                    self.send()?;
                }
                _ => {}
            }
        }
        match err {
            Some(e) => Err(e.into_engine_error()),
            None => Ok(rows),
        }
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
        encode_execute(&mut self.wire.wbuf, &self.stmts[stmt.0 as usize], params);
        self.send()?;
        let mut out = self.read_result_keeping(keep)?;
        out.has_result = returns_rows;
        Ok(out)
    }
}

/// Decodes a text-format DataRow.
fn decode_row(body: &[u8]) -> Option<Vec<Option<String>>> {
    // A negative column count is malformed (cast, it asked for a huge capacity).
    let n = usize::try_from(be_i16(body, 0)?).ok()?;
    let mut at = 2;
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        let len = be_i32(body, at)?;
        at += 4;
        if len < 0 {
            row.push(None);
        } else {
            let v = body.get(at..at + len as usize)?;
            row.push(Some(String::from_utf8_lossy(v).into_owned()));
            at += len as usize;
        }
    }
    Some(row)
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
        frontend::parse(&name, &text, std::iter::empty(), w)
            .map_err(|e| EngineError::statement(format!("cannot prepare {sql}: {e}")))?;
        frontend::describe(b'S', &name, w).map_err(|e| io_error("write", e))?;
        frontend::sync(w);
        self.send()?;
        let mut params = 0;
        let mut returns_rows = false;
        let mut err = None;
        loop {
            let m = self.next_msg()?;
            match m.tag {
                b't' => params = be_i16(self.wire.body(m), 0).unwrap_or(0).max(0) as usize,
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
        let lit = table.replace('\'', "''");
        let Some(sizes) = self.query_scalar(&format!(
            "SELECT pg_table_size(c.oid) || ' ' || pg_indexes_size(c.oid) FROM pg_class c \
             WHERE c.oid = to_regclass('{lit}')"
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
        crate::copy::copy_in(self, table, rows)
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
    fn command_tags() {
        assert_eq!(affected_rows(b"UPDATE 3\0"), 3);
        assert_eq!(affected_rows(b"INSERT 0 1\0"), 1);
        assert_eq!(affected_rows(b"DELETE 12\0"), 12);
        assert_eq!(affected_rows(b"COPY 10000\0"), 10000);
        assert_eq!(affected_rows(b"SELECT 5\0"), 0);
        assert_eq!(affected_rows(b"BEGIN\0"), 0);
        assert_eq!(affected_rows(b"CREATE TABLE\0"), 0);
    }

    #[test]
    fn rows_decode() {
        let mut b = Vec::new();
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"hi");
        b.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(decode_row(&b), Some(vec![Some("hi".to_string()), None]));
        assert_eq!(decode_row(&b[..5]), None);
        // Found by fuzzing: a negative column count panicked (capacity overflow).
        assert_eq!(decode_row(&(-1i16).to_be_bytes()), None);
        assert_eq!(decode_row(&0i16.to_be_bytes()), Some(vec![]));
    }
}
