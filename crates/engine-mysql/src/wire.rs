//! MySQL packet framing over a blocking socket, with reused read and write buffers.
//!
//! A packet is a 3-byte little-endian length, a sequence id and the payload; payloads of
//! 16 MiB − 1 or more are split into several packets. One statement is usually one `write`
//! and one `read` system call: the whole response of a point select arrives in one segment.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

/// Largest payload of one physical packet; a packet this long continues in the next one.
const MAX_CHUNK: usize = 0xFF_FFFF;

/// A connected socket: TCP for clients, a Unix socket for the managed server's bootstrap.
#[derive(Debug)]
pub(crate) enum Stream {
    /// TCP, with Nagle disabled.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Packet reader/writer. The write buffer holds one outgoing payload after a 4-byte gap
/// for the header, so a normal packet goes out in a single `write_all`.
#[derive(Debug)]
pub(crate) struct Wire {
    stream: Stream,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    big: Vec<u8>,
    wbuf: Vec<u8>,
    seq: u8,
}

impl Wire {
    /// Wraps a connected stream.
    pub(crate) fn new(stream: Stream) -> Self {
        Wire {
            stream,
            rbuf: vec![0; 64 * 1024],
            rpos: 0,
            rend: 0,
            big: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            seq: 0,
        }
    }

    /// Ensures `need` unread bytes are buffered.
    fn fill(&mut self, need: usize) -> io::Result<()> {
        if self.rend - self.rpos >= need {
            return Ok(());
        }
        if self.rbuf.len() - self.rpos < need {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
            if self.rbuf.len() < need {
                self.rbuf.resize(need.next_power_of_two(), 0);
            }
        }
        while self.rend - self.rpos < need {
            let n = self.stream.read(&mut self.rbuf[self.rend..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed the connection",
                ));
            }
            self.rend += n;
        }
        Ok(())
    }

    /// Reads one logical packet (joining split ones) and returns its payload.
    pub(crate) fn read_packet(&mut self) -> io::Result<&[u8]> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        self.seq = h[3].wrapping_add(1);
        if len < MAX_CHUNK {
            self.fill(4 + len)?;
            let start = self.rpos + 4;
            self.rpos = start + len;
            return Ok(&self.rbuf[start..start + len]);
        }
        // Rare: a payload of 16 MiB or more, joined into `big`.
        self.big.clear();
        let mut len = len;
        loop {
            self.fill(4 + len)?;
            let start = self.rpos + 4;
            self.big.extend_from_slice(&self.rbuf[start..start + len]);
            self.rpos = start + len;
            if len < MAX_CHUNK {
                break;
            }
            self.fill(4)?;
            let h = &self.rbuf[self.rpos..self.rpos + 4];
            len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            self.seq = h[3].wrapping_add(1);
        }
        Ok(&self.big)
    }

    /// Starts a new command: sequence 0, empty payload to append to.
    pub(crate) fn begin_command(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
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
            self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.wbuf[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return self.stream.write_all(&self.wbuf);
        }
        // Split: full chunks, then a shorter (possibly empty) last one.
        let mut off = 4;
        loop {
            let n = (self.wbuf.len() - off).min(MAX_CHUNK);
            let mut h = (n as u32).to_le_bytes();
            h[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            self.stream.write_all(&h)?;
            self.stream.write_all(&self.wbuf[off..off + n])?;
            off += n;
            if n < MAX_CHUNK {
                return Ok(());
            }
        }
    }

    /// Sends a one-shot packet and forgets errors (COM_QUIT on drop).
    pub(crate) fn send_quiet(&mut self, payload: &[u8]) {
        self.begin_command().extend_from_slice(payload);
        let _ = self.send();
    }
}

/// A cursor over a received payload, for the few fields dbdelta decodes.
pub(crate) struct Cur<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    /// A cursor at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Cur { data, pos: 0 }
    }
    /// Bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos.min(self.data.len())..]
    }
    /// Skips `n` bytes.
    pub(crate) fn skip(&mut self, n: usize) {
        self.pos += n;
    }
    /// The next `n` bytes, or `None` past the end.
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.data.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    /// One byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    /// A little-endian u16.
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    /// A little-endian u32.
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A length-encoded integer; `None` for the NULL marker 0xFB or past the end.
    pub(crate) fn lenenc(&mut self) -> Option<u64> {
        let first = self.u8()?;
        match first {
            0xFB => None,
            0xFC => self
                .take(2)
                .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]]))),
            0xFD => self
                .take(3)
                .map(|b| u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16),
            0xFE => self.take(8).map(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                u64::from_le_bytes(a)
            }),
            n => Some(u64::from(n)),
        }
    }
    /// A length-encoded string; `Ok(None)` for SQL NULL, `Err(())` when truncated.
    pub(crate) fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>, ()> {
        if self.data.get(self.pos) == Some(&0xFB) {
            self.pos += 1;
            return Ok(None);
        }
        let n = self.lenenc().ok_or(())?;
        let n = usize::try_from(n).map_err(|_| ())?;
        self.take(n).map(Some).ok_or(())
    }
    /// A NUL-terminated string (or the rest when no NUL).
    pub(crate) fn cstr(&mut self) -> &'a [u8] {
        let rest = self.rest();
        let n = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
        self.pos += (n + 1).min(rest.len());
        &rest[..n]
    }
}

/// Appends a length-encoded integer.
pub(crate) fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_roundtrip() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut v = Vec::new();
            put_lenenc(&mut v, n);
            assert_eq!(Cur::new(&v).lenenc(), Some(n), "{n}");
        }
        assert_eq!(Cur::new(&[0xFB]).lenenc(), None);
        assert_eq!(Cur::new(&[0xFC, 1]).lenenc(), None);
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
        let got = r.read_packet().unwrap().to_vec();
        assert_eq!(r.read_packet().unwrap().len(), MAX_CHUNK);
        let big = sender.join().unwrap();
        assert_eq!(got.len(), big.len());
        assert!(got == big);
        assert_eq!(r.read_packet().unwrap(), b"x");
    }
}
