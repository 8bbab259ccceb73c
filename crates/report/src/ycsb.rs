//! Steps that mix operation types (YCSB): a per-type table for the text report, and YCSB's
//! own `[OP], Measurement, value` export (`--format ycsb`) so scripts written for YCSB's
//! output read dbdelta's unchanged.

use crate::data::ReportData;
use crate::detail::each_result;
use dbdelta_model::StepResult;
use std::fmt::Write;

/// Per step, thread count and target: each operation type's count, rate and latency.
pub fn op_types_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for (threads, label, target, r) in each_result(data) {
        for t in &r.op_types {
            let l = &t.latency;
            lines.push(format!(
                "{}\t{}\t{:.0}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{}\t{threads}\t{target}\t{label}",
                t.name, t.count, t.per_sec, l.mean_us, l.p50_us, l.p95_us, l.p99_us, l.p999_us,
                l.max_us, t.failed,
            ));
        }
    }
    crate::detail::section(
        out,
        "operation types (count, ops/s and latency in us per type; failed events)",
        "type\tcount\tops/s\tavg\tp50\tp95\tp99\tp99.9\tmax\tfailed\tdop\ttarget\tstep",
        lines,
    );
}

/// YCSB's text exporter layout, one block per result with operation types.
pub fn render(data: &ReportData) -> String {
    let mut out = String::new();
    for (threads, label, target, r) in each_result(data) {
        if r.op_types.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# target={target} step={label} threads={threads}");
        export(&mut out, r);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(
            "# no step of these runs mixes operation types: the ycsb format is for YCSB steps\n",
        );
    }
    out
}

fn export(out: &mut String, r: &StepResult) {
    let ms = r.seconds * 1000.0;
    let done: u64 = r.op_types.iter().map(|t| t.count + t.failed).sum();
    let _ = writeln!(out, "[OVERALL], RunTime(ms), {ms:.0}");
    let _ = writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        if ms > 0.0 {
            1000.0 * done as f64 / ms
        } else {
            0.0
        }
    );
    for t in &r.op_types {
        let l = &t.latency;
        let min = dbdelta_stats::decode(&l.histogram)
            .map(|h| h.min() as f64 / 1000.0)
            .unwrap_or(0.0);
        let n = &t.name;
        let _ = writeln!(out, "[{n}], Operations, {}", t.count);
        let _ = writeln!(out, "[{n}], AverageLatency(us), {}", l.mean_us);
        let _ = writeln!(out, "[{n}], MinLatency(us), {min:.0}");
        let _ = writeln!(out, "[{n}], MaxLatency(us), {:.0}", l.max_us);
        let _ = writeln!(out, "[{n}], 50thPercentileLatency(us), {:.0}", l.p50_us);
        let _ = writeln!(out, "[{n}], 95thPercentileLatency(us), {:.0}", l.p95_us);
        let _ = writeln!(out, "[{n}], 99thPercentileLatency(us), {:.0}", l.p99_us);
        let _ = writeln!(out, "[{n}], Return=OK, {}", t.count);
        if t.failed > 0 {
            let _ = writeln!(out, "[{n}-FAILED], Operations, {}", t.failed);
        }
    }
}
