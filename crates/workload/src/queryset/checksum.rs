//! Result checksums that agree across engines when the answers agree.
//!
//! Engines print the same value differently: `2.5` (SQLite), `2.5000` (a MySQL DECIMAL),
//! `2.50` (a PostgreSQL numeric), `2.4999999999999996` (a float summed in another order).
//! Every value that reads as a number is rewritten in one canonical form, rounded to a
//! number of significant digits, before hashing; other text is hashed as is. NULL hashes
//! apart from every text.

use dbdelta_engine::Rows;
use dbdelta_model::queryset::ChecksumMode;
use sha2::{Digest, Sha256};

/// Significant digits kept of non-integer numbers: enough to tell different answers
/// apart, few enough to absorb summation order and DECIMAL/float printing.
pub const SIGNIFICANT_DIGITS: usize = 9;

/// The canonical text of one value (`None` = NULL).
pub fn canonical(value: Option<&str>, out: &mut String) {
    let Some(v) = value else {
        out.push_str("\\N");
        return;
    };
    let t = v.trim();
    if let Ok(i) = t.parse::<i64>() {
        out.push_str(&i.to_string());
        return;
    }
    let looks_numeric = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
        && t.bytes().any(|b| b.is_ascii_digit());
    match t.parse::<f64>() {
        Ok(f) if looks_numeric && f.is_finite() => {
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                out.push_str(&(f as i64).to_string());
            } else {
                out.push_str(&format!("{:.*e}", SIGNIFICANT_DIGITS - 1, f));
            }
        }
        _ => out.push_str(v),
    }
}

/// The checksum of a result: hex of SHA-256 over the canonical rows, in order or as a
/// multiset; `None` for [`ChecksumMode::None`].
pub fn checksum(rows: &Rows, mode: ChecksumMode) -> Option<String> {
    if mode == ChecksumMode::None {
        return None;
    }
    let mut line = String::new();
    let mut digests: Vec<[u8; 32]> = Vec::with_capacity(rows.len());
    for r in 0..rows.len() {
        line.clear();
        for c in 0..rows.width(r) {
            if c > 0 {
                line.push('\u{1f}');
            }
            canonical(rows.get(r, c), &mut line);
        }
        digests.push(Sha256::digest(line.as_bytes()).into());
    }
    if mode == ChecksumMode::Unordered {
        digests.sort_unstable();
    }
    let mut all = Sha256::new();
    all.update((rows.len() as u64).to_le_bytes());
    for d in &digests {
        all.update(d);
    }
    let h = all.finalize();
    Some(h.iter().take(8).map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(data: &[&[Option<&str>]]) -> Rows {
        let mut r = Rows::new();
        for row in data {
            r.start_row();
            for v in *row {
                r.push(v.map(str::as_bytes));
            }
        }
        r
    }

    fn canon(v: Option<&str>) -> String {
        let mut s = String::new();
        canonical(v, &mut s);
        s
    }

    #[test]
    fn numbers_print_alike_across_engines() {
        assert_eq!(canon(Some("2.5")), canon(Some("2.5000")));
        assert_eq!(canon(Some("2.50")), canon(Some("2.4999999999999996")));
        assert_eq!(canon(Some("3")), canon(Some("3.000")));
        assert_eq!(canon(Some("-7")), "-7");
        assert_ne!(canon(Some("2.5")), canon(Some("2.6")));
        assert_ne!(canon(None), canon(Some("\\N")).replace('\\', "x"));
        assert_eq!(canon(Some("abc")), "abc");
        // Text that merely parses as a float ("inf", "nan") stays text.
        assert_eq!(canon(Some("inf")), "inf");
    }

    #[test]
    fn unordered_ignores_row_order_ordered_does_not() {
        let a = rows(&[&[Some("x"), Some("1")], &[Some("y"), Some("2.0")]]);
        let b = rows(&[&[Some("y"), Some("2")], &[Some("x"), Some("1")]]);
        assert_eq!(
            checksum(&a, ChecksumMode::Unordered),
            checksum(&b, ChecksumMode::Unordered)
        );
        assert_ne!(
            checksum(&a, ChecksumMode::Ordered),
            checksum(&b, ChecksumMode::Ordered)
        );
        assert_eq!(checksum(&a, ChecksumMode::None), None);
    }

    #[test]
    fn a_different_answer_gives_a_different_checksum() {
        let a = rows(&[&[Some("x"), Some("1")]]);
        let b = rows(&[&[Some("x"), Some("2")]]);
        let c = rows(&[&[Some("x"), None]]);
        let empty = rows(&[]);
        let sums: Vec<_> = [&a, &b, &c, &empty]
            .iter()
            .map(|r| checksum(r, ChecksumMode::Unordered))
            .collect();
        for i in 0..sums.len() {
            for j in i + 1..sums.len() {
                assert_ne!(sums[i], sums[j], "{i} vs {j}");
            }
        }
        // Values are separated: ("ab","c") is not ("a","bc").
        let d = rows(&[&[Some("ab"), Some("c")]]);
        let e = rows(&[&[Some("a"), Some("bc")]]);
        assert_ne!(
            checksum(&d, ChecksumMode::Ordered),
            checksum(&e, ChecksumMode::Ordered)
        );
    }
}
