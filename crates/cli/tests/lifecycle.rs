//! One lifecycle rule: nothing dbdelta started outlives it. For every managed server kind
//! (PostgreSQL 15, MariaDB, ClickHouse), SIGINT and SIGTERM during a query-set query that
//! would run for minutes — which no step boundary interrupts, so the interrupt deadline cuts
//! the run — end dbdelta with 130 or 143, the run marked interrupted, and no process of the
//! server left; the same during a load (MariaDB's sysbench load, a ClickHouse query-set
//! loader; PostgreSQL's load is in `interrupt.rs`). And `--statement-timeout` reaches
//! query-set queries: a PostgreSQL `pg_sleep(1000)`, a ClickHouse scan of `system.numbers`, a
//! MariaDB `SLEEP(1000)` or an endless SQLite recursive query with a 3 s limit ends in
//! seconds, recorded as timed out.

mod common;

use common::{read_json, spawn_dbdelta};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

const PG: &str = "pg=postgres:/usr/lib/postgresql/15/bin";
const MARIA: &str = "maria=mysql:/usr?innodb_buffer_pool_size=64M";
const CH: &str = "ch=clickhouse:/usr/sbin";

fn have(engine: &str) -> bool {
    match engine {
        "sqlite" => true,
        "postgres" => common::require(
            &["/usr/lib/postgresql/15/bin/postgres"],
            "apt-get install postgresql-15",
        ),
        "mysql" => common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server"),
        _ => common::require(
            &["/usr/sbin/clickhouse-server"],
            "apt-get install clickhouse-server",
        ),
    }
}

/// A query-set suite whose one query runs for minutes on every engine.
fn long_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("long");
    for sub in ["setup", "queries"] {
        std::fs::create_dir_all(suite.join(sub)).unwrap();
    }
    let files = [
        ("suite.toml", "name = \"long\"\nrepeat = 1\n"),
        // One core for the ClickHouse scan: the machine is shared.
        ("setup/01-threads.clickhouse.sql", "SET max_threads = 1\n"),
        ("setup/01-threads.sql", "SELECT 1\n"),
        ("queries/q1-long.postgres.sql", "SELECT pg_sleep(1000)\n"),
        ("queries/q1-long.mysql.sql", "SELECT SLEEP(1000)\n"),
        (
            "queries/q1-long.clickhouse.sql",
            "SELECT sum(number) FROM system.numbers\n",
        ),
        (
            "queries/q1-long.sqlite.sql",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c\n",
        ),
    ];
    for (rel, text) in files {
        std::fs::write(suite.join(rel), text).unwrap();
    }
    suite
}

/// `pid` and its descendants.
fn tree(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        all.push(p);
        let children =
            std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).unwrap_or_default();
        todo.extend(
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    all
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.get(s.rfind(')')? + 2..)?.to_string();
            rest.split_whitespace()
                .next()
                .map(|st| st != "Z" && st != "X")
        })
        .unwrap_or(false)
}

/// The server processes of run directory `rd` (whose command line names it, and their
/// children: PostgreSQL's backends), dbdelta itself left out.
fn server_processes(rd: &Path, dbdelta: u32) -> Vec<u32> {
    let mut out: Vec<u32> = common::processes_mentioning(&rd.display().to_string())
        .into_iter()
        .filter(|p| *p != dbdelta)
        .flat_map(tree)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn start(target: &str, suite: &Path, rd: &Path, timeout_secs: &str) -> Child {
    spawn_dbdelta([
        "run",
        "--quiet",
        "--no-store",
        "-t",
        target,
        "--suite",
        suite.to_str().unwrap(),
        "--statement-timeout",
        timeout_secs,
        "--run-dir",
        rd.to_str().unwrap(),
    ])
}

/// Waits until the query set's setup is done (its first result is kept) and the long query
/// has had a moment to start; returns the server's processes.
fn wait_for_query(rd: &Path, child: &mut Child) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !rd.join("queryset.json").is_file() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbdelta ended before the query set started"
        );
        assert!(Instant::now() < deadline, "the query set never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let servers = server_processes(rd, child.id());
    assert!(
        !servers.is_empty(),
        "no server process of the run was found"
    );
    servers
}

