//! A small blocking client of the MySQL client/server protocol: the conversation of one
//! connection over [`crate::wire`] (handshake v10 with the authentication plugins of
//! [`crate::auth`], COM_QUERY (text) and COM_STMT_PREPARE/EXECUTE (binary), optionally over
//! TLS and with protocol compression), its messages and packets from [`crate::proto`].
//! Result rows are counted, not decoded, unless the caller asks for text values (settings,
//! scalars).

use crate::auth;
use crate::errors::{malformed, ClientError};
use crate::proto::caps;
use crate::proto::command::{self, HandshakeResponse, ServerStmt};
use crate::proto::response::{ResponseDecoder, Step};
use crate::proto::server::{self, parse_err, parse_ok_warnings};
use crate::wire::{Stream, Wire};
use dbdelta_engine::{Outcome, Value};
use dbdelta_model::Secret;
use std::io;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the server listens (the kit's: an IPv6 host prints in brackets).
pub(crate) use dbdelta_kit::Addr;

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

/// A socket timeout while connecting becomes [`ClientError::Timeout`]; other errors stay.
fn timed_out(e: io::Error, limit: Duration, phase: &str) -> ClientError {
    if dbdelta_kit::net::is_timeout(&e) {
        ClientError::Timeout {
            reason: format!(
                "connect timeout: no answer within {:.1} s {phase} (raise --connect-timeout if the server is slow)",
                limit.as_secs_f64()
            ),
            source: e,
        }
    } else {
        ClientError::Io(e)
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
            Addr::Tcp { host, port } => {
                let s = dbdelta_kit::net::connect_tcp(host, *port, source, timeout)
                    .map_err(|e| timed_out(e, timeout, "connecting"))?;
                // Writes are small and rare here; one bound of the whole timeout each.
                dbdelta_kit::net::handshake_deadline(&s, Some(timeout))?;
                Stream::Tcp(s)
            }
            Addr::Unix { path } => {
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
        conn.wire
            .set_max_payload(crate::wire::HANDSHAKE_MAX_PAYLOAD);
        conn.handshake(p).map_err(|e| match e {
            ClientError::Io(io) => timed_out(io, timeout, "during the handshake"),
            other => other,
        })?;
        conn.wire.set_max_payload(crate::wire::MAX_PAYLOAD);
        conn.wire.set_deadline(io_timeout)?;
        Ok(conn)
    }

    /// Takes the socket out for a multiplexed session; `None` for TLS or compressed
    /// connections and when bytes are still buffered.
    pub(crate) fn take_socket(&mut self) -> Option<dbdelta_engine::Socket> {
        self.wire.take_socket()
    }

    fn handshake(&mut self, p: &ConnectParams) -> Result<(), ClientError> {
        let greeting = server::parse_greeting(self.wire.read_packet()?)?;
        self.server_version = greeting.version;
        self.connection_id = greeting.connection_id;
        let server_caps = greeting.caps;
        let password = p
            .password
            .as_ref()
            .map(|s| s.expose().as_bytes())
            .unwrap_or(b"");
        let mut caps = caps::LONG_PASSWORD
            | caps::LONG_FLAG
            | caps::PROTOCOL_41
            | caps::TRANSACTIONS
            | caps::SECURE_CONNECTION
            | caps::MULTI_RESULTS
            | caps::PS_MULTI_RESULTS
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC
            // LOAD DATA LOCAL for bulk loads; the data always comes from memory, never a file.
            | caps::LOCAL_FILES;
        if p.database.is_some() {
            caps |= caps::CONNECT_WITH_DB;
        }
        caps &= server_caps | caps::CONNECT_WITH_DB;
        if p.compress {
            if server_caps & caps::COMPRESS == 0 {
                return Err(ClientError::Unsupported(format!(
                    "server {} does not support protocol compression; run without --compress",
                    self.server_version
                )));
            }
            caps |= caps::COMPRESS;
        }
        // ssl-mode=PREFERRED goes plain when the server offers no TLS.
        let tls = p
            .tls
            .as_ref()
            .filter(|t| server_caps & caps::SSL != 0 || !t.optional);
        if let Some(tls) = tls {
            if server_caps & caps::SSL == 0 {
                return Err(ClientError::Tls {
                    reason: "the server does not accept TLS connections (have_ssl is not YES: give it ssl_cert and ssl_key); enable TLS on the server, or use ssl-mode=PREFERRED or DISABLED (or drop --tls)".into(),
                    source: None,
                });
            }
            caps |= caps::SSL;
            command::ssl_request(self.wire.begin_packet(), caps);
            self.wire.send()?;
            self.wire
                .start_tls(Arc::clone(&tls.config), tls.name.clone())
                .map_err(|e| {
                    if dbdelta_kit::net::is_timeout(&e) {
                        return ClientError::Io(e);
                    }
                    ClientError::Tls {
                        reason: format!(
                            "TLS handshake failed: {e}; check that the server certificate is signed by the trusted CA (ssl-ca) and, under VERIFY_IDENTITY, names the host (VERIFY_CA does not compare names)"
                        ),
                        source: Some(e),
                    }
                })?;
        }
        let mut auth = auth::Auth::new(password, self.wire.is_secure(), &p.key_exchange);
        let (plugin, scramble) = auth.first(&greeting.plugin, &greeting.nonce)?;
        command::handshake_response(
            self.wire.begin_packet(),
            &HandshakeResponse {
                caps,
                user: &p.user,
                auth_data: &scramble,
                database: p.database.as_deref(),
                plugin: &plugin,
            },
        );
        self.wire.send()?;
        self.auth_loop(&mut auth)?;
        if caps & caps::COMPRESS != 0 {
            self.wire.enable_compression();
        }
        Ok(())
    }

    /// Follows auth-switch and auth-more-data packets until OK or ERR.
    fn auth_loop(&mut self, auth: &mut auth::Auth<'_>) -> Result<(), ClientError> {
        for _ in 0..8 {
            let pkt = self.wire.read_packet()?;
            let reply = match pkt.first() {
                Some(&server::OK) => return Ok(()),
                Some(&server::ERR) => return Err(parse_err(pkt)),
                Some(&server::EOF) => Some(auth.switch(&pkt[1..])?),
                Some(&server::AUTH_MORE_DATA) => auth.more_data(&pkt[1..])?,
                _ => return Err(malformed("authentication")),
            };
            if let Some(reply) = reply {
                command::auth_response(self.wire.begin_packet(), &reply);
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
        command::com_query(self.wire.begin_command(), sql.as_bytes());
        self.wire.send()?;
        let pkt = self.wire.read_packet()?;
        match pkt.first() {
            Some(&server::LOCAL_INFILE) => {}
            Some(&server::ERR) => return Err(parse_err(pkt)),
            _ => return Err(malformed("LOAD DATA LOCAL request")),
        }
        if !data.is_empty() {
            command::local_infile_data(self.wire.begin_packet(), data);
            self.wire.send()?;
        }
        // An empty packet ends the file.
        self.wire.begin_packet();
        self.wire.send()?;
        let pkt = self.wire.read_packet()?;
        match pkt.first() {
            Some(&server::OK) => {
                let (affected, _, warnings) = parse_ok_warnings(pkt)?;
                Ok((affected, warnings))
            }
            Some(&server::ERR) => Err(parse_err(pkt)),
            _ => Err(malformed("LOAD DATA result")),
        }
    }

    /// Runs a text query and returns its rows decoded as text (NULL → `None`).
    pub(crate) fn query_rows(
        &mut self,
        sql: &str,
    ) -> Result<Vec<Vec<Option<String>>>, ClientError> {
        command::com_query(self.wire.begin_command(), sql.as_bytes());
        self.wire.send()?;
        let mut rows = Vec::new();
        let mut bad = None;
        self.read_result(false, |row| match server::text_row(row) {
            Ok(vals) => rows.push(vals),
            Err(e) => bad = Some(e),
        })?;
        match bad {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }

    /// Prepares `sql` on the server.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<ServerStmt, ClientError> {
        command::com_stmt_prepare(self.wire.begin_command(), sql);
        self.wire.send()?;
        let ok = server::parse_prepare_ok(self.wire.read_packet()?)?;
        // Parameter and column definitions, each block closed by an EOF packet.
        for n in [ok.params, ok.columns] {
            if n > 0 {
                for _ in 0..n {
                    self.wire.read_packet()?;
                }
                let eof = self.wire.read_packet()?;
                if !server::is_eof(eof) {
                    return Err(malformed("prepare EOF"));
                }
            }
        }
        Ok(ServerStmt::new(ok.id, ok.params))
    }

    /// Executes a prepared statement (binary protocol) and counts the result, keeping the
    /// rows' values in `keep` when given.
    pub(crate) fn execute(
        &mut self,
        st: &mut ServerStmt,
        params: &[Value<'_>],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, ClientError> {
        command::com_stmt_execute(self.wire.begin_command(), st, params);
        if let Err(e) = self.wire.send() {
            st.forget_types();
            return Err(e.into());
        }
        let r = self.read_result_with(true, |_| {}, keep);
        if r.is_err() {
            // The server may not have stored the types; send them again next time.
            st.forget_types();
        }
        r
    }

    /// Sends COM_QUERY with `sql`, keeping the rows' values in `keep` when given.
    pub(crate) fn query_keeping(
        &mut self,
        sql: &[u8],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, ClientError> {
        command::com_query(self.wire.begin_command(), sql);
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

impl Drop for RawConn {
    fn drop(&mut self) {
        // A polite COM_QUIT keeps "Aborted connection" warnings out of the server log.
        command::com_quit(self.wire.begin_command());
        let _ = self.wire.send();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;

    use crate::proto::testing::{greeting, packet};

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
            let caps: u32 = caps::PROTOCOL_41
                | caps::SECURE_CONNECTION
                | caps::PLUGIN_AUTH
                | caps::PLUGIN_AUTH_LENENC
                | caps::TRANSACTIONS
                | caps::MULTI_RESULTS;
            let h = greeting(
                "8.0.36",
                caps,
                b"abcdefghijklmnopqrst",
                "caching_sha2_password",
            );
            s.write_all(&packet(0, &h)).unwrap();
            let (seq, resp) = read_packet(&mut s);
            assert_eq!(seq, 1);
            let caps = u32::from_le_bytes([resp[0], resp[1], resp[2], resp[3]]);
            assert_eq!(caps & (caps::SSL | caps::COMPRESS), 0);
            // "perform full authentication"
            s.write_all(&packet(2, &[1, 4])).unwrap();
            let (seq, pw) = read_packet(&mut s);
            assert_eq!(seq, 3);
            s.write_all(&packet(4, &[0, 0, 0, 2, 0, 0, 0])).unwrap();
            let (_, quit) = read_packet(&mut s);
            (pw, quit)
        });
        let p = ConnectParams {
            addr: Addr::Unix { path },
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
        assert_eq!(quit, [0x01], "COM_QUIT");
    }
}
