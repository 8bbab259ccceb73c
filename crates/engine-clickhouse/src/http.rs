//! A small blocking HTTP/1.1 client for ClickHouse's HTTP interface: one keep-alive TCP
//! connection, `POST` with the query as the body, responses read with `Content-Length` or
//! chunked transfer encoding and handed to the caller piece by piece, so a large result is
//! counted without being held in memory.
//!
//! Everything read from the server is bounded: a status or header line, the whole header,
//! a chunk-size line and the body (by a limit the caller gives: what it can hold or what a
//! step can need), so a server that streams without end fails the request instead of filling
//! memory. A response is ClickHouse's only when it carries an `X-ClickHouse-*` header (every
//! query response does, since at least 18.16's `X-ClickHouse-Server-Display-Name`): any
//! other HTTP server is refused before its body is read.

use base64::Engine as _;
use dbdelta_engine::{EngineError, ErrorKind};
use dbdelta_kit::net::{connect_tcp, is_timeout};
use dbdelta_model::Secret;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::time::{Duration, Instant};

/// Where and how to reach the server.
#[derive(Clone)]
pub(crate) struct HttpTarget {
    /// Target name, for messages.
    pub(crate) target: String,
    /// Host name or address.
    pub(crate) host: String,
    /// HTTP port.
    pub(crate) port: u16,
    /// User name; `None` = the server's `default` user without credentials.
    pub(crate) user: Option<String>,
    /// The user's password (never printed).
    pub(crate) password: Option<Secret>,
}

impl std::fmt::Debug for HttpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTarget")
            .field("target", &self.target)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password)
            .finish()
    }
}

/// What the server answered, besides the body the sink received.
#[derive(Debug, Default)]
pub(crate) struct Response {
    /// HTTP status code.
    pub(crate) status: u16,
    /// `X-ClickHouse-Exception-Code` (newer servers).
    pub(crate) exception_code: Option<u32>,
    /// `written_rows` of `X-ClickHouse-Summary` (newer servers).
    pub(crate) written_rows: Option<u64>,
    /// The body of an error response (status other than 200).
    pub(crate) error_body: String,
}

/// One keep-alive connection to the server.
pub(crate) struct HttpConn {
    target: HttpTarget,
    /// `Authorization: Basic …\r\n`, built once; holds the secret, so never printed.
    auth: String,
    source: Option<Ipv4Addr>,
    connect_timeout: Duration,
    io_timeout: Option<Duration>,
    stream: Option<BufReader<TcpStream>>,
    last_used: Instant,
    /// The server's keep-alive timeout (`Keep-Alive: timeout=N`, 3 s by default).
    keep_alive: Duration,
    request: Vec<u8>,
    line: String,
}

/// Longest status or header line accepted.
const MAX_HEADER_LINE: usize = 16 * 1024;
/// Most bytes of status line and headers together.
const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Longest chunk-size line (hex size and extensions) accepted.
const MAX_CHUNK_LINE: usize = 1024;
/// Most bytes of an error response's body read (and kept for the message).
const MAX_ERROR_BODY: u64 = 1024 * 1024;

/// How long before the server's keep-alive timeout an idle connection is replaced rather
/// than reused (a request racing the server's close would fail).
const KEEP_ALIVE_MARGIN: Duration = Duration::from_millis(500);

impl HttpConn {
    /// A connection that connects on first use (and again after the server closed it).
    pub(crate) fn new(
        target: HttpTarget,
        source: Option<Ipv4Addr>,
        connect_timeout: Duration,
        io_timeout: Option<Duration>,
    ) -> Self {
        let auth = match &target.user {
            Some(u) => {
                let pw = target.password.as_ref().map_or("", |p| p.expose());
                let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{pw}"));
                format!("Authorization: Basic {token}\r\n")
            }
            None => String::new(),
        };
        HttpConn {
            target,
            auth,
            source,
            connect_timeout,
            io_timeout,
            stream: None,
            last_used: Instant::now(),
            keep_alive: Duration::from_secs(3),
            request: Vec::with_capacity(4096),
            line: String::with_capacity(256),
        }
    }

