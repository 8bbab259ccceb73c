//! TPC-B (pgbench's scripts) and TPC-C end to end: a cross-check against Debian's pgbench
//! on one server, the scripts and TPC-C on every engine with their invariants (balances,
//! consistency conditions 1–4; a corrupted district: `tpcc::check`'s tests), a known effect,
//! spec mode's waits, and bad input.

mod common;

use common::{dbdelta, require, run_ok, step_results, succeed};
use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_model::{StepResult, TargetSpec, ThroughputUnit};
use dbdelta_workload::tpcb::Balances;
use dbdelta_workload::tpcc::TXN_TYPES;
use std::path::Path;
use std::process::Command;

const PG: &str = "/usr/lib/postgresql/15/bin";

/// The measuring tests of this file run one at a time: each starts servers and compares
/// throughputs, which two of them side by side on two cores would distort.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
const MARIADB: &str = "/usr/sbin/mariadbd";

fn measured<'a>(all: &'a [StepResult], step: &str) -> &'a StepResult {
    all.iter()
        .find(|r| r.step == step)
        .unwrap_or_else(|| panic!("no {step} result"))
}

/// pgbench and dbdelta run the same number of tpcb-like transactions on one PostgreSQL 15;
/// afterwards each leaves branches = tellers = accounts = history sums and one history row
/// per transaction.
#[test]
fn pgbench_cross_check_same_count_and_balances() {
    let _one = one_at_a_time();
    if !require(
        &[&format!("{PG}/initdb"), "/usr/bin/pgbench"],
        "apt-get install postgresql-15 postgresql-contrib",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!("pg=postgres:{PG}")).unwrap();
    let server = dbdelta_engine_postgres::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let addr = server.address();
    let (host, port) = addr.rsplit_once(':').unwrap();
    let pgbench = |args: &[&str]| {
        let out = Command::new("/usr/bin/pgbench")
            .args(["-h", host, "-p", port, "-U", "dbdelta"])
            .args(args)
            .arg("dbdelta")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pgbench {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    pgbench(&["-i", "-q", "-s", "1"]);
    let out = pgbench(&["-t", "50", "-c", "2", "-j", "2", "-M", "prepared"]);
    assert!(
        out.contains("number of transactions actually processed: 100/100"),
        "{out}"
    );
    let mut conn = server.connect().unwrap();
    let theirs = Balances::read(&mut *conn).unwrap();
    assert!(theirs.agree(), "pgbench: {theirs:?}");
    assert_eq!(theirs.history_rows, 100);

    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "--suite",
                "tpcb",
                "--steps",
                "tpcb-like",
            ])
            .args(["-t", &format!("ext=postgres://dbdelta@{addr}/dbdelta")])
            .args([
                "--scale-factor",
                "1",
                "--transactions",
                "50",
                "--threads",
                "2",
            ])
            .args(["--write-secs", "120", "--i-own-this-database"])
            .arg("--run-dir")
            .arg(&rd),
    );
    let all = step_results(&rd, "ext");
    let r = measured(&all, "tpcb-like");
    assert!(r.is_ok(), "{:?}", r.status);
    assert_eq!(r.events, 100, "-t 50 on two clients");
    assert_eq!(r.throughput.unit, ThroughputUnit::Tps);
    let ours = Balances::read(&mut *conn).unwrap();
    assert!(ours.agree(), "dbdelta: {ours:?}");
    assert_eq!(ours.history_rows, 100);
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("transaction type: <builtin: TPC-B (sort of)>"),
        "{text}"
    );
    assert!(
        text.contains("number of transactions actually processed: 100"),
        "{text}"
    );
}

