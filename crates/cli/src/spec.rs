//! Stage 2 of configuration: flags + config file → a validated, resolved run plan. After
//! this, nothing reads the flags again.

use crate::bounds;
use crate::config::{self, ConfigFile};
use crate::flags::{RunArgs, ScaleArg};
use anyhow::{bail, Result};
use dbdelta_engine::OpenOptions;
use dbdelta_lab::{History, OutDir, QuerySetPlan, RunPlan, Schedule};
use dbdelta_model::{IbenchOptions, RunOptions, Scale, SettleTime, TargetSpec, ToolInfo};
use dbdelta_workload::queryset::{QuerySet, DEFAULT_REPEAT};
use dbdelta_workload::Suite;
use std::path::PathBuf;

/// Default seed: fixed, so every target sees the same key sequence.
pub const DEFAULT_SEED: u64 = 1;
/// Default suite.
pub const DEFAULT_SUITE: &str = "sysbench";
/// The targets of a run without `--target`: SQLite in WAL mode vs rollback journal.
pub const DEFAULT_TARGETS: &[&str] = &[
    "wal=sqlite?journal_mode=WAL&synchronous=NORMAL",
    "rollback=sqlite?journal_mode=DELETE&synchronous=FULL",
];

/// The longest step or warm-up accepted: a week. Beyond it a typo, and a duration the
/// runner's clock arithmetic would overflow.
const MAX_SECS: f64 = 7.0 * 24.0 * 3600.0;

fn positive(flag: &str, v: f64) -> Result<f64> {
    if !v.is_finite() || !(0.0..=MAX_SECS).contains(&v) {
        bail!("{flag} {v} is invalid: give a number of seconds from 0 to {MAX_SECS} (a week)");
    }
    Ok(v)
}

/// The shortest measured window accepted: below it a window holds a handful of events (or
/// one, or none) and its rate says more about the clock than about the engine (`--read-secs
/// 0` once reported 18.9M QPS from one event).
const MIN_WINDOW_SECS: f64 = 0.05;

/// A measured window's length (`--read-secs`, `--write-secs`, `--insert-secs`).
fn window_secs(flag: &str, v: f64) -> Result<f64> {
    let v = positive(flag, v)?;
    if v < MIN_WINDOW_SECS {
        bail!(
            "{flag} {v} is too short: give at least {MIN_WINDOW_SECS} seconds (a shorter \
             window holds too few events to measure a rate)"
        );
    }
    Ok(v)
}

/// Turns of interleaved rounds (`--turn-ms`): 10 ms unless chosen, `None` when 0.
fn turn_ms(chosen: Option<f64>) -> Result<Option<f64>> {
    const MAX_MS: f64 = 60_000.0;
    match chosen {
        None => Ok(Some(DEFAULT_TURN_MS)),
        Some(0.0) => Ok(None),
        Some(v) if v.is_finite() && (MIN_TURN_MS..=MAX_MS).contains(&v) => Ok(Some(v)),
        Some(v) => bail!(
            "--turn-ms {v} is invalid: give milliseconds from {MIN_TURN_MS} to {MAX_MS}, or 0 \
             for one window per target"
        ),
    }
}

/// The shortest turn accepted: a handover (a thread woken, the CPU's caches refilled) costs
/// tens of microseconds, so a shorter turn would measure mostly handovers.
const MIN_TURN_MS: f64 = 1.0;

/// Turn length of interleaved rounds: short against the tens of milliseconds a shared
/// host's fast and slow phases last, long against a handover (bench/turns.sh).
pub const DEFAULT_TURN_MS: f64 = 10.0;

/// Directory under which run directories are created without `--out`.
pub const DEFAULT_OUT: &str = "dbdelta-runs";

/// Where `prepare` keeps targets' data and `run --use-existing` finds it without `--data-dir`.
pub const DEFAULT_DATA_DIR: &str = "dbdelta-data";

/// Database dbdelta creates and uses on servers without `--database`.
pub const DEFAULT_DATABASE: &str = "dbdelta";

