//! The socket under a blocking connection: packets (framed by [`crate::proto`]) read and
//! written over TCP, a Unix socket or TLS, with reused read and write buffers, optionally
//! inside compressed frames ([`crate::proto::compress`]).
//!
//! Payloads of 16 MiB − 1 or more are split into several packets. One statement is usually
//! one `write` and one `read` system call: the whole response of a point select arrives in
//! one segment.

use crate::errors::Violation;
use crate::proto::compress::{self, parse_frame_header, FRAME_HEADER};
use crate::proto::{header, u24, HEADER, MAX_CHUNK};
use flate2::{Compress, Compression, Decompress};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Instant;

/// Largest payload accepted from the server, joined from split packets: 1 GiB, the largest
/// `max_allowed_packet` MySQL and MariaDB allow. A longer claim is refused from the header
/// of the packet that would pass it, before its bytes are read or buffered.
pub(crate) const MAX_PAYLOAD: usize = 1 << 30;
/// The largest payload accepted during the handshake: greetings, authentication switches,
/// public keys and OK/ERR packets are small, so a server (or an impostor on its port)
/// cannot make the client buffer up to a gigabyte before it has authenticated.
pub(crate) const HANDSHAKE_MAX_PAYLOAD: usize = 1 << 20;

fn violation(msg: String) -> io::Error {
    Violation(msg).into_io()
}

fn out_of_sequence(what: &str, got: u8, due: u8) -> io::Error {
    violation(format!("{what} sequence id {got} where {due} was due"))
}

/// A connected socket: TCP for clients, a Unix socket for the managed server's bootstrap.
#[derive(Debug)]
pub(crate) enum Stream {
    /// TCP, with Nagle disabled.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
    /// TLS over TCP.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
    /// Nothing: the socket was handed to a TLS session that failed to start.
    Closed,
}

impl Stream {
    /// Bounds the next reads by the time left until `deadline`; past it, a timeout error.
    fn wait_at_most(&self, deadline: Instant) -> io::Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        match self {
            Stream::Tcp(s) => s.set_read_timeout(Some(left)),
            Stream::Unix(s) => s.set_read_timeout(Some(left)),
            Stream::Tls(s) => s.get_ref().set_read_timeout(Some(left)),
            Stream::Closed => Ok(()),
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "connection closed")
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Closed => Err(closed()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Closed => Err(closed()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            // rustls buffers plaintext until flushed.
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// A read buffer: bytes `pos..end` of `buf` are received and not consumed yet.
#[derive(Debug)]
struct InBuf {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl InBuf {
    fn new(size: usize) -> Self {
        InBuf {
            buf: vec![0; size],
            pos: 0,
            end: 0,
        }
    }

    fn buffered(&self) -> usize {
        self.end - self.pos
    }

    /// Makes room for `extra` more bytes after `end`, moving the unread bytes to the front
    /// and growing the buffer only when needed.
    fn make_room(&mut self, extra: usize) {
        if self.buf.len() - self.end >= extra {
            return;
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        if self.buf.len() - self.end < extra {
            self.buf.resize((self.end + extra).next_power_of_two(), 0);
        }
    }

    /// Reads from `stream` until `need` unread bytes are buffered; with a `deadline`, every
    /// read waits at most until then (the handshake's bound on the whole exchange).
    fn fill(
        &mut self,
        stream: &mut Stream,
        need: usize,
        deadline: Option<Instant>,
    ) -> io::Result<()> {
        if self.buffered() >= need {
            return Ok(());
        }
        if self.buf.len() - self.pos < need {
            self.make_room(need - self.buffered());
        }
        while self.buffered() < need {
            if let Some(d) = deadline {
                stream.wait_at_most(d)?;
            }
            let n = stream.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed the connection",
                ));
            }
            self.end += n;
        }
        Ok(())
    }
}

/// State of the compressed protocol; all buffers are reused from frame to frame.
struct Zlib {
    inflate: Decompress,
    deflate: Compress,
    /// Compressed bytes read from the socket.
    raw: InBuf,
    /// Outgoing frames.
    out: Vec<u8>,
    /// The packet stream of a split (16 MiB or more) payload, before framing.
    big: Vec<u8>,
    /// Sequence id of the next frame.
    seq: u8,
}

impl std::fmt::Debug for Zlib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zlib").field("seq", &self.seq).finish()
    }
}

