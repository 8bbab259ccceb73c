//! What one step measured on one target at one thread count.

use serde::{Deserialize, Serialize};

/// Version of the result-file format; bumped on incompatible changes.
pub const RESULT_SCHEMA: u32 = 1;

/// Report group of a step (the published tables' point / range / write blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Point queries.
    Point,
    /// Range queries and scans.
    Range,
    /// Writes: updates, deletes, inserts, read-write transactions.
    Write,
}

impl Group {
    /// The group's name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Group::Point => "point",
            Group::Range => "range",
            Group::Write => "write",
        }
    }
}

/// Whether a result is a measured step or an unmeasured action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// A reported, measured microbenchmark.
    Measured,
    /// A measured warm-up step that is never reported (e.g. `point-query.warm`).
    Warm,
    /// The initial load (prepare): rows/s and seconds.
    Load,
    /// Maintenance between steps (analyze, checkpoint, vacuum, flush).
    Settle,
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum StepStatus {
    /// Completed its whole duration.
    Ok,
    /// Failed; the reason is shown in reports instead of a number.
    Failed {
        /// Why the step failed.
        reason: String,
    },
    /// Stopped early by Ctrl-C; numbers cover the measured part only.
    Interrupted,
    /// Ran its window but stopped making progress (no operation completed for 2 s or more
    /// while the server was up): its numbers are kept for diagnosis, never compared, gated
    /// or stored in the history, and the run exits 3.
    Stalled {
        /// When and for how long nothing completed.
        reason: String,
    },
    /// The target's engine does not serve the operations the step needs; not a failure of
    /// the target and never compared.
    #[serde(rename = "not-supported")]
    NotSupported {
        /// Which operations, and which engine (`key-value operations are not supported by …`).
        reason: String,
    },
}

/// The headline throughput of a step in its reporting unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// The value.
    pub value: f64,
    /// Unit: `qps` (statements/s), `Krows/s` (scan) or `rows/s` (load).
    pub unit: ThroughputUnit,
}

/// Unit of a [`Throughput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThroughputUnit {
    /// Statements per second, counted as sysbench does (BEGIN and COMMIT count).
    #[serde(rename = "qps")]
    Qps,
    /// Thousands of rows scanned per second by one thread (sysbench scan).
    #[serde(rename = "Krows/s")]
    KrowsPerSec,
    /// Rows inserted per second (load).
    #[serde(rename = "rows/s")]
    RowsPerSec,
    /// Key-value operations per second (YCSB's `Throughput(ops/sec)`: a read-modify-write
    /// is one operation, however many statements it takes).
    #[serde(rename = "ops/s")]
    OpsPerSec,
    /// Transactions per second (pgbench's `tps`: a script run is one transaction).
    #[serde(rename = "tps")]
    Tps,
    /// TPC-C's new orders per minute, read from the districts' order counters.
    #[serde(rename = "NOPM")]
    Nopm,
}

impl ThroughputUnit {
    /// The unit as printed.
    pub fn name(self) -> &'static str {
        match self {
            ThroughputUnit::Qps => "qps",
            ThroughputUnit::KrowsPerSec => "Krows/s",
            ThroughputUnit::RowsPerSec => "rows/s",
            ThroughputUnit::OpsPerSec => "ops/s",
            ThroughputUnit::Tps => "tps",
            ThroughputUnit::Nopm => "NOPM",
        }
    }
}

/// Latency percentiles in microseconds, with the full histogram for re-merging.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LatencySummary {
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 95th percentile, µs.
    pub p95_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Maximum, µs.
    pub max_us: f64,
    /// Number of recorded events.
    pub count: u64,
    /// Event-latency HdrHistogram (µs), V2 deflate serialized, base64.
    pub histogram: String,
}

/// One 1-second interval of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the measured window began (end of this interval).
    pub t: f64,
    /// Statements per second in this interval.
    pub qps: f64,
    /// Events (transactions) per second in this interval.
    pub tps: f64,
    /// 95th-percentile event latency in this interval, µs.
    pub p95_us: f64,
    /// 99th-percentile event latency in this interval, µs.
    pub p99_us: f64,
    /// Median event latency in this interval, µs (from its own HDR histogram, like p95/p99;
    /// pgbench's per-interval aggregates).
    #[serde(default)]
    pub p50_us: f64,
    /// Slowest event of this interval, µs.
    #[serde(default)]
    pub max_us: f64,
    /// Errors (retried or ignored) in this interval.
    pub errors: u64,
}

