//! Bulk load with `COPY table(cols) FROM STDIN` in text format: rows are escaped straight
//! into CopyData messages of about 64 KiB. A COPY is one statement, so the whole load is
//! one transaction (all rows or none).

use crate::conn::PgConnection;
use crate::pgerror::ServerError;
use crate::wire::{begin_msg, end_msg, put_cstr, put_int};
use bytes::{BufMut, BytesMut};
use dbdelta_engine::{EngineError, OwnedValue, RowSource};
use postgres_protocol::message::frontend;

/// Size at which a CopyData message is sent.
const CHUNK: usize = 64 * 1024;

/// Appends `s` escaped for COPY text format (backslash, tab, newline, carriage return).
pub(crate) fn put_copy_text(buf: &mut BytesMut, s: &str) {
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            _ => continue,
        };
        buf.put_slice(&bytes[from..i]);
        buf.put_slice(esc);
        from = i + 1;
    }
    buf.put_slice(&bytes[from..]);
}

fn valid_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '"')
}

/// Loads `rows` into `table` with COPY; returns the row count the server reports.
pub(crate) fn copy_in(
    conn: &mut PgConnection,
    table: &str,
    rows: &mut dyn RowSource,
) -> Result<u64, EngineError> {
    let cols = rows.columns().join(", ");
    if !valid_ident(table) || !rows.columns().iter().all(|c| valid_ident(c)) {
        return Err(EngineError::statement(format!(
            "bulk load: '{table}({cols})' is not a plain table and column list"
        )));
    }
    let sql = format!("COPY {table}({cols}) FROM STDIN");
    let w = &mut conn.wire.wbuf;
    let at = begin_msg(w, b'Q');
    put_cstr(w, sql.as_bytes());
    end_msg(w, at);
    conn.send()?;
    // Wait for CopyInResponse, or an error (bad table) followed by ReadyForQuery.
    loop {
        let m = conn.next_msg()?;
        match m.tag {
            b'G' => break,
            b'E' => {
                let e = ServerError::parse(conn.wire.body(m));
                conn.read_result().ok();
                let mut ee = e.into_engine_error();
                ee.message = format!("{} — {sql}", ee.message);
                return Err(ee);
            }
            _ => {}
        }
    }

    let mut row: Vec<OwnedValue> = Vec::new();
    let mut sent = 0u64;
    let mut at = begin_msg(&mut conn.wire.wbuf, b'd');
    loop {
        row.clear();
        if !rows.next_row(&mut row) {
            break;
        }
        let w = &mut conn.wire.wbuf;
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                w.put_u8(b'\t');
            }
            match v {
                OwnedValue::Int(n) => put_int(w, *n),
                OwnedValue::Text(s) => put_copy_text(w, s),
                OwnedValue::Null => w.put_slice(b"\\N"),
            }
        }
        w.put_u8(b'\n');
        sent += 1;
        if w.len() >= CHUNK {
            end_msg(w, at);
            conn.send()?;
            at = begin_msg(&mut conn.wire.wbuf, b'd');
        }
    }
    let w = &mut conn.wire.wbuf;
    if w.len() > 5 {
        end_msg(w, at);
    } else {
        w.clear();
    }
    frontend::copy_done(w);
    conn.send()?;
    let out = conn.read_result()?;
    // read_result parses the CommandComplete tag "COPY n" as affected rows.
    let loaded = out.affected;
    if loaded != sent {
        return Err(EngineError::statement(format!(
            "bulk load into {table}: sent {sent} rows but the server loaded {loaded}"
        )));
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        let mut b = BytesMut::new();
        put_copy_text(&mut b, "a\tb\\c\nd\re");
        assert_eq!(&b[..], b"a\\tb\\\\c\\nd\\re");
        let mut b = BytesMut::new();
        put_copy_text(&mut b, "12345678901-22");
        assert_eq!(&b[..], b"12345678901-22");
    }

    #[test]
    fn idents() {
        assert!(valid_ident("sbtest1"));
        assert!(valid_ident("public.t"));
        assert!(!valid_ident("t; DROP TABLE x"));
        assert!(!valid_ident(""));
    }
}
