//! `dbdelta history export`: the series of a store as CSV (one row per run of a series) or
//! JSON (the series with their runs), for spreadsheets and other tools.

use crate::series::Series;

/// The CSV header: the series key, then the run's fields.
pub const CSV_HEADER: &str = "host,suite,target,label,threads,run_id,run_started,version,build,settings_hash,repeats,qps,p95_us,cpu_us_per_op";

/// One field, quoted as RFC 4180 says when it holds a comma, quote or line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The series as CSV: [`CSV_HEADER`], then one row per run of each series (series in key
/// order, runs oldest first); a missing CPU cost is an empty field. Numbers are printed in
/// full (shortest round-trip form).
pub fn csv(series: &[Series]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for s in series {
        let k = &s.key;
        for p in &s.points {
            let row = [
                field(&k.host),
                field(&k.suite),
                field(&k.target),
                field(&k.label),
                k.threads.to_string(),
                field(&p.run_id),
                field(&p.run_started),
                field(&p.version),
                field(&p.build),
                field(&p.settings_hash),
                p.repeats.to_string(),
                p.qps.to_string(),
                p.p95_us.to_string(),
                p.cpu_us_per_op.map_or(String::new(), |v| v.to_string()),
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

/// The series as a JSON array of `{"key": {…}, "points": [{…}, …]}`, pretty-printed.
pub fn json(series: &[Series]) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(series).map(|mut s| {
        s.push('\n');
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{SeriesKey, SeriesPoint};

    fn one() -> Vec<Series> {
        vec![Series {
            key: SeriesKey {
                host: "h1".into(),
                suite: "sysbench".into(),
                target: "pg".into(),
                label: "point-query.pre_range=100".into(),
                threads: 4,
            },
            points: vec![SeriesPoint {
                run_id: "r1".into(),
                run_started: "2026-01-01T00:00:00Z".into(),
                version: "PostgreSQL 15.8 (Debian, \"bookworm\")".into(),
                build: "postgres:/usr/lib/postgresql/15/bin".into(),
                settings_hash: "00ff".into(),
                repeats: 2,
                qps: 1005.5,
                p95_us: 990.0,
                cpu_us_per_op: None,
            }],
        }]
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            csv(&one()),
            format!(
                "{CSV_HEADER}\nh1,sysbench,pg,point-query.pre_range=100,4,r1,2026-01-01T00:00:00Z,\
                 \"PostgreSQL 15.8 (Debian, \"\"bookworm\"\")\",postgres:/usr/lib/postgresql/15/bin,00ff,2,1005.5,990,\n"
            )
        );
    }

    #[test]
    fn json_keeps_every_field() {
        let v: serde_json::Value = serde_json::from_str(&json(&one()).unwrap()).unwrap();
        assert_eq!(v[0]["key"]["threads"], 4);
        assert_eq!(v[0]["points"][0]["qps"], 1005.5);
        assert!(v[0]["points"][0]["cpu_us_per_op"].is_null());
    }
}
