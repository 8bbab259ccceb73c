//! Bad input, table-driven: every case exits 2 with one message that names the flag (or
//! file) at fault, and starts nothing. Grow the table with every new refusal.

mod common;

use common::dbdelta;

/// (arguments after `run -t m=mock`, text the message must contain)
const CASES: &[(&[&str], &str)] = &[
    (&["--read-secs", "1e20"], "--read-secs"),
    (&["--write-secs", "1e30"], "--write-secs"),
    (&["--warmup-secs", "1e20"], "--warmup-secs"),
    (&["--insert-secs", "-1"], "--insert-secs"),
    (&["--read-secs", "NaN"], "--read-secs"),
    (&["--rate", "1e-300"], "--rate"),
    (&["--turn-ms", "-1"], "--turn-ms"),
    (&["--turn-ms", "nan"], "--turn-ms"),
    (&["--turn-ms", "0.01"], "--turn-ms"),
    (&["--turn-ms", "0.5"], "from 1 to"),
    (
        &["--read-secs", "0"],
        "--read-secs 0 is too short: give at least 0.05",
    ),
    (
        &["--write-secs", "0"],
        "--write-secs 0 is too short: give at least 0.05",
    ),
    (
        &["--insert-secs", "0"],
        "--insert-secs 0 is too short: give at least 0.05",
    ),
    (&["--read-secs", "0.001"], "--read-secs 0.001 is too short"),
    (&["--round-warmup-secs", "-1"], "--round-warmup-secs"),
    (&["--warmup-secs", "inf"], "--warmup-secs"),
    (&["--turn-ms", "1e9"], "--turn-ms"),
    (&["--rate", "0"], "--rate"),
    (&["--steps", ""], "--steps"),
    (&["--steps", "no-such-step"], "--steps"),
    (&["--threads", "0"], "--threads"),
    (&["--threads", "-1"], "--threads"),
    (&["--connections", "4", "--threads", "2"], "--threads"),
    (&["--active", "0"], "--active"),
    (&["--statement-timeout", "0"], "--statement-timeout"),
    (&["--connect-timeout", "1e30"], "--connect-timeout"),
    (&["--connect-rate", "nan"], "--connect-rate"),
    (&["--connections", "50000000"], "--connections 50000000"),
    (
        &["-t", "l=sqlite:?journal_mode=BANANA"],
        "journal_mode=BANANA",
    ),
    (&["-t", "l=sqlite:?synchronous=SOMETIMES"], "NORMAL"),
    (&["-t", "l=sqlite:?no_such_pragma=1"], "no_such_pragma"),
    (
        &["-t", "l=sqlite:/nonexistent/dir/x.db"],
        "/nonexistent/dir does not exist",
    ),
    (&["--device", "nosuchdev"], "--device nosuchdev"),
    (&["--threads", "19000"], "--threads 19000"),
    (&["--max-error-rate", "150%"], "--max-error-rate"),
    (&["--max-error-rate", "banana"], "--max-error-rate"),
    (&["--table-size", "1000000000000000000"], "--table-size"),
    (&["--settle-secs", "-1"], "--settle-secs"),
    (
        &["-t", "ch=clickhouse://127.0.0.1:8123"],
        "clickhouse is an analytic engine and cannot run the sysbench suite",
    ),
    (
        &["-t", "e=chdb", "--suite", "ycsb"],
        "chdb is an analytic engine and cannot run the ycsb suite",
    ),
    (&["-t", "ch=clickhouse"], "for embedded ClickHouse use chdb"),
    (&["-t", "e=chdb://127.0.0.1"], "chdb is embedded"),
    (&["--settle-secs", "1e30"], "--settle-secs"),
    (
        &["-t", "my=mysql:/usr?binlog_reset=maybe"],
        "binlog_reset=maybe",
    ),
    (
        &["-t", "l=sqlite:", "--table-size", "900000000000"],
        "--table-size 900000000000",
    ),
    // Builds from source: a bad recipe is refused before anything is built.
    (
        &["-t", "b=postgres-build:15?frame_pointer=on"],
        "did you mean frame_pointers",
    ),
    (&["-t", "b=postgres-build:15?lto=maybe"], "lto=maybe"),
    (&["-t", "b=postgres-build:15?cflags=-O3;id"], "cflags"),
    (
        &["-t", "b=postgres-build:15?pgo=nosuchsuite"],
        "pgo=nosuchsuite",
    ),
    (&["-t", "b=postgres-build:"], "needs a source"),
    (
        &["-t", "b=postgres-build:/nonexistent/src"],
        "/nonexistent/src",
    ),
    (&["-t", "b=postgres-build:7"], "major version"),
];

#[test]
fn every_bad_input_is_refused_naming_the_flag() {
    for (args, named) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let rd = dir.path().join("run");
        let out = dbdelta()
            .args(["run", "--no-store", "-t", "m=mock", "--run-dir"])
            .arg(&rd)
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?} must name {named}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!rd.join("results").exists(), "{args:?} started a run");
    }
}

#[test]
fn a_config_file_duration_out_of_range_names_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("run.toml");
    std::fs::write(&cfg, "read_secs = 1e30\n").unwrap();
    let out = dbdelta()
        .args(["run", "--no-store", "-t", "m=mock", "-c"])
        .arg(&cfg)
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-secs"));
}

#[test]
fn runs_started_together_get_their_own_directories() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
                .args([
                    "run",
                    "--quiet",
                    "--no-store",
                    "-t",
                    "m=mock",
                    "--steps",
                    "point-query",
                    "--read-secs",
                    "0.2",
                    "--warmup-secs",
                    "0",
                    "--table-size",
                    "100",
                    "--out",
                ])
                .arg(dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runs = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(runs, 4, "one directory per run");
}
