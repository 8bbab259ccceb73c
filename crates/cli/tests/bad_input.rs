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
    (
        &["-t", "r=rocksdb-build:9.9?pgo=sysbench", "--suite", "kv"],
        "PostgreSQL builds only",
    ),
    (
        &["-t", "r=rocksdb-build:nine", "--suite", "kv"],
        "not a RocksDB release",
    ),
    (
        &["-t", "r=rocksdb-build:9.9?lib=/x.so", "--suite", "kv"],
        "drop lib=",
    ),
    // Counts past their documented maximum (crates/cli/src/bounds.rs), each named.
    (&["--threads", "5000"], "--threads 5000 is too large"),
    (
        &["--connections", "2000000"],
        "--connections 2000000 is too large",
    ),
    (&["--tables", "5000"], "--tables 5000 is too large"),
    (
        &["--repeat", "4294967295"],
        "--repeat 4294967295 is too large",
    ),
    (
        &["--suite", "tpcc", "--warehouses", "4294967295"],
        "--warehouses 4294967295 is too large",
    ),
    (
        &["--suite", "tpcc", "--terminals", "4294967295"],
        "--terminals 4294967295 is too large",
    ),
    (
        &["--suite", "tpcb", "--scale-factor", "4294967295"],
        "--scale-factor 4294967295 is too large",
    ),
    (&["--max-tries", "4294967295"], "--max-tries 4294967295"),
    (
        &["--suite", "tpcb", "--transactions", "18446744073709551615"],
        "--transactions 18446744073709551615",
    ),
    (&["--latency-limit", "1e300"], "--latency-limit"),
    (
        &["--suite", "ibench", "--clients", "100000"],
        "--clients 100000 is too large",
    ),
    (
        &["--suite", "ibench", "--rows-load", "18446744073709551615"],
        "--rows-load 18446744073709551615",
    ),
    (
        &["--suite", "ibench", "--query-secs", "1e300"],
        "--query-secs",
    ),
    (
        &["-t", "n=mock?latency=99999999999s"],
        "latency=99999999999s",
    ),
    (
        &[
            "-t",
            "p=postgres://u@127.0.0.1:1/db?connect_timeout=18446744073709551615",
        ],
        "connect_timeout=18446744073709551615",
    ),
    (
        &[
            "--suite",
            "kv",
            "-t",
            "r=rocksdb?max_background_jobs=2147483647",
        ],
        "max_background_jobs=2147483647",
    ),
    (
        &["--suite", "kv", "-t", "r=rocksdb?cache_size=16383T"],
        "cache_size=16383T",
    ),
    (
        &["--suite", "kv", "-t", "r=rocksdb?block_size=4G"],
        "block_size=4G",
    ),
    // Found by bench/extremes.sh: librocksdb aborted the process in its first compaction.
    (
        &[
            "--suite",
            "kv",
            "-t",
            "r=rocksdb?max_bytes_for_level_base=1",
        ],
        "max_bytes_for_level_base=1",
    ),
    // Exit 0 only when something was measured as asked.
    (
        &["--connections", "4", "--active", "8"],
        "--active 8 is more than the 4 connections",
    ),
    (
        &["--warehouses", "2"],
        "--warehouses does not apply to the sysbench suite",
    ),
    (
        &["--suite", "tpcc", "--tables", "2"],
        "--tables does not apply to the tpcc suite",
    ),
    (
        &["--suite", "tpcb", "--table-size", "100"],
        "--table-size does not apply to the tpcb suite",
    ),
    (
        &["--suite", "ycsb", "--tpcc-mode", "spec"],
        "--tpcc-mode does not apply to the ycsb suite",
    ),
    (
        &["-t", "r=rocksdb"],
        "rocksdb is a key-value store and cannot run the sysbench suite",
    ),
    (
        &["--suite", "tpcb", "-t", "r=rocksdb"],
        "rocksdb is a key-value store and cannot run the tpcb suite",
    ),
    // Loads that cannot fit on this disk (53 GB free on the test machine; far less is
    // needed to refuse each of these), named with the estimate.
    (
        &[
            "-t",
            "l=sqlite",
            "--suite",
            "tpcc",
            "--warehouses",
            "10000",
            "--terminals",
            "1",
        ],
        "--warehouses 10000: target l needs about 1000.0 GB on disk (100 MB a warehouse)",
    ),
    (
        &[
            "-t",
            "l=sqlite",
            "--suite",
            "tpcb",
            "--scale-factor",
            "100000",
        ],
        "--scale-factor 100000: target l needs about 1600.0 GB",
    ),
    (
        &[
            "-t",
            "l=sqlite",
            "--suite",
            "ycsb",
            "--table-size",
            "100000000000",
        ],
        "--table-size 100000000000 (YCSB records): target l needs about 110000.0 GB",
    ),
    (
        &[
            "-t",
            "r=rocksdb",
            "--suite",
            "kv",
            "--table-size",
            "100000000000",
        ],
        "--table-size 100000000000 (db_bench keys): target r needs about 44000.0 GB",
    ),
    (
        &[
            "-t",
            "l=sqlite",
            "--suite",
            "ibench",
            "--rows-load",
            "1000000000000",
        ],
        "--rows-load 1000000000000 + --rows-write",
    ),
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

