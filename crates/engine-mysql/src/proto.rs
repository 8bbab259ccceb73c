//! The MySQL client/server protocol as functions over byte buffers, with no I/O (as
//! `postgres-protocol` is for PostgreSQL): one function per client message appending its
//! payload to a caller's buffer ([`command`]), the parsing of the server's packets
//! ([`server`]), the response state machine shared by the blocking client and the
//! sessions ([`response`]), and the compressed protocol's frames ([`compress`]).
//!
//! Here, the packet layer both sides share (MySQL's "Client/Server Protocol" docs, "MySQL
//! Packets"): a 3-byte little-endian length, a sequence id and the payload; payloads of
//! 16 MiB − 1 or more continue in the next packet. Length-encoded integers and strings are
//! read with [`Cur`] and written with [`put_lenenc`]. Buffers belong to the callers, who
//! reuse them, so the statement path allocates nothing here.

pub(crate) mod command;
pub(crate) mod compress;
pub(crate) mod response;
pub(crate) mod server;

use crate::errors::ClientError;

/// Largest payload of one physical packet; a packet this long continues in the next one.
pub(crate) const MAX_CHUNK: usize = 0xFF_FFFF;
/// Size of a packet header.
pub(crate) const HEADER: usize = 4;

/// Capability flags (MySQL's "Capabilities Flags" docs) that dbdelta asks for or checks.
pub(crate) mod caps {
    /// New, longer password hashes.
    pub(crate) const LONG_PASSWORD: u32 = 1;
    /// All column flags in column definitions.
    pub(crate) const LONG_FLAG: u32 = 4;
    /// A default schema in the handshake response.
    pub(crate) const CONNECT_WITH_DB: u32 = 8;
    /// The compressed protocol.
    pub(crate) const COMPRESS: u32 = 0x20;
    /// LOAD DATA LOCAL.
    pub(crate) const LOCAL_FILES: u32 = 0x80;
    /// Protocol 4.1.
    pub(crate) const PROTOCOL_41: u32 = 0x200;
    /// TLS after an SSL request.
    pub(crate) const SSL: u32 = 0x800;
    /// Transaction status in OK packets.
    pub(crate) const TRANSACTIONS: u32 = 0x2000;
    /// The 4.1 authentication (scramble in two parts).
    pub(crate) const SECURE_CONNECTION: u32 = 0x8000;
    /// Several result sets per COM_QUERY.
    pub(crate) const MULTI_RESULTS: u32 = 0x2_0000;
    /// Several result sets per COM_STMT_EXECUTE.
    pub(crate) const PS_MULTI_RESULTS: u32 = 0x4_0000;
    /// Authentication plugins named in the handshake.
    pub(crate) const PLUGIN_AUTH: u32 = 0x8_0000;
    /// Length-encoded authentication data in the handshake response.
    pub(crate) const PLUGIN_AUTH_LENENC: u32 = 0x20_0000;
}

/// A 3-byte little-endian integer (packet and frame lengths).
pub(crate) fn u24(b: &[u8]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16
}

/// The header of a packet of `len` bytes (less than [`MAX_CHUNK`] + 1) with sequence id
/// `seq`.
pub(crate) fn header(len: usize, seq: u8) -> [u8; HEADER] {
    let mut h = (len as u32).to_le_bytes();
    h[3] = seq;
    h
}

/// A packet at the front of a buffer: its payload and its total length with the header.
pub(crate) type Framed<'a> = (&'a [u8], usize);

