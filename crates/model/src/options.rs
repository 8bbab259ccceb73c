//! The resolved options of a run: what the CLI and config file produce, what the runner reads.

use serde::{Deserialize, Serialize};

/// A preset for table size and durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Small tables and seconds-long steps: a whole suite in a few minutes on 2 cores.
    Quick,
    /// The published configuration: 1 table of 50M rows, reads 300 s, writes 600 s.
    Full,
}

/// Values a scale preset sets; every one can be overridden by its own flag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleDefaults {
    /// Number of sbtest tables.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
    /// Seconds for read-heavy steps.
    pub read_secs: f64,
    /// Seconds for write-heavy steps.
    pub write_secs: f64,
    /// Seconds for the insert step.
    pub insert_secs: f64,
    /// Warm-up seconds before each measured step (run, not counted).
    pub warmup_secs: f64,
    /// Interleaved rounds (A B, B A, …) of every step when `--repeat` is not given.
    pub rounds: u32,
    /// Warm-up seconds of the rounds after the first: the data is warm by then, so only
    /// the connections and the statement cache need it.
    pub round_warmup_secs: f64,
    /// How long each settle point lasts at least.
    pub settle: SettleTime,
}

/// A suite's own `--scale quick` preset (`[quick]` in its file): what it changes of the
/// scale's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickPreset {
    /// Interleaved rounds when `--repeat` is not given.
    pub rounds: Option<u32>,
    /// Seconds for read-heavy steps.
    pub read_secs: Option<f64>,
    /// Seconds for write-heavy steps.
    pub write_secs: Option<f64>,
    /// Seconds for the insert step.
    pub insert_secs: Option<f64>,
    /// Warm-up seconds of the first round.
    pub warmup_secs: Option<f64>,
    /// Warm-up seconds of later rounds.
    pub round_warmup_secs: Option<f64>,
}

impl ScaleDefaults {
    /// These defaults with a suite's quick preset applied.
    pub fn with(self, p: &QuickPreset) -> ScaleDefaults {
        ScaleDefaults {
            rounds: p.rounds.unwrap_or(self.rounds),
            read_secs: p.read_secs.unwrap_or(self.read_secs),
            write_secs: p.write_secs.unwrap_or(self.write_secs),
            insert_secs: p.insert_secs.unwrap_or(self.insert_secs),
            warmup_secs: p.warmup_secs.unwrap_or(self.warmup_secs),
            round_warmup_secs: p.round_warmup_secs.unwrap_or(self.round_warmup_secs),
            ..self
        }
    }
}

/// Seconds a settle point lasts at the quick scale: none. The published bound (60 s or more)
/// at each of a suite's settle points would make a quick run minutes longer than its
/// seconds-long steps, and tables of thousands of rows leave little to settle.
pub const QUICK_SETTLE_SECS: f64 = 0.0;

/// The published scripts' settle time for `rows` loaded rows, seconds:
/// `min(1200, 60 + rows/1e6)` (`sleep_secs` of run.sh's postwrite and iq.sh's vac), in whole seconds as the
/// scripts' shell arithmetic computes it.
pub fn settle_bound_secs(rows: u64) -> u64 {
    (60 + rows / 1_000_000).min(1200)
}

/// How long each settle point lasts at least: after vacuum, analyze and checkpoint (and,
/// on MySQL, with InnoDB's dirty-page flushing raised) the server is left alone until then.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SettleTime {
    /// The published bound for the rows loaded ([`settle_bound_secs`]): the full scale's
    /// default, and how run files written before this option read.
    #[default]
    Spec,
    /// The quick scale's preset, seconds ([`QUICK_SETTLE_SECS`]).
    Quick(f64),
    /// Seconds given with `--settle-secs` (or `settle_secs` in the config file).
    Secs(f64),
}

impl SettleTime {
    /// Seconds a settle point lasts after a load of `rows` rows.
    pub fn secs(self, rows: u64) -> f64 {
        match self {
            SettleTime::Spec => settle_bound_secs(rows) as f64,
            SettleTime::Quick(s) | SettleTime::Secs(s) => s,
        }
    }