/// A status line's stderr and exit code.
fn refused(cmd: &mut assert_cmd::Command) -> (Option<i32>, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_rocksdb_or_chdb_path_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    for (engine, suite) in [("rocksdb", "kv"), ("chdb", "sysbench")] {
        let (code, err) = refused(
            dbdelta()
                .args(["run", "--no-store", "--suite", suite, "-t"])
                .arg(format!("x={engine}:{}", file.display()))
                .arg("--run-dir")
                .arg(dir.path().join("run")),
        );
        assert_eq!(code, Some(2), "{engine}: {err}");
        assert!(
            err.contains(&format!("{} is a file, not a directory", file.display())),
            "{engine}: {err}"
        );
        assert!(!err.contains("File exists"), "{err}");
    }
}

#[test]
fn a_store_in_a_missing_directory_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("typo").join("x.sqlite");
    let (code, err) = refused(dbdelta().args(["history", "--store"]).arg(&store));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--store") && err.contains("does not exist"),
        "{err}"
    );
    assert!(
        !dir.path().join("typo").exists(),
        "the typo became a directory"
    );
}

#[test]
fn a_report_of_a_run_without_results_says_nothing_was_measured() {
    // A run directory whose results are gone (as one cut before its first step ended).
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let (code, err) = refused(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "-t",
                "m=mock",
                "--steps",
                "point-query",
                "--read-secs",
                "0.1",
                "--warmup-secs",
                "0",
                "--table-size",
                "10",
                "--run-dir",
            ])
            .arg(&rd),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(rd.join("run.json").is_file(), "{err}");
    for e in std::fs::read_dir(rd.join("results")).into_iter().flatten() {
        let e = e.unwrap();
        if e.path().is_dir() {
            std::fs::remove_dir_all(e.path()).unwrap();
        }
    }
    let (code, err) = refused(dbdelta().arg("report").arg(&rd));
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("nothing measured") && err.contains("no step results"),
        "{err}"
    );
}

/// A query-set suite directory in `dir` with one query and, when given, `params`.
fn query_set(dir: &std::path::Path, suite_toml: &str) -> std::path::PathBuf {
    let qs = dir.join("qs");
    std::fs::create_dir_all(qs.join("queries")).unwrap();
    std::fs::write(qs.join("suite.toml"), suite_toml).unwrap();
    std::fs::write(qs.join("queries/q1.sql"), "SELECT 1").unwrap();
    qs
}

#[test]
fn query_set_mistakes_name_the_file_and_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let qs = query_set(dir.path(), "[params]\nrows = [1, 2]\n");
    let run = || {
        refused(
            dbdelta()
                .args(["run", "--no-store", "-t", "l=sqlite", "--suite"])
                .arg(&qs)
                .arg("--run-dir")
                .arg(dir.path().join("run")),
        )
    };
    let (code, err) = run();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("suite.toml:2") && err.contains("a array is not allowed"),
        "{err}"
    );
    assert!(!err.contains("untagged"), "{err}");
    // setup/ a symlink to itself: named, not skipped.
    std::fs::write(qs.join("suite.toml"), "name = \"t\"\n").unwrap();
    std::os::unix::fs::symlink(qs.join("setup"), qs.join("setup")).unwrap();
    let (code, err) = run();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("{}: cannot be read", qs.join("setup").display())),
        "{err}"
    ); // A loader whose documents cannot fit on this disk: refused with the estimate.
    std::fs::remove_file(qs.join("setup")).unwrap();
    std::fs::create_dir(qs.join("setup")).unwrap();
    std::fs::write(
        qs.join("setup/01-schema.sql"),
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)",
    )
    .unwrap();
    std::fs::write(
        qs.join("suite.toml"),
        "name = \"t\"\n[loader]\nkind = \"zipf-corpus\"\ntable = \"docs\"\ndocs = 10000000000\n",
    )
    .unwrap();
    let (code, err) = run();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("[loader] docs = 10000000000 × words_per_doc = 60")
            && err.contains("target l needs about 9200.0 GB"),
        "{err}"
    );
}

#[test]
fn a_refused_foreign_sqlite_database_is_left_as_it_was() {
    use dbdelta_engine::{Engine, OpenOptions};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("theirs.db");
    let target = format!("l=sqlite:{}", db.display());
    let spec = dbdelta_model::TargetSpec::parse(&target).unwrap();
    {
        let engine =
            dbdelta_engine_sqlite::SqliteEngine::open(&spec, dir.path(), &OpenOptions::default())
                .unwrap();
        let mut conn = engine.connect().unwrap();
        conn.query("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, precious TEXT)")
            .unwrap();
    }
    let (code, err) = refused(
        dbdelta()
            .args(["run", "--quiet", "--no-store", "-t", &target])
            .args([
                "--steps",
                "point-query",
                "--table-size",
                "10",
                "--read-secs",
                "0.1",
            ])
            .arg("--run-dir")
            .arg(dir.path().join("run")),
    );
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("sbtest1 already exists"), "{err}");
    let engine =
        dbdelta_engine_sqlite::SqliteEngine::open(&spec, dir.path(), &OpenOptions::default())
            .unwrap();
    let mut conn = engine.connect().unwrap();
    let ledger = conn
        .query_scalar("SELECT count(*) FROM sqlite_master WHERE name = 'dbdelta_objects'")
        .unwrap();
    assert_eq!(
        ledger.as_deref(),
        Some("0"),
        "dbdelta wrote its ledger into their database"
    );
}