/// The prefix of [`StepResult::engine_stats`] keys a server engine read from the server
/// itself over SQL (`db.blks_read`, `db.innodb_rows_read`), which sets them apart from an
/// embedded engine's own counters.
pub const DB_COUNTER_PREFIX: &str = "db.";

/// Everything one step measured on one target at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// Result-file format version ([`RESULT_SCHEMA`]).
    pub schema: u32,
    /// Target name.
    pub target: String,
    /// Step name, e.g. `point-query.pre`.
    pub step: String,
    /// Report label, e.g. `point-query.pre_range=100`.
    pub label: String,
    /// Position of the step in the suite's run order.
    pub order: u32,
    /// Report group.
    pub group: Group,
    /// Measured, warm, load or settle.
    pub kind: StepKind,
    /// Client threads (connections).
    pub threads: u32,
    /// How it ended.
    pub status: StepStatus,
    /// Start of the measured window, seconds since the Unix epoch.
    pub started_unix: f64,
    /// Length of the measured window, seconds (warm-up excluded).
    pub seconds: f64,
    /// Warm-up seconds run before the window.
    pub warmup_secs: f64,
    /// Events (transactions for multi-statement workloads).
    pub events: u64,
    /// Statements executed, counted as sysbench does.
    pub queries: u64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements that changed rows.
    pub writes: u64,
    /// Other statements (BEGIN, COMMIT, DML that matched nothing).
    pub others: u64,
    /// Rows returned by all statements.
    pub rows_returned: u64,
    /// Rows changed by all statements.
    pub rows_affected: u64,
    /// Ignorable errors (deadlock, busy, duplicate key): the event was rolled back and retried.
    pub errors: u64,
    /// Events that failed and were not retried (a statement error, a dropped connection
    /// that was reconnected): the step goes on and fails only past `--max-error-rate`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub failed_events: u64,
    /// Every error of the window by its server code (`SQLSTATE 40P01`, `MySQL 1213`) or,
    /// without one, its kind (`connection`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub error_codes: std::collections::BTreeMap<String, u64>,
    /// Times the engine waited on a lock and retried (SQLITE_BUSY).
    pub busy_retries: u64,
    /// Statements per second.
    pub qps: f64,
    /// Events per second.
    pub tps: f64,
    /// The headline number in the step's unit (qps, Krows/s for scan, rows/s for load).
    pub throughput: Throughput,
    /// Event latency.
    pub latency: LatencySummary,
    /// 1-second series over the measured window.
    pub intervals: Vec<Interval>,
    /// Client (dbdelta process) CPU time per statement, µs, from its own rusage.
    pub client_cpu_us_per_op: Option<f64>,
    /// OS metrics sampled over the measured window (warm-up excluded).
    #[serde(default)]
    pub os: Option<crate::os::OsSamples>,
    /// Hardware cost per operation derived from `os` and the step's throughput.
    #[serde(default)]
    pub costs: Option<crate::os::OpCosts>,
    /// Paced (open-loop) load: the target rate and what was achieved.
    #[serde(default)]
    pub pacing: Option<Pacing>,
    /// Insert Benchmark steps: rates, SLA, per-kind latency and costs (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ibench: Option<crate::ibench::IbenchStats>,
    /// Repeat number of `--repeat N` (1-based; each repeat is an independent run with a fresh
    /// server and load). 0 when the run had no repeats (and in older files); read it as 1.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeat: u32,
    /// The connect phase of a server engine's step: how long opening every connection took
    /// and what each connection costs in memory (absent for embedded engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectStats>,
    /// Steps that mix operation types (YCSB): each type's count, throughput and latency,
    /// in the workload's order (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub op_types: Vec<OpTypeStats>,
    /// Engine-internal counters over the window (RocksDB: statistics tickers as
    /// differences, LSM size and memory at the end; PostgreSQL and MySQL/MariaDB: the
    /// server's statistics as differences, named [`DB_COUNTER_PREFIX`]`<name>`); empty for
    /// engines without them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub engine_stats: std::collections::BTreeMap<String, f64>,
    /// Steps run with pgbench's transaction rules (`--max-tries`, `--latency-limit`,
    /// Poisson `--rate`): the rules and what they counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<TxnCounts>,
    /// Steps whose workload reports its own figures beside the runner's (TPC-C's NOPM and
    /// consistency conditions, pgbench's table sums), by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub workload_stats: std::collections::BTreeMap<String, f64>,
    /// What was done to the target for the step besides measuring: a settle point's
    /// statements and how long it waited and why; a binary-log reset before a write step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Set when the step was measured in turns with the other targets of its round (A B B A
    /// … within one window): its rates are over its own turns' time, and the machine-wide
    /// costs, which every target's turns shared, are absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<TurnsInfo>,
    /// `--resolve`: on the last round of a step (each target's), what its interval reached
    /// when its rounds stopped and why they stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolved>,
    /// Seconds the measured window ran past its planned end because no event of the target
    /// had started in it (events in flight through the whole window: a slow event, a busy
    /// host): it was extended until one started, for at most the statement timeout, so the
    /// step is a slow measurement rather than an empty one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_secs: Option<f64>,
    /// An embedded target's closed-loop window of its own: the share of it the step's workers could run (not
    /// waiting for a CPU another process held; the kernel's per-thread run-queue wait,
    /// averaged over the workers). Its rates are over the whole window; this says how much
    /// a busy host slowed them (rounds in turns take that time off instead: `turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub could_run: Option<f64>,
    /// A server target in turns: whether the run-queue waits of the server threads serving
    /// its connections (PostgreSQL backends, MySQL connection threads) were read (reported
    /// in `turns.waited_secs`; a server target is charged its turns whole either way).
    /// `false`: they could not be read (a remote host, pgbouncer, performance_schema off).
    /// `None` for embedded engines and windows of their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_waits_read: Option<bool>,
    /// Measured by segments of one run (`--segment K/N`): the window they shared, and in a
    /// merged result what each segment measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<crate::segment::SegmentWindow>,
}

