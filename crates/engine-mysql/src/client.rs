//! A small blocking client of the MySQL client/server protocol: handshake v10 with the
//! authentication plugins of [`crate::auth`], COM_QUERY (text) and
//! COM_STMT_PREPARE/EXECUTE (binary), optionally over TLS and with protocol compression. Result rows are counted, not decoded, unless the caller
//! asks for text values (settings, scalars).

use crate::auth;
use crate::session::{ResponseDecoder, Step};
use crate::wire::{put_lenenc, Cur, Stream, Wire};
use dbdelta_engine::{Outcome, Value};
use dbdelta_model::Secret;
use std::io;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_COMPRESS: u32 = 0x20;
const CLIENT_LOCAL_FILES: u32 = 0x80;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_SSL: u32 = 0x800;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_PLUGIN_AUTH_LENENC: u32 = 0x20_0000;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

const TYPE_LONGLONG: u8 = 0x08;
const TYPE_STRING: u8 = 0xFE;
const TYPE_NULL: u8 = 0x06;

/// utf8mb4_general_ci: known to MySQL 5.5+ and every MariaDB.
const CHARSET_UTF8MB4: u8 = 45;

/// Where the server listens.
#[derive(Debug, Clone)]
pub(crate) enum Addr {
    /// TCP host and port.
    Tcp(String, u16),
    /// A Unix-domain socket path.
    Unix(PathBuf),
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Tcp(h, p) => write!(f, "{h}:{p}"),
            Addr::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Everything needed to open a connection. The password stays a [`Secret`].
#[derive(Debug, Clone)]
pub(crate) struct ConnectParams {
    /// Server address.
    pub addr: Addr,
    /// User name.
    pub user: String,
    /// Password, if any.
    pub password: Option<Secret>,
    /// Default schema.
    pub database: Option<String>,
    /// TLS (CLIENT_SSL), verifying the server's certificate; TCP only.
    pub tls: Option<Arc<TlsClient>>,
    /// Protocol compression (CLIENT_COMPRESS, zlib).
    pub compress: bool,
    /// How a password the server needs in full may go over plain TCP (RSA key exchange).
    pub key_exchange: auth::KeyExchange,
}

/// How to run TLS with one server: the client configuration (its certificate check follows
/// the target's ssl-mode) and the name the server's certificate must carry.
#[derive(Debug)]
pub(crate) struct TlsClient {
    /// rustls configuration with the trusted roots.
    pub config: Arc<rustls::ClientConfig>,
    /// The host name or IP address to verify.
    pub name: rustls::pki_types::ServerName<'static>,
    /// `ssl-mode=PREFERRED`: a server without TLS gets a plain connection.
    pub optional: bool,
}

/// A client-side failure.
#[derive(Debug)]
pub(crate) enum ClientError {
    /// Socket error or the server went away.
    Io(io::Error),
    /// An ERR packet.
    Server {
        /// MySQL error number.
        code: u16,
        /// SQLSTATE (may be empty during the handshake).
        state: String,
        /// The server's message.
        message: String,
    },
    /// The server sent something this client does not understand.
    Protocol(String),
    /// A feature this client does not implement (auth plugin, LOCAL INFILE).
    Unsupported(String),
    /// TLS could not be set up: the server refuses it or its certificate is not trusted.
    Tls(String),
    /// Connecting (TCP, greeting, TLS, authentication) took longer than allowed.
    Timeout(String),
}

impl From<io::Error> for ClientError {
    /// A break of the packet framing by the server ([`crate::wire::Violation`]) becomes a
    /// protocol error; other socket errors stay I/O errors.
    fn from(e: io::Error) -> Self {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<crate::wire::Violation>())
        {
            Some(v) => ClientError::Protocol(v.0.clone()),
            None => ClientError::Io(e),
        }
    }
}

/// A socket timeout while connecting becomes [`ClientError::Timeout`]; other errors stay.
fn timed_out(e: io::Error, limit: Duration, phase: &str) -> ClientError {
    if dbdelta_engine::net::is_timeout(&e) {
        ClientError::Timeout(format!(
            "connect timeout: no answer within {:.1} s {phase} (raise --connect-timeout if the server is slow)",
            limit.as_secs_f64()
        ))
    } else {
        ClientError::Io(e)
    }
}

