//! `--resolve PCT --budget D`: rounds are added to each step until its interval is narrow
//! enough, within the budget, and each step says what it reached. On the mock engine (2 ms
//! exponential service times, one window per target): point-query.pre's 1 s windows hold
//! ~450 events (log-ratio SD ~7 % under load: ±15 % within four or five rounds, ~2.6 s each,
//! well inside the half of the budget the first of two steps may take); a goal of ±0.1 % on
//! the same step would take hundreds of rounds, so its budget runs out.

mod common;

use common::{dbdelta, read_json, step_results};
use dbdelta_model::{ResolveStop, StepKind, StepResult};
use std::path::Path;

fn last_round<'a>(all: &'a [StepResult], step: &str) -> &'a StepResult {
    all.iter()
        .filter(|r| r.kind == StepKind::Measured && r.step == step)
        .max_by_key(|r| r.repeat)
        .unwrap_or_else(|| panic!("no {step} result"))
}

/// Two mock targets, one window per target, `extra` flags; the console's text.
fn resolve_run(rd: &Path, extra: &[&str]) -> String {
    let out = dbdelta()
        .args([
            "run",
            "--no-store",
            "-t",
            "a=mock?latency=2ms&dist=exp",
            // Its own seed: with the same one, b's connections would draw a's service times
            // and, on a quiet host, each round would count the same events for both (an
            // interval of exactly zero).
            "-t",
            "b=mock?latency=2ms&dist=exp&seed=2",
            "--turn-ms",
            "0",
            "--read-secs",
            "1",
            "--write-secs",
            "0.05",
            "--warmup-secs",
            "0",
            // Every round after the first pays 0.3 s of warm-up per target: a round costs far
            // more than a tiny window, as a server's would.
            "--round-warmup-secs",
            "0.3",
        ])
        .args(extra)
        .arg("--run-dir")
        .arg(rd)
        .output()
        .unwrap();
    let console = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{console}");
    console
}

#[test]
fn a_step_stops_when_resolved_and_another_when_its_budget_is_spent() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("resolved");
    let console = resolve_run(
        &rd,
        &[
            "--steps",
            "point-query.pre,update-index",
            "--resolve",
            "15%",
            "--budget",
            "40s",
        ],
    );
    let quiet = last_round(&step_results(&rd, "b"), "point-query.pre")
        .resolved
        .unwrap();
    assert_eq!(quiet.stop, ResolveStop::Resolved, "{quiet:?}");
    assert!(quiet.half_width_pct.is_some_and(|h| h <= 15.0), "{quiet:?}");
    assert!(quiet.rounds >= 3, "at least --repeat's default: {quiet:?}");
    // Both targets' last rounds say it; the console, the text and Markdown reports too.
    assert_eq!(
        last_round(&step_results(&rd, "a"), "point-query.pre").resolved,
        Some(quiet)
    );
    assert!(
        console.contains("[resolve] point-query.pre_range=100 dop=1: ±")
            && console.contains("(resolved; goal ±15.0 %)"),
        "{console}"
    );
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("\nResolve: "), "{text}");
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(md.contains("## Resolve") && md.contains("resolved"), "{md}");

    // Two seeds: each round's ratio varies by a few percent (~450 events a window), far
    // from ±0.1 % within the budget.
    let rd = dir.path().join("budget");
    let console = resolve_run(
        &rd,
        &[
            "--steps",
            "point-query.pre",
            "--resolve",
            "0.1%",
            "--budget",
            "15s",
        ],
    );
    let noisy = last_round(&step_results(&rd, "b"), "point-query.pre")
        .resolved
        .unwrap();
    assert_eq!(noisy.stop, ResolveStop::Budget, "{noisy:?}");
    assert!(noisy.half_width_pct.is_none_or(|h| h > 0.1), "{noisy:?}");
    assert!(noisy.rounds > 3, "rounds were added: {noisy:?}");
    assert!(console.contains("(budget spent; goal ±0.1 %)"), "{console}");
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("point-query.pre_range=100\t±")
            || text.contains("point-query.pre_range=100\tno interval"),
        "{text}"
    );
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(
        md.contains("## Resolve") && md.contains("budget spent"),
        "{md}"
    );
    let json = read_json(&rd.join("report.json"));
    assert!(json["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["resolved"]["stop"] == "budget"));
}

#[test]
fn resolve_and_budget_refuse_nonsense_with_exit_2() {
    for (args, needle) in [
        (vec!["--resolve", "0%"], "--resolve"),
        (vec!["--resolve", "abc"], "--resolve"),
        (vec!["--resolve", "2%", "--budget", "0s"], "--budget"),
        (
            vec!["--resolve", "2%", "--budget", "ten minutes"],
            "--budget",
        ),
        (vec!["--budget", "10m"], "--budget only bounds --resolve"),
        (vec!["--resolve", "2%", "--sequential"], "--sequential"),
    ] {
        let out = dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "-t",
                "a=mock",
                "-t",
                "b=mock",
            ])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// In turns, the rounds the policy adds are in turns and one round of windows of their own
/// closes the step once it is resolved; that last round says what the step reached too.
#[test]
fn a_resolved_step_in_turns_closes_with_windows_of_their_own() {
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "a=mock?latency=2ms&dist=exp",
        "-t",
        "b=mock?latency=2ms&dist=exp",
        "--steps",
        "point-query.pre",
        "--read-secs",
        "0.5",
        "--warmup-secs",
        "0",
        "--resolve",
        "20%",
        "--budget",
        "30s",
    ]);
    for t in ["a", "b"] {
        let mut rounds: Vec<StepResult> = step_results(&rd, t)
            .into_iter()
            .filter(|r| r.kind == StepKind::Measured)
            .collect();
        rounds.sort_by_key(|r| r.repeat);
        let (closing, before) = rounds.split_last().expect("rounds");
        assert!(before.len() >= 2, "{t}: {} rounds", rounds.len());
        assert!(before.iter().all(|r| r.turns.is_some()), "{t}: {before:?}");
        assert!(closing.turns.is_none(), "{t}: {closing:?}");
        let reached = closing
            .resolved
            .expect("the last round says what was reached");
        assert_eq!(reached, before[before.len() - 1].resolved.unwrap(), "{t}");
    }
}