/// What `--resolve` reached on one step at one thread count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    /// The half-width asked for, percent of the ratio.
    pub goal_pct: f64,
    /// The widest half-width of the 95 % intervals of target/base over the compared targets
    /// when the rounds stopped, percent; `None` when no interval could be computed.
    pub half_width_pct: Option<f64>,
    /// Rounds the step ran.
    pub rounds: u32,
    /// Why the rounds stopped.
    pub stop: ResolveStop,
}

/// Why `--resolve` stopped adding rounds to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResolveStop {
    /// The half-width reached the goal.
    Resolved,
    /// The step's share of `--budget` was spent first.
    Budget,
    /// The most rounds a step may run were run first.
    MaxRounds,
    /// Rounds kept failing (three failed round-results): no more rounds.
    Failed,
}

impl ResolveStop {
    /// The word reports use.
    pub fn name(self) -> &'static str {
        match self {
            ResolveStop::Resolved => "resolved",
            ResolveStop::Budget => "budget spent",
            ResolveStop::MaxRounds => "most rounds",
            ResolveStop::Failed => "rounds failed",
        }
    }
}

/// How a step measured in turns shared its window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct TurnsInfo {
    /// The planned length of one turn, milliseconds.
    pub slice_ms: f64,
    /// Targets that took turns.
    pub targets: u32,
    /// The wall-clock window the turns shared, seconds (`seconds` is this target's part).
    pub wall_secs: f64,
    /// Seconds of this target's own turns inside the window, before the time its workers
    /// could not run is taken off (`seconds` = `turn_secs` − `lost_secs`).
    #[serde(default)]
    pub turn_secs: f64,
    /// Seconds of its turns in which this target's workers were ready to run but waited for
    /// a CPU another process held (the kernel's per-thread run-queue wait, averaged over its
    /// workers): not charged to the target.
    #[serde(default)]
    pub lost_secs: f64,
    /// A server target: seconds of its turns in which its client threads and the server
    /// threads serving its connections waited for a CPU (the client side's mean plus the
    /// server side's), read but not taken off: on this VM such waits overlap the target's
    /// own work and did not track what it lost (bench/results-server-charge-20261127.md),
    /// so a server target is charged its turns whole. `None` when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_secs: Option<f64>,
    /// Times this round was measured again because a target could not run for enough of
    /// its turns (a busy host); the result is the last try.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

