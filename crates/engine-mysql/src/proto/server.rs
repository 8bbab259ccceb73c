//! The server's packets (MySQL's "Client/Server Protocol" docs): the greeting
//! ("Protocol::HandshakeV10"), OK, ERR and EOF packets, the auth switch request, the
//! COM_STMT_PREPARE response, column definitions ("Protocol::ColumnDefinition41") and rows
//! of the text and binary protocols ("ProtocolText::ResultsetRow",
//! "ProtocolBinary::ResultsetRow").

use super::{caps, Cur};
use crate::errors::{malformed, ClientError};

/// The first byte of an OK packet.
pub(crate) const OK: u8 = 0x00;
/// The first byte of an auth-more-data packet.
pub(crate) const AUTH_MORE_DATA: u8 = 0x01;
/// The first byte of a LOAD DATA LOCAL file request.
pub(crate) const LOCAL_INFILE: u8 = 0xFB;
/// The first byte of an EOF packet (and of an auth switch request).
pub(crate) const EOF: u8 = 0xFE;
/// The first byte of an ERR packet.
pub(crate) const ERR: u8 = 0xFF;

/// The server's greeting (Protocol::HandshakeV10).
#[derive(Debug)]
pub(crate) struct Greeting {
    /// Version string (MariaDB prefixes it with `5.5.5-`).
    pub version: String,
    /// The server's id of this connection.
    pub connection_id: u32,
    /// The scramble, both parts joined.
    pub nonce: Vec<u8>,
    /// The server's capability flags.
    pub caps: u32,
    /// The server's default authentication plugin.
    pub plugin: String,
}

/// Parses the greeting; an ERR packet (too many connections, host blocked) is the
/// server's error.
pub(crate) fn parse_greeting(pkt: &[u8]) -> Result<Greeting, ClientError> {
    if pkt.first() == Some(&ERR) {
        return Err(parse_err(pkt));
    }
    let mut c = Cur::new(pkt);
    if c.u8() != Some(10) {
        return Err(ClientError::Unsupported(
            "server speaks a protocol version other than 10".into(),
        ));
    }
    let version = String::from_utf8_lossy(c.cstr()).into_owned();
    let connection_id = c.u32().ok_or_else(|| malformed("handshake"))?;
    let mut nonce = c.take(8).ok_or_else(|| malformed("handshake"))?.to_vec();
    c.skip(1);
    let cap_lo = u32::from(c.u16().ok_or_else(|| malformed("handshake"))?);
    c.skip(3); // charset, status
    let cap_hi = u32::from(c.u16().unwrap_or(0));
    let server_caps = cap_lo | cap_hi << 16;
    let auth_len = usize::from(c.u8().unwrap_or(0));
    c.skip(10);
    if server_caps & caps::SECURE_CONNECTION != 0 {
        let n = auth_len.saturating_sub(8).max(13);
        let part2 = c.take(n).unwrap_or_else(|| c.rest());
        nonce.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
    }
    let plugin = if server_caps & caps::PLUGIN_AUTH != 0 {
        String::from_utf8_lossy(c.cstr()).into_owned()
    } else {
        "mysql_native_password".to_string()
    };
    if server_caps & caps::PROTOCOL_41 == 0 {
        return Err(ClientError::Unsupported(
            "server is older than MySQL 4.1 (no protocol 4.1)".into(),
        ));
    }
    Ok(Greeting {
        version,
        connection_id,
        nonce,
        caps: server_caps,
        plugin,
    })
}

/// The server's error of an ERR packet.
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
pub(crate) fn parse_ok_warnings(p: &[u8]) -> Result<(u64, u16, u16), ClientError> {
    let mut c = Cur::new(p);
    c.skip(1);
    let affected = c.lenenc().ok_or_else(|| malformed("OK"))?;
    c.lenenc().ok_or_else(|| malformed("OK"))?;
    let status = c.u16().ok_or_else(|| malformed("OK"))?;
    let warnings = c.u16().unwrap_or(0);
    Ok((affected, status, warnings))
}