    fn io_error(&self, what: &str, e: &io::Error) -> EngineError {
        let (kind, why) = match (is_timeout(e), self.io_timeout) {
            // The socket's timeout, not an OS error text ("Resource temporarily unavailable").
            (true, Some(t)) => (
                ErrorKind::Timeout,
                format!("nothing read within {:.1} s", t.as_secs_f64()),
            ),
            (true, None) => (ErrorKind::Timeout, e.to_string()),
            (false, _) => (ErrorKind::Connection, e.to_string()),
        };
        EngineError::new(
            kind,
            format!(
                "target '{}': {what} {}:{}: {why}",
                self.target.target, self.target.host, self.target.port
            ),
        )
    }

    /// Opens the TCP connection (within the connect timeout).
    pub(crate) fn connect(&mut self) -> Result<(), EngineError> {
        let s = connect_tcp(
            &self.target.host,
            self.target.port,
            self.source,
            self.connect_timeout,
        )
        .map_err(|e| {
            let mut err = self.io_error("cannot connect to ClickHouse at", &e);
            err.message
                .push_str("; is the server running and is this its HTTP port (8123 by default)?");
            err
        })?;
        s.set_read_timeout(self.io_timeout)
            .and_then(|_| s.set_write_timeout(self.io_timeout))
            .map_err(|e| self.io_error("cannot set timeouts on the connection to", &e))?;
        self.stream = Some(BufReader::with_capacity(64 * 1024, s));
        self.last_used = Instant::now();
        Ok(())
    }

