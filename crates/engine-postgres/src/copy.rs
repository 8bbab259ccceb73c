//! Bulk load with `COPY table(cols) FROM STDIN` in text format, the bytes of it: the
//! statement, and rows escaped straight into CopyData messages of about 64 KiB
//! (PostgreSQL's COPY docs, "Text Format"). A COPY is one statement, so the whole load is
//! one transaction (all rows or none); the connection drives it.

use crate::proto::frontend::put_int;
use dbdelta_engine::{EngineError, OwnedValue, RowSource};

/// Size at which a CopyData message is sent.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Appends `s` escaped for COPY text format (backslash, tab, newline, carriage return).
pub(crate) fn put_copy_text(buf: &mut Vec<u8>, s: &str) {
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
        buf.extend_from_slice(&bytes[from..i]);
        buf.extend_from_slice(esc);
        from = i + 1;
    }
    buf.extend_from_slice(&bytes[from..]);
}

fn valid_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '"')
}

/// The `COPY table(cols) FROM STDIN` statement for `rows`, when the names are plain.
pub(crate) fn statement(table: &str, rows: &dyn RowSource) -> Result<String, EngineError> {
    let cols = rows.columns().join(", ");
    if !valid_ident(table) || !rows.columns().iter().all(|c| valid_ident(c)) {
        return Err(EngineError::statement(format!(
            "bulk load: '{table}({cols})' is not a plain table and column list"
        )));
    }
    Ok(format!("COPY {table}({cols}) FROM STDIN"))
}

/// Appends one row to an open CopyData message: tab-separated, `\N` for NULL,
/// newline-terminated.
pub(crate) fn put_row(buf: &mut Vec<u8>, row: &[OwnedValue]) {
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            buf.push(b'\t');
        }
        match v {
            OwnedValue::Int(n) => put_int(buf, *n),
            OwnedValue::Text(s) => put_copy_text(buf, s),
            OwnedValue::Null => buf.extend_from_slice(b"\\N"),
        }
    }
    buf.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        let mut b = Vec::new();
        put_copy_text(&mut b, "a\tb\\c\nd\re");
        assert_eq!(&b[..], b"a\\tb\\\\c\\nd\\re");
        let mut b = Vec::new();
        put_copy_text(&mut b, "12345678901-22");
        assert_eq!(&b[..], b"12345678901-22");
    }

    #[test]
    fn rows() {
        let mut b = Vec::new();
        put_row(
            &mut b,
            &[
                OwnedValue::Int(-3),
                OwnedValue::Null,
                OwnedValue::Text("x\ty".into()),
            ],
        );
        assert_eq!(&b[..], b"-3\t\\N\tx\\ty\n");
    }

    #[test]
    fn idents() {
        assert!(valid_ident("sbtest1"));
        assert!(valid_ident("public.t"));
        assert!(!valid_ident("t; DROP TABLE x"));
        assert!(!valid_ident(""));
    }
}
