//! pgbench's and TPC-C's own summaries in the text report: per pgbench step the lines
//! `pgbench` prints (transactions, failures, retries, latency limit, schedule lag, tps)
//! with percentiles beside them; per TPC-C step NOPM, TPM and the consistency conditions,
//! a violated one marked `VIOLATED`.

use crate::data::ReportData;
use crate::detail::each_result;
use dbdelta_model::{StepResult, ThroughputUnit};
use std::fmt::Write;

/// Writes both summaries for the steps that have them.
pub fn tpc_text(out: &mut String, data: &ReportData) {
    let options = data.runs.first().map(|r| &r.manifest.options);
    for (threads, label, target, r) in each_result(data) {
        let Some(txn) = &r.txn else { continue };
        if r.throughput.unit == ThroughputUnit::Nopm {
            tpcc_block(out, threads, label, target, r);
            continue;
        }
        if r.throughput.unit != ThroughputUnit::Tps {
            continue;
        }
        let _ = writeln!(
            out,
            "--- pgbench: {label} dop={threads} target={target} ---\n"
        );
        let script = match r.step.as_str() {
            "tpcb-like" => "TPC-B (sort of)",
            "simple-update" => "simple update",
            "select-only" => "select only",
            other => other,
        };
        let _ = writeln!(out, "transaction type: <builtin: {script}>");
        if let Some(o) = options {
            let _ = writeln!(out, "scaling factor: {}", o.tpc.scale_factor);
            let mode = if o.prepared { "prepared" } else { "simple" };
            let _ = writeln!(out, "query mode: {mode}");
        }
        let _ = writeln!(out, "number of clients: {}", r.threads);
        let _ = writeln!(out, "maximum number of tries: {}", txn.max_tries);
        let _ = writeln!(out, "duration: {:.1} s", r.seconds);
        let _ = writeln!(
            out,
            "number of transactions actually processed: {}",
            r.events
        );
        let attempted = (r.events + r.failed_events).max(1) as f64;
        let _ = writeln!(
            out,
            "number of failed transactions: {} ({:.3}%)",
            r.failed_events,
            100.0 * r.failed_events as f64 / attempted
        );
        if txn.max_tries != 1 {
            let _ = writeln!(
                out,
                "number of transactions retried: {} ({:.3}%)",
                txn.retried,
                100.0 * txn.retried as f64 / attempted
            );
            let _ = writeln!(out, "total number of retries: {}", txn.retries);
        }
        if let Some(ms) = txn.latency_limit_ms {
            let _ = writeln!(
                out,
                "number of transactions above the {ms:.1} ms latency limit: {}/{} ({:.3}%)",
                txn.late,
                r.events,
                100.0 * txn.late as f64 / r.events.max(1) as f64
            );
            if txn.skipped > 0 || r.pacing.is_some() {
                let _ = writeln!(out, "number of transactions skipped: {}", txn.skipped);
            }
        }
        latency_lines(out, r);
        if let Some(p) = &r.pacing {
            let _ = writeln!(
                out,
                "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
                p.lag.mean_us / 1000.0,
                p.lag.max_us / 1000.0
            );
        }
        if let Some(c) = &r.connect {
            let _ = writeln!(
                out,
                "initial connection time = {:.3} ms",
                c.seconds * 1000.0
            );
        }
        let _ = writeln!(out, "tps = {:.6} (without initial connection time)", r.tps);
        intervals(out, r);
        out.push('\n');
    }
}

/// pgbench's per-interval aggregates (`--aggregate-interval 1`), with each second's own
/// HDR percentiles.
fn intervals(out: &mut String, r: &StepResult) {
    if r.intervals.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "per second: t\ttps\tp50-ms\tp95-ms\tp99-ms\tmax-ms\terrors"
    );
    // A run merged from segments keeps each second's rates and slowest event (they add
    // exactly), but not its percentiles: those would need each second's histograms.
    let merged = r
        .segments
        .as_ref()
        .is_some_and(|s| s.index.is_none() && s.count > 1);
    if merged {
        let _ = writeln!(
            out,
            "(merged from segments: per-second percentiles are not kept, shown as -)"
        );
    }
    for i in &r.intervals {
        let ms = |us: f64| {
            if merged {
                "-".to_string()
            } else {
                format!("{:.3}", us / 1000.0)
            }
        };
        let _ = writeln!(
            out,
            "{:.0}\t{:.0}\t{}\t{}\t{}\t{:.3}\t{}",
            i.t,
            i.tps,
            ms(i.p50_us),
            ms(i.p95_us),
            ms(i.p99_us),
            i.max_us / 1000.0,
            i.errors
        );
    }
}

