//! One step's results from every segment of a run, merged exactly: counts and rates summed
//! over the common window, HDR histograms added (never percentiles averaged), per-type
//! counts and error codes summed, each segment's client costs kept apart. A step that
//! misses a segment, or whose segments did not measure one window, is failed: never a
//! smaller number reported as the whole.

use dbdelta_model::{
    ConnectStats, Interval, LatencySummary, OpTypeStats, Pacing, SegmentPart, SegmentWindow,
    StepResult, StepStatus, Throughput, ThroughputUnit, TxnCounts,
};
use dbdelta_stats::{merge_encoded, summarize, HistogramError};

/// The segments' windows may start this far apart (a fraction of the window) and still be
/// one window: beyond it the barrier failed to align them.
const MAX_START_SPREAD: f64 = 0.05;

/// Why a step's histograms could not be merged.
#[derive(Debug, thiserror::Error)]
#[error("the {what} histogram of segment {segment}")]
pub struct MergeStepError {
    /// The histogram (`latency`, `READ latency`, …).
    pub what: String,
    /// The segment whose histogram it was.
    pub segment: u32,
    /// Why it could not be read or added.
    #[source]
    pub source: HistogramError,
}

/// One segment's result of a step, with the segment's host.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// The segment (1-based).
    pub segment: u32,
    /// Its host.
    pub host: &'a str,
    /// Its result.
    pub result: &'a StepResult,
}

/// Merges the results of one step from the segments that have one; `count` segments ran.
/// `table_size` recomputes scan's per-thread headline from the merged latency.
pub fn merge_step(
    parts: &[Part<'_>],
    count: u32,
    table_size: u64,
) -> Result<StepResult, MergeStepError> {
    // The first segment loads and settles and reads the server-wide figures (TPC-C's
    // new orders, pgbench's sums, the server's counters): its result leads.
    let lead = parts
        .iter()
        .min_by_key(|p| p.segment)
        .expect("a step merged from no segment");
    let mut m = lead.result.clone();
    let results: Vec<&StepResult> = parts.iter().map(|p| p.result).collect();
    m.events = sum(&results, |r| r.events);
    m.queries = sum(&results, |r| r.queries);
    m.reads = sum(&results, |r| r.reads);
    m.writes = sum(&results, |r| r.writes);
    m.others = sum(&results, |r| r.others);
    m.rows_returned = sum(&results, |r| r.rows_returned);
    m.rows_affected = sum(&results, |r| r.rows_affected);
    m.errors = sum(&results, |r| r.errors);
    m.failed_events = sum(&results, |r| r.failed_events);
    m.busy_retries = sum(&results, |r| r.busy_retries);
    m.error_codes.clear();
    for r in &results {
        for (code, n) in &r.error_codes {
            *m.error_codes.entry(code.clone()).or_default() += n;
        }
    }
    m.qps = results.iter().map(|r| r.qps).sum();
    m.tps = results.iter().map(|r| r.tps).sum();
    // The common window: from the last start to the first end.
    let start = results
        .iter()
        .map(|r| r.started_unix)
        .fold(f64::MIN, f64::max);
    let end = results
        .iter()
        .map(|r| r.started_unix + r.seconds)
        .fold(f64::MAX, f64::min);
    m.started_unix = start;
    m.seconds = (end - start).max(0.0);
    m.latency = add(parts, "latency", |r| Some(&r.latency))?;
    m.throughput = Throughput {
        value: match lead.result.throughput.unit {
            // One thread's scan rate (the published oltp_scan comparison's): from the mean
            // of every scan.
            ThroughputUnit::KrowsPerSec if m.latency.mean_us > 0.0 => {
                table_size as f64 / 1000.0 / (m.latency.mean_us / 1e6)
            }
            // New orders read from the server's districts over the window: the server's
            // total, which every segment read alike.
            ThroughputUnit::Nopm | ThroughputUnit::KrowsPerSec => lead.result.throughput.value,
            _ => results.iter().map(|r| r.throughput.value).sum(),
        },
        unit: lead.result.throughput.unit,
    };
    m.intervals = intervals(&results);
    m.client_cpu_us_per_op = client_cpu(&results);
    // Host figures are each client host's: kept per segment, not added.
    m.os = None;
    m.costs = None;
    m.could_run = None;
    m.turns = None;
    m.resolved = None;
    m.extended_secs = results
        .iter()
        .filter_map(|r| r.extended_secs)
        .reduce(f64::max);
    m.pacing = pacing(parts)?;
    m.connect = connect(parts)?;
    m.op_types = op_types(parts)?;
    m.txn = txn(&results);
    m.status = status(parts, count);
    m.segments = Some(window(parts, count));
    Ok(m)
}

fn sum(results: &[&StepResult], f: impl Fn(&StepResult) -> u64) -> u64 {
    results.iter().map(|r| f(r)).sum()
}

/// Adds the histograms `pick` finds in every part's result.
fn add<'a>(
    parts: &[Part<'a>],
    what: &str,
    pick: impl Fn(&'a StepResult) -> Option<&'a LatencySummary>,
) -> Result<LatencySummary, MergeStepError> {
    let mut total = dbdelta_stats::new_histogram();
    for p in parts {
        let Some(s) = pick(p.result) else { continue };
        if s.count == 0 {
            continue;
        }
        let h = merge_encoded([s.histogram.as_str()]).map_err(|source| MergeStepError {
            what: what.to_string(),
            segment: p.segment,
            source,
        })?;
        total.add(h).map_err(|e| MergeStepError {
            what: what.to_string(),
            segment: p.segment,
            source: HistogramError::Add(e),
        })?;
    }
    Ok(summarize(&total))
}

/// Each second's rates summed over the segments (their windows are aligned). Per-second
/// percentiles cannot be added without their histograms: the slowest event of each second
/// is kept (a maximum adds exactly), the percentiles are left at 0.
fn intervals(results: &[&StepResult]) -> Vec<Interval> {
    let n = results.iter().map(|r| r.intervals.len()).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            let at = |r: &&StepResult| r.intervals[i].clone();
            let all: Vec<Interval> = results.iter().map(at).collect();
            Interval {
                t: all[0].t,
                qps: all.iter().map(|x| x.qps).sum(),
                tps: all.iter().map(|x| x.tps).sum(),
                p95_us: 0.0,
                p99_us: 0.0,
                p50_us: 0.0,
                max_us: all.iter().map(|x| x.max_us).fold(0.0, f64::max),
                errors: all.iter().map(|x| x.errors).sum(),
            }
        })
        .collect()
}