/// The three scripts on SQLite and MariaDB with pgbench's fixed count, a latency limit and
/// re-runs allowed: every count is exact and the rules are recorded.
#[test]
fn scripts_on_sqlite_and_mariadb() {
    let _one = one_at_a_time();
    let mut targets = vec!["lite=sqlite:"];
    if require(&[MARIADB], "apt-get install mariadb-server") {
        targets.push("maria=mysql:/usr");
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut cmd = dbdelta();
    cmd.args(["run", "--quiet", "--no-store", "--suite", "tpcb"])
        .args([
            "--scale-factor",
            "1",
            "--transactions",
            "40",
            "--threads",
            "2",
        ])
        .args(["--latency-limit", "1000", "--max-tries", "3"])
        .args(["--write-secs", "120", "--read-secs", "120"])
        // One round: the counts below are per window (the tpcb preset's rounds are
        // tested in suite_rounds.rs).
        .args(["--repeat", "1"]);
    for t in &targets {
        cmd.args(["-t", t]);
    }
    succeed(cmd.arg("--run-dir").arg(&rd));
    for t in &targets {
        let name = t.split('=').next().unwrap();
        let all = step_results(&rd, name);
        assert_eq!(measured(&all, "load").rows_affected, 1 + 10 + 100_000);
        for step in ["tpcb-like", "simple-update", "select-only"] {
            let r = measured(&all, step);
            assert!(r.is_ok(), "{name} {step}: {:?}", r.status);
            assert_eq!(r.events, 80, "{name} {step}");
            let txn = r.txn.as_ref().expect("pgbench's rules recorded");
            assert_eq!(txn.max_tries, 3);
            assert_eq!(txn.latency_limit_ms, Some(1000.0));
            assert!(txn.poisson, "pgbench's scripts pace with Poisson arrivals");
            let per_event = match step {
                "tpcb-like" => 7,
                "simple-update" => 5,
                _ => 1,
            };
            assert_eq!(r.queries, 80 * per_event, "{name} {step}");
        }
    }
}

/// Paced tpcb-like: Poisson arrivals at the asked rate, latency from the scheduled start
/// and the schedule lag apart, as pgbench's -R.
#[test]
fn paced_tpcb_like_reports_schedule_lag() {
    let _one = one_at_a_time();
    let (_dir, rd) = run_ok(&[
        "--suite",
        "tpcb",
        "--steps",
        "tpcb-like",
        // No fsync: under a build beside, one commit's fsync took up to 1 s and 200/s was
        // not sustained; this test is about the schedule, not the disk.
        "-t",
        "lite=sqlite?synchronous=OFF",
        "--threads",
        "2",
        "--rate",
        "200",
        "--write-secs",
        "3",
        "--warmup-secs",
        "0.5",
        "--latency-limit",
        "500",
    ]);
    let all = step_results(&rd, "lite");
    let r = measured(&all, "tpcb-like");
    assert!(r.is_ok(), "{:?}", r.status);
    let p = r.pacing.as_ref().expect("paced");
    assert!(p.sustained, "{p:?}");
    // Poisson counts over 3 s at 200/s: 600 ± 5 sigma (about 120).
    assert!((480..=720).contains(&r.events), "{} events", r.events);
    assert!(p.lag.count > 0);
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("rate limit schedule lag: avg"), "{text}");
    // pgbench's per-interval aggregates: one line per second with its own percentiles.
    assert!(text.contains("per second: t\ttps\tp50-ms"), "{text}");
    assert!(r
        .intervals
        .iter()
        .all(|i| i.p50_us <= i.p99_us && i.p99_us <= i.max_us));
    assert!(text.contains("latency limit"), "{text}");
}