impl Zlib {
    fn new() -> Self {
        Zlib {
            inflate: Decompress::new(true),
            deflate: Compress::new(Compression::default(), true),
            raw: InBuf::new(64 * 1024),
            out: Vec::with_capacity(4096),
            big: Vec::new(),
            seq: 0,
        }
    }

    /// Reads one frame and appends its uncompressed payload to `into`.
    fn read_frame(&mut self, stream: &mut Stream, into: &mut InBuf) -> io::Result<()> {
        self.raw.fill(stream, FRAME_HEADER, None)?;
        let h = parse_frame_header(&self.raw.buf[self.raw.pos..self.raw.pos + FRAME_HEADER]);
        if h.seq != self.seq {
            return Err(out_of_sequence("compressed packet", h.seq, self.seq));
        }
        self.raw.fill(stream, FRAME_HEADER + h.len, None)?;
        self.seq = h.seq.wrapping_add(1);
        let src = self.raw.pos + FRAME_HEADER;
        let input = &self.raw.buf[src..src + h.len];
        if h.inflated == 0 {
            into.make_room(h.len);
            into.buf[into.end..into.end + h.len].copy_from_slice(input);
            into.end += h.len;
        } else {
            into.make_room(h.inflated);
            let out = &mut into.buf[into.end..into.end + h.inflated];
            compress::inflate_frame(&mut self.inflate, input, out)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            into.end += h.inflated;
        }
        self.raw.pos += FRAME_HEADER + h.len;
        Ok(())
    }

    /// Appends one frame holding `data` (at most [`MAX_CHUNK`] bytes) to `out`.
    fn push_frame(&mut self, data: &[u8]) -> io::Result<()> {
        compress::push_frame(&mut self.deflate, self.seq, data, &mut self.out)
            .map_err(io::Error::other)?;
        self.seq = self.seq.wrapping_add(1);
        Ok(())
    }

    /// Sends the packet stream `data` as frames, in one `write_all`.
    fn send(&mut self, stream: &mut Stream, data: &[u8]) -> io::Result<()> {
        self.out.clear();
        for piece in data.chunks(MAX_CHUNK) {
            self.push_frame(piece)?;
        }
        stream.write_all(&self.out)?;
        stream.flush()
    }
}

/// Packet reader/writer. The write buffer holds one outgoing payload after a 4-byte gap
/// for the header, so a normal packet goes out in a single `write_all`.
#[derive(Debug)]
pub(crate) struct Wire {
    stream: Stream,
    inb: InBuf,
    big: Vec<u8>,
    wbuf: Vec<u8>,
    seq: u8,
    zlib: Option<Box<Zlib>>,
    /// The handshake's end: reads wait at most until then (`None` after the handshake).
    deadline: Option<Instant>,
    /// Largest payload accepted from the server ([`MAX_PAYLOAD`] unless a test lowers it).
    max_payload: usize,
}

impl Wire {
    /// Wraps a connected stream.
    pub(crate) fn new(stream: Stream) -> Self {
        Wire {
            stream,
            // Small at first: most connections never see a large result, and 100,000 of
            // them must fit in memory; `fill` grows it when a packet needs more.
            inb: InBuf::new(4 * 1024),
            big: Vec::new(),
            wbuf: Vec::with_capacity(256),
            seq: 0,
            zlib: None,
            deadline: None,
            max_payload: MAX_PAYLOAD,
        }
    }

    /// Bounds the reads of the handshake as a whole: each waits only for the time left.
    pub(crate) fn set_handshake_deadline(&mut self, deadline: Instant) -> io::Result<()> {
        self.deadline = Some(deadline);
        self.stream.wait_at_most(deadline)
    }

