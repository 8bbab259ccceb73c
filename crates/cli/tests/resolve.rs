//! `--resolve PCT --budget D`: rounds are added to each step until its interval is narrow
//! enough, within the budget, and each step says what it reached. On the mock engine (2 ms
//! exponential service times, one window per target): point-query.pre's 1 s windows hold
//! ~450 events (log-ratio SD ~7 % under load: ±15 % within four or five rounds, ~2.6 s each);
//! update-index's 0.02 s windows ~10 (±35.7 % after 14 rounds in one run; ±10 % took 37
//! rounds without round warm-ups, and with 0.3 s of warm-up a round its share of the
//! budget holds about fifteen). point-query.pre runs first and takes at most half the budget.

mod common;

use common::{dbdelta, read_json, step_results};
use dbdelta_model::{ResolveStop, StepKind, StepResult};

fn last_round<'a>(all: &'a [StepResult], step: &str) -> &'a StepResult {
    all.iter()
        .filter(|r| r.kind == StepKind::Measured && r.step == step)
        .max_by_key(|r| r.repeat)
        .unwrap_or_else(|| panic!("no {step} result"))
}

#[test]
fn a_quiet_step_stops_resolved_and_a_noisy_one_at_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--no-store",
            "-t",
            "a=mock?latency=2ms&dist=exp",
            "-t",
            "b=mock?latency=2ms&dist=exp",
            "--steps",
            "point-query.pre,update-index",
            "--turn-ms",
            "0",
            "--read-secs",
            "1",
            "--write-secs",
            "0.02",
            "--warmup-secs",
            "0",
            // Every round after the first pays 0.3 s of warm-up per target: the noisy step's
            // rounds cost far more than their tiny windows, as a server's would.
            "--round-warmup-secs",
            "0.3",
            "--resolve",
            "15%",
            "--budget",
            "24s",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let console = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{console}");
    let all = step_results(&rd, "b");
    let quiet = last_round(&all, "point-query.pre");
    let noisy = last_round(&all, "update-index");
    let (q, n) = (quiet.resolved.unwrap(), noisy.resolved.unwrap());
    assert_eq!(q.stop, ResolveStop::Resolved, "{q:?}");
    assert!(q.half_width_pct.is_some_and(|h| h <= 15.0), "{q:?}");
    assert_eq!(n.stop, ResolveStop::Budget, "{n:?}");
    assert!(n.half_width_pct.is_none_or(|h| h > 15.0), "{n:?}");
    // The noisy step got more rounds than the minimum and than the quiet one needed.
    assert!(n.rounds > q.rounds && q.rounds >= 3, "{q:?} {n:?}");
    // Both targets' last rounds say it; the console, the text and Markdown reports too.
    assert_eq!(
        last_round(&step_results(&rd, "a"), "point-query.pre").resolved,
        Some(q)
    );
    assert!(
        console.contains("[resolve] point-query.pre_range=100 dop=1: ±")
            && console.contains("(resolved; goal ±15.0 %)"),
        "{console}"
    );
    assert!(
        console.contains("(budget spent; goal ±15.0 %)"),
        "{console}"
    );
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("\nResolve: "), "{text}");
    assert!(
        text.contains("update-index_range=100\t±")
            || text.contains("update-index_range=100\tno interval"),
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