/// TPC-C on every engine: the mix from the deck, NOPM from the districts' counters, and
/// consistency conditions 1–4 holding after the run.
#[test]
fn tpcc_is_consistent_on_every_engine() {
    let _one = one_at_a_time();
    let mut targets = vec!["lite=sqlite:".to_string()];
    if require(&[&format!("{PG}/initdb")], "apt-get install postgresql-15") {
        targets.push(format!("pg=postgres:{PG}"));
    }
    if require(&[MARIADB], "apt-get install mariadb-server") {
        targets.push("maria=mysql:/usr".into());
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut cmd = dbdelta();
    cmd.args(["run", "--quiet", "--no-store", "--suite", "tpcc"])
        .args(["--warehouses", "2", "--terminals", "4", "--all-warehouses"])
        .args(["--write-secs", "4", "--warmup-secs", "0.5"])
        // One round per target: the checks below read one window (rounds: suite_rounds.rs).
        .args(["--repeat", "1"]);
    for t in &targets {
        cmd.args(["-t", t]);
    }
    succeed(cmd.arg("--run-dir").arg(&rd));
    for t in &targets {
        let name = t.split('=').next().unwrap();
        let all = step_results(&rd, name);
        let r = measured(&all, "tpcc");
        assert!(r.is_ok(), "{name}: {:?}", r.status);
        assert_eq!(r.threads, 4, "{name}: the terminals");
        assert_eq!(r.throughput.unit, ThroughputUnit::Nopm);
        assert!(r.throughput.value > 0.0);
        for n in 1..=4 {
            assert_eq!(
                r.workload_stats.get(&format!("consistency.{n}")),
                Some(&0.0),
                "{name}: condition {n}"
            );
        }
        let new_orders = r.workload_stats["new-orders"];
        let counted: u64 = r
            .op_types
            .iter()
            .filter(|t| t.name == "new-order")
            .map(|t| t.count)
            .sum();
        // The counters move with the committed New-Orders; the window's edges may cut a
        // few in flight: one per terminal at each edge while the probe reads (it reads
        // first at the window's start). Counting the 1 % rolled-back New-Orders as committed
        // would be off by about 1 % plus the edges; missing a district's counter, by half.
        // PostgreSQL's and MariaDB's probe reads a snapshot at once (1 of 1,558 and 1 of
        // 1,464 with two CPU hogs beside); SQLite's queues behind the writers' commits
        // (rollback journal), whose fsyncs under two CPU hogs took long enough for 13 of 321
        // to commit meanwhile: its bound is looser, the others check the 1 %.
        let share = if name == "lite" { 0.05 } else { 0.0075 };
        let slack = 8.0_f64.max(counted as f64 * share);
        // The districts count from the probe's first reading, which a busy host delays
        // (the result says by how much): the client's New-Orders of that part of the
        // window do not count. At the rate of the whole window that leaves `expected`; but
        // what delayed the reading (SQLite's commits, a stalled host) may have held the
        // terminals too, so the districts may count up to all of the client's: beside two
        // hogs, 74 of 75 after a reading 1.5 s late in a 4 s window.
        let lag = r.workload_stats["new-orders.start_lag_ms"] / 1000.0;
        let expected = counted as f64 * (1.0 - lag / r.seconds).clamp(0.5, 1.0);
        let upper = counted as f64 + slack;
        eprintln!(
            "{name}: {new_orders} new orders by the districts, {counted} by the client, \
             first reading {:.1} ms late",
            lag * 1000.0
        );
        assert!(
            new_orders >= expected - slack && new_orders <= upper,
            "{name}: {new_orders} new orders counted by the districts, {counted} by the \
             client ({expected:.0} after the first reading, {:.1} ms late)",
            lag * 1000.0
        );
        let total: u64 = r.op_types.iter().map(|t| t.count).sum();
        assert_eq!(total, r.events);
        for t in &r.op_types {
            assert!(TXN_TYPES.contains(&t.name.as_str()), "{}", t.name);
        }
        let payment = r
            .op_types
            .iter()
            .find(|t| t.name == "payment")
            .unwrap()
            .count;
        let share = payment as f64 / total as f64;
        assert!(
            (0.33..=0.53).contains(&share),
            "{name}: payment share {share}"
        );
    }
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("consistency condition 4 holds"), "{text}");
    assert!(text.contains("NOPM = "), "{text}");
    // --cost: new orders per hour per dollar, from the per-minute NOPM.
    let out = succeed(
        dbdelta()
            .args(["report", "--format", "md", "--cost", "lite=2"])
            .arg(&rd),
    );
    let md = String::from_utf8_lossy(&out.stdout);
    let nopm = measured(&step_results(&rd, "lite"), "tpcc")
        .throughput
        .value;
    let row = md
        .lines()
        .skip_while(|l| !l.contains("per hour per dollar"))
        .find(|l| l.starts_with("| tpcc |"))
        .unwrap_or_else(|| panic!("{md}"));
    let per_dollar: f64 = row.split('|').nth(2).unwrap().trim().parse().unwrap();
    assert!(
        (per_dollar - nopm * 60.0 / 2.0).abs() <= 1.0 + 1e-6 * per_dollar,
        "{row} vs NOPM {nopm}"
    );
}