/// Builds the plan from the flags and the optional config file.
pub fn resolve(args: &RunArgs) -> Result<RunPlan> {
    let cfg = match &args.config {
        Some(p) => config::load(p)?,
        None => ConfigFile::default(),
    };
    let scale = match args.scale.or(cfg.scale).unwrap_or(ScaleArg::Quick) {
        ScaleArg::Quick => Scale::Quick,
        ScaleArg::Full => Scale::Full,
    };
    let d = scale.defaults();
    let suite_name = args
        .suite
        .clone()
        .or(cfg.suite.clone())
        .unwrap_or_else(|| DEFAULT_SUITE.to_string());
    let settle_secs = args
        .settle_secs
        .or(cfg.settle_secs)
        .map(|s| positive("--settle-secs", s))
        .transpose()?;
    let ibench = if suite_name == IBENCH {
        let mut o = resolve_ibench(args, args.scale.or(cfg.scale))?;
        if let Some(s) = settle_secs {
            o.settle_sleep_secs = s;
        }
        Some(o)
    } else {
        for (given, flag) in [
            (args.clients.is_some(), "--clients"),
            (args.rows_load.is_some(), "--rows-load"),
            (args.rows_write.is_some(), "--rows-write"),
            (args.query_secs.is_some(), "--query-secs"),
            (args.one_table, "--one-table"),
        ] {
            if given {
                bail!("{flag} only applies to the Insert Benchmark: add --suite ibench or drop {flag}");
            }
        }
        None
    };
    // A directory is a query-set suite (suite.toml, setup/, queries/).
    let queryset = if ibench.is_none() && std::path::Path::new(&suite_name).is_dir() {
        let qs = QuerySet::load(std::path::Path::new(&suite_name), scale)
            .map_err(|e| anyhow::anyhow!("--suite: {e}"))?;
        Some(qs)
    } else {
        if args.repeat_query.is_some() {
            bail!("--repeat-query only applies to query-set suites: give --suite DIR (a directory with suite.toml) or drop --repeat-query");
        }
        None
    };
    if args.repeat_query == Some(0) {
        bail!("--repeat-query 0 is invalid: give 1 or more runs per query (the first is the cold run)");
    }
    if let Some(n) = args.repeat_query {
        bounds::at_most(
            "--repeat-query",
            n,
            bounds::MAX_REPEAT_QUERY,
            "runs of each query per target",
        )?;
    }
    let suite = match (&ibench, &queryset) {
        (None, Some(qs)) => Suite {
            name: qs.name.clone(),
            description: qs.description.clone(),
            items: Vec::new(),
            families: vec![dbdelta_engine::Family::Sql],
            dataset: Default::default(),
            table_size: None,
            quick: None,
        },
        _ => match &ibench {
            Some(_) => Suite {
                name: IBENCH.to_string(),
                description: "Insert Benchmark (Mark Callaghan's Insert Benchmark)".to_string(),
                items: Vec::new(),
                families: vec![dbdelta_engine::Family::Sql],
                dataset: Default::default(),
                table_size: None,
                quick: dbdelta_workload::ibench::steps::builtin_quick(),
            },
            None => Suite::load(&suite_name).map_err(|e| anyhow::anyhow!("--suite: {e}"))?,
        },
    };
    // A suite's own quick preset (sysbench: many short interleaved rounds).
    let d = match (scale, &suite.quick) {
        (Scale::Quick, Some(q)) => d.with(q),
        _ => d,
    };
    let threads = match &ibench {
        Some(ib) => vec![ib.clients],
        None => args
            .connections
            .clone()
            .or(args.threads.clone())
            .or(cfg.threads.clone())
            .unwrap_or_else(|| vec![1]),
    };
    if threads.is_empty() || threads.contains(&0) {
        bail!("--threads {threads:?} is invalid: give positive counts, e.g. --threads 1,4");
    }
    let (flag, max, why) = match (&ibench, &args.connections) {
        (Some(_), _) => (
            "--clients",
            bounds::MAX_CLIENTS,
            "three connections and a table each",
        ),
        (None, Some(_)) => (
            "--connections",
            bounds::MAX_CONNECTIONS,
            "a socket each; Linux allows about a million files per process",
        ),
        (None, None) => (
            "--threads",
            bounds::MAX_THREADS,
            "each can be an OS thread; use --connections for more clients",
        ),
    };
    for n in &threads {
        bounds::at_most(flag, *n, max, why)?;
    }
    if let (Some(active), Some(&fewest)) = (args.active, threads.iter().min()) {
        if active > fewest {
            bail!(
                "--active {active} is more than the {fewest} connections of the smallest level: \
                 give --active at most {fewest}, or more --connections (the others stay idle)"
            );
        }
    }
    let mut sorted = threads.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != threads.len() {
        bail!("--threads {threads:?} repeats a count: give each count once");
    }
    let tables = args.tables.or(cfg.tables).unwrap_or(d.tables);
    if tables == 0 {
        bail!("--tables 0 is invalid: give at least 1");
    }
    bounds::at_most(
        "--tables",
        tables,
        bounds::MAX_TABLES,
        "the warm-up step runs one thread per table",
    )?;
    if queryset.is_none() {
        suite_flags(args, &suite)?;
    }
    let table_size = args
        .table_size
        .or(cfg.table_size)
        .or(suite
            .table_size
            .filter(|_| args.scale.or(cfg.scale).is_none()))
        .unwrap_or(d.table_size);
    if table_size < 2 {
        bail!("--table-size {table_size} is too small: give at least 2 rows");
    }
    if args
        .steps
        .as_ref()
        .is_some_and(|g| g.iter().all(|s| s.trim().is_empty()))
    {
        bail!("--steps is empty: name the steps to run (e.g. --steps 'point-query*'), or drop the flag to run them all");
    }
    let steps: Vec<String> = args
        .steps
        .clone()
        .or(cfg.steps.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for glob in &steps {
        if !suite.steps().any(|s| s.matches(glob)) {
            bail!(
                "--steps '{glob}' matches no step of suite {}: see `dbdelta suites show {}`",
                suite.name,
                suite_name
            );
        }
    }
    // A selection that leaves out the step filling the data its steps read (kv's fillseq)
    // gets it back, as a load would run: without it they would measure an empty store.
    let mut steps = steps;
    for s in suite.prerequisites(&steps) {
        eprintln!(
            "note: --steps: {} runs too: it fills the data the selected steps read",
            s.name
        );
        steps.push(s.name.clone());
    }
    let options = RunOptions {
        suite: suite.name.clone(),
        scale,
        tables,
        table_size,
        threads,
        read_secs: window_secs(
            "--read-secs",
            args.read_secs.or(cfg.read_secs).unwrap_or(d.read_secs),
        )?,
        write_secs: window_secs(
            "--write-secs",
            args.write_secs.or(cfg.write_secs).unwrap_or(d.write_secs),
        )?,
        insert_secs: window_secs(
            "--insert-secs",
            args.insert_secs
                .or(cfg.insert_secs)
                .unwrap_or(d.insert_secs),
        )?,
        warmup_secs: positive(
            "--warmup-secs",
            args.warmup_secs
                .or(cfg.warmup_secs)
                .unwrap_or(d.warmup_secs),
        )?,
        // A warm-up the user chose applies to every round unless they chose this one too.
        round_warmup_secs: match args.round_warmup_secs.or(cfg.round_warmup_secs) {
            Some(v) => Some(positive("--round-warmup-secs", v)?),
            None if args.warmup_secs.or(cfg.warmup_secs).is_some() => None,
            None => Some(d.round_warmup_secs),
        },
        turn_ms: turn_ms(args.turn_ms.or(cfg.turn_ms))?,
        settle: settle_secs.map_or(d.settle, SettleTime::Secs),
        steps,
        seed: args.seed.or(cfg.seed).unwrap_or(DEFAULT_SEED),
        prepared: !args.no_prepared && cfg.prepared.unwrap_or(true),
        os_metrics: !args.no_os_metrics && cfg.os_metrics.unwrap_or(true),
        device: checked_device(args.device.clone().or(cfg.device.clone()))?,
        rate: match args.rate.or(cfg.rate) {
            Some(r) if !(r.is_finite() && (0.001..=1e9).contains(&r)) => {
                bail!("--rate {r} is invalid: give events per second from 0.001 to 1e9")
            }
            other => other,
        },
        i_own_this_database: args.i_own_this_database,
        client: crate::connections::client_options(args)?,
        tpc: tpc_options(args)?,
    };
    let texts: Vec<String> = if !args.targets.is_empty() {
        args.targets.clone()
    } else if !cfg.targets.is_empty() {
        let file = args.config.clone().unwrap_or_default();
        cfg.targets
            .iter()
            .map(|t| t.to_spec_text(&file))
            .collect::<Result<_>>()?
    } else {
        DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect()
    };
    let mut targets = Vec::with_capacity(texts.len());
    for text in &texts {
        let t = TargetSpec::parse(text).map_err(|e| anyhow::anyhow!("--target: {e}"))?;
        let t = dbdelta_lab::registry::check(&t)?;
        if queryset.is_none() {
            dbdelta_lab::registry::check_suite(&t, &suite.name, &suite.families)?;
        }
        if targets
            .iter()
            .any(|o: &dbdelta_lab::registry::Target| o.name == t.name)
        {
            bail!(
                "--target: two targets are named '{}': give each a unique name, e.g. a={}, b={}",
                t.name,
                t.engine,
                t.engine
            );
        }
        targets.push(t);
    }
    let base = match args.base.clone().or(cfg.base.clone()) {
        Some(b) if targets.iter().any(|t| t.name == b) => b,
        Some(b) => bail!(
            "--base {b}: no such target; the targets are {}",
            targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => targets[0].name.clone(),
    };
    if queryset.is_some() {
        // The suite's setup is arbitrary SQL (it drops and creates its tables): on a server
        // dbdelta did not start, only with the owner's word.
        if !args.i_own_this_database {
            if let Some(t) = targets
                .iter()
                .find(|t| matches!(t.location, dbdelta_model::Location::Url { .. }))
            {
                bail!(
                    "--target {}: a query-set suite runs its own setup SQL (it may drop and create tables) in the target's database; on an external server give --i-own-this-database to allow it",
                    t.name
                );
            }
        }
    }
    let database = args
        .database
        .clone()
        .or(cfg.database.clone())
        .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
    if database.is_empty()
        || !database
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        bail!("--database '{database}' is invalid: use letters, digits and '_'");
    }
    let out = match (&args.run_dir, &args.out) {
        (Some(_), Some(_)) => bail!("--run-dir and --out exclude each other: give one"),
        (Some(d), None) => OutDir::Exact(d.clone()),
        (None, Some(d)) => OutDir::Under(d.clone()),
        (None, None) => OutDir::Under(PathBuf::from(DEFAULT_OUT)),
    };
    // Validate the gate and the profiling flags before measuring anything.
    let fail_on = args
        .fail_on
        .as_deref()
        .map(crate::history_cmd::parse_fail_on)
        .transpose()?;
    let profile = crate::profile_cmd::settings(args)?;
    let asked = crate::history_cmd::repeats(args)?;
    // Interleaved rounds are cheap (one load per target): the scale's default gives every
    // ratio an interval. Sequential repeats reload everything, so they are opt-in.
    let resolve = crate::resolve_flags::resolve(
        args.resolve.as_deref(),
        args.budget.as_deref(),
        targets.len(),
        !args.sequential && ibench.is_none() && queryset.is_none(),
    )?;
    let schedule = Schedule {
        // Under --resolve, --repeat (else the fewest rounds that give an interval) is the
        // least every step runs; the goal adds the rest.
        rounds: match resolve {
            Some(_) => asked.unwrap_or(dbdelta_lab::resolve::MIN_ROUNDS),
            None => asked.unwrap_or(d.rounds),
        },
        repeats: asked.unwrap_or(1),
        sequential: args.sequential,
        reuse_load: args.reuse_load,
        resolve,
    };
    let queryset = queryset.map(|set| QuerySetPlan {
        repeat: args.repeat_query.or(set.repeat).unwrap_or(DEFAULT_REPEAT),
        set,
    });
    let mut plan = RunPlan {
        options,
        suite,
        targets,
        base,
        open: OpenOptions {
            prepared: !args.no_prepared && cfg.prepared.unwrap_or(true),
            tls: args.tls,
            compress: args.compress,
            i_own_this_database: args.i_own_this_database,
            database,
        },
        out,
        keep_data: args.keep_data,
        existing: match (args.use_existing, &args.data_dir) {
            (true, dir) => Some(dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR))),
            (false, None) => None,
            (false, Some(dir)) => bail!(
                "--data-dir {} applies to `dbdelta prepare` and `dbdelta run --use-existing`: add --use-existing or drop --data-dir",
                dir.display()
            ),
        },
        ibench,
        queryset,
        schedule,
        fail_on,
        history: match args.no_store {
            true => History::Off,
            false => History::Store(args.store.clone()),
        },
        profile,
        command: redacted_command_line(),
        tool: ToolInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: env!("DBDELTA_GIT_COMMIT").to_string(),
        },
        segment: None,
    };
    plan.segment = crate::segment_flags::resolve(&args.segments, &plan)?;
    Ok(plan)
}

