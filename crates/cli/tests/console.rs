//! The console of `dbdelta run`: one line per step and target when a step's rounds end
//! (with the step counter and the time left), per-round lines only with `--verbose`, the
//! aligned tables and bottom line on stdout, and `--dry-run`. Rates vary from run to run, so
//! the golden files hold the lines with every number replaced by `N`.

mod common;

use common::dbdelta;
use std::path::Path;

const STEPS: &str = "point-query.pre,update-index";

fn mock_run(rd: &Path, extra: &[&str]) -> (String, String) {
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "fast=mock",
            "-t",
            "slow=mock?latency=200us",
            "--steps",
            STEPS,
            "--threads",
            "1",
            "--repeat",
            "3",
            "--read-secs",
            "0.2",
            "--write-secs",
            "0.2",
            "--insert-secs",
            "0.2",
            "--warmup-secs",
            "0",
            "--table-size",
            "100",
            "--run-dir",
        ])
        .arg(rd)
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

/// Every number as `N`, runs of spaces as one, the run directory as `RUN`, significance
/// marks dropped: what stays is the layout.
fn shape(text: &str, rd: &Path) -> String {
    let text = text.replace(&rd.display().to_string(), "RUN");
    let mut out = String::new();
    for line in text.lines() {
        let mut shaped = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.')
                {
                    chars.next();
                }
                shaped.push('N');
            } else if !matches!(c, '▲' | '▼' | '°') {
                // Significance marks depend on the host's noise: not part of the layout.
                shaped.push(c);
            }
        }
        out.push_str(&shaped.split_whitespace().collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    // A duration such as `1m40s` or `850ms` has a varying shape: one token.
    out.replace("NmNs", "N s")
        .replace("Nms", "N s")
        .replace("Ns", "N s")
}

/// `[ 3/42] …`: a step's summary line, not a `[target] …` note.
fn is_step_line(l: &str) -> bool {
    l.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .is_some_and(|(c, _)| {
            c.split_once('/')
                .is_some_and(|(a, b)| a.trim().parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        })
}

/// Compares with `tests/data/<name>`; `DBDELTA_BLESS=1` writes it.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    if std::env::var_os("DBDELTA_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with DBDELTA_BLESS=1", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs (DBDELTA_BLESS=1 rewrites it)"
    );
}

#[test]
fn one_line_per_step_and_target_and_a_bottom_line() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let (stdout, stderr) = mock_run(&rd, &[]);
    // The step lines: counter, label, dop, target, rate, rounds; the last one of a step that
    // is not the last says the time left.
    let steps: Vec<&str> = stderr.lines().filter(|l| is_step_line(l)).collect();
    let shaped = shape(&steps.join("\n"), &rd);
    golden("console-steps.txt", &shaped);
    assert_eq!(steps.len(), 4, "2 steps x 2 targets: {stderr}");
    assert!(steps[0].starts_with("[1/2] point-query.pre"), "{stderr}");
    assert!(steps[1].ends_with(" left"), "{stderr}");
    // Target names are padded to the longest: the rate column lines up.
    let col = |l: &str| l.find(" qps").unwrap_or(0);
    assert!(steps.iter().all(|l| col(l) == col(steps[0])), "{stderr}");
    // A round retried because the host was busy is a warning, shown at any verbosity; other
    // per-round lines only with -v.
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("round ") && !l.contains("measured again in turns")),
        "no per-round lines by default: {stderr}"
    );
    // stdout: one aligned table, the verdict count, the bottom line, where the reports are.
    golden("console-stdout.txt", &shape(&stdout, &rd));
    let bottom = stdout
        .lines()
        .find(|l| l.starts_with("slow vs fast: "))
        .unwrap_or_else(|| panic!("no bottom line: {stdout}"));
    assert!(
        bottom.contains("geometric mean 0.") && bottom.contains("×"),
        "{bottom}"
    );
    assert!(
        stdout
            .trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("Reports: "),
        "{stdout}"
    );
    // The table is aligned: its last column (noise) is right-aligned, so every line of it
    // has the same width.
    let table: Vec<usize> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("dop=1"))
        .take_while(|l| !l.is_empty())
        .map(|l| l.chars().count())
        .collect();
    assert_eq!(table.len(), 3, "header and 2 steps: {stdout}");
    assert!(table.iter().all(|w| *w == table[0]), "{stdout}");
}

#[test]
fn verbose_adds_a_line_per_round() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let (_, stderr) = mock_run(&rd, &["--verbose"]);
    let rounds = stderr.lines().filter(|l| l.contains(" round ")).count();
    // 2 steps x 2 targets x 3 rounds.
    assert_eq!(rounds, 12, "{stderr}");
    assert!(
        stderr.contains("in turns") && stderr.contains("own window"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().filter(|l| is_step_line(l)).count(), 4);
}

#[test]
fn a_dry_run_plans_no_turns_for_mysql_targets() {
    // A dry run opens nothing: an empty directory stands for the servers' basedir.
    let base = tempfile::tempdir().unwrap();
    let spec = |name: &str| format!("{name}=mysql:{}", base.path().display());
    let out = common::succeed(
        dbdelta()
            .args(["run", "--dry-run", "--repeat", "3", "--steps", STEPS])
            .args(["-t", &spec("a"), "-t", &spec("b")]),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("one window per target in every round (a, b cannot take turns"),
        "{stdout}"
    );
    let point = stdout
        .lines()
        .find(|l| l.contains("point-query"))
        .unwrap_or_default();
    assert!(point.contains(" no "), "point-query in turns: {point}");
}

#[test]
fn dry_run_prints_the_plan_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--dry-run",
            "-t",
            "fast=mock",
            "-t",
            "slow=mock?latency=200us",
            "--steps",
            STEPS,
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!rd.exists(), "a dry run creates no run directory");
    for needle in [
        "fast (base)",
        "slow=mock?latency=200us",
        "point-query.pre",
        "update-index",
        "2 measured step(s), estimated",
        "turns of",
    ] {
        assert!(stdout.contains(needle), "{needle} missing:\n{stdout}");
    }
    // The default pair (two SQLite journal modes) plans the whole default suite.
    let out = dbdelta()
        .args(["run", "--dry-run", "--run-dir"])
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!rd.exists());
    assert!(
        stdout.contains("sqlite") && stdout.contains("estimated"),
        "{stdout}"
    );
}
