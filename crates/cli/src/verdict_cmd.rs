//! Verdict plumbing of the binary: `--repeat`, the `--fail-on` gate, indexing runs in the
//! results history, and the `history`, `import` and `detect` commands.

use crate::app::print_out;
use crate::flags::{DetectArgs, HistoryArgs, ImportArgs, RunArgs, SeriesArgs};
use anyhow::{bail, Context, Result};
use dbdelta_history::{open_store, points_of_run, series, Filter, Metric, Store};
use dbdelta_report::verdict::verdicts;
use dbdelta_report::{load_run, ReportData};
use dbdelta_verdict::{detect as edivisive, DetectOptions, Direction, Evidence, Verdict};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// Lines of failing steps the `--fail-on` summary prints before "… and N more".
const SUMMARY_LINES: usize = 15;

/// `--repeat N`, when given.
pub fn repeats(args: &RunArgs) -> Result<Option<u32>> {
    match args.repeat {
        Some(0) => bail!("--repeat 0 is invalid: give the number of runs per target, 1 or more"),
        other => Ok(other),
    }
}

/// Parses `--fail-on 'regression>5%'` into the fraction 0.05.
pub fn parse_fail_on(rule: &str) -> Result<f64> {
    let bad = || {
        anyhow::anyhow!(
            "--fail-on '{rule}' is invalid: write regression>N% (e.g. 'regression>5%'): exit 1 when a step is significantly slower than the base by more than N %"
        )
    };
    let compact: String = rule.chars().filter(|c| !c.is_whitespace()).collect();
    let pct = compact
        .strip_prefix("regression>")
        .and_then(|r| r.strip_suffix('%'))
        .ok_or_else(bad)?;
    let v: f64 = pct.parse().map_err(|_| bad())?;
    if !(0.0..100.0).contains(&v) {
        return Err(bad());
    }
    Ok(v / 100.0)
}

/// The `--fail-on` gate over a finished run: prints a one-screen summary and returns true
/// when some step of some target is a significant regression by more than `threshold`.
pub fn gate(threshold: &f64, dir: &Path, base: &str) -> Result<bool> {
    let run = load_run(dir).context("reading back the run's results for --fail-on")?;
    let data = ReportData::from_runs(vec![run], Some(base))?;
    let cells = verdicts(&data);
    let failing: Vec<_> = cells
        .iter()
        .filter_map(|c| c.comparison.map(|x| (c, x)))
        .filter(|(_, x)| x.verdict == Verdict::Regression && x.ratio < 1.0 - threshold)
        .collect();
    let broken = broken_steps(&data, base);
    let mut o = String::new();
    if !broken.is_empty() {
        let _ = writeln!(
            o,
            "FAIL (--fail-on): {} measurement(s) of compared targets failed or are missing, so they cannot be compared:",
            broken.len()
        );
        for line in broken.iter().take(SUMMARY_LINES) {
            let _ = writeln!(o, "  {line}");
        }
        if broken.len() > SUMMARY_LINES {
            let _ = writeln!(o, "  … and {} more", broken.len() - SUMMARY_LINES);
        }
    }
    if failing.is_empty() && !broken.is_empty() {
        eprint!("{o}");
        return Ok(true);
    }
    if failing.is_empty() {
        let _ = writeln!(
            o,
            "--fail-on: no step regressed significantly by more than {:.1} % vs {base} ({} comparisons)",
            threshold * 100.0,
            cells.len()
        );
        eprint!("{o}");
        return Ok(false);
    }
    let _ = writeln!(
        o,
        "FAIL (--fail-on regression>{:.1}%): {} step(s) significantly slower than {base}:",
        threshold * 100.0,
        failing.len()
    );
    for (c, x) in failing.iter().take(SUMMARY_LINES) {
        let evidence = match x.evidence {
            Evidence::Repeats { base, target } => format!("{base} vs {target} runs"),
            Evidence::Paired { pairs } => format!("{pairs} paired rounds"),
            Evidence::WithinRun => "within one run; weaker evidence".to_string(),
        };
        let _ = writeln!(
            o,
            "  {:<34} dop={:<3} {:<12} QPS {:+.1} % [{:+.1} %, {:+.1} %] p={:.1e} ({evidence})",
            c.label,
            c.dop,
            c.target,
            (x.ratio - 1.0) * 100.0,
            (x.low - 1.0) * 100.0,
            (x.high - 1.0) * 100.0,
            x.p
        );
    }
    if failing.len() > SUMMARY_LINES {
        let _ = writeln!(o, "  … and {} more", failing.len() - SUMMARY_LINES);
    }
    let _ = writeln!(
        o,
        "intervals are 95 % confidence intervals of target/base QPS; full tables in {}",
        dir.join("report.txt").display()
    );
    eprint!("{o}");
    Ok(true)
}

