//! YCSB's RocksDB record layout: every field as `[len][name][len][value]`, lengths 4-byte
//! big-endian, names `field0`, `field1`, … (`RocksDBClient.serializeValues`).

use std::io::Write;

/// Appends one field (`field<N>` = `value`) to a record.
pub fn put_field(out: &mut Vec<u8>, field: u16, value: &[u8]) {
    let mut name = [0u8; 16];
    let mut cur = std::io::Cursor::new(&mut name[..]);
    let _ = write!(cur, "field{field}");
    let len = cur.position() as usize;
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend_from_slice(&name[..len]);
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(value);
}

/// Appends the record of `fields` with `values` (same order) to `out`.
pub fn encode(fields: &[u16], values: &[&[u8]], out: &mut Vec<u8>) {
    for (f, v) in fields.iter().zip(values) {
        put_field(out, *f, v);
    }
}

/// The (name, value) pairs of a record; a truncated tail is ignored.
pub fn fields(record: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let take = |at: &mut usize| -> Option<&[u8]> {
            let len_bytes: [u8; 4] = record.get(*at..*at + 4)?.try_into().ok()?;
            let len = u32::from_be_bytes(len_bytes) as usize;
            let s = record.get(*at + 4..*at + 4 + len)?;
            *at += 4 + len;
            Some(s)
        };
        let name = take(&mut at)?;
        let value = take(&mut at)?;
        Some((name, value))
    })
}

/// Fields of `record` a read returns: all when `wanted` is empty, else those named.
pub fn count_fields(record: &[u8], wanted: &[u16]) -> usize {
    fields(record)
        .filter(|(name, _)| wanted.is_empty() || wanted.iter().any(|w| field_is(name, *w)))
        .count()
}

fn field_is(name: &[u8], field: u16) -> bool {
    name.strip_prefix(b"field")
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|d| d.parse::<u16>().ok())
        == Some(field)
}

/// `old` with the given fields replaced (or added), written to `out`.
pub fn merge(old: &[u8], fields_set: &[u16], values: &[&[u8]], out: &mut Vec<u8>) {
    for (name, value) in fields(old) {
        if fields_set.iter().any(|f| field_is(name, *f)) {
            continue;
        }
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&(value.len() as u32).to_be_bytes());
        out.extend_from_slice(value);
    }
    encode(fields_set, values, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_ycsb_bindings() {
        let mut r = Vec::new();
        encode(&[0, 1], &[b"ab", b""], &mut r);
        assert_eq!(
            r,
            [
                &[0, 0, 0, 6][..],
                b"field0",
                &[0, 0, 0, 2],
                b"ab",
                &[0, 0, 0, 6],
                b"field1",
                &[0, 0, 0, 0]
            ]
            .concat()
        );
        assert_eq!(count_fields(&r, &[]), 2);
        assert_eq!(count_fields(&r, &[1]), 1);
        assert_eq!(count_fields(&r[..5], &[]), 0, "truncated");
    }

    #[test]
    fn merge_replaces_only_the_named_fields() {
        let mut old = Vec::new();
        encode(&[0, 1, 2], &[b"a", b"b", b"c"], &mut old);
        let mut new = Vec::new();
        merge(&old, &[1], &[b"XY"], &mut new);
        let got: Vec<(String, String)> = fields(&new)
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into(),
                    String::from_utf8_lossy(v).into(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [("field0", "a"), ("field2", "c"), ("field1", "XY")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }
}