/// The client CPU of every segment per operation of them all.
fn client_cpu(results: &[&StepResult]) -> Option<f64> {
    let mut cpu = 0.0;
    let mut ops = 0u64;
    for r in results {
        let per = r.client_cpu_us_per_op?;
        // The per-op basis: statements for qps steps, events for the others.
        let n = if r.throughput.unit == ThroughputUnit::Qps {
            r.queries
        } else {
            r.events
        };
        cpu += per * n as f64;
        ops += n;
    }
    (ops > 0).then(|| cpu / ops as f64)
}

fn pacing(parts: &[Part<'_>]) -> Result<Option<Pacing>, MergeStepError> {
    let paced: Vec<&Pacing> = parts
        .iter()
        .filter_map(|p| p.result.pacing.as_ref())
        .collect();
    if paced.is_empty() {
        return Ok(None);
    }
    let target: f64 = paced.iter().map(|p| p.target_per_s).sum();
    let achieved: f64 = paced.iter().map(|p| p.achieved_per_s).sum();
    Ok(Some(Pacing {
        target_per_s: target,
        achieved_per_s: achieved,
        sustained: achieved >= 0.95 * target,
        backlog: paced.iter().map(|p| p.backlog).sum(),
        intended: paced.iter().map(|p| p.intended).sum(),
        drained: paced.iter().map(|p| p.drained).sum(),
        not_executed: paced.iter().map(|p| p.not_executed).sum(),
        drain_secs: paced.iter().map(|p| p.drain_secs).fold(0.0, f64::max),
        warmup_backlog: paced.iter().map(|p| p.warmup_backlog).sum(),
        lag: add(parts, "schedule lag", |r| r.pacing.as_ref().map(|p| &p.lag))?,
        service: add(parts, "service time", |r| {
            r.pacing.as_ref().map(|p| &p.service)
        })?,
    }))
}

fn connect(parts: &[Part<'_>]) -> Result<Option<ConnectStats>, MergeStepError> {
    let all: Vec<&ConnectStats> = parts
        .iter()
        .filter_map(|p| p.result.connect.as_ref())
        .collect();
    if all.is_empty() {
        return Ok(None);
    }
    let connections: u64 = all.iter().map(|c| c.connections).sum();
    let client: Option<f64> = all
        .iter()
        .map(|c| {
            c.client_bytes_per_connection
                .map(|b| b * c.connections as f64)
        })
        .sum();
    Ok(Some(ConnectStats {
        connections,
        active: all.iter().map(|c| c.active).sum(),
        seconds: all.iter().map(|c| c.seconds).fold(0.0, f64::max),
        latency: add(parts, "connect latency", |r| {
            r.connect.as_ref().map(|c| &c.latency)
        })?,
        client_bytes_per_connection: client
            .filter(|_| connections > 0)
            .map(|b| b / connections as f64),
        // Every segment saw the whole server grow, not its own part of it.
        server_bytes_per_connection: None,
    }))
}

fn op_types(parts: &[Part<'_>]) -> Result<Vec<OpTypeStats>, MergeStepError> {
    let mut names: Vec<&str> = Vec::new();
    for p in parts {
        for t in &p.result.op_types {
            if !names.contains(&t.name.as_str()) {
                names.push(&t.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of = |r: &StepResult| r.op_types.iter().find(|t| t.name == name).cloned();
            let all: Vec<OpTypeStats> = parts.iter().filter_map(|p| of(p.result)).collect();
            Ok(OpTypeStats {
                name: name.to_string(),
                count: all.iter().map(|t| t.count).sum(),
                failed: all.iter().map(|t| t.failed).sum(),
                per_sec: all.iter().map(|t| t.per_sec).sum(),
                latency: add(parts, &format!("{name} latency"), |r| {
                    r.op_types
                        .iter()
                        .find(|t| t.name == name)
                        .map(|t| &t.latency)
                })?,
            })
        })
        .collect()
}

fn txn(results: &[&StepResult]) -> Option<TxnCounts> {
    let all: Vec<&TxnCounts> = results.iter().filter_map(|r| r.txn.as_ref()).collect();
    let first = (*all.first()?).clone();
    Some(TxnCounts {
        retries: all.iter().map(|t| t.retries).sum(),
        retried: all.iter().map(|t| t.retried).sum(),
        late: all.iter().map(|t| t.late).sum(),
        skipped: all.iter().map(|t| t.skipped).sum(),
        ..first
    })
}

/// The merged status: every segment measured the step over one window, or why not.
fn status(parts: &[Part<'_>], count: u32) -> StepStatus {
    let missing: Vec<u32> = (1..=count)
        .filter(|k| !parts.iter().any(|p| p.segment == *k))
        .collect();
    if !missing.is_empty() {
        return StepStatus::Failed {
            reason: format!(
                "segment(s) {} of {count} have no result for this step (they died or were \
                 stopped): merged from {} segment(s), not reported as the whole",
                list(&missing),
                parts.len()
            ),
        };
    }
    let absent: Vec<u32> = {
        let mut v: Vec<u32> = parts
            .iter()
            .filter_map(|p| p.result.segments.as_ref())
            .flat_map(|w| w.missing.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if !absent.is_empty() {
        return StepStatus::Failed {
            reason: format!(
                "segment(s) {} of {count} left the run during this step (no heartbeat at the \
                 barrier): the other segments' numbers are not the whole",
                list(&absent)
            ),
        };
    }
    for p in parts {
        match &p.result.status {
            StepStatus::Ok => {}
            StepStatus::Failed { reason } => {
                return StepStatus::Failed {
                    reason: format!("segment {}: {reason}", p.segment),
                }
            }
            StepStatus::Stalled { reason } => {
                return StepStatus::Stalled {
                    reason: format!("segment {}: {reason}", p.segment),
                }
            }
            other => return other.clone(),
        }
    }
    let starts: Vec<f64> = parts
        .iter()
        .filter(|p| p.result.threads > 0 || p.result.events > 0)
        .map(|p| {
            p.result
                .segments
                .as_ref()
                .map_or(p.result.started_unix, |w| w.start_unix)
        })
        .collect();
    let spread = starts.iter().fold(f64::MIN, |a, b| a.max(*b))
        - starts.iter().fold(f64::MAX, |a, b| a.min(*b));
    let window = parts[0].result.seconds.max(1e-3);
    if starts.len() > 1 && spread > MAX_START_SPREAD * window {
        return StepStatus::Failed {
            reason: format!(
                "the segments' windows started {spread:.3} s apart, more than {:.0} % of the \
                 {window:.1} s window: they did not measure one window",
                MAX_START_SPREAD * 100.0
            ),
        };
    }
    StepStatus::Ok
}

/// The merged window: its start, every segment's clock offset, what each measured.
fn window(parts: &[Part<'_>], count: u32) -> SegmentWindow {
    let mut w = SegmentWindow {
        count,
        index: None,
        ..SegmentWindow::default()
    };
    for p in parts {
        if let Some(sw) = &p.result.segments {
            if w.start_unix == 0.0 {
                w.start_unix = sw.start_unix;
            }
            w.clock_offsets_ms.extend(sw.clock_offsets_ms.iter());
            w.missing.extend(sw.missing.iter().copied());
        }
        let r = p.result;
        w.parts.push(SegmentPart {
            segment: p.segment,
            host: p.host.to_string(),
            threads: r.segments.as_ref().map_or(0, |w| w.threads),
            events: r.events,
            qps: r.qps,
            seconds: r.seconds,
            client_cpu_us_per_op: r.client_cpu_us_per_op,
            costs: r.costs.clone(),
        });
    }
    w.missing.sort_unstable();
    w.missing.dedup();
    w.parts.sort_by_key(|p| p.segment);
    w
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}