/// Known effect: without waiting for the WAL flush at commit, tpcb-like runs much faster.
/// How much faster depends on the disk's fsync: 2.1× on one VM (4940 vs 10499 tps), 1.36×
/// on a fresh one whose fsync was quicker (3640 vs 4945), which failed a 1.5× bound. So
/// both targets make the flush cost the same on every disk: `commit_delay=10000` with
/// `commit_siblings=0` makes each commit that flushes WAL wait 10 ms first (several
/// commits then share one flush), and a commit under synchronous_commit=off does not flush,
/// so does not wait. The off case is then many times faster on any disk; 1.5× leaves room
/// for a loaded machine and the debug binary's own CPU.
#[test]
fn synchronous_commit_off_speeds_up_tpcb_like() {
    let _one = one_at_a_time();
    if !require(&[&format!("{PG}/initdb")], "apt-get install postgresql-15") {
        return;
    }
    let (_dir, rd) = run_ok(&[
        "--suite",
        "tpcb",
        "--steps",
        "tpcb-like",
        "-t",
        &format!("on=postgres:{PG}?fsync=on&commit_delay=10000&commit_siblings=0"),
        "-t",
        &format!(
            "off=postgres:{PG}?fsync=on&commit_delay=10000&commit_siblings=0&synchronous_commit=off"
        ),
        "--threads",
        "4",
        "--scale-factor",
        "16",
        "--write-secs",
        "3",
        "--warmup-secs",
        "0.5",
        "--repeat",
        "1",
    ]);
    let tps = |t: &str| measured(&step_results(&rd, t), "tpcb-like").tps;
    let (on, off) = (tps("on"), tps("off"));
    assert!(
        off >= 1.5 * on,
        "synchronous_commit=off {off:.0} tps vs on {on:.0} tps"
    );
}