/// True for an EOF packet (0xFE and shorter than 9 bytes; longer ones are rows).
pub(crate) fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&EOF) && p.len() < 9
}

/// The status flags of an EOF packet (0 when the packet is too short to carry them).
pub(crate) fn eof_status(p: &[u8]) -> u16 {
    if p.len() >= 5 {
        u16::from_le_bytes([p[3], p[4]])
    } else {
        0
    }
}

/// The column count that starts a result set; `None` when malformed.
pub(crate) fn column_count(p: &[u8]) -> Option<u64> {
    Cur::new(p).lenenc()
}

/// The first packet of the response to COM_STMT_PREPARE (COM_STMT_PREPARE_OK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PrepareOk {
    /// The statement's id on the server.
    pub id: u32,
    /// Column definitions that follow (after the parameters').
    pub columns: u16,
    /// Parameter definitions that follow.
    pub params: u16,
}

/// Parses COM_STMT_PREPARE_OK; an ERR packet is the server's error.
pub(crate) fn parse_prepare_ok(pkt: &[u8]) -> Result<PrepareOk, ClientError> {
    if pkt.first() == Some(&ERR) {
        return Err(parse_err(pkt));
    }
    let mut c = Cur::new(pkt);
    if c.u8() != Some(OK) {
        return Err(malformed("prepare"));
    }
    let id = c.u32().ok_or_else(|| malformed("prepare"))?;
    let columns = c.u16().ok_or_else(|| malformed("prepare"))?;
    let params = c.u16().ok_or_else(|| malformed("prepare"))?;
    Ok(PrepareOk {
        id,
        columns,
        params,
    })
}

/// The plugin and scramble of an auth switch request (`payload` after its 0xFE).
pub(crate) fn parse_auth_switch(payload: &[u8]) -> Result<(&[u8], &[u8]), ClientError> {
    let nul = payload
        .iter()
        .position(|b| *b == 0)
        .ok_or_else(|| malformed("auth switch"))?;
    Ok((&payload[..nul], &payload[nul + 1..]))
}

/// A text-protocol row decoded as text (NULL → `None`), for settings and scalars.
pub(crate) fn text_row(row: &[u8]) -> Result<Vec<Option<String>>, ClientError> {
    let mut c = Cur::new(row);
    let mut vals = Vec::new();
    while !c.rest().is_empty() {
        let v = c.lenenc_bytes().map_err(|_| malformed("text row"))?;
        vals.push(v.map(|b| String::from_utf8_lossy(b).into_owned()));
    }
    Ok(vals)
}

/// The type and flags of a column definition (Protocol::ColumnDefinition41).
pub(crate) fn column_type(p: &[u8]) -> Option<(u8, u16)> {
    let mut c = Cur::new(p);
    for _ in 0..6 {
        // catalog, schema, table, org_table, name, org_name
        c.lenenc_bytes().ok()?;
    }
    c.lenenc()?; // length of the fixed fields (0x0c)
    c.u16()?; // character set
    c.u32()?; // column length
    let ty = c.u8()?;
    let flags = c.u16()?;
    Some((ty, flags))
}

/// Appends a text-protocol row: every value a length-encoded string, 0xFB for NULL.
pub(crate) fn keep_text_row(p: &[u8], width: usize, rows: &mut dbdelta_engine::Rows) -> Option<()> {
    let mut c = Cur::new(p);
    rows.start_row();
    for _ in 0..width {
        rows.push(c.lenenc_bytes().ok()?);
    }
    Some(())
}