/// Splits the next whole packet off `input`, checking its sequence id against `expected`
/// (and advancing it); `None` when more bytes are needed. A payload of 16 MiB or more is
/// refused instead of joined: no benchmark statement or response row comes near it, so a
/// driver never buffers more than one packet for a session.
#[inline]
pub(crate) fn split_packet<'a>(
    input: &'a [u8],
    expected: &mut u8,
) -> Result<Option<Framed<'a>>, ClientError> {
    let Some(h) = input.get(..HEADER) else {
        return Ok(None);
    };
    let len = u24(h);
    if h[3] != *expected {
        return Err(ClientError::Protocol(format!(
            "packet sequence id {} where {} was due",
            h[3], *expected
        )));
    }
    if len >= MAX_CHUNK {
        return Err(ClientError::Protocol(
            "a packet of 16 MiB or more (multi-packet payload) on a multiplexed connection".into(),
        ));
    }
    match input.get(HEADER..HEADER + len) {
        Some(payload) => {
            *expected = expected.wrapping_add(1);
            Ok(Some((payload, HEADER + len)))
        }
        None => Ok(None),
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
    /// A length-encoded string; `Ok(None)` for SQL NULL, `Err(Truncated)` when cut short.
    pub(crate) fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>, Truncated> {
        if self.data.get(self.pos) == Some(&0xFB) {
            self.pos += 1;
            return Ok(None);
        }
        let n = self.lenenc().ok_or(Truncated)?;
        let n = usize::try_from(n).map_err(|_| Truncated)?;
        self.take(n).map(Some).ok_or(Truncated)
    }
    /// A NUL-terminated string (or the rest when no NUL).
    pub(crate) fn cstr(&mut self) -> &'a [u8] {
        let rest = self.rest();
        let n = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
        self.pos += (n + 1).min(rest.len());
        &rest[..n]
    }
}

/// A length-encoded value that runs past the end of its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a length-encoded value runs past the end of its packet")]
pub(crate) struct Truncated;

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

/// What scripted servers in tests send: packets and greetings.
#[cfg(test)]
pub(crate) mod testing {
    /// A packet with sequence id `seq`.
    pub(crate) fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = super::header(payload.len(), seq).to_vec();
        v.extend_from_slice(payload);
        v
    }

    /// A protocol-10 greeting (Protocol::HandshakeV10) of server `version` with
    /// capabilities `caps`, the 20-byte `scramble` and the default `plugin`.
    pub(crate) fn greeting(version: &str, caps: u32, scramble: &[u8; 20], plugin: &str) -> Vec<u8> {
        let mut g = vec![10];
        g.extend_from_slice(version.as_bytes());
        g.push(0);
        g.extend_from_slice(&7u32.to_le_bytes());
        g.extend_from_slice(&scramble[..8]);
        g.push(0);
        g.extend_from_slice(&(caps as u16).to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(&scramble[8..]);
        g.push(0);
        g.extend_from_slice(plugin.as_bytes());
        g.push(0);
        g
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
        assert_eq!(Cur::new(&[0x05, b'a']).lenenc_bytes(), Err(Truncated));
    }

    #[test]
    fn a_greeting_parses_back() {
        let caps = caps::PROTOCOL_41 | caps::SECURE_CONNECTION | caps::PLUGIN_AUTH;
        let g = server::parse_greeting(&testing::greeting(
            "8.4.3",
            caps,
            b"0123456789abcdefghij",
            "p",
        ))
        .unwrap();
        assert_eq!(
            (g.version.as_str(), g.connection_id, g.caps),
            ("8.4.3", 7, caps)
        );
        assert_eq!(
            (g.nonce.as_slice(), g.plugin.as_str()),
            (&b"0123456789abcdefghij"[..], "p")
        );
    }

    #[test]
    fn packets_split_off_a_buffer_in_sequence() {
        let mut bytes = header(2, 1).to_vec();
        bytes.extend_from_slice(b"hi");
        bytes.extend_from_slice(&header(1, 2));
        let mut seq = 1;
        assert_eq!(
            split_packet(&bytes, &mut seq).unwrap(),
            Some((&b"hi"[..], 6))
        );
        assert_eq!(
            split_packet(&bytes[6..], &mut seq).unwrap(),
            None,
            "partial"
        );
        let mut wrong = 7;
        assert!(split_packet(&bytes, &mut wrong).is_err());
    }
}
