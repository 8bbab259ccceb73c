//! The "database counters per operation" tables of the text, markdown and HTML reports: what
//! the server itself counted over each step's window (the `db.*` engine stats PostgreSQL
//! and MySQL/MariaDB targets read over SQL), per operation as the cost table counts them.
//! Nothing is written when no result has such counters.

use crate::data::ReportData;
use crate::detail::{result_of, selected};
use crate::markup::{self, esc, Html, Markdown, Out};
use crate::ReportOptions;
use dbdelta_model::{StepResult, ThroughputUnit};
use std::fmt::Write;

/// One column: its text and markdown headings, and its sources in each engine's counters
/// (the first whose keys are all present is summed), times `scale`.
struct Column {
    text: &'static str,
    markdown: &'static str,
    sources: &'static [&'static [&'static str]],
    scale: f64,
}

const KB: f64 = 1.0 / 1024.0;

/// The row reads and writes of the MySQL family: the handler calls, which MySQL and MariaDB
/// both count (MariaDB 10.6+ has no `Innodb_rows_*`), so the two compare on one definition.
const HANDLER_READS: &[&str] = &[
    "db.handler_read_key",
    "db.handler_read_next",
    "db.handler_read_prev",
    "db.handler_read_first",
    "db.handler_read_last",
    "db.handler_read_rnd",
    "db.handler_read_rnd_next",
];
const HANDLER_WRITES: &[&str] = &["db.handler_write", "db.handler_update", "db.handler_delete"];

/// PostgreSQL's sources first, then the MySQL family's (InnoDB's, then MyRocks': a MyRocks
/// target reads MyRocks' counters in place of InnoDB's).
const COLUMNS: [Column; 7] = [
    Column {
        text: "buf-rd",
        markdown: "buffer reads/op",
        sources: &[
            &["db.blks_read"],
            &["db.innodb_buffer_pool_reads"],
            &["db.rocksdb_block_cache_miss"],
        ],
        scale: 1.0,
    },
    Column {
        text: "buf-req",
        markdown: "buffer requests/op",
        sources: &[
            &["db.blks_hit", "db.blks_read"],
            &["db.innodb_buffer_pool_read_requests"],
            &["db.rocksdb_block_cache_hit", "db.rocksdb_block_cache_miss"],
        ],
        scale: 1.0,
    },
    Column {
        text: "rows-exam",
        markdown: "rows examined/op",
        sources: &[&["db.tup_returned", "db.tup_fetched"], HANDLER_READS],
        scale: 1.0,
    },
    Column {
        text: "rows-wr",
        markdown: "rows written/op",
        sources: &[
            &["db.tup_inserted", "db.tup_updated", "db.tup_deleted"],
            HANDLER_WRITES,
        ],
        scale: 1.0,
    },
    Column {
        text: "commits",
        markdown: "commits/op",
        sources: &[&["db.xact_commit"], &["db.handler_commit"]],
        scale: 1.0,
    },
    Column {
        text: "WAL-KB",
        markdown: "WAL KB/op",
        sources: &[
            &["db.wal_bytes"],
            &["db.innodb_os_log_written"],
            &["db.rocksdb_wal_bytes"],
        ],
        scale: KB,
    },
    Column {
        text: "binlog-KB",
        markdown: "binlog KB/op",
        sources: &[&["db.binlog_bytes_written"]],
        scale: KB,
    },
];

/// What each column counts, for the legends.
const LEGEND: &str = "Counted by the server over the measured window; scan: per thousand rows.
PostgreSQL: buffer reads = blks_read, requests = blks_hit + blks_read, rows examined = \
tup_returned + tup_fetched (an index lookup counts its index entry and its heap row), rows \
written = tuples inserted + updated + deleted, commits = xact_commit (the whole database), WAL \
= advance of the WAL insert position (the whole server).
MySQL/MariaDB (the whole server): Innodb_buffer_pool_reads, Innodb_buffer_pool_read_requests, \
rows examined = the Handler_read_* calls, rows written = Handler_write + Handler_update + \
Handler_delete, Handler_commit, WAL = Innodb_os_log_written, binlog = Binlog_bytes_written \
(MariaDB, with a binary log).
MyRocks (engine=rocksdb): buffer reads = Rocksdb_block_cache_miss, requests = \
Rocksdb_block_cache_hit + Rocksdb_block_cache_miss, WAL = Rocksdb_wal_bytes; rows, commits \
and binlog as above.
PostgreSQL publishes a backend's counters at most once a second, so its figures (not WAL) can \
be off by up to 1 s of work over the window: read them on windows of a minute or more.";

/// The operations of a step's window as the cost table counts them: throughput × seconds
/// (statements for qps, thousands of rows for scans, new orders for TPC-C).
pub(crate) fn operations(r: &StepResult) -> Option<f64> {
    let per_s = match r.throughput.unit {
        ThroughputUnit::Nopm => r.throughput.value / 60.0,
        _ => r.throughput.value,
    };
    let ops = per_s * r.seconds;
    (ops.is_finite() && ops > 0.0).then_some(ops)
}

/// What the server counted over a step's window, per operation; `None` where the engine
/// has no such counter.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DbPerOp {
    /// Blocks or pages read from storage into the buffer cache.
    pub buffer_reads: Option<f64>,
    /// Block or page requests to the buffer cache (hits and reads).
    pub buffer_requests: Option<f64>,
    /// Rows (PostgreSQL: index entries and heap tuples) the executor looked at.
    pub rows_examined: Option<f64>,
    /// Rows inserted, updated and deleted.
    pub rows_written: Option<f64>,
    /// Transactions committed.
    pub commits: Option<f64>,
    /// KB of WAL (InnoDB: redo log) written.
    pub wal_kb: Option<f64>,
    /// KB of binary log written (servers with a binary log that count it).
    pub binlog_kb: Option<f64>,
}