/// Measured steps that a gate cannot pass over: a compared target's step that failed, or
/// that the base measured and the target did not (a target whose load failed has none).
/// Interrupted and not-supported steps are left out: they say nothing about speed.
fn broken_steps(data: &ReportData, base: &str) -> Vec<String> {
    use dbdelta_model::{StepKind, StepStatus};
    use std::collections::BTreeMap;
    // (order, label, dop) → target → status
    let mut steps: BTreeMap<(u32, String, u32), BTreeMap<String, &StepStatus>> = BTreeMap::new();
    for r in data.runs.iter().flat_map(|r| &r.results) {
        if r.kind == StepKind::Measured {
            steps
                .entry((r.order, r.label.clone(), r.threads))
                .or_default()
                .insert(r.target.clone(), &r.status);
        }
    }
    let mut out = Vec::new();
    for ((_, label, dop), by_target) in &steps {
        for col in &data.columns {
            let name = col.name();
            match by_target.get(name) {
                Some(StepStatus::Failed { reason }) => {
                    out.push(format!("{name} {label} dop={dop}: failed: {reason}"))
                }
                Some(StepStatus::Stalled { reason }) => {
                    out.push(format!("{name} {label} dop={dop}: stalled: {reason}"))
                }
                None if name != base
                    && by_target.get(base).is_some_and(|s| **s == StepStatus::Ok) =>
                {
                    out.push(format!("{name} {label} dop={dop}: not measured"))
                }
                _ => {}
            }
        }
    }
    out
}

/// The store a command uses: the flag, else `$DBDELTA_STORE`, else the default file.
fn store_spec(flag: Option<&str>) -> Result<String> {
    if let Some(s) = flag {
        return Ok(s.to_string());
    }
    if let Some(s) = std::env::var("DBDELTA_STORE")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Ok(s);
    }
    Ok(dbdelta_history::default_store_path()?
        .to_string_lossy()
        .into_owned())
}

fn open(flag: Option<&str>) -> Result<Box<dyn Store>> {
    let spec = store_spec(flag)?;
    open_store(&spec, &crate::registry::history_connection).with_context(|| {
        "cannot open the results history; give --store PATH (SQLite file) or --store postgres://user@host/db"
    })
}

fn index_dir(store: &mut dyn Store, dir: &Path) -> Result<(usize, usize)> {
    let run = load_run(dir)?;
    let id = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    let points = points_of_run(&id, &run.manifest, &run.results);
    let added = store.add(&points)?;
    Ok((points.len(), added))
}

/// Indexes a finished run in the history unless `--no-store`; a store problem is a warning,
/// never a lost run.
pub fn index_run(args: &RunArgs, dir: &Path) {
    if args.no_store {
        return;
    }
    let result = open(args.store.as_deref()).and_then(|mut s| {
        let (n, _) = index_dir(s.as_mut(), dir)?;
        Ok((n, s.describe()))
    });
    match result {
        Ok((n, where_)) => eprintln!("indexed {n} result(s) in the history {where_}"),
        Err(e) => eprintln!("warning: the run was not indexed in the results history: {e:#}"),
    }
}

