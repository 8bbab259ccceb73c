//! The transport under the protocol: a socket (TCP, Unix or TLS), one reused read buffer
//! that yields whole backend messages without copying (framed by `proto::backend`), and one
//! reused write buffer, filled by `proto::frontend`, sent with a single `write` call per
//! round trip.

use crate::proto::backend::{self, MAX_MESSAGE};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Initial size of the read buffer; grows only for messages larger than this. Small, so
/// that 100,000 connections fit in memory while they open.
const READ_BUF: usize = 4 * 1024;

/// The transport under the protocol.
pub(crate) enum Stream {
    /// Plain TCP with `TCP_NODELAY`.
    Tcp(TcpStream),
    /// A Unix-domain socket (local servers).
    Unix(UnixStream),
    /// TLS over TCP.
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    /// The socket was handed over (session form); nothing can be read or written.
    Closed,
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the socket was handed to a session",
    )
}

impl Stream {
    /// Connects over TCP with `TCP_NODELAY` (every message we send is a whole round trip).
    pub(crate) fn tcp(
        host: &str,
        port: u16,
        source: Option<std::net::Ipv4Addr>,
        timeout: Duration,
    ) -> io::Result<Stream> {
        dbdelta_kit::net::connect_tcp(host, port, source, timeout).map(Stream::Tcp)
    }

    /// Bounds every read and write (the handshake), or clears the bound with `None`.
    pub(crate) fn set_deadline(&self, limit: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => dbdelta_kit::net::handshake_deadline(s, limit),
            Stream::Unix(s) => s
                .set_read_timeout(limit)
                .and_then(|()| s.set_write_timeout(limit)),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => dbdelta_kit::net::handshake_deadline(s.get_ref(), limit),
            Stream::Closed => Ok(()),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            #[cfg(feature = "tls")]
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
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write(buf),
            Stream::Closed => Err(closed()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.flush(),
            Stream::Closed => Ok(()),
        }
    }
}

/// A backend message located in the read buffer: its type byte and body range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Msg {
    /// Message type byte (`D` DataRow, `Z` ReadyForQuery, ...).
    pub tag: u8,
    start: usize,
    end: usize,
}

/// Buffered protocol I/O over a [`Stream`].
pub(crate) struct Wire {
    stream: Stream,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// Outgoing messages; filled by the caller, sent by [`Wire::send`].
    pub wbuf: Vec<u8>,
    /// The longest message accepted now: [`MAX_MESSAGE`], or [`STARTUP_MAX_MESSAGE`] while
    /// the connection starts.
    max_message: usize,
}

/// The longest message accepted before ReadyForQuery: authentication requests, parameter
/// statuses, key data and errors are small, so a server (or an impostor on its port) cannot
/// make the client buffer a gigabyte before it has even authenticated.
pub(crate) const STARTUP_MAX_MESSAGE: usize = 1 << 20;

impl Wire {
    pub(crate) fn new(stream: Stream) -> Wire {
        Wire {
            stream,
            rbuf: vec![0; READ_BUF],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(256),
            max_message: MAX_MESSAGE,
        }
    }

    /// Sets the longest message accepted from now on (at most [`MAX_MESSAGE`]).
    pub(crate) fn set_max_message(&mut self, max: usize) {
        self.max_message = max.min(MAX_MESSAGE);
    }

    /// Replaces the transport (after the TLS handshake), keeping the buffers.
    #[cfg(feature = "tls")]
    pub(crate) fn into_stream(self) -> Stream {
        self.stream
    }