impl DbPerOp {
    /// The values in column order.
    fn cells(&self) -> [Option<f64>; COLUMNS.len()] {
        [
            self.buffer_reads,
            self.buffer_requests,
            self.rows_examined,
            self.rows_written,
            self.commits,
            self.wal_kb,
            self.binlog_kb,
        ]
    }
}

/// A step's server counters per operation; `None` for a failed step, one without db
/// counters, or one without operations.
pub fn per_op(r: &StepResult) -> Option<DbPerOp> {
    if !r.is_ok() || !r.has_db_counters() {
        return None;
    }
    let ops = operations(r)?;
    let [buffer_reads, buffer_requests, rows_examined, rows_written, commits, wal_kb, binlog_kb] =
        COLUMNS.map(|c| {
            c.sources.iter().find_map(|keys| {
                let sum = keys
                    .iter()
                    .map(|k| r.engine_stats.get(*k))
                    .sum::<Option<f64>>()?;
                Some(sum * c.scale / ops)
            })
        });
    Some(DbPerOp {
        buffer_reads,
        buffer_requests,
        rows_examined,
        rows_written,
        commits,
        wal_kb,
        binlog_kb,
    })
}

/// One table line: step label, target and its values.
pub(crate) type Line<'a, T> = (&'a str, &'a str, T);

/// The lines of each thread count that has any, in table order, for the steps `--metrics`
/// selects; `per_op` gives a result's values, `None` leaves the result out.
pub(crate) fn rows_of<'a, T>(
    data: &'a ReportData,
    opts: &'a ReportOptions,
    per_op: fn(&StepResult) -> Option<T>,
) -> Vec<(u32, Vec<Line<'a, T>>)> {
    data.tables
        .iter()
        .map(|table| {
            let lines: Vec<Line<'a, T>> = table
                .rows
                .iter()
                .filter(|row| selected(&opts.metrics, &row.step, &row.label))
                .flat_map(|row| {
                    data.columns.iter().filter_map(move |col| {
                        let r = result_of(data, col.name(), &row.label, table.threads)?;
                        Some((row.label.as_str(), col.name(), per_op(r)?))
                    })
                })
                .collect();
            (table.threads, lines)
        })
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}

fn rows<'a>(data: &'a ReportData, opts: &'a ReportOptions) -> Vec<(u32, Vec<Line<'a, DbPerOp>>)> {
    rows_of(data, opts, per_op)
}

/// One per-operation counters section as the three writers lay it out: its titles, legend
/// and column headings (the database counters here, the MyRocks counters after them).
pub(crate) struct Section<'s> {
    /// The text title (`--- {text_title} dop=N ---`).
    pub text_title: &'s str,
    /// The Markdown and HTML title.
    pub title: &'s str,
    /// The HTML anchor.
    pub anchor: &'s str,
    /// What the columns count.
    pub legend: &'s str,
    /// Text column headings.
    pub text_heads: Vec<&'s str>,
    /// Markdown and HTML column headings.
    pub heads: Vec<&'s str>,
}