/// The command line, with the passwords of target URLs redacted (for run.json).
fn redacted_command_line() -> Vec<String> {
    std::env::args()
        .map(|a| match TargetSpec::parse(&a) {
            Ok(t) if matches!(t.location, dbdelta_model::Location::Url { .. }) => t.redacted(),
            _ => a,
        })
        .collect()
}

/// The Insert Benchmark's suite name.
pub const IBENCH: &str = "ibench";

/// Insert Benchmark options: the preset of `--scale` (default quick; `full` is the published
/// configuration),
/// then the flags; sysbench-only flags are rejected.
fn resolve_ibench(args: &RunArgs, scale: Option<ScaleArg>) -> Result<IbenchOptions> {
    for (given, flag) in [
        (args.tables.is_some(), "--tables"),
        (args.table_size.is_some(), "--table-size"),
        (args.threads.is_some(), "--threads (use --clients)"),
        (args.read_secs.is_some(), "--read-secs (use --query-secs)"),
        (args.write_secs.is_some(), "--write-secs"),
        (args.insert_secs.is_some(), "--insert-secs"),
        (args.warmup_secs.is_some(), "--warmup-secs"),
        (args.rate.is_some(), "--rate"),
        (args.steps.is_some(), "--steps"),
        (
            args.profile
                || args.profile_steps.is_some()
                || args.profile_callgraph.is_some()
                || args.profile_freq.is_some(),
            "--profile",
        ),
    ] {
        if given {
            bail!("{flag} does not apply to --suite ibench: see `dbdelta run --help`, section Insert Benchmark");
        }
    }
    let clients = args.clients.unwrap_or(1);
    if clients == 0 {
        bail!("--clients 0 is invalid: give at least 1");
    }
    bounds::at_most(
        "--clients",
        clients,
        bounds::MAX_CLIENTS,
        "three connections and a table each",
    )?;
    for (flag, rows) in [
        ("--rows-load", args.rows_load),
        ("--rows-write", args.rows_write),
    ] {
        if let Some(n) = rows {
            bounds::at_most(flag, n, bounds::MAX_IBENCH_ROWS, "rows per client")?;
        }
    }
    let mut o = match scale {
        // Quick unless asked: like every suite, the default run takes minutes (issue 29:
        // the published configuration takes hours; `--scale full` asks for it).
        Some(ScaleArg::Quick) | None => IbenchOptions::quick(clients),
        Some(ScaleArg::Full) => IbenchOptions::published(clients),
    };
    if let Some(n) = args.rows_load {
        if n < 100 {
            bail!("--rows-load {n} is too small: give at least 100 rows per client");
        }
        o.rows_load = n;
    }
    if let Some(n) = args.rows_write {
        if n < 5 {
            bail!("--rows-write {n} is too small: give at least 5 rows per client");
        }
        o.rows_write = n;
    }
    if let Some(s) = args.query_secs {
        if !(s.is_finite() && s > 0.0 && s <= MAX_SECS) {
            bail!("--query-secs {s} is invalid: give a number of seconds above 0 and at most {MAX_SECS} (a week)");
        }
        o.query_secs = s;
    }
    if args.one_table && clients > 1 {
        bail!("--one-table cannot be combined with --clients {clients}: the FIFO deletes of l.i1, l.i2 and the read+write steps need one table per client (the Insert Benchmark's l.i1 and l.i2 delete from the table head); drop --one-table");
    }
    o.one_table = args.one_table;
    o.seed = args.seed.unwrap_or(DEFAULT_SEED);
    Ok(o)
}

