//! Query-set suites from the command line: the shipped full-text example on SQLite,
//! PostgreSQL and MariaDB (servers the run starts itself) with the cold/warm split and
//! agreeing checksums; a deliberately different result flagged; bad suite directories.

mod common;

use common::{dbdelta, read_json};
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn run(args: &[&str], rd: &Path) -> std::process::Output {
    dbdelta()
        .args(["run", "--quiet", "--no-store"])
        .args(args)
        .arg("--run-dir")
        .arg(rd)
        .output()
        .unwrap()
}

#[test]
fn fulltext_example_agrees_on_sqlite_postgres_and_mariadb() {
    if !common::require(
        &["/usr/lib/postgresql/15/bin/postgres", "/usr/sbin/mariadbd"],
        "apt-get install postgresql-15 mariadb-server",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let suite = example("fulltext");
    let out = run(
        &[
            "--suite",
            suite.to_str().unwrap(),
            "--target",
            "lite=sqlite",
            "--target",
            "pg=postgres:/usr/lib/postgresql/15/bin",
            "--target",
            "maria=mysql:/usr?innodb_buffer_pool_size=64M",
            "--repeat-query",
            "3",
        ],
        &rd,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = read_json(&rd.join("queryset.json"));
    let targets = r["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    let queries = r["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 7);
    for (qi, q) in queries.iter().enumerate() {
        let sums: Vec<&serde_json::Value> = targets
            .iter()
            .map(|t| {
                let runs = &t["queries"][qi];
                assert_eq!(runs["name"], q["name"]);
                // The cold run and two warm runs, each timed.
                let times = runs["runs_secs"].as_array().unwrap();
                assert_eq!(times.len(), 3, "{}: {runs}", t["name"]);
                assert!(times.iter().all(|s| s.as_f64().unwrap() > 0.0));
                assert!(runs["rows"].as_u64().unwrap() >= 1);
                &runs["checksum"]
            })
            .collect();
        if q["checksum"] == "none" {
            assert!(sums.iter().all(|s| s.is_null()), "{q}");
        } else {
            // The same answer from three engines: the tokenization and the query semantics
            // of the example match.
            assert!(sums[0].is_string(), "{q}");
            assert!(sums.iter().all(|s| *s == sums[0]), "{q}: {sums:?}");
        }
    }
    for t in targets {
        let docs = t["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["table"] == "docs")
            .unwrap();
        assert!(docs["bytes"]["data"].as_u64().unwrap() > 100_000, "{t}");
        let setup = t["setup"].as_array().unwrap();
        assert!(setup.iter().any(|s| s["name"] == "loader:docs"), "{t}");
        assert!(setup.iter().all(|s| s["secs"].as_f64().is_some()), "{t}");
    }
    // The full-text index size: InnoDB's auxiliary FTS tables and PostgreSQL's GIN index.
    let index_of = |name: &str| {
        targets.iter().find(|t| t["name"] == name).unwrap()["tables"][0]["bytes"]["index"]
            .as_u64()
            .unwrap()
    };
    assert!(index_of("pg") > 100_000 && index_of("maria") > 100_000);
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    for needle in [
        "Speed relative to the base",
        "cold ms",
        "Setup",
        "Table sizes",
    ] {
        assert!(report.contains(needle), "{needle} missing:\n{report}");
    }
    assert!(!report.contains("differs from"), "{report}");
    assert!(common::processes_mentioning(rd.to_str().unwrap()).is_empty());
}

#[test]
fn a_different_result_on_one_target_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    write(&suite, "suite.toml", "name = \"modes\"\nrepeat = 3\n");
    write(
        &suite,
        "setup/01.sql",
        "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2);",
    );
    write(&suite, "queries/count.sql", "SELECT count(*) FROM t");
    // The answer depends on the target's settings: a wrong answer on one of them.
    write(&suite, "queries/mode.sql", "PRAGMA journal_mode");
    let rd = dir.path().join("run");
    let out = run(
        &[
            "--suite",
            suite.to_str().unwrap(),
            "--target",
            "wal=sqlite?journal_mode=WAL",
            "--target",
            "del=sqlite?journal_mode=DELETE",
        ],
        &rd,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("query mode: del's result differs from wal's"),
        "{stderr}"
    );
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(report.contains("✗ mode: del's result differs"), "{report}");
    // The query whose answers agree is not flagged.
    assert!(!report.contains("✗ count"), "{report}");
    // `dbdelta report` renders the same run in other formats.
    let md = dbdelta()
        .args(["report", "--format", "md"])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(md.status.success());
    assert!(String::from_utf8_lossy(&md.stdout).contains("## Speed relative to the base"));
}

#[test]
fn bad_suite_directories_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    write(&suite, "suite.toml", "name = \"bad\"\n");
    write(
        &suite,
        "setup/01-bad.sql",
        "CREATE TABLE t (a int);\nINSERT INTO nope VALUES (1);\n",
    );
    let rd = dir.path().join("run");
    let args = |rd: &Path| {
        let mut c = dbdelta();
        c.args(["run", "--quiet", "--no-store", "--suite"])
            .arg(&suite)
            .args(["--target", "a=sqlite"])
            .arg("--run-dir")
            .arg(rd);
        c.output().unwrap()
    };
    // No queries/ directory.
    let out = args(&rd);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("queries: missing"), "{stderr}");
    // An SQL error in setup: the file and the statement's line.
    write(&suite, "queries/q1.sql", "SELECT 1");
    let out = args(&dir.path().join("run2"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("setup/01-bad.sql:2:"), "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    // Setup SQL on a server dbdelta did not start needs the owner's word.
    let out = dbdelta()
        .args(["run", "--suite"])
        .arg(&suite)
        .args(["--target", "ext=postgres://bench@127.0.0.1:5432/bench"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--target ext") && stderr.contains("--i-own-this-database"),
        "{stderr}"
    );
    // --repeat-query needs a query set, and at least one run.
    let out = dbdelta()
        .args(["run", "--suite", "sysbench", "--repeat-query", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat-query"));
    let out = dbdelta()
        .args(["run", "--suite"])
        .arg(&suite)
        .args(["--repeat-query", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat-query 0"));
}

#[test]
fn suites_show_lists_each_engine_s_file() {
    let out = dbdelta()
        .args(["suites", "show"])
        .arg(example("fulltext"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("02-index")
            && text.contains("mysql: setup/02-index.mysql.sql")
            && text.contains("clickhouse: -"),
        "{text}"
    );
    assert!(text.contains("zipf-corpus: 5000 documents"), "{text}");
}

#[test]
fn ctrl_c_during_a_long_query_exits_130_with_the_report_of_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    write(&suite, "suite.toml", "name = \"slow\"\n");
    write(
        &suite,
        "setup/01.sql",
        "CREATE TABLE t (a int); INSERT INTO t VALUES (1);",
    );
    write(&suite, "queries/a-fast.sql", "SELECT count(*) FROM t");
    write(
        &suite,
        "queries/b-slow.sql",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) SELECT count(*) FROM c",
    );
    let rd = dir.path().join("run");
    let mut child = common::spawn_dbdelta([
        "run".as_ref(),
        "--quiet".as_ref(),
        "--no-store".as_ref(),
        "--suite".as_ref(),
        suite.as_os_str(),
        "-t".as_ref(),
        "a=sqlite".as_ref(),
        "-t".as_ref(),
        "b=sqlite".as_ref(),
        "--run-dir".as_ref(),
        rd.as_os_str(),
    ]);
    // Wait until the fast query's results are written, then interrupt the slow one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let done = std::fs::read(rd.join("queryset.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["targets"][1]["queries"][0]["name"] == "a-fast");
        if done {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let asked = std::time::Instant::now();
    common::interrupt(&child);
    let status = child.wait().unwrap();
    assert!(asked.elapsed().as_secs_f64() < 3.0, "{:?}", asked.elapsed());
    assert_eq!(status.code(), Some(130));
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(report.contains("INTERRUPTED"), "{report}");
    assert!(report.contains("a-fast  a"), "{report}");
}

/// The ClickHouse column-types write-up: Debian's clickhouse-server 18.16 (managed) and
/// chDB 26.9 (embedded) run the shipped example and give the same answers; the catalog
/// shows LowCardinality and Enum8 smaller than String.
#[test]
fn clickhouse_types_example_on_the_server_and_chdb() {
    if !common::require(
        &["/usr/sbin/clickhouse-server"],
        "apt-get install clickhouse-server",
    ) {
        return;
    }
    let chdb = dbdelta_model::TargetSpec::parse("embedded=chdb").unwrap();
    let o = dbdelta_engine_clickhouse::ChdbOptions::from_spec(&chdb).unwrap();
    if !(o.lib.as_ref().is_some_and(|p| p.is_file()) && o.libpython.is_some()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "chDB missing under CI: pip install chdb-core into /opt/dbdelta-venv ({o:?})"
        );
        eprintln!("SKIPPED: chDB not found ({o:?})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let suite = example("clickhouse-types");
    let out = run(
        &[
            "--suite",
            suite.to_str().unwrap(),
            "-t",
            "server=clickhouse:/usr/sbin",
            "-t",
            "embedded=chdb",
            "--repeat-query",
            "2",
        ],
        &rd,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = read_json(&rd.join("queryset.json"));
    let targets = r["targets"].as_array().unwrap();
    let queries = r["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 24);
    for (qi, q) in queries.iter().enumerate() {
        let sums: Vec<&serde_json::Value> = targets
            .iter()
            .map(|t| &t["queries"][qi]["checksum"])
            .collect();
        assert!(sums[0].is_string() && sums[0] == sums[1], "{q}: {sums:?}");
    }
    for t in targets {
        let size = |table: &str| {
            t["tables"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["table"] == table)
                .unwrap()["bytes"]["data"]
                .as_u64()
                .unwrap()
        };
        let (string, lowcard, enum8) =
            (size("logs_string"), size("logs_lowcard"), size("logs_enum"));
        assert!(lowcard < string && enum8 < string, "{t}");
    }
}
