//! db_bench's `report.tsv` columns (RocksDB's `tools/benchmark.sh`) for steps with RocksDB's
//! counters, from the engine's own statistics and properties over each step's window, plus
//! dbdelta's CPU per operation.

use crate::data::ReportData;
use crate::detail::each_result;
use dbdelta_model::{StepResult, DB_COUNTER_PREFIX};

const GIB: f64 = (1u64 << 30) as f64;

/// The 99.99th percentile of a stored histogram, µs.
fn p9999(r: &StepResult) -> Option<f64> {
    let h = dbdelta_stats::decode(&r.latency.histogram).ok()?;
    (!h.is_empty()).then(|| h.value_at_quantile(0.9999) as f64 / 1000.0)
}

fn stat(r: &StepResult, k: &str) -> Option<f64> {
    r.engine_stats.get(k).copied()
}

fn fmt(v: Option<f64>, decimals: usize) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

/// Write amplification of the window: (flush + compaction bytes) / user bytes written.
pub fn write_amp(r: &StepResult) -> Option<f64> {
    let user = stat(r, "bytes.written")?;
    let written = stat(r, "flush.write.bytes")? + stat(r, "compact.write.bytes")?;
    (user > 0.0).then(|| written / user)
}

/// One line per step with engine counters, db_bench's columns in its order.
pub fn kv_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for (threads, label, target, r) in each_result(data) {
        // A server's db.* counters are not RocksDB's: they have their own table (dbcounters).
        let rocksdb = r
            .engine_stats
            .keys()
            .any(|k| !k.starts_with(DB_COUNTER_PREFIX));
        if !rocksdb || !r.is_ok() {
            continue;
        }
        let ops = r.throughput.value;
        let window_us = r.seconds * 1e6;
        let events = r.events.max(1) as f64;
        lines.push(format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{threads}\t{target}\t{label}",
            fmt(Some(ops), 0),
            fmt((ops > 0.0).then(|| f64::from(r.threads) * 1e6 / ops), 3),
            fmt(Some(r.latency.p50_us), 1),
            fmt(Some(r.latency.p99_us), 1),
            fmt(Some(r.latency.p999_us), 1),
            fmt(p9999(r), 1),
            fmt(Some(r.latency.max_us), 0),
            fmt(stat(r, "total-sst-files-size").map(|b| b / GIB), 3),
            fmt(stat(r, "compact.write.bytes").map(|b| b / GIB), 3),
            fmt(write_amp(r), 2),
            fmt(stat(r, "stall.micros").map(|s| 100.0 * s / window_us.max(1.0)), 1),
            fmt(stat(r, "block.cache.miss").map(|m| m / events), 3),
            fmt(stat(r, "process.user-cpu-secs"), 1),
            fmt(stat(r, "process.sys-cpu-secs"), 1),
            fmt(stat(r, "process.rss-bytes").map(|b| b / GIB), 2),
            fmt(r.costs.as_ref().map(|c| c.host_cpu_us_op), 2),
            fmt(r.costs.as_ref().and_then(|c| c.r_o), 3),
        ));
    }
    crate::detail::section(
        out,
        "key-value engine (db_bench's report.tsv columns from RocksDB's statistics; GB = 2^30 bytes)",
        "ops_sec\tusec_op\tp50\tp99\tp99.9\tp99.99\tpmax\tlsm_sz\tc_wgb\tw_amp\tstall%\tmiss/op\tu_cpu\ts_cpu\trss\tcpu_us/op\tr/o\tdop\ttarget\tstep",
        lines,
    );
}