/// Appends a binary-protocol row, rendering each value as the text protocol would.
pub(crate) fn keep_binary_row(
    p: &[u8],
    columns: &[(u8, u16)],
    rows: &mut dbdelta_engine::Rows,
) -> Option<()> {
    use std::fmt::Write as _;
    const UNSIGNED: u16 = 0x20;
    let n = columns.len();
    let bitmap = p.get(1..1 + (n + 9) / 8)?;
    let mut c = Cur::new(p.get(1 + (n + 9) / 8..)?);
    rows.start_row();
    for (i, &(ty, flags)) in columns.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            rows.push(None);
            continue;
        }
        let unsigned = flags & UNSIGNED != 0;
        let int = |b: &[u8]| -> i128 {
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            let u = u64::from_le_bytes(a);
            if unsigned {
                i128::from(u)
            } else {
                let shift = 64 - 8 * b.len() as u32;
                i128::from(((u << shift) as i64) >> shift)
            }
        };
        match ty {
            0x01 => {
                let v = int(c.take(1)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x02 | 0x0d => {
                let v = int(c.take(2)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x03 | 0x09 => {
                let v = int(c.take(4)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x08 => {
                let v = int(c.take(8)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x04 => {
                let v = f32::from_le_bytes(c.take(4)?.try_into().ok()?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x05 => {
                let v = f64::from_le_bytes(c.take(8)?.try_into().ok()?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            // DATE, DATETIME, TIMESTAMP: a length, then year, month, day, h, m, s, µs.
            0x07 | 0x0a | 0x0c => {
                let len = c.u8()? as usize;
                let b = c.take(len)?;
                let g = |i: usize| b.get(i).copied().unwrap_or(0);
                let year = u16::from_le_bytes([g(0), g(1)]);
                rows.push_with(|t| {
                    let _ = write!(t, "{year:04}-{:02}-{:02}", g(2), g(3));
                    if ty != 0x0a {
                        let _ = write!(t, " {:02}:{:02}:{:02}", g(4), g(5), g(6));
                    }
                });
            }
            // TIME: a length, then sign, days, h, m, s, µs.
            0x0b => {
                let len = c.u8()? as usize;
                let b = c.take(len)?;
                let g = |i: usize| b.get(i).copied().unwrap_or(0);
                let days = u32::from_le_bytes([g(1), g(2), g(3), g(4)]);
                let sign = if g(0) == 1 { "-" } else { "" };
                rows.push_with(|t| {
                    let _ = write!(
                        t,
                        "{sign}{:02}:{:02}:{:02}",
                        // u64: the server's days fit in u32, its hours may not.
                        u64::from(days) * 24 + u64::from(g(5)),
                        g(6),
                        g(7)
                    );
                });
            }
            // Strings, decimals, blobs, enums, JSON: a length-encoded string.
            _ => rows.push(c.lenenc_bytes().ok()?),
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_many_days_renders_without_overflow() {
        // Found by fuzzing (fuzz/regressions/mysql_packets): days * 24 overflowed u32.
        let mut rows = dbdelta_engine::Rows::new();
        let p = [0, 0, 8, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3];
        keep_binary_row(&p, &[(0x0b, 0)], &mut rows).unwrap();
        assert_eq!(rows.get(0, 0), Some("103079215081:02:03"));
    }

    #[test]
    fn err_ok_and_prepare_packets() {
        let e = parse_err(b"\xff\x15\x04#28000Access denied");
        assert!(
            matches!(&e, ClientError::Server { code: 1045, state, message } if state == "28000" && message == "Access denied"),
            "{e:?}"
        );
        assert_eq!(
            parse_ok_warnings(&[0, 3, 0, 2, 0, 1, 0]).unwrap(),
            (3, 2, 1)
        );
        assert!(parse_ok(&[0, 3]).is_err());
        let p = parse_prepare_ok(&[0, 7, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0]).unwrap();
        assert_eq!((p.id, p.columns, p.params), (7, 1, 2));
        assert_eq!(
            parse_auth_switch(b"p\0ab").unwrap(),
            (&b"p"[..], &b"ab"[..])
        );
        assert_eq!(
            text_row(b"\x013\xfb").unwrap(),
            [Some("3".to_string()), None]
        );
        assert!(text_row(b"\x05ab").is_err());
    }
}