    /// Why a settle point after a load of `rows` rows lasts that long, for its report.
    pub fn why(self, rows: u64) -> String {
        let bound = settle_bound_secs(rows);
        match self {
            SettleTime::Spec => {
                format!("the spec's bound min(1200, 60 + {rows} rows/1e6) = {bound} s, run.sh's postwrite")
            }
            SettleTime::Quick(s) => format!(
                "the quick scale's {s} s; the spec's bound would be {bound} s, --settle-secs sets it"
            ),
            SettleTime::Secs(s) => {
                format!("--settle-secs {s}; the spec's bound would be {bound} s")
            }
        }
    }
}

impl Scale {
    /// The preset values of this scale.
    pub fn defaults(self) -> ScaleDefaults {
        match self {
            Scale::Quick => ScaleDefaults {
                tables: 1,
                table_size: 10_000,
                read_secs: 2.0,
                write_secs: 2.0,
                insert_secs: 2.0,
                warmup_secs: 1.0,
                rounds: 1,
                round_warmup_secs: 1.0,
                settle: SettleTime::Quick(QUICK_SETTLE_SECS),
            },
            Scale::Full => ScaleDefaults {
                tables: 1,
                table_size: 50_000_000,
                read_secs: 300.0,
                write_secs: 600.0,
                insert_secs: 600.0,
                warmup_secs: 5.0,
                rounds: 1,
                round_warmup_secs: 5.0,
                settle: SettleTime::Spec,
            },
        }
    }

    /// The scale's name as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Full => "full",
        }
    }
}

/// Fully resolved run options (scale presets applied, flags and config merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Suite name, e.g. `sysbench`.
    pub suite: String,
    /// Scale preset the values came from.
    pub scale: Scale,
    /// Number of sbtest tables.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
    /// Thread counts; every measured step runs once per count.
    pub threads: Vec<u32>,
    /// Seconds for read-heavy steps.
    pub read_secs: f64,
    /// Seconds for write-heavy steps.
    pub write_secs: f64,
    /// Seconds for the insert step.
    pub insert_secs: f64,
    /// Warm-up seconds before each measured step.
    pub warmup_secs: f64,
    /// Warm-up seconds of interleaved rounds after the first; `None` = `warmup_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_warmup_secs: Option<f64>,
    /// Interleaved rounds after the first measure every target in one window, taking turns
    /// of this many milliseconds (A B B A …); `None` = one window per target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_ms: Option<f64>,
    /// How long each settle point lasts at least (`--settle-secs`, else the scale's).
    #[serde(default)]
    pub settle: SettleTime,
    /// Step-name globs selecting a subset; empty = every step.
    pub steps: Vec<String>,
    /// Seed of every random generator (worker i uses a stream derived from it).
    pub seed: u64,
    /// Server-side prepared statements (sysbench's default); false = plain text.
    pub prepared: bool,
    /// Sample OS metrics (host, disk, server and client processes) during measured windows.
    #[serde(default = "default_true")]
    pub os_metrics: bool,
    /// Block device to measure instead of the one holding the target's data (`--device`).
    #[serde(default)]
    pub device: Option<String>,
    /// Paced load: events per second for every step (all workers together); `None` = closed loop.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Allow dropping existing tables dbdelta did not create (`--i-own-this-database`).
    #[serde(default)]
    pub i_own_this_database: bool,
    /// How the client connects and how long it waits.
    #[serde(default)]
    pub client: ClientOptions,
    /// pgbench's transaction rules and the TPC suites' sizes.
    #[serde(default)]
    pub tpc: TpcOptions,
}