/// `--device NAME` must be a block device of `/proc/diskstats` (a leading `/dev/` is allowed):
/// a misspelt name would otherwise measure nothing.
fn checked_device(device: Option<String>) -> Result<Option<String>> {
    let Some(name) = device else {
        return Ok(None);
    };
    let bare = name.strip_prefix("/dev/").unwrap_or(&name);
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let known: Vec<&str> = stats
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    if known.is_empty() || known.contains(&bare) {
        return Ok(Some(name));
    }
    let disks: Vec<&str> = known
        .iter()
        .copied()
        .filter(|d| !d.starts_with("loop") && !d.starts_with("ram"))
        .collect();
    bail!(
        "--device {name}: no such block device in /proc/diskstats; this machine has {}",
        disks.join(", ")
    )
}

/// Refuses a flag of one suite's dataset given with another suite (it would be ignored and
/// the run would measure something else than asked): `--warehouses` with sysbench,
/// `--tables` with TPC-C, … Config-file values are not refused: one file may serve several
/// suites.
fn suite_flags(args: &RunArgs, suite: &Suite) -> Result<()> {
    use dbdelta_workload::suite::Dataset;
    let d = suite.dataset;
    let sbtest = matches!(d, Dataset::Sbtest);
    let sized = matches!(d, Dataset::Sbtest | Dataset::Usertable | Dataset::Keys);
    let tpcb = matches!(d, Dataset::Pgbench);
    let tpcc = matches!(d, Dataset::Tpcc);
    for (given, flag, applies, suites) in [
        (args.tables.is_some(), "--tables", sbtest, "sysbench"),
        (
            args.table_size.is_some(),
            "--table-size",
            sized,
            "sysbench, kv and ycsb",
        ),
        (args.scale_factor.is_some(), "--scale-factor", tpcb, "tpcb"),
        (args.warehouses.is_some(), "--warehouses", tpcc, "tpcc"),
        (args.terminals.is_some(), "--terminals", tpcc, "tpcc"),
        (args.all_warehouses, "--all-warehouses", tpcc, "tpcc"),
        (args.tpcc_mode.is_some(), "--tpcc-mode", tpcc, "tpcc"),
        (
            args.transactions.is_some(),
            "--transactions",
            tpcb || tpcc,
            "tpcb and tpcc",
        ),
    ] {
        if given && !applies {
            bail!(
                "{flag} does not apply to the {} suite (it would be ignored): it applies to \
                 {suites}; drop {flag} or choose one of those with --suite",
                suite.name
            );
        }
    }
    Ok(())
}

