//! SIGINT and SIGTERM end a run within about a second in any phase — here during a load,
//! which no step boundary interrupts — with the run directory marked interrupted, the report
//! of what finished, exit 130 (SIGINT) or 143 (SIGTERM), and no managed server left behind.

mod common;

use common::{processes_mentioning, read_json, spawn_dbdelta};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The deadline is 0.6 s; the rest is room for writing the reports on a loaded machine.
const LIMIT: Duration = Duration::from_millis(2500);

fn run_args(target: &str, rows: &str, rd: &Path) -> Vec<String> {
    [
        "run",
        "--quiet",
        "-t",
        target,
        "--steps",
        "point-query",
        "--read-secs",
        "1",
        "--table-size",
        rows,
        "--no-store",
        "--run-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([rd.display().to_string()])
    .collect()
}

/// Waits until the run's manifest exists and `ready` holds, then a little longer. A run that
/// ends first fails the test with what its manifest says (a full disk ends a big load).
fn wait_for(rd: &Path, child: &mut Child, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(rd.join("run.json").is_file() && ready()) {
        if let Some(status) = child.try_wait().unwrap() {
            let manifest = std::fs::read_to_string(rd.join("run.json")).unwrap_or_default();
            panic!("dbdelta ended ({status}) before the load was under way; run.json: {manifest}");
        }
        assert!(Instant::now() < deadline, "the run never started loading");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1000));
}

fn signal(child: &Child, sig: i32) -> Instant {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    Instant::now()
}

fn assert_closed(rd: &Path, child: &mut Child, sent: Instant, code: i32) {
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    assert!(
        took < LIMIT,
        "the run took {took:?} to end after the signal"
    );
    assert_eq!(status.code(), Some(code));
    assert_eq!(
        read_json(&rd.join("run.json"))["status"],
        serde_json::json!("interrupted")
    );
    assert!(
        rd.join("report.txt").is_file(),
        "the report of what finished is written"
    );
}

#[test]
fn sigterm_during_a_load_ends_the_run_at_once_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = spawn_dbdelta(run_args("mock:", "100000000000", &rd));
    wait_for(&rd, &mut child, || true);
    let sent = signal(&child, libc::SIGTERM);
    assert_closed(&rd, &mut child, sent, 143);
}

#[test]
fn ctrl_c_during_a_postgres_load_leaves_no_server_behind() {
    if !common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let needle = rd.display().to_string();
    let mut child = spawn_dbdelta(run_args(
        "pg=postgres:/usr/lib/postgresql/15/bin",
        "20000000",
        &rd,
    ));
    // A backend shows the statement it runs in its process title: the load is under way.
    wait_for(&rd, &mut child, || {
        !processes_mentioning(" COPY").is_empty()
    });
    let sent = signal(&child, libc::SIGINT);
    assert_closed(&rd, &mut child, sent, 130);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !processes_mentioning(&needle).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the managed server outlived the interrupted run: {:?}",
            processes_mentioning(&needle)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