fn protocol(what: &str) -> ClientError {
    ClientError::Protocol(format!("malformed {what} packet from the server"))
}

pub(crate) fn parse_err(p: &[u8]) -> ClientError {
    let mut c = Cur::new(p);
    c.skip(1);
    let code = c.u16().unwrap_or(0);
    let rest = c.rest();
    let (state, msg) = if rest.first() == Some(&b'#') && rest.len() >= 6 {
        (
            String::from_utf8_lossy(&rest[1..6]).into_owned(),
            &rest[6..],
        )
    } else {
        (String::new(), rest)
    };
    ClientError::Server {
        code,
        state,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// Affected rows and status flags of an OK packet.
pub(crate) fn parse_ok(p: &[u8]) -> Result<(u64, u16), ClientError> {
    parse_ok_warnings(p).map(|(a, s, _)| (a, s))
}

/// Affected rows, status flags and warning count of an OK packet.
fn parse_ok_warnings(p: &[u8]) -> Result<(u64, u16, u16), ClientError> {
    let mut c = Cur::new(p);
    c.skip(1);
    let affected = c.lenenc().ok_or_else(|| protocol("OK"))?;
    c.lenenc().ok_or_else(|| protocol("OK"))?;
    let status = c.u16().ok_or_else(|| protocol("OK"))?;
    let warnings = c.u16().unwrap_or(0);
    Ok((affected, status, warnings))
}

/// True for an EOF packet (0xFE and shorter than 9 bytes; longer ones are rows).
pub(crate) fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

/// A statement prepared on the server.
#[derive(Debug, Clone)]
pub(crate) struct ServerStmt {
    /// Server-side statement id.
    pub id: u32,
    /// Number of `?` parameters.
    pub params: u16,
    /// Parameter types sent with the last execution; resent only when they change.
    types: Vec<u8>,
}

impl ServerStmt {
    /// A statement the server knows as `id`, with `params` placeholders.
    #[cfg(test)]
    pub(crate) fn new(id: u32, params: u16) -> Self {
        ServerStmt {
            id,
            params,
            types: Vec::new(),
        }
    }

    /// After a failed execute the server may not have stored the parameter types: the next
    /// execute sends them again.
    pub(crate) fn forget_types(&mut self) {
        self.types.clear();
    }
}

/// Appends the COM_STMT_EXECUTE payload of `st` with `params` (binary protocol) to `b`.
pub(crate) fn encode_execute(b: &mut Vec<u8>, st: &mut ServerStmt, params: &[Value<'_>]) {
    let n = params.len();
    // Types are resent only when they differ from the last execution.
    let same_types =
        st.types.len() == n && params.iter().zip(&st.types).all(|(p, t)| type_of(p) == *t);
    if !same_types {
        st.types.clear();
        st.types.extend(params.iter().map(type_of));
    }
    b.push(COM_STMT_EXECUTE);
    b.extend_from_slice(&st.id.to_le_bytes());
    b.push(0); // CURSOR_TYPE_NO_CURSOR
    b.extend_from_slice(&1u32.to_le_bytes());
    if n > 0 {
        let bitmap = b.len();
        b.resize(bitmap + n.div_ceil(8), 0);
        for (i, p) in params.iter().enumerate() {
            if matches!(p, Value::Null) {
                b[bitmap + i / 8] |= 1 << (i % 8);
            }
        }
        if same_types {
            b.push(0);
        } else {
            b.push(1);
            for t in &st.types {
                b.extend_from_slice(&[*t, 0]);
            }
        }
        for p in params {
            match p {
                Value::Int(i) => b.extend_from_slice(&i.to_le_bytes()),
                Value::Text(s) => {
                    put_lenenc(b, s.len() as u64);
                    b.extend_from_slice(s.as_bytes());
                }
                // Marked in the NULL bitmap; no value bytes.
                Value::Null => {}
            }
        }
    }
}

/// One open protocol connection.
#[derive(Debug)]
pub(crate) struct RawConn {
    wire: Wire,
    /// Version string from the handshake (MariaDB prefixes it with `5.5.5-`).
    pub server_version: String,
    /// The server's id of this connection (`KILL QUERY <id>` cancels its statement).
    pub connection_id: u32,
}

impl RawConn {
    /// Connects and authenticates from `source` (a loopback address for TCP, `None` = the
    /// kernel's choice); `timeout` bounds the TCP connect, the greeting, TLS and
    /// authentication together, so a server that accepts and never answers (or answers a
    /// byte at a time) fails within it instead of hanging. After the handshake reads and
    /// writes are bounded by `io_timeout` (`None` = unbounded).
    pub(crate) fn connect(
        p: &ConnectParams,
        timeout: Duration,
        source: Option<std::net::Ipv4Addr>,
        io_timeout: Option<Duration>,
    ) -> Result<RawConn, ClientError> {
        let deadline = Instant::now() + timeout;
        let stream = match &p.addr {
            Addr::Tcp(host, port) => {
                let s = dbdelta_engine::net::connect_tcp(host, *port, source, timeout)
                    .map_err(|e| timed_out(e, timeout, "connecting"))?;
                // Writes are small and rare here; one bound of the whole timeout each.
                dbdelta_engine::net::handshake_deadline(&s, Some(timeout))?;
                Stream::Tcp(s)
            }
            Addr::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_write_timeout(Some(timeout))?;
                Stream::Unix(s)
            }
        };
        let mut conn = RawConn {
            wire: Wire::new(stream),
            server_version: String::new(),
            connection_id: 0,
        };
        conn.wire
            .set_handshake_deadline(deadline)
            .map_err(|e| timed_out(e, timeout, "connecting"))?;
        conn.handshake(p).map_err(|e| match e {
            ClientError::Io(io) => timed_out(io, timeout, "during the handshake"),
            other => other,
        })?;
        conn.wire.set_deadline(io_timeout)?;
        Ok(conn)
    }

    /// Takes the socket out for a multiplexed session; `None` for TLS or compressed
    /// connections and when bytes are still buffered.
    pub(crate) fn take_socket(&mut self) -> Option<dbdelta_engine::Socket> {
        self.wire.take_socket()
    }

    fn handshake(&mut self, p: &ConnectParams) -> Result<(), ClientError> {
        let pkt = self.wire.read_packet()?;
        if pkt.first() == Some(&0xFF) {
            return Err(parse_err(pkt));
        }
        let mut c = Cur::new(pkt);
        if c.u8() != Some(10) {
            return Err(ClientError::Unsupported(
                "server speaks a protocol version other than 10".into(),
            ));
        }
        self.server_version = String::from_utf8_lossy(c.cstr()).into_owned();
        self.connection_id = c.u32().ok_or_else(|| protocol("handshake"))?;
        let mut nonce = c.take(8).ok_or_else(|| protocol("handshake"))?.to_vec();
        c.skip(1);
        let cap_lo = u32::from(c.u16().ok_or_else(|| protocol("handshake"))?);
        c.skip(3); // charset, status
        let cap_hi = u32::from(c.u16().unwrap_or(0));
        let server_caps = cap_lo | cap_hi << 16;
        let auth_len = usize::from(c.u8().unwrap_or(0));
        c.skip(10);
        if server_caps & CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part2 = c.take(n).unwrap_or_else(|| c.rest());
            nonce.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
        }
        let plugin = if server_caps & CLIENT_PLUGIN_AUTH != 0 {
            String::from_utf8_lossy(c.cstr()).into_owned()
        } else {
            "mysql_native_password".to_string()
        };
        if server_caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(ClientError::Unsupported(
                "server is older than MySQL 4.1 (no protocol 4.1)".into(),
            ));
        }
        let password = p
            .password
            .as_ref()
            .map(|s| s.expose().as_bytes())
            .unwrap_or(b"");
        let mut caps = CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC
            // LOAD DATA LOCAL for bulk loads; the data always comes from memory, never a file.
            | CLIENT_LOCAL_FILES;
        if p.database.is_some() {
            caps |= CLIENT_CONNECT_WITH_DB;
        }
        caps &= server_caps | CLIENT_CONNECT_WITH_DB;
        if p.compress {
            if server_caps & CLIENT_COMPRESS == 0 {
                return Err(ClientError::Unsupported(format!(
                    "server {} does not support protocol compression; run without --compress",
                    self.server_version
                )));
            }
            caps |= CLIENT_COMPRESS;
        }
        // ssl-mode=PREFERRED goes plain when the server offers no TLS.
        let tls = p
            .tls
            .as_ref()
            .filter(|t| server_caps & CLIENT_SSL != 0 || !t.optional);
        if let Some(tls) = tls {
            if server_caps & CLIENT_SSL == 0 {
                return Err(ClientError::Tls(
                    "the server does not accept TLS connections (have_ssl is not YES: give it ssl_cert and ssl_key); enable TLS on the server, or use ssl-mode=PREFERRED or DISABLED (or drop --tls)".into(),
                ));
            }
            caps |= CLIENT_SSL;
            // SSLRequest: the first 32 bytes of the handshake response, then TLS.
            let b = self.wire.begin_packet();
            b.extend_from_slice(&caps.to_le_bytes());
            b.extend_from_slice(&(1u32 << 30).to_le_bytes());
            b.push(CHARSET_UTF8MB4);
            b.extend_from_slice(&[0; 23]);
            self.wire.send()?;
            self.wire
                .start_tls(Arc::clone(&tls.config), tls.name.clone())
                .map_err(|e| {
                    if dbdelta_engine::net::is_timeout(&e) {
                        return ClientError::Io(e);
                    }
                    ClientError::Tls(format!(
                        "TLS handshake failed: {e}; check that the server certificate is signed by the trusted CA (ssl-ca) and, under VERIFY_IDENTITY, names the host (VERIFY_CA does not compare names)"
                    ))
                })?;
        }
        let mut auth = auth::Auth::new(password, self.wire.is_secure(), &p.key_exchange);
        let (plugin, scramble) = auth.first(&plugin, &nonce)?;
        let b = self.wire.begin_packet();
        b.extend_from_slice(&caps.to_le_bytes());
        b.extend_from_slice(&(1u32 << 30).to_le_bytes());
        b.push(CHARSET_UTF8MB4);
        b.extend_from_slice(&[0; 23]);
        b.extend_from_slice(p.user.as_bytes());
        b.push(0);
        if caps & CLIENT_PLUGIN_AUTH_LENENC != 0 {
            put_lenenc(b, scramble.len() as u64);
        } else {
            b.push(scramble.len() as u8);
        }
        b.extend_from_slice(&scramble);
        if let Some(db) = &p.database {
            b.extend_from_slice(db.as_bytes());
            b.push(0);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            b.extend_from_slice(plugin.as_bytes());
            b.push(0);
        }
        self.wire.send()?;
        self.auth_loop(&mut auth)?;
        if caps & CLIENT_COMPRESS != 0 {
            self.wire.enable_compression();
        }
        Ok(())
    }

    /// Follows auth-switch and auth-more-data packets until OK or ERR.
    fn auth_loop(&mut self, auth: &mut auth::Auth<'_>) -> Result<(), ClientError> {
        for _ in 0..8 {
            let pkt = self.wire.read_packet()?;
            let reply = match pkt.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(parse_err(pkt)),
                Some(0xFE) => Some(auth.switch(&pkt[1..])?),
                Some(0x01) => auth.more_data(&pkt[1..])?,
                _ => return Err(protocol("authentication")),
            };
            if let Some(reply) = reply {
                self.wire.begin_packet().extend_from_slice(&reply);
                self.wire.send()?;
            }
        }
        Err(ClientError::Protocol(format!(
            "authentication ({}) did not end after 8 exchanges",
            auth.plugin()
        )))
    }

    /// Sends COM_QUERY with `sql` and counts the result.
    pub(crate) fn query(&mut self, sql: &[u8]) -> Result<Outcome, ClientError> {
        self.query_keeping(sql, None)
    }

    /// Runs `LOAD DATA LOCAL INFILE` statement `sql`, answering the server's file request
    /// with `data`; returns (rows loaded, warnings).
    pub(crate) fn load_local(&mut self, sql: &str, data: &[u8]) -> Result<(u64, u16), ClientError> {
        let b = self.wire.begin_command();
        b.push(COM_QUERY);
        b.extend_from_slice(sql.as_bytes());
        self.wire.send()?;
        let pkt = self.wire.read_packet()?;
        match pkt.first() {
            Some(0xFB) => {}
            Some(0xFF) => return Err(parse_err(pkt)),
            _ => return Err(protocol("LOAD DATA LOCAL request")),
        }
        if !data.is_empty() {
            self.wire.begin_packet().extend_from_slice(data);
            self.wire.send()?;
        }
        self.wire.begin_packet();
        self.wire.send()?;
        let pkt = self.wire.read_packet()?;
        match pkt.first() {
            Some(0x00) => {
                let (affected, _, warnings) = parse_ok_warnings(pkt)?;
                Ok((affected, warnings))
            }
            Some(0xFF) => Err(parse_err(pkt)),
            _ => Err(protocol("LOAD DATA result")),
        }
    }

    /// Runs a text query and returns its rows decoded as text (NULL → `None`).
    pub(crate) fn query_rows(
        &mut self,
        sql: &str,
    ) -> Result<Vec<Vec<Option<String>>>, ClientError> {
        let b = self.wire.begin_command();
        b.push(COM_QUERY);
        b.extend_from_slice(sql.as_bytes());
        self.wire.send()?;
        let mut rows = Vec::new();
        let mut bad = false;
        self.read_result(false, |row| {
            let mut c = Cur::new(row);
            let mut vals = Vec::new();
            while !c.rest().is_empty() {
                match c.lenenc_bytes() {
                    Ok(v) => vals.push(v.map(|b| String::from_utf8_lossy(b).into_owned())),
                    Err(()) => {
                        bad = true;
                        break;
                    }
                }
            }
            rows.push(vals);
        })?;
        if bad {
            return Err(protocol("text row"));
        }
        Ok(rows)
    }

    /// Prepares `sql` on the server.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<ServerStmt, ClientError> {
        let b = self.wire.begin_command();
        b.push(COM_STMT_PREPARE);
        b.extend_from_slice(sql.as_bytes());
        self.wire.send()?;
        let pkt = self.wire.read_packet()?;
        if pkt.first() == Some(&0xFF) {
            return Err(parse_err(pkt));
        }
        let mut c = Cur::new(pkt);
        if c.u8() != Some(0) {
            return Err(protocol("prepare"));
        }
        let id = c.u32().ok_or_else(|| protocol("prepare"))?;
        let columns = c.u16().ok_or_else(|| protocol("prepare"))?;
        let params = c.u16().ok_or_else(|| protocol("prepare"))?;
        // Parameter and column definitions, each block closed by an EOF packet.
        for n in [params, columns] {
            if n > 0 {
                for _ in 0..n {
                    self.wire.read_packet()?;
                }
                let eof = self.wire.read_packet()?;
                if !is_eof(eof) {
                    return Err(protocol("prepare EOF"));
                }
            }
        }
        Ok(ServerStmt {
            id,
            params,
            types: Vec::new(),
        })
    }

    /// Executes a prepared statement (binary protocol) and counts the result, keeping the
    /// rows' values in `keep` when given.
    pub(crate) fn execute(
        &mut self,
        st: &mut ServerStmt,
        params: &[Value<'_>],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, ClientError> {
        let b = self.wire.begin_command();
        encode_execute(b, st, params);
        if let Err(e) = self.wire.send() {
            st.types.clear();
            return Err(e.into());
        }
        let r = self.read_result_with(true, |_| {}, keep);
        if r.is_err() {
            // The server may not have stored the types; send them again next time.
            st.types.clear();
        }
        r
    }

    /// Sends COM_QUERY with `sql`, keeping the rows' values in `keep` when given.
    pub(crate) fn query_keeping(
        &mut self,
        sql: &[u8],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, ClientError> {
        let b = self.wire.begin_command();
        b.push(COM_QUERY);
        b.extend_from_slice(sql);
        self.wire.send()?;
        self.read_result_with(false, |_| {}, keep)
    }

    /// Reads one or more result sets (or OKs) of a text (`binary` false) or prepared
    /// command, calling `on_row` with each row payload; the same state machine as the
    /// multiplexed sessions.
    fn read_result(
        &mut self,
        binary: bool,
        on_row: impl FnMut(&[u8]),
    ) -> Result<Outcome, ClientError> {
        self.read_result_with(binary, on_row, None)
    }

    fn read_result_with(
        &mut self,
        binary: bool,
        mut on_row: impl FnMut(&[u8]),
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, ClientError> {
        let mut dec = ResponseDecoder::new(false);
        dec.begin(binary);
        let mut keep = keep;
        if let Some(k) = keep.as_deref_mut() {
            k.clear();
            std::mem::swap(&mut dec.kept, k);
            dec.capture = true;
        }
        let r = self.read_loop(&mut dec, &mut on_row);
        if let Some(k) = keep {
            std::mem::swap(&mut dec.kept, k);
        }
        r
    }

    fn read_loop(
        &mut self,
        dec: &mut ResponseDecoder,
        on_row: &mut impl FnMut(&[u8]),
    ) -> Result<Outcome, ClientError> {
        loop {
            let pkt = self.wire.read_packet()?;
            let before = dec.rows();
            match dec.packet(pkt)? {
                Step::More => {
                    if dec.rows() > before {
                        on_row(pkt);
                    }
                }
                Step::Done(result) => return result,
                Step::LocalInfile => {
                    // The server asks for a local file: never read one. An empty reply
                    // keeps the connection in step.
                    self.wire.begin_packet();
                    self.wire.send()?;
                    let _ = self.read_result(false, ignore_row as fn(&[u8]));
                    return Err(ClientError::Unsupported(
                        "the server asked for a local file (LOAD DATA LOCAL), which dbdelta never sends".into(),
                    ));
                }
            }
        }
    }
}

/// A row callback that ignores the row (a plain fn, so `read_result` may recurse).
fn ignore_row(_: &[u8]) {}

fn type_of(v: &Value<'_>) -> u8 {
    match v {
        Value::Int(_) => TYPE_LONGLONG,
        Value::Text(_) => TYPE_STRING,
        Value::Null => TYPE_NULL,
    }
}

impl Drop for RawConn {
    fn drop(&mut self) {
        // A polite COM_QUIT keeps "Aborted connection" warnings out of the server log.
        self.wire.send_quiet(&[COM_QUIT]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes().to_vec();
        v[3] = seq;
        v.extend_from_slice(payload);
        v
    }

    fn read_packet(s: &mut UnixStream) -> (u8, Vec<u8>) {
        let mut h = [0u8; 4];
        s.read_exact(&mut h).unwrap();
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let mut p = vec![0; len];
        s.read_exact(&mut p).unwrap();
        (h[3], p)
    }

    /// A fake MySQL 8 server asks for caching_sha2_password full authentication: over a
    /// secure channel (here a Unix socket, like TLS) the password goes in clear.
    #[test]
    fn caching_sha2_full_auth_on_a_secure_channel() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fake.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let caps: u32 = CLIENT_PROTOCOL_41
                | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH
                | CLIENT_PLUGIN_AUTH_LENENC
                | CLIENT_TRANSACTIONS
                | CLIENT_MULTI_RESULTS;
            let mut h = vec![10];
            h.extend_from_slice(b"8.0.36\0");
            h.extend_from_slice(&7u32.to_le_bytes());
            h.extend_from_slice(b"abcdefgh\0");
            h.extend_from_slice(&(caps as u16).to_le_bytes());
            h.push(45);
            h.extend_from_slice(&2u16.to_le_bytes());
            h.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
            h.push(21);
            h.extend_from_slice(&[0; 10]);
            h.extend_from_slice(b"ijklmnopqrst\0");
            h.extend_from_slice(b"caching_sha2_password\0");
            s.write_all(&packet(0, &h)).unwrap();
            let (seq, resp) = read_packet(&mut s);
            assert_eq!(seq, 1);
            let caps = u32::from_le_bytes([resp[0], resp[1], resp[2], resp[3]]);
            assert_eq!(caps & (CLIENT_SSL | CLIENT_COMPRESS), 0);
            // "perform full authentication"
            s.write_all(&packet(2, &[1, 4])).unwrap();
            let (seq, pw) = read_packet(&mut s);
            assert_eq!(seq, 3);
            s.write_all(&packet(4, &[0, 0, 0, 2, 0, 0, 0])).unwrap();
            let (_, quit) = read_packet(&mut s);
            (pw, quit)
        });
        let p = ConnectParams {
            addr: Addr::Unix(path),
            user: "bench".into(),
            password: Some(Secret::new("s3cret".to_string())),
            database: None,
            tls: None,
            compress: false,
            key_exchange: auth::KeyExchange::default(),
        };
        let conn = RawConn::connect(&p, Duration::from_secs(5), None, None).unwrap();
        assert_eq!(conn.server_version, "8.0.36");
        drop(conn);
        let (pw, quit) = server.join().unwrap();
        assert_eq!(pw, b"s3cret\0");
        assert_eq!(quit, [COM_QUIT]);
    }
}