/// Options of the TPC-B (pgbench) and TPC-C suites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpcOptions {
    /// pgbench's scale factor (`--scale-factor`): branches; tellers ×10, accounts ×100,000.
    pub scale_factor: u32,
    /// Tries of a transaction after serialization failures and deadlocks (`--max-tries`;
    /// `None` = 1 for pgbench's scripts, as pgbench, and 10 for TPC-C).
    #[serde(default)]
    pub max_tries: Option<u32>,
    /// Transactions slower than this are counted late; under `--rate`, ones already this
    /// late when due are skipped (`--latency-limit`, ms).
    pub latency_limit_ms: Option<f64>,
    /// Transactions per terminal (pgbench's `-t`, `--transactions`): the step ends when
    /// every terminal ran them; `None` = run for the step's duration.
    #[serde(default)]
    pub transactions: Option<u64>,
    /// TPC-C warehouses loaded (`--warehouses`).
    pub warehouses: u32,
    /// TPC-C terminals (`--terminals`); `None` = 10 per warehouse, the specification's.
    pub terminals: Option<u32>,
    /// Deal terminals over every warehouse even when there are fewer than ten per
    /// warehouse (`--all-warehouses`, HammerDB's option).
    pub all_warehouses: bool,
    /// TPC-C mode: `throughput` (no waits) or `spec` (keying and think times).
    pub tpcc_mode: TpccMode,
}

/// How TPC-C terminals pace themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TpccMode {
    /// No keying or think times (HammerDB's timed driver, sysbench-tpcc).
    #[default]
    Throughput,
    /// The specification's keying and think times (clause 5.2.5): at most 12.86 tpmC
    /// per warehouse.
    Spec,
}

impl Default for TpcOptions {
    fn default() -> Self {
        TpcOptions {
            scale_factor: 1,
            max_tries: None,
            latency_limit_ms: None,
            transactions: None,
            warehouses: 1,
            terminals: None,
            all_warehouses: false,
            tpcc_mode: TpccMode::Throughput,
        }
    }
}

/// Connection and timeout settings of the client core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientOptions {
    /// Connections that run the workload at each `threads` level (`--active`); the other
    /// connections stay open and idle. `None` = all of them.
    #[serde(default)]
    pub active: Option<u32>,
    /// New connections per second in the connect phase (`--connect-rate`).
    pub connect_rate: f64,
    /// Limit for one connect, startup and authentication, seconds (`--connect-timeout`).
    pub connect_timeout_secs: f64,
    /// Limit for one operation, seconds (`--statement-timeout`); the server is asked to
    /// cancel it and the step fails with a timeout.
    pub statement_timeout_secs: f64,
    /// Largest share of failed events (not retried) a step may have and still count
    /// (`--max-error-rate`, default 0.01).
    #[serde(default = "default_max_error_rate")]
    pub max_error_rate: f64,
}

fn default_max_error_rate() -> f64 {
    0.01
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            active: None,
            connect_rate: 2000.0,
            connect_timeout_secs: 10.0,
            statement_timeout_secs: 60.0,
            max_error_rate: default_max_error_rate(),
        }
    }
}

fn default_true() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_bound_follows_the_spec() {
        assert_eq!(settle_bound_secs(0), 60);
        assert_eq!(settle_bound_secs(10_000), 60);
        assert_eq!(settle_bound_secs(50_000_000), 110);
        assert_eq!(settle_bound_secs(u64::MAX), 1200);
        assert_eq!(SettleTime::Spec.secs(10_000_000), 70.0);
        assert_eq!(Scale::Full.defaults().settle, SettleTime::Spec);
        assert_eq!(
            Scale::Quick.defaults().settle.secs(u64::MAX),
            QUICK_SETTLE_SECS
        );
        assert!(SettleTime::Secs(5.0).why(1).starts_with("--settle-secs 5"));
        assert!(SettleTime::Quick(0.0)
            .why(1)
            .contains("the spec's bound would be 60 s"));
    }

    #[test]
    fn run_files_without_the_settle_option_read_as_the_spec() {
        let json = r#"{"suite":"sysbench","scale":"quick","tables":1,"table_size":10,
            "threads":[1],"read_secs":1,"write_secs":1,"insert_secs":1,"warmup_secs":0,
            "steps":[],"seed":1,"prepared":true}"#;
        let o: RunOptions = serde_json::from_str(json).unwrap();
        assert_eq!(o.settle, SettleTime::Spec);
        let back: RunOptions = serde_json::from_str(
            &serde_json::to_string(&RunOptions {
                settle: SettleTime::Quick(1.0),
                ..o
            })
            .unwrap(),
        )
        .unwrap();
        assert_eq!(back.settle, SettleTime::Quick(1.0));
    }
}