impl TurnsInfo {
    /// The share of its turns' time this target could run (1 when nothing was lost).
    pub fn could_run(&self) -> f64 {
        if self.turn_secs > 0.0 {
            ((self.turn_secs - self.lost_secs) / self.turn_secs).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

/// pgbench's transaction rules of a step and what they counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxnCounts {
    /// Tries of a transaction after serialization failures and deadlocks (1 = none).
    pub max_tries: u32,
    /// The latency limit, ms (`--latency-limit`).
    pub latency_limit_ms: Option<f64>,
    /// Paced with Poisson arrivals (pgbench's `--rate`).
    pub poisson: bool,
    /// Re-runs after serialization failures and deadlocks.
    pub retries: u64,
    /// Transactions that needed at least one re-run.
    pub retried: u64,
    /// Transactions slower than the latency limit.
    pub late: u64,
    /// Scheduled transactions skipped because they were already later than the limit.
    pub skipped: u64,
}

/// One operation type of a mixed step (YCSB's `[READ]`, `[UPDATE]`, … blocks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpTypeStats {
    /// The type's name (`READ`, `READ-MODIFY-WRITE`, …).
    pub name: String,
    /// Events of this type that completed: those intended in the window (with a paced
    /// step's drain after it, see [`Pacing::drained`]).
    pub count: u64,
    /// Events of this type that failed.
    pub failed: u64,
    /// Completed events of this type that started in the window, per second of it.
    pub per_sec: f64,
    /// Their latency (from the intended start when paced).
    pub latency: LatencySummary,
}

/// What opening a step's connections cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectStats {
    /// Connections opened (active and idle).
    pub connections: u64,
    /// Connections that ran the workload (`--active`); the rest stayed idle.
    pub active: u64,
    /// Wall time of the connect phase, s (paced by `--connect-rate`).
    pub seconds: f64,
    /// Latency of one connect (TCP, startup, authentication, statement preparation), µs.
    pub latency: LatencySummary,
    /// Growth of dbdelta's peak resident memory over the whole step (connect phase, warm-up,
    /// window) per connection, bytes: what each connection cost the client at its worst.
    pub client_bytes_per_connection: Option<f64>,
    /// Growth of the server's resident memory (process tree, with a managed proxy such as
    /// pgbouncer) per connection, bytes; absent when the server's processes are not visible
    /// (external targets).
    pub server_bytes_per_connection: Option<f64>,
}

/// The outcome of a paced (`--rate`) step: events were scheduled at fixed intended times and
/// latency was measured from the intended start, so a backlog shows up as latency. Every
/// event intended in the window runs: what is still due when the window ends is drained
/// afterwards (bounded by the statement timeout) and measured. The latency covers the events
/// intended in the window; the rates (`achieved_per_s`, qps, tps, events) the events that
/// started in it, so they match the OS metrics and costs sampled over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pacing {
    /// Target events per second (all workers together).
    pub target_per_s: f64,
    /// Events per second that started in the measured window: what the server did in it
    /// (also a warm-up's backlog it worked off), never the drain after it.
    pub achieved_per_s: f64,
    /// True when at least 95 % of the target rate was achieved.
    pub sustained: bool,
    /// Events due in the window that had not started when it ended: `drained` plus
    /// `not_executed` (slots skipped under `--latency-limit` are in `txn.skipped`). Files
    /// written before the drain existed hold an estimate from the rates.
    pub backlog: u64,
    /// Events intended (scheduled) in the window: what a server that keeps up completes.
    #[serde(default)]
    pub intended: u64,
    /// Events of the backlog that ran after the window's end (the drain) and completed:
    /// in the latency figures (from their intended start), not in the rates.
    #[serde(default)]
    pub drained: u64,
    /// Events of the backlog never started: the drain stopped at the statement timeout
    /// after the window's end (or the step was interrupted).
    #[serde(default)]
    pub not_executed: u64,
    /// How long after the window's end the last event intended in it ended, s.
    #[serde(default)]
    pub drain_secs: f64,
    /// Events due in the warm-up that had not started when the window began: the window
    /// worked them off first (unmeasured), so its own events queued behind them.
    #[serde(default)]
    pub warmup_backlog: u64,
    /// Schedule lag (actual start − intended start), µs.
    pub lag: LatencySummary,
    /// Service time (end − actual start) per event, µs; `latency` holds end − intended.
    pub service: LatencySummary,
}