fn refused(args: &[&str], needle: &str) {
    let out = dbdelta()
        .args(["run", "--quiet", "--no-store", "-t", "lite=sqlite:"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
}

#[test]
fn bad_tpc_input_is_refused_with_the_flag_named() {
    refused(
        &["--suite", "tpcb", "--scale-factor", "0"],
        "--scale-factor 0",
    );
    refused(&["--suite", "tpcc", "--warehouses", "0"], "--warehouses 0");
    refused(&["--suite", "tpcc", "--tpcc-mode", "fast"], "--tpcc-mode");
    refused(&["--suite", "tpcc", "--terminals", "0"], "--terminals 0");
    refused(&["--suite", "tpcb", "--max-tries", "0"], "--max-tries 0");
    refused(
        &["--suite", "tpcb", "--latency-limit", "-3"],
        "--latency-limit",
    );
    refused(
        &["--suite", "tpcb", "--transactions", "0"],
        "--transactions 0",
    );
    assert!(!Path::new("dbdelta-runs").join("never").exists());
}

/// Spec mode waits the keying and think times: a terminal's first transaction comes after
/// at least 2 s of keying and its next one at least 2 s later, so a 4 s window holds at most
/// two per terminal (throughput mode runs thousands). Seconds without a completed
/// transaction are expected there, not a stall. With 20 terminals the chance that every
/// first card is a New-Order (18 s of keying) and nothing completes is 0.45^20.
#[test]
fn spec_mode_keys_and_thinks() {
    let _one = one_at_a_time();
    let (_dir, rd) = run_ok(&[
        "--suite",
        "tpcc",
        "-t",
        "lite=sqlite:",
        "--tpcc-mode",
        "spec",
        "--terminals",
        "20",
        "--write-secs",
        "4",
        "--warmup-secs",
        "0",
    ]);
    let all = step_results(&rd, "lite");
    let r = measured(&all, "tpcc");
    assert!(r.is_ok(), "{:?}", r.status);
    assert!(
        (1..=40).contains(&r.events),
        "{} transactions in 4 s from 20 terminals",
        r.events
    );
    assert_eq!(r.workload_stats.get("consistency.2"), Some(&0.0));
}

/// A consistency condition broken while TPC-C runs (a warehouse's year-to-date raised
/// behind the workload's back; every Payment then adds to both sides, so the offset stays)
/// fails the step with a VIOLATED line and makes dbdelta exit 1.
#[test]
fn a_violated_condition_fails_the_step_and_exits_1() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let rd = dir.path().join("run");
    let target = format!("lite=sqlite:{}?journal_mode=WAL", db.display());
    let child = common::spawn_dbdelta([
        "run",
        "--quiet",
        "--no-store",
        "--suite",
        "tpcc",
        "-t",
        &target,
        "--terminals",
        "2",
        "--write-secs",
        "4",
        "--warmup-secs",
        "0",
        "--run-dir",
        rd.to_str().unwrap(),
    ]);
    // The load's result file appears when the load is done and the step starts.
    common::wait_for_files(
        &rd.join("results/lite"),
        1,
        std::time::Duration::from_secs(120),
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let spec = TargetSpec::parse(&target).unwrap();
    let engine =
        dbdelta_engine_sqlite::SqliteEngine::open(&spec, dir.path(), &OpenOptions::default())
            .unwrap();
    let mut conn = engine.connect().unwrap();
    conn.query("UPDATE warehouse SET w_ytd = w_ytd + 1")
        .unwrap();
    drop(conn);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a violation exits 1");
    let r = measured(&step_results(&rd, "lite"), "tpcc").clone();
    assert!(!r.is_ok(), "{:?}", r.status);
    assert_eq!(r.workload_stats.get("consistency.1"), Some(&1.0));
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("consistency condition 1 VIOLATED (1)"),
        "{text}"
    );
}

/// `--max-tries`: under SERIALIZABLE, tpcb-like's transactions on one branch conflict; each
/// is rolled back and re-run with the same inputs, the re-runs counted, and one whose tries
/// run out is a failed transaction counted under its SQLSTATE, as pgbench reports them.
#[test]
fn serialization_failures_are_retried_and_counted() {
    let _one = one_at_a_time();
    if !require(&[&format!("{PG}/initdb")], "apt-get install postgresql-15") {
        return;
    }
    let (_dir, rd) = run_ok(&[
        "--suite",
        "tpcb",
        "--steps",
        "tpcb-like",
        "-t",
        &format!("ser=postgres:{PG}?default_transaction_isolation=serializable"),
        "--threads",
        "4",
        "--max-tries",
        "10",
        // How many transactions run out of tries depends on timing: 60.0 % did once on a
        // loaded machine. The test is about retrying and counting, not about a rate.
        "--max-error-rate",
        "0.99",
        "--write-secs",
        "3",
        "--warmup-secs",
        "0",
    ]);
    let r = measured(&step_results(&rd, "ser"), "tpcb-like").clone();
    assert!(r.is_ok(), "{:?}", r.status);
    let txn = r.txn.expect("pgbench's counts");
    assert!(txn.retried > 0 && txn.retries >= txn.retried, "{txn:?}");
    assert_eq!(r.errors, 0, "no error is ignored under pgbench's rules");
    let by_code: u64 = r.error_codes.values().sum();
    assert_eq!(by_code, r.failed_events, "{:?}", r.error_codes);
    assert!(
        r.error_codes
            .keys()
            .all(|k| k == "SQLSTATE 40001" || k == "SQLSTATE 40P01"),
        "{:?}",
        r.error_codes
    );
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("number of transactions retried: "), "{text}");
    assert!(text.contains("total number of retries: "), "{text}");
}
