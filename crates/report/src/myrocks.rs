//! The "MyRocks counters per operation" tables of the text, markdown and HTML reports, after
//! the database counters: what MariaDB's RocksDB engine counted over each step's window
//! (the `db.rocksdb_*` status variables a MyRocks target reads), per operation as the cost
//! table counts them. Written only when some result has them.

use crate::data::ReportData;
use crate::dbcounters::{
    operations, rows_of, write_html, write_markdown, write_text, Section, Tables,
};
use crate::ReportOptions;
use dbdelta_model::StepResult;

/// One column: its text and markdown headings, its status variable, and the scale.
struct Column {
    text: &'static str,
    markdown: &'static str,
    key: &'static str,
    scale: f64,
}

const KB: f64 = 1.0 / 1024.0;

/// The engine's own work beside the generic columns of the database counters table: reads
/// served by the memtable, bytes the engine read and wrote for the queries, and the
/// background work a write costs (flushes and compactions), with write stalls.
const COLUMNS: [Column; 8] = [
    Column {
        text: "mem-hit",
        markdown: "memtable hits/op",
        key: "db.rocksdb_memtable_hit",
        scale: 1.0,
    },
    Column {
        text: "seeks",
        markdown: "seeks/op",
        key: "db.rocksdb_number_db_seek",
        scale: 1.0,
    },
    Column {
        text: "rd-KB",
        markdown: "engine read KB/op",
        key: "db.rocksdb_bytes_read",
        scale: KB,
    },
    Column {
        text: "wr-KB",
        markdown: "engine written KB/op",
        key: "db.rocksdb_bytes_written",
        scale: KB,
    },
    Column {
        text: "flush-KB",
        markdown: "flush KB/op",
        key: "db.rocksdb_flush_write_bytes",
        scale: KB,
    },
    Column {
        text: "cmp-rd-KB",
        markdown: "compaction read KB/op",
        key: "db.rocksdb_compact_read_bytes",
        scale: KB,
    },
    Column {
        text: "cmp-wr-KB",
        markdown: "compaction written KB/op",
        key: "db.rocksdb_compact_write_bytes",
        scale: KB,
    },
    Column {
        text: "stall-us",
        markdown: "stall µs/op",
        key: "db.rocksdb_stall_micros",
        scale: 1.0,
    },
];

const LEGEND: &str = "MariaDB's MyRocks status variables over the measured window (the whole \
server): Rocksdb_memtable_hit, Rocksdb_number_db_seek, Rocksdb_bytes_read and \
Rocksdb_bytes_written (the rows' bytes the queries read and wrote), Rocksdb_flush_write_bytes, \
Rocksdb_compact_read_bytes, Rocksdb_compact_write_bytes (background work: flushes and \
compactions finish after the step that caused them), Rocksdb_stall_micros (writes held back).";

/// A step's MyRocks counters per operation; `None` without them (not a MyRocks target) or
/// without operations.
fn per_op(r: &StepResult) -> Option<[Option<f64>; COLUMNS.len()]> {
    if !r.is_ok() || !r.engine_stats.keys().any(|k| k.starts_with("db.rocksdb_")) {
        return None;
    }
    let ops = operations(r)?;
    Some(COLUMNS.map(|c| r.engine_stats.get(c.key).map(|v| v * c.scale / ops)))
}

type Values = [Option<f64>; COLUMNS.len()];

fn section() -> Section<'static> {
    Section {
        text_title: "MyRocks counters per operation",
        title: "MyRocks counters per operation",
        anchor: "myrocks",
        legend: LEGEND,
        text_heads: COLUMNS.iter().map(|c| c.text).collect(),
        heads: COLUMNS.iter().map(|c| c.markdown).collect(),
    }
}

fn tables<'a>(data: &'a ReportData, opts: &'a ReportOptions) -> Tables<'a> {
    rows_of(data, opts, |r| per_op(r).map(|v: Values| v.to_vec()))
}

/// The text tables, one per thread count, tab-separated with the label last.
pub fn text(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_text(out, &section(), tables(data, opts));
}

/// The markdown tables, one per thread count.
pub fn markdown(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_markdown(out, opts, &section(), tables(data, opts));
}

/// The HTML section after the database counters, one table per thread count.
pub fn html(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    write_html(out, opts, &section(), tables(data, opts));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_myrocks_results_have_a_line() {
        let mut r = StepResult::default();
        r.throughput.value = 100.0;
        r.seconds = 2.0;
        r.engine_stats.insert("db.handler_commit".into(), 200.0);
        assert_eq!(per_op(&r), None);
        r.engine_stats
            .insert("db.rocksdb_compact_write_bytes".into(), 2048.0 * 200.0);
        r.engine_stats
            .insert("db.rocksdb_memtable_hit".into(), 50.0);
        let v = per_op(&r).unwrap();
        assert_eq!(v[0], Some(0.25));
        assert_eq!(v[6], Some(2.0));
        assert_eq!(v[7], None);
    }
}