impl Default for StepResult {
    fn default() -> Self {
        StepResult::empty("", "", "", 0, Group::Write, StepKind::Measured, 1)
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl StepResult {
    /// A result with identity fields set, every measurement zero and status `Ok`; the
    /// runner fills in what it measured.
    pub fn empty(
        target: &str,
        step: &str,
        label: &str,
        order: u32,
        group: Group,
        kind: StepKind,
        threads: u32,
    ) -> Self {
        StepResult {
            schema: RESULT_SCHEMA,
            target: target.to_string(),
            step: step.to_string(),
            label: label.to_string(),
            order,
            group,
            kind,
            threads,
            status: StepStatus::Ok,
            started_unix: 0.0,
            seconds: 0.0,
            warmup_secs: 0.0,
            events: 0,
            queries: 0,
            reads: 0,
            writes: 0,
            others: 0,
            rows_returned: 0,
            rows_affected: 0,
            errors: 0,
            failed_events: 0,
            error_codes: Default::default(),
            busy_retries: 0,
            qps: 0.0,
            tps: 0.0,
            throughput: Throughput {
                value: 0.0,
                unit: ThroughputUnit::Qps,
            },
            latency: LatencySummary::default(),
            intervals: Vec::new(),
            client_cpu_us_per_op: None,
            os: None,
            costs: None,
            pacing: None,
            ibench: None,
            repeat: 0,
            connect: None,
            op_types: Vec::new(),
            engine_stats: Default::default(),
            txn: None,
            workload_stats: Default::default(),
            actions: Vec::new(),
            turns: None,
            resolved: None,
            extended_secs: None,
            could_run: None,
            server_waits_read: None,
            segments: None,
        }
    }

    /// The repeat number, 1-based (results without one are repeat 1).
    pub fn repeat_no(&self) -> u32 {
        self.repeat.max(1)
    }

    /// Measured over its whole window: the only results comparisons, gates and the history
    /// take (an interrupted step's numbers cover a cut window and would read as a change).
    pub fn is_complete(&self) -> bool {
        self.status == StepStatus::Ok
    }

    /// True when the step measured a usable number.
    pub fn is_ok(&self) -> bool {
        !matches!(
            self.status,
            StepStatus::Failed { .. }
                | StepStatus::NotSupported { .. }
                | StepStatus::Stalled { .. }
        )
    }

    /// True when the step holds counters its server reported over SQL
    /// ([`DB_COUNTER_PREFIX`]).
    pub fn has_db_counters(&self) -> bool {
        self.engine_stats
            .keys()
            .any(|k| k.starts_with(DB_COUNTER_PREFIX))
    }
}

/// A file name from a step label: keeps letters, digits, '.', '-', '_' and '='. One rule for
/// every file named after a step (`results/<target>/<stem>.json`, `profiles/<target>/<stem>.*`,
/// the report's anchors), so the names of one step match across them.
pub fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_written_before_the_drain_reads_with_zero_drain_fields() {
        let old = r#"{"target_per_s":100.0,"achieved_per_s":90.0,"sustained":false,
            "backlog":10,"lag":{"mean_us":1.0,"p50_us":1.0,"p95_us":1.0,"p99_us":1.0,
            "p999_us":1.0,"max_us":1.0,"count":1,"histogram":""},
            "service":{"mean_us":1.0,"p50_us":1.0,"p95_us":1.0,"p99_us":1.0,
            "p999_us":1.0,"max_us":1.0,"count":1,"histogram":""}}"#;
        let p: Pacing = serde_json::from_str(old).unwrap();
        assert_eq!(p.backlog, 10);
        assert_eq!(
            (p.intended, p.drained, p.not_executed, p.warmup_backlog),
            (0, 0, 0, 0)
        );
        assert_eq!(p.drain_secs, 0.0);
        let again: Pacing = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(again, p);
    }
}