/// `dbdelta import RUN_DIR…`.
pub fn import(args: &ImportArgs) -> Result<ExitCode> {
    let mut store = open(args.store.store.as_deref())?;
    for dir in &args.runs {
        if !dir.join("run.json").is_file() {
            bail!(
                "{}: not a dbdelta run directory (no run.json); give directories written by `dbdelta run`",
                dir.display()
            );
        }
        let (n, added) = index_dir(store.as_mut(), dir)?;
        println!(
            "{}: {added} new of {n} result(s) indexed in {}",
            dir.display(),
            store.describe()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn filter(s: &SeriesArgs) -> Filter {
    Filter {
        target_like: s.target_like.clone(),
        step: s.step.clone(),
        suite: s.suite.clone(),
        threads: s.threads,
        host: s.host.clone(),
    }
}

fn fmt_opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

/// The history's series that match the filter flags; none is an error naming the store.
fn matching_series(store: Option<&str>, args: &SeriesArgs) -> Result<Vec<dbdelta_history::Series>> {
    let mut store = open(store)?;
    let all = store.points()?;
    let found = series(&all, &filter(args));
    if found.is_empty() {
        bail!(
            "no results in the history {} match; import runs with `dbdelta import RUN_DIR` or loosen --target-like/--step",
            store.describe()
        );
    }
    Ok(found)
}

/// `dbdelta history`.
pub fn history(args: &HistoryArgs) -> Result<ExitCode> {
    let found = matching_series(args.store.store.as_deref(), &args.series)?;
    let mut o = String::new();
    for s in &found {
        let k = &s.key;
        let _ = writeln!(
            o,
            "{} {} dop={} ({} on {})\nstarted\trun\tversion\trepeats\tqps\tp95_us\tcpu_us/op",
            k.target, k.label, k.threads, k.suite, k.host
        );
        for p in &s.points {
            let _ = writeln!(
                o,
                "{}\t{}\t{}\t{}\t{:.1}\t{:.1}\t{}",
                p.run_started,
                p.run_id,
                p.version,
                p.repeats,
                p.qps,
                p.p95_us,
                fmt_opt(p.cpu_us_per_op, 2)
            );
        }
        o.push('\n');
    }
    print_out(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// `dbdelta detect`.
pub fn detect(args: &DetectArgs) -> Result<ExitCode> {
    if !(args.pvalue > 0.0 && args.pvalue <= 1.0) {
        bail!(
            "-P {} is invalid: give a p-value in (0, 1], e.g. 0.001",
            args.pvalue
        );
    }
    if args.window < 2 {
        bail!("--window {} is invalid: give 2 or more points", args.window);
    }
    if args.magnitude.is_nan() || args.magnitude < 0.0 {
        bail!(
            "-M {} is invalid: give a relative magnitude >= 0, e.g. 0.05",
            args.magnitude
        );
    }
    let metrics = args
        .metric
        .iter()
        .map(|m| {
            Metric::parse(m.trim()).ok_or_else(|| {
                anyhow::anyhow!("--metric '{m}' is unknown: use qps, p95_us or cpu_us_per_op")
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let opts = DetectOptions {
        window: args.window,
        max_pvalue: args.pvalue,
        min_magnitude: args.magnitude,
        min_segment: args.min_segment.max(1),
    };
    let found = matching_series(args.store.store.as_deref(), &args.series)?;
    let mut o = String::new();
    let (mut changes, mut new_regressions) = (0, 0);
    for s in &found {
        for &m in &metrics {
            // Runs without this metric are left out of its series.
            let runs: Vec<_> = s.points.iter().filter(|p| p.value(m).is_some()).collect();
            let values: Vec<f64> = runs.iter().filter_map(|p| p.value(m)).collect();
            for cp in edivisive(&values, &opts) {
                changes += 1;
                let at = runs[cp.index];
                let worse = match m.direction() {
                    Direction::HigherIsBetter => cp.forward_change() < 0.0,
                    Direction::LowerIsBetter => cp.forward_change() > 0.0,
                };
                let newest = cp.index + 1 == runs.len();
                if worse && newest {
                    new_regressions += 1;
                }
                let _ = writeln!(
                    o,
                    "{} {} dop={} {} {:+.1} % at {} ({}), p={:.2e}, mean {:.1} -> {:.1} [{}{}]",
                    s.key.target,
                    s.key.label,
                    s.key.threads,
                    m.name(),
                    cp.forward_change() * 100.0,
                    at.run_id,
                    if at.version.is_empty() {
                        "version unknown"
                    } else {
                        at.version.as_str()
                    },
                    cp.pvalue,
                    cp.mean_before,
                    cp.mean_after,
                    if worse { "regression" } else { "improvement" },
                    if newest { ", newest run" } else { "" }
                );
            }
        }
    }
    let _ = writeln!(
        o,
        "{changes} change point(s) in {} series (E-Divisive means: p <= {}, window {}, magnitude > {}, min segment {})",
        found.len(),
        opts.max_pvalue,
        opts.window,
        opts.min_magnitude,
        opts.min_segment
    );
    print_out(&o)?;
    if args.fail_on_new && new_regressions > 0 {
        eprintln!("FAIL (--fail-on-new): {new_regressions} series regressed at their newest run");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