    /// Sends `POST {path}` with `body`; a 200 response's body goes to `sink` as it arrives,
    /// up to `limit` bytes (a longer body fails the request). A reused connection the server
    /// closed while idle is reopened and the request sent once more (the server had not
    /// seen it).
    pub(crate) fn post(
        &mut self,
        path: &str,
        body: &[u8],
        limit: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<Response, EngineError> {
        if self.stream.is_some() && self.last_used.elapsed() + KEEP_ALIVE_MARGIN >= self.keep_alive
        {
            self.stream = None;
        }
        let reused = self.stream.is_some();
        if !reused {
            self.connect()?;
        }
        self.build_request(path, body);
        match self.exchange(limit, sink) {
            Ok(r) => Ok(r),
            Err(Failure::BeforeResponse(_)) if reused => {
                self.connect()?;
                self.exchange(limit, sink).map_err(|f| self.failure(f))
            }
            Err(f) => Err(self.failure(f)),
        }
    }

    fn failure(&mut self, f: Failure) -> EngineError {
        self.stream = None;
        match f {
            Failure::BeforeResponse(e) => self.io_error("no answer from ClickHouse at", &e),
            Failure::During(e) => self.io_error("lost the connection to ClickHouse at", &e),
            Failure::Protocol(m) => EngineError::connection(format!(
                "target '{}': bad HTTP response from {}:{}: {m}",
                self.target.target, self.target.host, self.target.port
            )),
            Failure::NotClickHouse(status) => EngineError::config(format!(
                "target '{}': {}:{} answered HTTP {status} but is not ClickHouse: no \
                 X-ClickHouse-* header in its response; check the host and port (ClickHouse's \
                 HTTP port is 8123 by default)",
                self.target.target, self.target.host, self.target.port
            )),
            Failure::TooLarge(limit) => EngineError::statement(format!(
                "target '{}': the response from {}:{} is larger than {} MiB, the most dbdelta \
                 reads for this request; the connection was closed",
                self.target.target,
                self.target.host,
                self.target.port,
                limit / (1024 * 1024)
            )),
        }
    }

    fn build_request(&mut self, path: &str, body: &[u8]) {
        let r = &mut self.request;
        r.clear();
        r.extend_from_slice(b"POST ");
        r.extend_from_slice(path.as_bytes());
        r.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        if self.target.host.contains(':') {
            // An IPv6 literal.
            r.extend_from_slice(format!("[{}]", self.target.host).as_bytes());
        } else {
            r.extend_from_slice(self.target.host.as_bytes());
        }
        r.extend_from_slice(format!(":{}\r\n", self.target.port).as_bytes());
        r.extend_from_slice(self.auth.as_bytes());
        r.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        r.extend_from_slice(body);
    }

    fn exchange(&mut self, limit: u64, sink: &mut dyn FnMut(&[u8])) -> Result<Response, Failure> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(Failure::Protocol("not connected".into()));
        };
        stream
            .get_mut()
            .write_all(&self.request)
            .map_err(Failure::BeforeResponse)?;
        // Status line: EOF here on a reused connection means the server had closed it.
        self.line.clear();
        let n = read_line_limited(stream, &mut self.line, MAX_HEADER_LINE, "status line").map_err(
            |f| match f {
                Failure::During(e) => Failure::BeforeResponse(e),
                f => f,
            },
        )?;
        if n == 0 {
            return Err(Failure::BeforeResponse(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed by the server",
            )));
        }
        let mut header_bytes = n;
        let status: u16 = self
            .line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Failure::Protocol(format!("status line '{}'", self.line.trim())))?;
        let mut resp = Response {
            status,
            ..Response::default()
        };
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut close = false;
        let mut clickhouse = false;
        loop {
            self.line.clear();
            let n = read_line_limited(stream, &mut self.line, MAX_HEADER_LINE, "header line")?;
            if n == 0 {
                return Err(Failure::During(io::ErrorKind::UnexpectedEof.into()));
            }
            header_bytes += n;
            if header_bytes > MAX_HEADER_BYTES {
                return Err(Failure::Protocol(format!(
                    "headers longer than {} KiB",
                    MAX_HEADER_BYTES / 1024
                )));
            }
            let h = self.line.trim_end();
            if h.is_empty() {
                break;
            }
            let Some((name, value)) = h.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let name = name.trim().to_ascii_lowercase();
            clickhouse |= name.starts_with("x-clickhouse-");
            match name.as_str() {
                "content-length" => length = value.parse().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "keep-alive" => {
                    if let Some(t) = value
                        .split(',')
                        .find_map(|p| p.trim().strip_prefix("timeout="))
                        .and_then(|t| t.parse::<u64>().ok())
                    {
                        self.keep_alive = Duration::from_secs(t);
                    }
                }
                "x-clickhouse-exception-code" => resp.exception_code = value.parse().ok(),
                "x-clickhouse-summary" => resp.written_rows = summary_written_rows(value),
                _ => {}
            }
        }
        if !clickhouse {
            return Err(Failure::NotClickHouse(status));
        }
        let mut error_body = Vec::new();
        let limit = if status == 200 { limit } else { MAX_ERROR_BODY };
        let mut deliver = |piece: &[u8]| {
            if status == 200 {
                sink(piece)
            } else {
                error_body.extend_from_slice(piece)
            }
        };
        let mut body = Body {
            left: limit,
            limit,
            deliver: &mut deliver,
        };
        if chunked {
            read_chunked(stream, &mut self.line, &mut body)?;
        } else if let Some(len) = length {
            if len > limit {
                return Err(Failure::TooLarge(limit));
            }
            read_exact_to(stream, len, &mut body)?;
        } else {
            // Neither: the body ends when the server closes the connection.
            read_to_end(stream, &mut body)?;
            close = true;
        }
        resp.error_body = String::from_utf8_lossy(&error_body).into_owned();
        if close {
            self.stream = None;
        }
        self.last_used = Instant::now();
        Ok(resp)
    }
}