/// The lines of each thread count, the values as cells.
pub(crate) type Tables<'a> = Vec<(u32, Vec<Line<'a, Vec<Option<f64>>>>)>;

fn cells_of<'a, T>(
    tables: Vec<(u32, Vec<Line<'a, T>>)>,
    cells: fn(&T) -> Vec<Option<f64>>,
) -> Tables<'a> {
    tables
        .into_iter()
        .map(|(t, lines)| {
            (
                t,
                lines
                    .into_iter()
                    .map(|(l, c, v)| (l, c, cells(&v)))
                    .collect(),
            )
        })
        .collect()
}

/// A line as the Markdown and HTML writers lay it out.
fn markup_line(label: &str, target: &str, values: &[Option<f64>]) -> markup::Line {
    markup::Line::keyed(
        [label, target],
        values
            .iter()
            .map(|v| v.map_or(Out::Word("-"), |v| Out::Num(v, 3))),
    )
}

fn value(v: &Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

/// The text tables, one per thread count, tab-separated with the label last.
pub(crate) fn write_text(out: &mut String, section: &Section<'_>, tables: Tables<'_>) {
    for (threads, lines) in tables {
        let _ = writeln!(out, "--- {} dop={threads} ---\n", section.text_title);
        let _ = writeln!(out, "{}\n", section.legend);
        let _ = writeln!(out, "{}\ttarget\tstep", section.text_heads.join("\t"));
        for (label, target, values) in lines {
            let cells: Vec<String> = values.iter().map(value).collect();
            let _ = writeln!(out, "{}\t{target}\t{label}", cells.join("\t"));
        }
        out.push('\n');
    }
}

/// The markdown tables, one per thread count.
pub(crate) fn write_markdown(
    out: &mut String,
    opts: &ReportOptions,
    section: &Section<'_>,
    tables: Tables<'_>,
) {
    let w = Markdown { opts };
    for (threads, lines) in tables {
        let _ = write!(
            out,
            "\n### {}, dop={threads}\n\n{}\n\n| step | target | {} |\n|---|---|{}\n",
            section.title,
            section.legend,
            section.heads.join(" | "),
            "---:|".repeat(section.heads.len())
        );
        for (label, target, values) in lines {
            w.line(out, &markup_line(label, target, &values), 0);
        }
    }
}

/// The HTML section: a heading, the legend as a note, one table per thread count.
pub(crate) fn write_html(
    out: &mut String,
    opts: &ReportOptions,
    section: &Section<'_>,
    tables: Tables<'_>,
) {
    let w = Html { opts };
    if tables.is_empty() {
        return;
    }
    let legend: Vec<String> = section.legend.lines().map(esc).collect();
    let _ = writeln!(
        out,
        "<h2 id=\"{}\">{}</h2>\n<p class=\"note\">{}</p>",
        section.anchor,
        section.title,
        legend.join("<br>\n")
    );
    let heads: String = section
        .heads
        .iter()
        .map(|c| format!("<th>{}</th>", esc(c)))
        .collect();
    for (threads, lines) in tables {
        let _ = writeln!(
            out,
            "<h3>dop={threads}</h3>\n<table class=\"cost\">\n<tr><th>step</th><th>target</th>{heads}</tr>"
        );
        for (label, target, values) in lines {
            w.line(out, &markup_line(label, target, &values), 0);
        }
        out.push_str("</table>\n");
    }
}

fn section() -> Section<'static> {
    Section {
        text_title: "database counters per operation",
        title: "Database counters per operation",
        anchor: "dbcounters",
        legend: LEGEND,
        text_heads: COLUMNS.iter().map(|c| c.text).collect(),
        heads: COLUMNS.iter().map(|c| c.markdown).collect(),
    }
}

fn tables<'a>(data: &'a ReportData, opts: &'a ReportOptions) -> Tables<'a> {
    cells_of(rows(data, opts), |v| v.cells().to_vec())
}

/// The text tables, one per thread count, tab-separated with the label last.
pub fn text(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_text(out, &section(), tables(data, opts));
}

/// The markdown tables, one per thread count.
pub fn markdown(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_markdown(out, opts, &section(), tables(data, opts));
}

/// Whether any step selected by `--metrics` has server counters (the HTML table of
/// contents links the section only then).
pub fn any(data: &ReportData, opts: &ReportOptions) -> bool {
    !rows(data, opts).is_empty()
}

/// The HTML section: one table per thread count after the hardware cost tables, the
/// legend as a note.
pub fn html(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_html(out, opts, &section(), tables(data, opts));
}
