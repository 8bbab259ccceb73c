//! One thread count's table as CSV (RFC 4180): a header row, then one line per step, in
//! the order of the published `qps.rel.csv` / `qps.abs.csv`.
//!
//! Columns: `step` (the step label, e.g. `point-query_range=100`), then one per target:
//! * relative (`--values relative`, with two or more targets): `TARGET/BASE` for every
//!   target after the base, its QPS over the base's, two decimals from 0.1 up and three
//!   significant digits below ([`crate::markup::ratio`]: 0.00148, never 0.00);
//! * absolute: `TARGET` for every target, base first, its throughput without decimals (QPS;
//!   Krows/s for scan).
//!
//! A cell that is not a number is `fail` (the step failed), `NA` (not run), `n/s` (not
//! supported by the engine) or `n/a` (x / 0).

use crate::data::ReportData;
use crate::{ReportOptions, Values};

/// Renders the table of `opts.threads` (default: the lowest measured thread count); an unmeasured
/// thread count gives an empty string (`crate::render` rejects it first).
pub fn render(data: &ReportData, opts: &ReportOptions) -> String {
    let table = match opts.threads {
        Some(threads) => data.tables.iter().find(|t| t.threads == threads),
        None => data.tables.first(),
    };
    let Some(table) = table else {
        return String::new();
    };
    let relative = opts.values == Values::Relative && data.columns.len() >= 2;
    let mut out = String::from("step");
    let base = data.base();
    for col in data.columns.iter().skip(usize::from(relative)) {
        out.push(',');
        if relative {
            out.push_str(&field(&format!("{}/{base}", col.name())));
        } else {
            out.push_str(&field(col.name()));
        }
    }
    out.push('\n');
    for row in &table.rows {
        out.push_str(&field(&row.label));
        let (cells, decimals) = if relative {
            (row.relative(), crate::markup::RATIO)
        } else {
            (row.cells.clone(), 0)
        };
        for cell in cells {
            out.push(',');
            out.push_str(&cell.plain(decimals));
        }
        out.push('\n');
    }
    out
}

/// Quotes a field only when it needs it (RFC 4180); sysbench labels never do.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        assert_eq!(super::field("scan_range=100"), "scan_range=100");
        assert_eq!(super::field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
