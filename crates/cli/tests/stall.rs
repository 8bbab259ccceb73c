//! A server that stops answering (SIGSTOP) during a step: the step ends with a timeout
//! error shortly after `--statement-timeout`, the run goes on with the next step, and a
//! Ctrl-C while every read is blocked ends the run at once with what was measured.

mod common;

use common::{interrupt, processes_mentioning, read_json, spawn_dbdelta};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

const BIN: &str = "/usr/lib/postgresql/15/bin";

fn require_pg() -> bool {
    common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    )
}

/// The managed server's processes (postmaster and backends) of the run in `rd`.
fn server_pids(rd: &Path) -> Vec<u32> {
    processes_mentioning(&rd.display().to_string())
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.starts_with("postgres"))
        })
        .flat_map(|p| {
            let mut all = vec![p];
            all.extend(children_of(p));
            all
        })
        .collect()
}

fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().nth(1))
                    .and_then(|pp| pp.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

fn signal_all(pids: &[u32], sig: i32) {
    for p in pids {
        // SAFETY: signalling processes of the server this test's dbdelta started.
        unsafe {
            libc::kill(*p as i32, sig);
        }
    }
}

/// Waits until the result file of `label` (at 1 thread) exists; returns its path.
fn wait_for_result(rd: &Path, label: &str, limit: Duration) -> Option<PathBuf> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(d) = std::fs::read_dir(rd.join("results/pg")) {
            for e in d.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name.contains(label) && name.ends_with(".json") {
                    return Some(e.path());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn modified(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

fn start_run(rd: &Path, read_secs: &str) -> std::process::Child {
    spawn_dbdelta([
        "run".to_string(),
        "--quiet".into(),
        "-t".into(),
        format!("pg=postgres:{BIN}"),
        "--steps".into(),
        "point-query,update-index".into(),
        "--read-secs".into(),
        read_secs.into(),
        "--write-secs".into(),
        "1".into(),
        "--warmup-secs".into(),
        "0".into(),
        "--table-size".into(),
        "1000".into(),
        "--statement-timeout".into(),
        "2".into(),
        "--no-store".into(),
        "--run-dir".into(),
        rd.display().to_string(),
    ])
}

/// Waits until the step `point-query` runs: the load's and settle's results exist and the
/// server has backends of the step's connections.
fn wait_until_measuring(rd: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let settled = std::fs::read_dir(rd.join("results/pg"))
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().contains("settle"))
            })
            .unwrap_or(false);
        if settled {
            std::thread::sleep(Duration::from_millis(1500));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the run never reached its first step");
}

/// Starts a run and freezes its server (SIGSTOP) during the first step; returns the run,
/// the frozen processes and when they froze.
fn freeze_during_first_step(rd: &Path) -> (std::process::Child, Vec<u32>, SystemTime) {
    let child = start_run(rd, "30");
    wait_until_measuring(rd);
    let pids = server_pids(rd);
    assert!(!pids.is_empty(), "no server processes found");
    let frozen = SystemTime::now();
    signal_all(&pids, libc::SIGSTOP);
    (child, pids, frozen)
}

#[test]
fn a_stalled_server_fails_the_step_with_a_timeout_and_the_run_goes_on() {
    if !require_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let (mut child, pids, frozen) = freeze_during_first_step(&rd);
    let result = wait_for_result(&rd, "point-query_range", Duration::from_secs(20));
    signal_all(&pids, libc::SIGCONT);
    let result = result.expect("the stalled step never ended");
    let took = modified(&result).duration_since(frozen).unwrap_or_default();
    let json = read_json(&result);
    let reason = json["status"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("timeout"),
        "the stalled step must fail with a timeout, got {}",
        json["status"]
    );
    assert!(
        took < Duration::from_secs(2 + 2 + 1),
        "the step ended {took:?} after the stall; the timeout is 2 s"
    );
    let status = child.wait().unwrap();
    let next = wait_for_result(&rd, "update-index_range", Duration::from_secs(1))
        .expect("the next step ran");
    assert_eq!(
        read_json(&next)["status"]["state"],
        serde_json::json!("ok"),
        "the next step runs normally once the server is back"
    );
    assert_eq!(status.code(), Some(3), "a run with a failed step exits 3");
}

#[test]
fn ctrl_c_while_every_read_is_blocked_ends_the_run_at_once() {
    if !require_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let (mut child, pids, _) = freeze_during_first_step(&rd);
    std::thread::sleep(Duration::from_millis(500));
    let pressed = SystemTime::now();
    interrupt(&child);
    let result = wait_for_result(&rd, "point-query_range", Duration::from_secs(10));
    let status = child.wait().unwrap();
    signal_all(&pids, libc::SIGCONT);
    let result = result.expect("the interrupted step was not kept");
    let took = modified(&result)
        .duration_since(pressed)
        .unwrap_or_default();
    assert!(
        took < Duration::from_millis(1500),
        "the step ended {took:?} after Ctrl-C"
    );
    assert_eq!(
        read_json(&result)["status"]["state"],
        serde_json::json!("interrupted")
    );
    assert_eq!(status.code(), Some(130));
    assert!(
        rd.join("report.txt").is_file(),
        "the report of what finished is written"
    );
}

#[test]
fn a_statement_past_the_timeout_is_cancelled_on_the_server() {
    use dbdelta_engine::{Engine, OpenOptions};
    if !require_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = start_run(&rd, "30");
    wait_until_measuring(&rd);
    // Lock the table from outside: every point select of the step now waits, the server
    // stays alive, and dbdelta's CancelRequest is what ends the wait.
    let settings = read_json(&rd.join("targets/pg/settings.json"));
    let addr = settings["dbdelta.address"].as_str().unwrap().to_string();
    let spec = dbdelta_model::TargetSpec::parse(&format!("lock=postgres://dbdelta@{addr}/dbdelta"))
        .unwrap();
    let engine = dbdelta_engine_postgres::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let mut conn = engine.connect().unwrap();
    conn.query("BEGIN").unwrap();
    let locked = SystemTime::now();
    conn.query("LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let result = wait_for_result(&rd, "point-query_range", Duration::from_secs(20));
    // The run may already have moved on and stopped its server.
    let _ = conn.query("COMMIT");
    drop(conn);
    let result = result.expect("the blocked step never ended");
    let took = modified(&result).duration_since(locked).unwrap_or_default();
    let json = read_json(&result);
    let reason = json["status"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("cancelled on the server"),
        "the waiting statement is cancelled by the server, got {}",
        json["status"]
    );
    assert!(
        took < Duration::from_secs(2 + 2),
        "the step ended {took:?} after the lock; the timeout is 2 s"
    );
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

#[test]
fn a_dropped_connection_reconnects_and_the_step_keeps_its_measurement() {
    use dbdelta_engine::{Engine, OpenOptions};
    if !require_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = start_run(&rd, "6");
    wait_until_measuring(&rd);
    let settings = read_json(&rd.join("targets/pg/settings.json"));
    let addr = settings["dbdelta.address"].as_str().unwrap().to_string();
    let spec = dbdelta_model::TargetSpec::parse(&format!("kill=postgres://dbdelta@{addr}/dbdelta"))
        .unwrap();
    let engine = dbdelta_engine_postgres::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let mut conn = engine.connect().unwrap();
    // Rows are counted, never decoded: that the step's backend was among them shows in
    // its failed event below.
    conn.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = 'dbdelta' AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    )
    .unwrap();
    drop(conn);
    let result = wait_for_result(&rd, "point-query_range", Duration::from_secs(30))
        .expect("the step never ended");
    let status = child.wait().unwrap();
    let json = read_json(&result);
    assert_eq!(json["status"]["state"], "ok", "{}", json["status"]);
    assert!(json["failed_events"].as_u64().unwrap_or(0) >= 1, "{json}");
    assert!(
        json["error_codes"]["SQLSTATE 57P01"].as_u64().unwrap_or(0) >= 1,
        "{}",
        json["error_codes"]
    );
    assert!(json["qps"].as_f64().unwrap() > 0.0);
    assert_eq!(status.code(), Some(0));
}