/// Where a response body goes, and how much more of it may come.
struct Body<'a> {
    left: u64,
    limit: u64,
    deliver: &'a mut dyn FnMut(&[u8]),
}

impl Body<'_> {
    /// Hands `piece` on, or fails when the body outgrows its limit.
    fn take(&mut self, piece: &[u8]) -> Result<(), Failure> {
        let n = piece.len() as u64;
        if n > self.left {
            return Err(Failure::TooLarge(self.limit));
        }
        self.left -= n;
        (self.deliver)(piece);
        Ok(())
    }
}

/// `read_line` that fails on a line longer than `max` bytes instead of growing without end.
fn read_line_limited(
    stream: &mut BufReader<TcpStream>,
    line: &mut String,
    max: usize,
    what: &str,
) -> Result<usize, Failure> {
    let n = stream
        .by_ref()
        .take(max as u64 + 1)
        .read_line(line)
        .map_err(Failure::During)?;
    if n > max {
        return Err(Failure::Protocol(format!(
            "{what} longer than {} KiB",
            max / 1024
        )));
    }
    Ok(n)
}

enum Failure {
    /// Nothing of the response arrived: the request may be retried on a new connection.
    BeforeResponse(io::Error),
    /// The connection failed mid-response.
    During(io::Error),
    /// The server did not speak HTTP as expected.
    Protocol(String),
    /// An HTTP response without any `X-ClickHouse-*` header (its status).
    NotClickHouse(u16),
    /// The body outgrew its limit (in bytes).
    TooLarge(u64),
}

fn read_chunked(
    stream: &mut BufReader<TcpStream>,
    line: &mut String,
    body: &mut Body<'_>,
) -> Result<(), Failure> {
    loop {
        line.clear();
        if read_line_limited(stream, line, MAX_CHUNK_LINE, "chunk size line")? == 0 {
            return Err(Failure::During(io::ErrorKind::UnexpectedEof.into()));
        }
        let size_text = line.trim().split(';').next().unwrap_or("");
        let size = u64::from_str_radix(size_text, 16)
            .map_err(|_| Failure::Protocol(format!("chunk size '{size_text}'")))?;
        if size == 0 {
            // Trailers, then the empty line (bounded like headers).
            let mut trailer_bytes = 0;
            loop {
                line.clear();
                let n = read_line_limited(stream, line, MAX_HEADER_LINE, "trailer line")?;
                trailer_bytes += n;
                if n == 0 || line.trim().is_empty() {
                    return Ok(());
                }
                if trailer_bytes > MAX_HEADER_BYTES {
                    return Err(Failure::Protocol(format!(
                        "trailers longer than {} KiB",
                        MAX_HEADER_BYTES / 1024
                    )));
                }
            }
        }
        if size > body.left {
            return Err(Failure::TooLarge(body.limit));
        }
        read_exact_to(stream, size, body)?;
        line.clear();
        read_line_limited(stream, line, MAX_CHUNK_LINE, "chunk end")?;
    }
}

fn read_exact_to(
    stream: &mut BufReader<TcpStream>,
    mut left: u64,
    body: &mut Body<'_>,
) -> Result<(), Failure> {
    while left > 0 {
        let buf = stream.fill_buf().map_err(Failure::During)?;
        if buf.is_empty() {
            return Err(Failure::During(io::ErrorKind::UnexpectedEof.into()));
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        body.take(&buf[..n])?;
        stream.consume(n);
        left -= n as u64;
    }
    Ok(())
}

fn read_to_end(stream: &mut BufReader<TcpStream>, body: &mut Body<'_>) -> Result<(), Failure> {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buf).map_err(Failure::During)?;
        if n == 0 {
            return Ok(());
        }
        body.take(&buf[..n])?;
    }
}