fn latency_lines(out: &mut String, r: &StepResult) {
    let l = &r.latency;
    let _ = writeln!(out, "latency average = {:.3} ms", l.mean_us / 1000.0);
    let _ = writeln!(
        out,
        "latency p50 = {:.3} ms, p95 = {:.3} ms, p99 = {:.3} ms, p99.9 = {:.3} ms, max = {:.3} ms",
        l.p50_us / 1000.0,
        l.p95_us / 1000.0,
        l.p99_us / 1000.0,
        l.p999_us / 1000.0,
        l.max_us / 1000.0
    );
}

fn tpcc_block(out: &mut String, threads: u32, label: &str, target: &str, r: &StepResult) {
    let _ = writeln!(
        out,
        "--- TPC-C: {label} terminals={threads} target={target} ---\n"
    );
    let _ = writeln!(out, "NOPM = {:.0}", r.throughput.value);
    let _ = writeln!(out, "TPM = {:.0}", r.tps * 60.0);
    if let Some(n) = r.workload_stats.get("new-orders") {
        let _ = writeln!(out, "new orders placed in the window: {n:.0}");
    }
    if let Some(t) = &r.txn {
        let _ = writeln!(
            out,
            "retries: {} ({} transactions, at most {} tries each); failed transactions: {}",
            t.retries, t.retried, t.max_tries, r.failed_events
        );
    }
    latency_lines(out, r);
    for n in 1..=4 {
        let Some(v) = r.workload_stats.get(&format!("consistency.{n}")) else {
            continue;
        };
        let what = condition_text(n);
        if *v > 0.0 {
            let _ = writeln!(out, "consistency condition {n} VIOLATED ({v:.0}): {what}");
        } else {
            let _ = writeln!(out, "consistency condition {n} holds: {what}");
        }
    }
    out.push('\n');
}

/// What condition `n` says (TPC-C clause 3.3.2), for the report's lines.
fn condition_text(n: usize) -> &'static str {
    match n {
        1 => "W_YTD = sum(D_YTD)",
        2 => "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        3 => "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
        _ => "sum(O_OL_CNT) = rows in ORDER-LINE",
    }
}

#[cfg(test)]
mod tests {
    use super::intervals;
    use dbdelta_model::segment::SegmentWindow;
    use dbdelta_model::{Interval, StepResult};

    fn step() -> StepResult {
        let mut r = StepResult::empty(
            "a",
            "tpcb-like",
            "tpcb-like",
            1,
            dbdelta_model::Group::Write,
            dbdelta_model::StepKind::Measured,
            1,
        );
        r.intervals = vec![Interval {
            t: 1.0,
            qps: 500.0,
            tps: 100.0,
            p95_us: 2500.0,
            p99_us: 4000.0,
            p50_us: 1000.0,
            max_us: 9000.0,
            errors: 0,
        }];
        r
    }

    #[test]
    fn a_merged_run_shows_no_per_second_percentiles() {
        let mut one = String::new();
        intervals(&mut one, &step());
        assert!(
            one.contains("1\t100\t1.000\t2.500\t4.000\t9.000\t0"),
            "{one}"
        );

        let mut r = step();
        r.segments = Some(SegmentWindow {
            count: 4,
            ..SegmentWindow::default()
        });
        let mut merged = String::new();
        intervals(&mut merged, &r);
        assert!(merged.contains("1\t100\t-\t-\t-\t9.000\t0"), "{merged}");
        assert!(merged.contains("merged from segments"), "{merged}");
    }
}