    /// The transport, for the handshake deadline.
    pub(crate) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Takes the socket out for session form; `None` when bytes are still buffered (the
    /// session would lose them) or the transport is TLS.
    pub(crate) fn take_socket(&mut self) -> Option<dbdelta_engine::Socket> {
        if self.rpos != self.rend || !self.wbuf.is_empty() {
            return None;
        }
        let socket = match &self.stream {
            Stream::Tcp(s) => dbdelta_engine::Socket::Tcp(s.try_clone().ok()?),
            Stream::Unix(s) => dbdelta_engine::Socket::Unix(s.try_clone().ok()?),
            _ => return None,
        };
        // The clone shares the open file; closing ours leaves the session's.
        self.stream = Stream::Closed;
        Some(socket)
    }

    /// Sends everything in the write buffer with one `write_all` and clears it.
    pub(crate) fn send(&mut self) -> io::Result<()> {
        let r = self.stream.write_all(&self.wbuf);
        self.wbuf.clear();
        r
    }

    #[cfg(feature = "tls")]
    /// Reads one raw byte (the answer to an SSLRequest, which is not a framed message).
    pub(crate) fn read_byte(&mut self) -> io::Result<u8> {
        self.fill(1)?;
        let b = self.rbuf[self.rpos];
        self.rpos += 1;
        Ok(b)
    }

    #[cfg(feature = "tls")]
    /// True when bytes the server sent are already buffered (must be none before TLS starts).
    pub(crate) fn has_buffered(&self) -> bool {
        self.rpos < self.rend
    }

    /// The next whole backend message. Its body stays valid until the next call.
    #[inline]
    pub(crate) fn next(&mut self) -> io::Result<Msg> {
        self.fill(5)?;
        let head = self.rbuf[self.rpos..]
            .first_chunk::<5>()
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        // A length below 4 cannot hold itself; one above the bound is refused before the
        // buffer grows to it (a broken or hostile server could claim 4 GiB).
        let max = self.max_message;
        let (tag, len) = backend::header(head)
            .and_then(|(tag, len)| {
                if len > max {
                    Err(crate::proto::ProtoError::Length { tag, len })
                } else {
                    Ok((tag, len))
                }
            })
            .map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("protocol error: {e} (allowed: 4 to {max} bytes)"),
                )
            })?;
        self.fill(1 + len)?;
        let start = self.rpos + 5;
        let end = self.rpos + 1 + len;
        self.rpos = end;
        Ok(Msg { tag, start, end })
    }

    /// The body of `msg` (valid until the next read).
    #[inline]
    pub(crate) fn body(&self, msg: Msg) -> &[u8] {
        &self.rbuf[msg.start..msg.end]
    }

    /// The body of `msg` and the write buffer, for answers built from what the server said
    /// (authentication) without copying the message.
    pub(crate) fn body_and_wbuf(&mut self, msg: Msg) -> (&[u8], &mut Vec<u8>) {
        (&self.rbuf[msg.start..msg.end], &mut self.wbuf)
    }

    /// Makes at least `n` unread bytes available, reading as much as the socket has.
    #[inline]
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.rend - self.rpos >= n {
            return Ok(());
        }
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.rbuf.len() - self.rpos < n {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        while self.rend - self.rpos < n {
            if self.rend == self.rbuf.len() {
                // Doubles as bytes arrive, never straight to a length the server claims.
                let grown = (self.rpos + n).next_power_of_two().min(2 * self.rbuf.len());
                self.rbuf.resize(grown, 0);
            }
            let got = self.stream.read(&mut self.rbuf[self.rend..])?;
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.rend += got;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claimed length above the bound (or below 4) is refused from the 5-byte header
    /// alone: nothing more is read, so the buffer never grows to the claimed size.
    #[test]
    fn message_lengths_out_of_bounds_are_refused_before_reading() {
        let too_long = (MAX_MESSAGE + 1) as u32;
        for len in [too_long, u32::MAX, 3, 0] {
            let (mut server, client) = UnixStream::pair().unwrap();
            let mut w = Wire::new(Stream::Unix(client));
            let mut h = vec![b'D'];
            h.extend_from_slice(&len.to_be_bytes());
            // The server stays connected and sends nothing more: a client that waited for
            // the body would block here, so bound the test by a read timeout.
            server.write_all(&h).unwrap();
            if let Stream::Unix(s) = &w.stream {
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            }
            let e = w.next().map(|_| ()).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{len}: {e}");
            assert!(e.to_string().contains(&format!("length {len}")), "{e}");
            assert!(
                w.rbuf.len() <= READ_BUF,
                "{len}: buffer grew to {}",
                w.rbuf.len()
            );
        }
        // The bound itself is allowed: the header is accepted and the body awaited.
        let (mut server, client) = UnixStream::pair().unwrap();
        let mut w = Wire::new(Stream::Unix(client));
        let mut m = vec![b'Z'];
        m.extend_from_slice(&5u32.to_be_bytes());
        m.push(b'I');
        server.write_all(&m).unwrap();
        let msg = w.next().unwrap();
        assert_eq!((msg.tag, w.body(msg)), (b'Z', &b"I"[..]));
    }

    #[test]
    fn a_lower_bound_applies_while_starting() {
        for len in [STARTUP_MAX_MESSAGE as u32 + 1, 1 << 30, (1u32 << 31) - 1] {
            let (a, mut b) = UnixStream::pair().unwrap();
            let mut m = vec![b'R'];
            m.extend_from_slice(&len.to_be_bytes());
            b.write_all(&m).unwrap();
            let mut w = Wire::new(Stream::Unix(a));
            w.set_max_message(STARTUP_MAX_MESSAGE);
            let e = w.next().map(|_| ()).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{len}: {e}");
            assert!(
                e.to_string().contains(&format!("claims length {len}"))
                    && e.to_string()
                        .contains(&format!("to {STARTUP_MAX_MESSAGE} bytes")),
                "{e}"
            );
            assert!(w.rbuf.len() <= READ_BUF, "{} bytes allocated", w.rbuf.len());
        }
    }

    #[test]
    fn an_endless_stream_of_one_message_is_read_only_to_the_bound() {
        // A message claiming just under the startup bound, then bytes without end: the
        // buffer grows to the message and no further.
        let (a, mut b) = UnixStream::pair().unwrap();
        let len = STARTUP_MAX_MESSAGE as u32;
        std::thread::spawn(move || {
            let mut m = vec![b'D'];
            m.extend_from_slice(&len.to_be_bytes());
            let _ = b.write_all(&m);
            let block = vec![b'x'; 64 * 1024];
            while b.write_all(&block).is_ok() {}
        });
        let mut w = Wire::new(Stream::Unix(a));
        w.set_max_message(STARTUP_MAX_MESSAGE);
        let m = w.next().unwrap();
        assert_eq!(w.body(m).len(), STARTUP_MAX_MESSAGE - 4);
        assert!(w.rbuf.len() <= 2 * STARTUP_MAX_MESSAGE, "{}", w.rbuf.len());
        // The next "message" starts with 'x' and claims 0x78787878 bytes: refused.
        let e = w.next().map(|_| ()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    #[test]
    fn a_claimed_length_is_not_allocated_before_the_bytes_arrive() {
        // Found by fuzzing (fuzz/regressions/pg_messages): 'D' claiming 1 GiB made the
        // client allocate 2 GiB before reading a byte of it.
        let (a, mut b) = UnixStream::pair().unwrap();
        b.write_all(b"D\x3f\xff\xff\xffshort").unwrap();
        drop(b);
        let mut w = Wire::new(Stream::Unix(a));
        assert!(w.next().is_err(), "end of file before the message's end");
        assert!(w.rbuf.len() <= READ_BUF, "{} bytes allocated", w.rbuf.len());
        let (a, mut b) = UnixStream::pair().unwrap();
        b.write_all(b"D\x7f\xff\xff\xff").unwrap();
        let mut w = Wire::new(Stream::Unix(a));
        let e = w.next().unwrap_err();
        assert!(e.to_string().contains("claims length 2147483647"), "{e}");
        // A message longer than the buffer still arrives whole.
        let (a, mut b) = UnixStream::pair().unwrap();
        let body = vec![b'x'; 3 * READ_BUF];
        let mut msg = vec![b'D'];
        msg.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        msg.extend_from_slice(&body);
        std::thread::spawn(move || b.write_all(&msg).unwrap());
        let mut w = Wire::new(Stream::Unix(a));
        let m = w.next().unwrap();
        assert_eq!(w.body(m), &body[..]);
    }
}
