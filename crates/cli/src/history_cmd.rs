//! Verdict flags of `run` (`--repeat`, `--fail-on`) and the `history`, `import` and
//! `detect` commands over the results history.

use crate::flags::{DetectArgs, HistoryArgs, ImportArgs, RunArgs, SeriesArgs};
use crate::output::print_out;
use anyhow::{bail, Result};
use dbdelta_history::{series, Filter, Metric};
use dbdelta_inference::{detect as edivisive, DetectOptions, Direction};
use dbdelta_lab::history::{index_dir, open};
use std::fmt::Write;
use std::process::ExitCode;

/// `--repeat N`, when given.
pub fn repeats(args: &RunArgs) -> Result<Option<u32>> {
    match args.repeat {
        Some(0) => bail!("--repeat 0 is invalid: give the number of runs per target, 1 or more"),
        Some(n) => crate::bounds::at_most(
            "--repeat",
            n,
            crate::bounds::MAX_REPEAT,
            "rounds of every step on every target",
        )
        .map(Some),
        None => Ok(None),
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

pub(crate) fn filter(s: &SeriesArgs) -> Filter {
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
    // Series are runs of one step: a million is more than any history holds, and keeps
    // window and segment arithmetic far from overflow.
    const MAX_POINTS: usize = 1_000_000;
    if !(2..=MAX_POINTS).contains(&args.window) {
        bail!(
            "--window {} is invalid: give 2 to {MAX_POINTS} points",
            args.window
        );
    }
    crate::bounds::at_most(
        "--min-segment",
        args.min_segment,
        MAX_POINTS,
        "runs on each side of a change",
    )?;
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
