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
    /// Recompute reports from one or more run directories.
    Report(ReportArgs),
    /// List the built-in suites, or show one suite's steps and statements.
    Suites(SuitesArgs),
}

/// Scale presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleArg {
    /// 1 table x 10k rows, 2 s per step, 1 s warm-up: the whole suite in a few minutes.
    Quick,
    /// The published configuration: 1 table x 50M rows, reads 300 s, writes 600 s.
    Full,
}

/// `dbdelta run`.
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Suite to run: a built-in name (see `dbdelta suites`) or a suite .toml file.
    #[arg(long, help_heading = "Workload")]
    pub suite: Option<String>,

    /// A target as NAME=SPEC, e.g. wal=sqlite?journal_mode=WAL or
    /// pg15=postgres:/usr/lib/postgresql/15/bin. Repeat for each target; the first is the
    /// base unless --base says otherwise. Default: two SQLite targets, wal and rollback.
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

    /// Preset for table size and durations (each can be overridden by its own flag).
    #[arg(long, value_enum, help_heading = "Scale")]
    pub scale: Option<ScaleArg>,

    /// Number of sbtest tables.
    #[arg(long, help_heading = "Scale")]
    pub tables: Option<u32>,

    /// Rows per table.
    #[arg(long, help_heading = "Scale")]
    pub table_size: Option<u64>,

    /// Client thread counts, comma-separated; every step runs once per count (e.g. 1,4).
    #[arg(long, value_delimiter = ',', help_heading = "Scale")]
    pub threads: Option<Vec<u32>>,

    /// Seconds per read-heavy step (published runs: 300).
    #[arg(long, help_heading = "Scale")]
    pub read_secs: Option<f64>,

    /// Seconds per write-heavy step (published runs: 600).
    #[arg(long, help_heading = "Scale")]
    pub write_secs: Option<f64>,

    /// Seconds for the insert and scan steps (published runs: 600).
    #[arg(long, help_heading = "Scale")]
    pub insert_secs: Option<f64>,

    /// Warm-up seconds before each step: run but not counted (published runs: 5).
    #[arg(long, help_heading = "Scale")]
    pub warmup_secs: Option<f64>,

    /// Run only the steps whose name or label matches one of these globs (comma-separated),
    /// e.g. 'point-query*,update-*'. Load and settle always run.
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
    /// Latency is then measured from each event's intended start (no coordinated omission).
    #[arg(long, value_name = "EVENTS_PER_SEC", help_heading = "Workload")]
    pub rate: Option<f64>,

    /// Do not sample OS metrics (host CPU, disk, server and client processes) during steps.
    #[arg(long, help_heading = "Measurement")]
    pub no_os_metrics: bool,

    /// Block device to measure (a /proc/diskstats name such as nvme0n1) instead of the one
    /// that holds each target's data directory.
    #[arg(long, value_name = "NAME", help_heading = "Measurement")]
    pub device: Option<String>,

    /// The target every other target is compared to (default: the first).
    #[arg(long, help_heading = "Report")]
    pub base: Option<String>,

    /// Directory under which the run directory <UTC time>-<suite> is created.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// Exact run directory to create (instead of one under --out).
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub run_dir: Option<PathBuf>,

    /// Keep each target's database files (SQLite files, server data dirs) after the run.
    #[arg(long, help_heading = "Output")]
    pub keep_data: bool,

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

    /// Do not draw progress bars (per-step lines are still printed to stderr).
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The published tab-separated layout.
    Text,
    /// GitHub Markdown tables.
    Md,
    /// `label,v1,…` lines.
    Csv,
    /// Every measured field.
    Json,
}

/// Which numbers CSV prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValuesArg {
    /// Target / base.
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

    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Relative thresholds LOW,HIGH for Markdown markers (default 0.95,1.05).
    #[arg(long, value_name = "LOW,HIGH")]
    pub thresholds: Option<String>,

    /// Thread count whose table CSV prints (default: the first).
    #[arg(long)]
    pub dop: Option<u32>,

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
