//! ClickHouse's `TabSeparated` output: one row per line, values separated by tabs, `\N`
//! for NULL, and backslash escapes for tab, newline, backslash and a few more.

use dbdelta_engine::Rows;

/// Appends the rows of a `TabSeparated` body to `rows`; returns how many there were.
pub(crate) fn push_rows(body: &[u8], rows: &mut Rows, scratch: &mut Vec<u8>) -> u64 {
    // Every row ends with a newline: the piece after the last one is not a row.
    if body.is_empty() {
        return 0;
    }
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let mut n = 0;
    for line in body.split(|b| *b == b'\n') {
        rows.start_row();
        for field in line.split(|b| *b == b'\t') {
            if field == b"\\N" {
                rows.push(None);
            } else {
                unescape(field, scratch);
                rows.push(Some(scratch));
            }
        }
        n += 1;
    }
    n
}

/// Undoes the escaping of one field into `out` (cleared first).
pub(crate) fn unescape(field: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < field.len() {
        let c = field[i];
        if c != b'\\' || i + 1 == field.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = field[i + 1];
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'0' => out.push(0),
            b'a' => out.push(0x07),
            b'v' => out.push(0x0b),
            b'x' if i + 2 <= field.len() => {
                match std::str::from_utf8(&field[i..i + 2])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'x'),
                }
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_nulls_and_escapes() {
        let mut rows = Rows::new();
        let mut s = Vec::new();
        let n = push_rows(b"a\t\\N\t1\nb\\tc\\nd\t\\\\N\t\\x41\n", &mut rows, &mut s);
        assert_eq!(n, 2);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.get(0, 0), Some("a"));
        assert_eq!(rows.get(0, 1), None);
        assert_eq!(rows.get(0, 2), Some("1"));
        assert_eq!(rows.get(1, 0), Some("b\tc\nd"));
        assert_eq!(rows.get(1, 1), Some("\\N"));
        assert_eq!(rows.get(1, 2), Some("A"));
    }

    #[test]
    fn empty_values_and_bodies() {
        let mut rows = Rows::new();
        let mut s = Vec::new();
        assert_eq!(push_rows(b"", &mut rows, &mut s), 0);
        assert!(rows.is_empty());
        // One row holding one empty string.
        assert_eq!(push_rows(b"\n", &mut rows, &mut s), 1);
        assert_eq!(rows.get(0, 0), Some(""));
        rows.clear();
        assert_eq!(push_rows(b"\n\n", &mut rows, &mut s), 2);
    }
}
