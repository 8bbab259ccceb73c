//! `label,v1,…` lines for one thread count, exactly like the published `qps.rel.csv` /
//! `qps.abs.csv`: no header, relative values `%.2f`, absolute values `%.0f`.

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
    let mut out = String::new();
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
