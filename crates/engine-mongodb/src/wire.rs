//! The blocking transport of a connection: plain TCP or TLS (rustls; MongoDB speaks TLS
//! from the first byte, no upgrade request), one request written whole, replies read into
//! a reused buffer and cut by the `OP_MSG` framing.

use crate::msg::{self, Limits};
use crate::spec::MongoParams;
use bson::raw::RawDocumentBuf;
use dbdelta_engine::EngineError;
use dbdelta_kit::tls::{TlsFiles, TlsMode};
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, StreamOwned};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

/// The socket of a connection.
pub enum Stream {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over TCP.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Tcp(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }

    /// True when the server is reached over TLS or on a loopback address: where PLAIN may
    /// send a password.
    pub fn is_private(&self) -> bool {
        matches!(self, Stream::Tls(_)) || self.tcp().peer_addr().is_ok_and(|a| a.ip().is_loopback())
    }

    /// True over TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Bounds every blocking read and write.
    pub fn set_timeout(&self, limit: Option<std::time::Duration>) -> std::io::Result<()> {
        self.tcp().set_read_timeout(limit)?;
        self.tcp().set_write_timeout(limit)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The TLS client configuration of a target whose mode is not `Disable`.
pub fn tls_config(p: &MongoParams) -> Result<Option<Arc<rustls::ClientConfig>>, EngineError> {
    if p.tls == TlsMode::Disable {
        return Ok(None);
    }
    let files = TlsFiles {
        ca: p.tls_ca.as_deref(),
        ca_param: "tlsCAFile",
        // One PEM file holds both, as MongoDB's tlsCertificateKeyFile does.
        cert: p.tls_cert_key.as_deref(),
        cert_param: "tlsCertificateKeyFile",
        key: p.tls_cert_key.as_deref(),
        key_param: "tlsCertificateKeyFile",
    };
    let check = p.tls.check_with_ca(p.tls_ca.is_some());
    dbdelta_kit::tls::client_config(&p.name, check, &files).map(Some)
}

fn io(what: &str, e: std::io::Error) -> EngineError {
    let kind = if matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ) {
        dbdelta_engine::ErrorKind::Timeout
    } else {
        dbdelta_engine::ErrorKind::Connection
    };
    EngineError::with_source(kind, format!("MongoDB {what}: {e}"), e)
}

/// Opens the socket: TCP within the connect timeout, then the TLS handshake when asked.
pub fn open(
    p: &MongoParams,
    tls: Option<&Arc<rustls::ClientConfig>>,
    source: Option<std::net::Ipv4Addr>,
    timeout: std::time::Duration,
) -> Result<Stream, EngineError> {
    let tcp = dbdelta_kit::net::connect_tcp(&p.host, p.port, source, timeout).map_err(|e| {
        EngineError::with_source(
            dbdelta_engine::ErrorKind::Connection,
            format!("cannot connect to MongoDB at {}:{}: {e}", p.host, p.port),
            e,
        )
    })?;
    let Some(config) = tls else {
        return Ok(Stream::Tcp(tcp));
    };
    tcp.set_read_timeout(Some(timeout))
        .map_err(|e| io("socket", e))?;
    tcp.set_write_timeout(Some(timeout))
        .map_err(|e| io("socket", e))?;
    let name = ServerName::try_from(p.host.clone()).map_err(|e| {
        EngineError::config(format!("TLS: '{}' is not a valid server name: {e}", p.host))
    })?;
    let conn = ClientConnection::new(Arc::clone(config), name)
        .map_err(|e| EngineError::config(format!("TLS: {e}")))?;
    let mut s = StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock).map_err(|e| {
            EngineError::config(format!(
                "TLS handshake with MongoDB at {}:{} failed: {e}; check the server certificate, tlsCAFile, \
                 tlsAllowInvalidHostnames (skips the host name) and tlsAllowInvalidCertificates (checks no certificate)",
                p.host, p.port
            ))
        })?;
    }
    Ok(Stream::Tls(Box::new(s)))
}

/// A blocking message channel: the stream, a read buffer and the next request id.
pub struct Wire {
    /// The socket.
    pub stream: Stream,
    rbuf: Vec<u8>,
    rlen: usize,
    next_id: i32,
}

impl Wire {
    /// A channel over `stream`.
    pub fn new(stream: Stream) -> Self {
        Wire {
            stream,
            rbuf: vec![0; 16 * 1024],
            rlen: 0,
            next_id: 1,
        }
    }

    /// A fresh request id.
    pub fn take_id(&mut self) -> i32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        id
    }

    /// The next request id (handed on to a session).
    pub fn peek_id(&self) -> i32 {
        self.next_id
    }

    /// Writes `bytes` whole.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), EngineError> {
        self.stream.write_all(bytes).map_err(|e| io("write", e))?;
        self.stream.flush().map_err(|e| io("write", e))
    }

    /// Reads more bytes into the buffer (growing it when full).
    pub fn fill(&mut self) -> Result<(), EngineError> {
        if self.rlen == self.rbuf.len() {
            let grow = self.rbuf.len();
            self.rbuf.resize(self.rbuf.len() + grow, 0);
        }
        match self.stream.read(&mut self.rbuf[self.rlen..]) {
            Ok(0) => Err(EngineError::connection("MongoDB closed the connection")),
            Ok(n) => {
                self.rlen += n;
                Ok(())
            }
            Err(e) => Err(io("read", e)),
        }
    }

    /// The bytes received and not yet consumed.
    pub fn buffered(&self) -> &[u8] {
        &self.rbuf[..self.rlen]
    }

    /// Drops `n` consumed bytes from the front.
    pub fn consume(&mut self, n: usize) {
        self.rbuf.copy_within(n..self.rlen, 0);
        self.rlen -= n;
    }

    /// Runs one command and returns its reply document (not checked for `ok`).
    pub fn command(
        &mut self,
        body: &RawDocumentBuf,
        limits: &Limits,
    ) -> Result<RawDocumentBuf, EngineError> {
        let id = self.take_id();
        let mut out = Vec::with_capacity(body.as_bytes().len() + 32);
        msg::encode(&mut out, id, body.as_bytes(), None, limits)?;
        self.send(&out)?;
        loop {
            if let Some((m, used)) = msg::split(self.buffered(), limits)? {
                if m.response_to != id {
                    return Err(EngineError::connection(format!(
                        "MongoDB protocol error: a reply to request {} while {id} was awaited",
                        m.response_to
                    )));
                }
                let doc = RawDocumentBuf::from_bytes(m.body.to_vec())
                    .map_err(|e| EngineError::connection(format!("MongoDB protocol error: {e}")))?;
                self.consume(used);
                return Ok(doc);
            }
            self.fill()?;
        }
    }
}