/// The TPC-B and TPC-C flags, checked.
fn tpc_options(args: &RunArgs) -> Result<dbdelta_model::TpcOptions> {
    let d = dbdelta_model::TpcOptions::default();
    let at_least_one = |flag: &str, v: Option<u32>, default: u32| -> Result<u32> {
        match v {
            Some(0) => bail!("{flag} 0 is invalid: give at least 1"),
            Some(n) => Ok(n),
            None => Ok(default),
        }
    };
    let latency_limit_ms = match args.latency_limit {
        Some(ms) if !(ms.is_finite() && ms > 0.0 && ms <= bounds::MAX_LATENCY_LIMIT_MS) => {
            bail!(
                "--latency-limit {ms} is invalid: give milliseconds above 0 and at most {} \
                 (a day), e.g. 50",
                bounds::MAX_LATENCY_LIMIT_MS
            )
        }
        other => other,
    };
    if args.transactions == Some(0) {
        bail!("--transactions 0 is invalid: give at least 1 transaction per terminal");
    }
    if let Some(n) = args.transactions {
        bounds::at_most(
            "--transactions",
            n,
            bounds::MAX_TRANSACTIONS,
            "per terminal",
        )?;
    }
    if let Some(n) = args.max_tries {
        bounds::at_most(
            "--max-tries",
            n,
            bounds::MAX_TRIES,
            "tries of one transaction",
        )?;
    }
    if let Some(n) = args.scale_factor {
        bounds::at_most(
            "--scale-factor",
            n,
            bounds::MAX_SCALE_FACTOR,
            "100,000 accounts per branch: about 1.3 TB at the limit",
        )?;
    }
    if let Some(n) = args.warehouses {
        bounds::at_most(
            "--warehouses",
            n,
            bounds::MAX_WAREHOUSES,
            "about 100 MB each: a terabyte at the limit",
        )?;
    }
    if let Some(n) = args.terminals {
        bounds::at_most(
            "--terminals",
            n,
            bounds::MAX_TERMINALS,
            "one connection each",
        )?;
    }
    let tpcc_mode = match args.tpcc_mode.as_deref() {
        None | Some("throughput") => dbdelta_model::TpccMode::Throughput,
        Some("spec") => dbdelta_model::TpccMode::Spec,
        Some(other) => bail!(
            "--tpcc-mode {other:?} is unknown: give throughput (no waits) or spec (keying and think times)"
        ),
    };
    Ok(dbdelta_model::TpcOptions {
        scale_factor: at_least_one("--scale-factor", args.scale_factor, d.scale_factor)?,
        max_tries: match args.max_tries {
            Some(0) => bail!("--max-tries 0 is invalid: give at least 1 (1 = never re-run)"),
            other => other,
        },
        latency_limit_ms,
        transactions: args.transactions,
        warehouses: at_least_one("--warehouses", args.warehouses, d.warehouses)?,
        terminals: match args.terminals {
            Some(0) => bail!("--terminals 0 is invalid: give at least 1"),
            other => other,
        },
        all_warehouses: args.all_warehouses,
        tpcc_mode,
    })
}
