//! The frame every dashboard page shares: inline CSS only (no fonts, scripts or styles from
//! elsewhere, so the site opens from `file://` and from any CI artifact store), and the
//! number formats of its tables.

use dbdelta_report::markup::esc;

const CSS: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:middle}\
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.worse{color:#c44e52;font-weight:bold}.better{color:#2e8b57;font-weight:bold}\
.note{color:#555;font-size:13px}.warn{color:#8a5a00}\
.new{background:#c44e52;color:#fff;border-radius:3px;padding:0 4px;font-size:11px;margin-left:4px}\
pre.drill{background:#f8f8f8;padding:8px;overflow-x:auto;font-size:12px}\
svg.chart{display:block;margin:8px 0}nav{margin-bottom:1em;font-size:13px}\
#filter{margin:0 0 10px 0}#filter input[type=text]{width:24em;padding:3px}";

/// A whole page: `title`, `body` (HTML), and an optional inline script at the end.
pub fn shell(title: &str, body: &str, script: Option<&str>) -> String {
    let script = script.map_or(String::new(), |s| format!("<script>{s}</script>\n"));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}{script}</body>\n</html>\n",
        esc(title)
    )
}

/// A measured value with the decimals its size needs.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A p-value in the form the console prints it.
pub fn pvalue(p: f64) -> String {
    format!("{p:.1e}")
}