/// `written_rows` of `{"read_rows":"0",…,"written_rows":"10",…}`.
fn summary_written_rows(json: &str) -> Option<u64> {
    let at = json.find("\"written_rows\"")?;
    json[at + 14..]
        .trim_start_matches([':', ' ', '"'])
        .split('"')
        .next()?
        .parse()
        .ok()
}

/// Appends `s` percent-encoded for a URL query value.
pub(crate) fn push_query_value(out: &mut String, s: &str) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn summary_and_encoding() {
        assert_eq!(
            summary_written_rows(r#"{"read_rows":"5","written_rows":"10","x":"1"}"#),
            Some(10)
        );
        assert_eq!(summary_written_rows("{}"), None);
        let mut s = String::new();
        push_query_value(&mut s, "a b&c=d/é");
        assert_eq!(s, "a%20b%26c%3Dd%2F%C3%A9");
    }

    #[test]
    fn password_never_in_debug() {
        let t = HttpTarget {
            target: "ch".into(),
            host: "127.0.0.1".into(),
            port: 1,
            user: Some("bob".into()),
            password: Some(Secret::new("hunter2")),
        };
        assert!(!format!("{t:?}").contains("hunter2"));
    }

    /// A scripted server: answers each request with the next canned response, then
    /// closes the connection when the script says so.
    fn serve(responses: Vec<(&'static [u8], bool)>) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut it = responses.into_iter();
            'conns: for conn in l.incoming() {
                let mut conn = conn.unwrap();
                let mut r = BufReader::new(conn.try_clone().unwrap());
                loop {
                    // Read one request: headers, then Content-Length bytes.
                    let mut len = 0usize;
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap() == 0 {
                            continue 'conns;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).unwrap();
                    let Some((resp, close)) = it.next() else {
                        return;
                    };
                    conn.write_all(resp).unwrap();
                    if close {
                        continue 'conns;
                    }
                }
            }
        });
        port
    }

    fn conn(port: u16) -> HttpConn {
        HttpConn::new(
            HttpTarget {
                target: "t".into(),
                host: "127.0.0.1".into(),
                port,
                user: Some("default".into()),
                password: None,
            },
            None,
            Duration::from_secs(2),
            Some(Duration::from_secs(5)),
        )
    }

    #[test]
    fn chunked_length_errors_and_reconnect() {
        let port = serve(vec![
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-ClickHouse-Server-Display-Name: vm\r\nKeep-Alive: timeout=10\r\n\r\n4\r\n1\n2\n\r\n2;x=y\r\n3\n\r\n0\r\n\r\n",
                false,
            ),
            (
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 9\r\nX-ClickHouse-Exception-Code: 60\r\n\r\nCode: 60.",
                // The server closes the kept-alive connection after this answer.
                true,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-ClickHouse-Summary: {\"written_rows\":\"7\"}\r\n\r\nok",
                false,
            ),
        ]);
        let mut c = conn(port);
        let mut got = Vec::new();
        let r = c
            .post("/?x=1", b"SELECT 1", 1 << 20, &mut |p| {
                got.extend_from_slice(p)
            })
            .unwrap();
        assert_eq!((r.status, got.as_slice()), (200, &b"1\n2\n3\n"[..]));
        assert_eq!(c.keep_alive, Duration::from_secs(10));

        let r = c
            .post("/", b"SELECT x", 1 << 20, &mut |_| {
                panic!("no body for errors")
            })
            .unwrap();
        assert_eq!(r.status, 500);
        assert_eq!(r.exception_code, Some(60));
        assert_eq!(r.error_body, "Code: 60.");

        // The reused connection was closed by the server: reconnect and send again.
        let mut got = Vec::new();
        let r = c
            .post("/", b"INSERT", 1 << 20, &mut |p| got.extend_from_slice(p))
            .unwrap();
        assert_eq!(got, b"ok");
        assert_eq!(r.written_rows, Some(7));
    }

    #[test]
    fn refused_connection_names_the_port() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let e = conn(port)
            .post("/", b"SELECT 1", 1 << 20, &mut |_| {})
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Connection);
        assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
        assert!(e.message.contains("HTTP port"), "{e}");
    }

    /// A server that reads one request, writes `head`, then repeats `unit` until the
    /// client goes away.
    fn stream_forever(head: &'static [u8], unit: &'static [u8]) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let Ok((mut conn, _)) = l.accept() else {
                return;
            };
            let mut r = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            if conn.write_all(head).is_err() {
                return;
            }
            let block: Vec<u8> = unit.iter().copied().cycle().take(64 * 1024).collect();
            while conn.write_all(&block).is_ok() {}
        });
        port
    }

    /// Posts to `port` with a body limit of 8 MiB, counting what the sink receives.
    fn post_counting(port: u16) -> (Result<Response, EngineError>, u64, Duration) {
        let started = Instant::now();
        let mut got = 0u64;
        let r = conn(port).post("/", b"SELECT 1", 8 << 20, &mut |p| got += p.len() as u64);
        (r, got, started.elapsed())
    }

    #[test]
    fn an_endless_body_fails_at_the_limit() {
        for head in [
            // Until the server closes, chunked, and a length far beyond the limit.
            &b"HTTP/1.1 200 OK\r\nX-ClickHouse-Server-Display-Name: x\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nX-ClickHouse-Query-Id: q\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX-ClickHouse-Query-Id: q\r\nContent-Length: 2147483648\r\n\r\n",
        ] {
            let unit: &'static [u8] = if head.ends_with(b"chunked\r\n\r\n") {
                b"8000\r\n"
            } else {
                b"1\t2\n"
            };
            let port = stream_forever(head, unit);
            let (r, got, took) = post_counting(port);
            let e = r.unwrap_err();
            assert!(e.message.contains("larger than 8 MiB"), "{e}");
            assert!(got <= 8 << 20, "{got} bytes delivered");
            // Bounded by the limit, not by the stream: generous for a loaded machine.
            assert!(took < Duration::from_secs(60), "{took:?}");
        }
    }

    #[test]
    fn endless_headers_and_lines_are_protocol_errors() {
        // One header line without end, and header lines without end.
        for (head, unit, what) in [
            (&b"HTTP/1.1 200 OK\r\nX-Long: "[..], &b"a"[..], "header line longer"),
            (b"HTTP/1.1 200 OK\r\n", b"X-ClickHouse-A: b\r\n", "headers longer"),
            (b"HTTP/1.1 200 ", b"OK", "status line longer"),
            (
                b"HTTP/1.1 200 OK\r\nX-ClickHouse-Query-Id: q\r\nTransfer-Encoding: chunked\r\n\r\n",
                b"0000",
                "chunk size line longer",
            ),
        ] {
            let port = stream_forever(head, unit);
            let (r, _, took) = post_counting(port);
            let e = r.unwrap_err();
            assert!(e.message.contains(what), "{what}: {e}");
            assert!(took < Duration::from_secs(60), "{took:?}");
        }
    }

    #[test]
    fn an_http_server_that_is_not_clickhouse_is_refused() {
        let port = serve(vec![(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<html></html>",
            false,
        )]);
        let e = conn(port)
            .post("/", b"SELECT 1", 1 << 20, &mut |_| {
                panic!("no body from a stranger")
            })
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(
            e.message
                .contains("answered HTTP 200 but is not ClickHouse")
                && e.message.contains("X-ClickHouse-")
                && e.message.contains("target 't'"),
            "{e}"
        );
        // An error page without ClickHouse's headers is refused the same way.
        let port = serve(vec![(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
            false,
        )]);
        let e = conn(port)
            .post("/", b"SELECT 1", 1 << 20, &mut |_| {})
            .unwrap_err();
        assert!(e.message.contains("HTTP 404 but is not ClickHouse"), "{e}");
    }
}