    /// Sets the largest payload accepted from now on (at most [`MAX_PAYLOAD`]): the
    /// handshake's packets are small, so it runs under [`HANDSHAKE_MAX_PAYLOAD`].
    pub(crate) fn set_max_payload(&mut self, max: usize) {
        self.max_payload = max.min(MAX_PAYLOAD);
    }

    /// Switches to the compressed protocol (after the authentication OK).
    pub(crate) fn enable_compression(&mut self) {
        self.zlib = Some(Box::new(Zlib::new()));
    }

    /// True when the connection is encrypted or local (Unix socket), so a password may be
    /// sent in clear.
    pub(crate) fn is_secure(&self) -> bool {
        matches!(self.stream, Stream::Tls(_) | Stream::Unix(_))
    }

    /// Runs a TLS handshake on the TCP socket; the rest of the protocol goes through it.
    /// On failure the connection is unusable and the error says why (a socket timeout when
    /// the server stalls).
    pub(crate) fn start_tls(
        &mut self,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> io::Result<()> {
        // Bytes before the handshake would be unencrypted injection: refuse.
        if self.inb.buffered() > 0 {
            return Err(io::Error::other(
                "the server sent unencrypted data before the TLS handshake",
            ));
        }
        if let Some(d) = self.deadline {
            self.stream.wait_at_most(d)?;
        }
        let tcp = match std::mem::replace(&mut self.stream, Stream::Closed) {
            Stream::Tcp(tcp) => tcp,
            other => {
                self.stream = other;
                return Err(io::Error::other("TLS needs a TCP connection"));
            }
        };
        let conn = ClientConnection::new(config, name).map_err(io::Error::other)?;
        let mut tls = StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        self.stream = Stream::Tls(Box::new(tls));
        Ok(())
    }

    /// Ensures `need` unread (uncompressed) bytes are buffered.
    fn fill(&mut self, need: usize) -> io::Result<()> {
        match &mut self.zlib {
            None => self.inb.fill(&mut self.stream, need, self.deadline),
            Some(z) => {
                while self.inb.buffered() < need {
                    z.read_frame(&mut self.stream, &mut self.inb)?;
                }
                Ok(())
            }
        }
    }

    /// Bounds every read and write from now on (`None`: unbounded), replacing the
    /// handshake's deadline.
    pub(crate) fn set_deadline(&mut self, limit: Option<std::time::Duration>) -> io::Result<()> {
        self.deadline = None;
        match &self.stream {
            Stream::Tcp(s) => dbdelta_kit::net::handshake_deadline(s, limit),
            Stream::Tls(s) => dbdelta_kit::net::handshake_deadline(s.get_ref(), limit),
            Stream::Unix(s) => s
                .set_read_timeout(limit)
                .and_then(|()| s.set_write_timeout(limit)),
            Stream::Closed => Ok(()),
        }
    }

    /// Takes the socket out for a multiplexed session; `None` for TLS or compressed
    /// connections and when bytes are still buffered (the session would lose them).
    pub(crate) fn take_socket(&mut self) -> Option<dbdelta_engine::Socket> {
        if self.zlib.is_some() || self.inb.buffered() > 0 {
            return None;
        }
        match std::mem::replace(&mut self.stream, Stream::Closed) {
            Stream::Tcp(s) => Some(dbdelta_engine::Socket::Tcp(s)),
            Stream::Unix(s) => Some(dbdelta_engine::Socket::Unix(s)),
            other => {
                self.stream = other;
                None
            }
        }
    }

    /// Reads one logical packet (joining split ones) and returns its payload. Every packet
    /// must carry the sequence id due (with compression, every frame does), and a payload
    /// longer than the limit is refused from the header that claims it.
    pub(crate) fn read_packet(&mut self) -> io::Result<&[u8]> {
        let len = self.header(0)?;
        if len < MAX_CHUNK {
            self.fill(4 + len)?;
            let start = self.inb.pos + 4;
            self.inb.pos = start + len;
            return Ok(&self.inb.buf[start..start + len]);
        }
        // Rare: a payload of 16 MiB or more, joined into `big`.
        self.big.clear();
        let mut len = len;
        loop {
            self.fill(4 + len)?;
            let start = self.inb.pos + 4;
            self.big
                .extend_from_slice(&self.inb.buf[start..start + len]);
            self.inb.pos = start + len;
            if len < MAX_CHUNK {
                break;
            }
            len = self.header(self.big.len())?;
        }
        Ok(&self.big)
    }

    /// Reads the next packet header (`joined` payload bytes already received for this
    /// packet), checks its sequence id and the payload limit, and returns its length.
    fn header(&mut self, joined: usize) -> io::Result<usize> {
        self.fill(HEADER)?;
        let h = &self.inb.buf[self.inb.pos..self.inb.pos + HEADER];
        let (len, seq) = (u24(h), h[3]);
        // With compression the frames carry the checked sequence ids (`Zlib::read_frame`);
        // the packets inside them are not checked.
        if self.zlib.is_none() && seq != self.seq {
            return Err(out_of_sequence("packet", seq, self.seq));
        }
        if joined + len > self.max_payload {
            return Err(violation(format!(
                "the server sent a packet of more than {} bytes (the limit is {} bytes)",
                joined + len,
                self.max_payload
            )));
        }
        self.seq = seq.wrapping_add(1);
        Ok(len)
    }

    /// Starts a new command: sequence 0, empty payload to append to.
    pub(crate) fn begin_command(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
        if let Some(z) = &mut self.zlib {
            z.seq = 0;
        }
        self.begin_packet()
    }

    /// Starts a packet that continues the current exchange (handshake, auth switch).
    pub(crate) fn begin_packet(&mut self) -> &mut Vec<u8> {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
        &mut self.wbuf
    }

    /// Sends the packet built since `begin_*`.
    pub(crate) fn send(&mut self) -> io::Result<()> {
        let len = self.wbuf.len() - 4;
        if len < MAX_CHUNK {
            self.wbuf[..HEADER].copy_from_slice(&header(len, self.seq));
            self.seq = self.seq.wrapping_add(1);
            return match &mut self.zlib {
                None => {
                    self.stream.write_all(&self.wbuf)?;
                    self.stream.flush()
                }
                Some(z) => z.send(&mut self.stream, &self.wbuf),
            };
        }
        // Split: full chunks, then a shorter (possibly empty) last one.
        if let Some(z) = &mut self.zlib {
            let mut big = std::mem::take(&mut z.big);
            big.clear();
            for_each_chunk(&self.wbuf[4..], &mut self.seq, |h, c| {
                big.extend_from_slice(h);
                big.extend_from_slice(c);
                Ok(())
            })?;
            let r = z.send(&mut self.stream, &big);
            z.big = big;
            return r;
        }
        let stream = &mut self.stream;
        for_each_chunk(&self.wbuf[4..], &mut self.seq, |h, c| {
            stream.write_all(h)?;
            stream.write_all(c)
        })?;
        stream.flush()
    }
}

/// Cuts a payload of [`MAX_CHUNK`] bytes or more into packets: full chunks, then a shorter
/// (possibly empty) last one; calls `f` with each header and chunk.
fn for_each_chunk(
    payload: &[u8],
    seq: &mut u8,
    mut f: impl FnMut(&[u8], &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut off = 0;
    loop {
        let n = (payload.len() - off).min(MAX_CHUNK);
        let h = header(n, *seq);
        *seq = seq.wrapping_add(1);
        f(&h, &payload[off..off + n])?;
        off += n;
        if n < MAX_CHUNK {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_out_of_sequence_is_refused() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut w = Wire::new(Stream::Unix(a));
        let mut r = Wire::new(Stream::Unix(b));
        w.seq = 3;
        w.begin_packet().extend_from_slice(b"late");
        w.send().unwrap();
        let e = r.read_packet().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    /// The error a crafted stream gives and the read buffer's size then, with a read
    /// timeout so a client that waited for bytes the stream never sends fails the test
    /// instead of hanging. The writer stays open until the read returns: the error comes
    /// from the bytes, not from an early end of the stream.
    fn read_error(bytes: Vec<u8>, setup: impl FnOnce(&mut Wire)) -> (io::Error, usize) {
        let (mut a, b) = UnixStream::pair().unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut r = Wire::new(Stream::Unix(b));
        setup(&mut r);
        let writer = std::thread::spawn(move || {
            a.write_all(&bytes).unwrap();
            a
        });
        let e = r.read_packet().map(|_| ()).unwrap_err();
        drop(writer.join().unwrap());
        (e, r.inb.buf.len())
    }

    fn violation_text(e: &io::Error) -> String {
        e.get_ref()
            .and_then(|i| i.downcast_ref::<Violation>())
            .map(|v| v.0.clone())
            .unwrap_or_else(|| panic!("not a framing violation: {e:?}"))
    }

    /// A payload over the limit is refused from the header that claims it: the first of a
    /// split payload, or a later one that would pass the limit.
    #[test]
    fn a_payload_over_the_limit_is_refused_from_its_header() {
        let (e, buffered) = read_error(vec![0xFF, 0xFF, 0xFF, 0], |r| r.max_payload = 1000);
        assert_eq!(buffered, 4 * 1024, "the buffer never grew");
        let m = violation_text(&e);
        assert!(
            m.contains("more than 16777215 bytes") && m.contains("limit is 1000"),
            "{m}"
        );
        // Under the default limit a first chunk of 16 MiB − 1 is fine, and the second
        // header is checked against what was joined so far.
        let mut s = vec![0xFF, 0xFF, 0xFF, 0];
        s.resize(4 + MAX_CHUNK, b'a');
        s.extend_from_slice(&[0xFF, 0xFF, 0xFF, 1]);
        let (e, _) = read_error(s, |r| r.max_payload = MAX_CHUNK + 100);
        let m = violation_text(&e);
        assert!(
            m.contains(&format!("more than {} bytes", 2 * MAX_CHUNK)),
            "{m}"
        );
        assert_eq!(MAX_PAYLOAD, 1 << 30);
    }

    /// During the handshake a packet over 1 MiB is refused from its header: neither a
    /// claimed 16 MiB chunk nor a split payload grows the buffer.
    #[test]
    fn the_handshake_takes_small_packets_only() {
        for head in [vec![0xFF, 0xFF, 0xFF, 0], vec![0x01, 0x00, 0x10, 0]] {
            let (e, buffered) = read_error(head, |r| r.set_max_payload(HANDSHAKE_MAX_PAYLOAD));
            assert_eq!(buffered, 4 * 1024, "the buffer never grew");
            let m = violation_text(&e);
            assert!(
                m.contains(&format!("limit is {HANDSHAKE_MAX_PAYLOAD}")),
                "{m}"
            );
        }
        // A packet of exactly the limit is accepted.
        let mut s = vec![0x00, 0x00, 0x10, 0];
        s.resize(4 + HANDSHAKE_MAX_PAYLOAD, b'g');
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = Wire::new(Stream::Unix(b));
        r.set_max_payload(HANDSHAKE_MAX_PAYLOAD);
        std::thread::spawn(move || a.write_all(&s).unwrap());
        assert_eq!(r.read_packet().unwrap().len(), HANDSHAKE_MAX_PAYLOAD);
    }

    /// The continuation of a split payload must carry the next sequence id too.
    #[test]
    fn a_split_payload_out_of_sequence_is_refused() {
        let mut s = vec![0xFF, 0xFF, 0xFF, 0];
        s.resize(4 + MAX_CHUNK, b'a');
        s.extend_from_slice(&[1, 0, 0, 7, b'z']);
        let m = violation_text(&read_error(s, |_| {}).0);
        assert_eq!(m, "packet sequence id 7 where 1 was due");
    }

    /// With compression the frames' sequence ids are checked.
    #[test]
    fn a_compressed_frame_out_of_sequence_is_refused() {
        let mut z = Zlib::new();
        z.seq = 4;
        z.push_frame(&[2, 0, 0, 0, b'h', b'i']).unwrap();
        let m = violation_text(&read_error(z.out.clone(), |r| r.enable_compression()).0);
        assert_eq!(m, "compressed packet sequence id 4 where 0 was due");
    }

    #[test]
    fn split_packets_roundtrip() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut w = Wire::new(Stream::Unix(a));
        let mut r = Wire::new(Stream::Unix(b));
        let big: Vec<u8> = (0..MAX_CHUNK * 2 + 10).map(|i| (i % 251) as u8).collect();
        let sender = std::thread::spawn(move || {
            w.begin_command().extend_from_slice(&big);
            w.send().unwrap();
            // Exactly one full chunk: followed by an empty packet.
            w.begin_command().resize(4 + MAX_CHUNK, 7);
            w.send().unwrap();
            w.begin_command().extend_from_slice(b"x");
            w.send().unwrap();
            big
        });
        // Each message starts at sequence 0 here, as the response to a new command would.
        let got = r.read_packet().unwrap().to_vec();
        r.seq = 0;
        assert_eq!(r.read_packet().unwrap().len(), MAX_CHUNK);
        let big = sender.join().unwrap();
        assert_eq!(got.len(), big.len());
        assert!(got == big);
        r.seq = 0;
        assert_eq!(r.read_packet().unwrap(), b"x");
    }

    #[test]
    fn compressed_roundtrip() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut w = Wire::new(Stream::Unix(a));
        let mut r = Wire::new(Stream::Unix(b));
        w.enable_compression();
        r.enable_compression();
        let text: Vec<u8> = b"SELECT c FROM sbtest1 WHERE id=42 "
            .iter()
            .cycle()
            .take(100_000)
            .copied()
            .collect();
        let noise: Vec<u8> = (0u32..5000)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let big: Vec<u8> = (0..MAX_CHUNK + 100).map(|i| (i % 7) as u8).collect();
        let msgs = vec![b"tiny".to_vec(), text, noise, Vec::new(), big];
        let sent = msgs.clone();
        let sender = std::thread::spawn(move || {
            for m in &sent {
                w.begin_command().extend_from_slice(m);
                w.send().unwrap();
            }
            w
        });
        for m in &msgs {
            // Each message answers a new command: its frames start again at 0.
            r.zlib.as_mut().unwrap().seq = 0;
            assert!(r.read_packet().unwrap() == m.as_slice());
        }
        let w = sender.join().unwrap();
        let z = w.zlib.as_ref().unwrap();
        // The last (16 MiB, split) payload went compressed: its frames are far shorter.
        assert!(z.out.len() < MAX_CHUNK / 100, "{}", z.out.len());
    }

    #[test]
    fn frames_and_packets_are_independent() {
        // Two packets in one stored frame, then one packet cut over two compressed frames.
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = Wire::new(Stream::Unix(b));
        r.enable_compression();
        let mut z = Zlib::new();
        let mut stream = Vec::new();
        stream.extend_from_slice(&[2, 0, 0, 1, b'h', b'i', 1, 0, 0, 2, b'!']);
        z.push_frame(&stream).unwrap();
        let payload = vec![b'a'; 300];
        let mut pkt = vec![44, 1, 0, 3];
        pkt.extend_from_slice(&payload);
        z.push_frame(&pkt[..100]).unwrap();
        z.push_frame(&pkt[100..]).unwrap();
        a.write_all(&z.out).unwrap();
        assert_eq!(r.read_packet().unwrap(), b"hi");
        assert_eq!(r.read_packet().unwrap(), b"!");
        assert!(r.read_packet().unwrap() == payload.as_slice());
        assert_eq!(r.zlib.as_ref().unwrap().seq, 3);
    }
}