/// Sends `sig` to dbdelta and checks how it ends: within 20 s, with 128 + `sig`, the run
/// marked interrupted, and none of `servers` left (dbdelta stops them before it exits; a
/// moment is left for init to reap them).
fn signal_and_check(engine: &str, child: &mut Child, rd: &Path, servers: &[u32], sig: i32) {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    let sent = Instant::now();
    let status = wait_exit(child, Duration::from_secs(20), engine);
    assert_eq!(status.code(), Some(128 + sig), "{engine}");
    assert_eq!(
        read_json(&rd.join("run.json"))["status"],
        serde_json::json!("interrupted")
    );
    let until = Instant::now() + Duration::from_secs(3);
    while servers.iter().any(|p| alive(*p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = servers.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // SAFETY: cleaning up after a failed test: the server of our own run.
        unsafe {
            libc::kill(*p as i32, libc::SIGKILL);
        }
    }
    assert!(
        left.is_empty(),
        "{engine}: server processes outlived dbdelta ({} s after the signal): {left:?}",
        sent.elapsed().as_secs_f64()
    );
}

/// Waits for dbdelta to exit, at most `limit` (then kills it and fails).
fn wait_exit(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: dbdelta did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal_during_a_long_query(engine: &str, target: &str, sig: i32) {
    if !have(engine) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let suite = long_suite(dir.path());
    let rd = dir.path().join("run");
    let mut child = start(target, &suite, &rd, "600");
    let servers = wait_for_query(&rd, &mut child);
    signal_and_check(engine, &mut child, &rd, &servers, sig);
}

#[test]
fn sigint_during_a_long_postgres_query_leaves_no_server() {
    signal_during_a_long_query("postgres", PG, libc::SIGINT);
}

#[test]
fn sigterm_during_a_long_postgres_query_leaves_no_server() {
    signal_during_a_long_query("postgres", PG, libc::SIGTERM);
}

#[test]
fn sigint_during_a_long_mariadb_query_leaves_no_server() {
    signal_during_a_long_query("mysql", MARIA, libc::SIGINT);
}

#[test]
fn sigterm_during_a_long_mariadb_query_leaves_no_server() {
    signal_during_a_long_query("mysql", MARIA, libc::SIGTERM);
}

#[test]
fn sigint_during_a_long_clickhouse_query_leaves_no_server() {
    signal_during_a_long_query("clickhouse", CH, libc::SIGINT);
}

#[test]
fn sigterm_during_a_long_clickhouse_query_leaves_no_server() {
    signal_during_a_long_query("clickhouse", CH, libc::SIGTERM);
}

/// Waits until a server of the run is up and a little longer (it is loading), then sends
/// `sig` and checks the run ends as interrupted with no server process left.
fn signal_during_a_load(engine: &str, args: &[&str], sig: i32) {
    if !have(engine) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = spawn_dbdelta(
        ["run", "--quiet", "--no-store"]
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .chain(["--run-dir".to_string(), rd.display().to_string()]),
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    while server_processes(&rd, child.id()).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            let manifest = std::fs::read_to_string(rd.join("run.json")).unwrap_or_default();
            panic!("dbdelta ended early ({status}); run.json: {manifest}");
        }
        assert!(Instant::now() < deadline, "no server started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Started, then ready, then loading.
    std::thread::sleep(Duration::from_secs(4));
    let servers = server_processes(&rd, child.id());
    signal_and_check(engine, &mut child, &rd, &servers, sig);
}

#[test]
fn sigterm_during_a_mariadb_load_leaves_no_server() {
    signal_during_a_load(
        "mysql",
        &[
            "-t",
            MARIA,
            "--steps",
            "point-query",
            "--table-size",
            "20000000",
        ],
        libc::SIGTERM,
    );
}

#[test]
fn sigint_during_a_clickhouse_loader_leaves_no_server() {
    if !have("clickhouse") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("load");
    for sub in ["setup", "queries"] {
        std::fs::create_dir_all(suite.join(sub)).unwrap();
    }
    std::fs::write(
        suite.join("suite.toml"),
        "name = \"load\"\nrepeat = 1\n[loader]\nkind = \"zipf-corpus\"\ntable = \"docs\"\nafter = \"01-schema\"\ndocs = 5000000\nwords_per_doc = 100\nvocabulary = 50000\nexponent = 1.0\nseed = 1\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("setup/01-schema.sql"),
        "CREATE TABLE docs (id UInt64, body String) ENGINE = MergeTree ORDER BY id\n",
    )
    .unwrap();
    std::fs::write(suite.join("queries/q1.sql"), "SELECT count() FROM docs\n").unwrap();
    signal_during_a_load(
        "clickhouse",
        &["-t", CH, "--suite", suite.to_str().unwrap()],
        libc::SIGINT,
    );
}

/// A 3 s `--statement-timeout` ends the long query on the server: the run finishes within
/// seconds (exit 3, a failed query) and the query is recorded as timed out, with no time.
fn statement_timeout_cuts_the_long_query(engine: &str, target: &str) {
    if !have(engine) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let suite = long_suite(dir.path());
    let rd = dir.path().join("run");
    let mut child = start(target, &suite, &rd, "3");
    // Server start and setup included: far below the 1000 s the query asks for.
    let status = wait_exit(
        &mut child,
        Duration::from_secs(120),
        &format!("{engine}: the 3 s statement timeout"),
    );
    assert_eq!(status.code(), Some(3), "{engine}");
    let r = read_json(&rd.join("queryset.json"));
    let q = &r["targets"][0]["queries"][0];
    let error = q["error"].as_str().unwrap_or_default();
    assert!(error.contains("timed out"), "{engine}: {q}");
    assert!(
        q["runs_secs"].as_array().is_none_or(|a| a.is_empty()),
        "{q}"
    );
    // The query itself was cut at about 3 s: the whole run, server start included, is far
    // shorter than the 1000 s it asked for; the setup's times say how long the rest took.
    let setup: f64 = r["targets"][0]["setup"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["secs"].as_f64())
        .sum();
    assert!(setup < 30.0, "{r}");
}

#[test]
fn statement_timeout_cuts_a_postgres_pg_sleep() {
    statement_timeout_cuts_the_long_query("postgres", PG);
}

#[test]
fn statement_timeout_cuts_a_clickhouse_scan() {
    statement_timeout_cuts_the_long_query("clickhouse", CH);
}

#[test]
fn statement_timeout_cuts_an_endless_sqlite_query() {
    statement_timeout_cuts_the_long_query("sqlite", "lite=sqlite");
}

#[test]
fn statement_timeout_cuts_a_mariadb_sleep() {
    statement_timeout_cuts_the_long_query("mysql", MARIA);
}
