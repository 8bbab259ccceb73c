//! Row generation (iibench.py's generate_cols): the random columns and the half-compressible `data` string, rendered
//! into one multi-row INSERT per batch.

use crate::rng::Rng;
use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of the base64 buffer `data` slices come from (the scripts use 4 MiB of urandom,
/// base64-encoded).
const BUFFER_BYTES: usize = 1 << 20;
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// One client's row generator.
pub struct RowGen {
    rng: Rng,
    buffer: Vec<u8>,
}

impl RowGen {
    /// A generator for one client and step (the scripts seed with step start + client#).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Rng::new(seed, stream);
        let mut buffer = Vec::with_capacity(BUFFER_BYTES);
        while buffer.len() < BUFFER_BYTES {
            let bits = rng.next_u64();
            buffer.extend((0..10).map(|i| B64[((bits >> (6 * i)) & 63) as usize]));
        }
        buffer.truncate(BUFFER_BYTES);
        RowGen { rng, buffer }
    }

    /// `randrange(lo, hi)`: uniform in [lo, hi).
    pub fn randrange(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        self.rng.uniform(lo, hi - 1)
    }

    /// The `data` column: L in 10..=20, `'a' × (L − r)` then r random base64 characters,
    /// r = ⌊L × 0.75 × 50 / 100⌋.
    pub fn data(&mut self, out: &mut String) {
        let len = self.randrange(10, 21) as usize;
        let rand_len = (len as f64 * 0.75 * 50.0 / 100.0) as usize;
        out.extend(std::iter::repeat_n('a', len - rand_len));
        let start = self.randrange(0, (self.buffer.len() - rand_len) as i64) as usize;
        for &b in &self.buffer[start..start + rand_len] {
            out.push(b as char);
        }
    }

    /// The INSERT of `rows` rows into `table` (iibench.py's generate_cols): every row shares one timestamp; price
    /// is written `%.2f` as the scripts do.
    pub fn insert_sql(&mut self, table: &str, rows: u64, out: &mut String) {
        out.clear();
        let ts = timestamp_now();
        let _ = write!(
            out,
            "insert into {table} (dateandtime,cashregisterid,customerid,productid,price,data) values "
        );
        for i in 0..rows {
            if i > 0 {
                out.push(',');
            }
            let cash = self.randrange(0, 1000);
            let prod = self.randrange(0, 10000);
            let cust = self.randrange(0, 100000);
            let price = self.randrange(0, 500);
            let _ = write!(out, "('{ts}',{cash},{cust},{prod},{:.2},'", price as f64);
            self.data(out);
            out.push_str("')");
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` of now (UTC).
pub fn timestamp_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    format_timestamp(secs)
}

/// `YYYY-MM-DD HH:MM:SS` of a Unix time (UTC), by the civil-from-days algorithm.
pub fn format_timestamp(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(format_timestamp(1_700_000_000), "2023-11-14 22:13:20");
        assert_eq!(format_timestamp(951_825_600), "2000-02-29 12:00:00");
    }

    #[test]
    fn data_is_10_to_20_chars_half_compressible() {
        let mut g = RowGen::new(1, 2);
        for _ in 0..200 {
            let mut s = String::new();
            g.data(&mut s);
            assert!((10..=20).contains(&s.len()), "{s}");
            let r = (s.len() as f64 * 0.375) as usize;
            assert!(s[..s.len() - r].bytes().all(|b| b == b'a'), "{s}");
        }
    }

    #[test]
    fn insert_has_one_tuple_per_row() {
        let mut g = RowGen::new(1, 2);
        let mut sql = String::new();
        g.insert_sql("pi1", 5, &mut sql);
        assert!(sql.starts_with("insert into pi1 (dateandtime,"));
        assert_eq!(sql.matches("('").count(), 5);
        assert!(sql.contains(".00,'"));
    }
}
