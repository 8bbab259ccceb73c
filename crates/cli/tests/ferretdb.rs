//! A managed FerretDB under the managed-server rules: a stalled FerretDB (SIGSTOP) ends the
//! step with a timeout, Ctrl-C leaves no ferretdb process behind, and `auth=scram` runs
//! YCSB over SCRAM-SHA-256 (FerretDB's new authentication).

mod common;

use common::{ferretdb_binary, processes_mentioning, read_json, spawn_dbdelta, step_results};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

/// A YCSB C run (reads only) on a managed FerretDB; `extra` adds target parameters.
fn start_run(rd: &Path, bin: &str, extra: &str, read_secs: &str) -> Child {
    spawn_dbdelta([
        "run".to_string(),
        "--quiet".into(),
        "--no-store".into(),
        "--suite".into(),
        "ycsb".into(),
        "--steps".into(),
        "workload-c".into(),
        "-t".into(),
        format!("fd=ferretdb:?binary={bin}{extra}"),
        "--table-size".into(),
        "500".into(),
        "--threads".into(),
        "2".into(),
        "--read-secs".into(),
        read_secs.into(),
        "--warmup-secs".into(),
        "0".into(),
        "--repeat".into(),
        "1".into(),
        "--statement-timeout".into(),
        "2".into(),
        "--run-dir".into(),
        rd.display().to_string(),
    ])
}

/// The ferretdb processes of the run in `rd` (its command line names the run's scratch
/// directory).
fn ferretdb_pids(rd: &Path) -> Vec<u32> {
    processes_mentioning(&rd.display().to_string())
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.starts_with("ferretdb"))
        })
        .collect()
}

/// Waits until the load's result exists (the measured step has begun) and a little longer.
fn wait_until_measuring(rd: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let loaded = std::fs::read_dir(rd.join("results/fd"))
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().contains("load"))
            })
            .unwrap_or(false);
        if loaded {
            std::thread::sleep(Duration::from_millis(1500));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the run never reached its first step");
}

fn signal_all(pids: &[u32], sig: i32) {
    for p in pids {
        // SAFETY: signalling processes of the server this test's dbdelta started.
        unsafe {
            libc::kill(*p as i32, sig);
        }
    }
}

/// The result file of `step`, once it exists.
fn wait_for_result(rd: &Path, step: &str, limit: Duration) -> Option<PathBuf> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(d) = std::fs::read_dir(rd.join("results/fd")) {
            for e in d.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name.contains(step) && name.ends_with(".json") {
                    return Some(e.path());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn a_stalled_ferretdb_ends_the_step_with_a_timeout() {
    let Some(bin) = ferretdb_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = start_run(&rd, &bin, "", "30");
    wait_until_measuring(&rd);
    let pids = ferretdb_pids(&rd);
    assert_eq!(pids.len(), 1, "one ferretdb process: {pids:?}");
    let frozen = SystemTime::now();
    signal_all(&pids, libc::SIGSTOP);
    let result = wait_for_result(&rd, "workload-c", Duration::from_secs(20));
    signal_all(&pids, libc::SIGCONT);
    let result = result.expect("the stalled step never ended");
    let took = std::fs::metadata(&result)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(frozen)
        .unwrap_or_default();
    let json = read_json(&result);
    let reason = json["status"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("timeout"),
        "the stalled step must fail with a timeout, got {}",
        json["status"]
    );
    // The timeout is 2 s; the rest is room for a loaded machine.
    assert!(
        took < Duration::from_secs(8),
        "ended {took:?} after the stall"
    );
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "a run with a failed step exits 3");
    assert!(
        ferretdb_pids(&rd).is_empty(),
        "FerretDB stopped with the run"
    );
}

#[test]
fn ctrl_c_leaves_no_ferretdb_process() {
    let Some(bin) = ferretdb_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = start_run(&rd, &bin, "", "60");
    wait_until_measuring(&rd);
    assert!(!ferretdb_pids(&rd).is_empty(), "FerretDB runs");
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let sent = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_secs(20),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(read_json(&rd.join("run.json"))["status"], "interrupted");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !ferretdb_pids(&rd).is_empty() {
        assert!(
            Instant::now() < deadline,
            "ferretdb outlived the interrupted run: {:?}",
            ferretdb_pids(&rd)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn scram_sha_256_against_ferretdb_new_auth() {
    let Some(bin) = ferretdb_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let status = start_run(&rd, &bin, "&auth=scram", "1").wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let r = step_results(&rd, "fd")
        .into_iter()
        .find(|r| r.step == "workload-c")
        .expect("workload-c ran");
    assert!(
        r.is_ok() && r.events > 0 && r.failed_events == 0,
        "{:?}",
        r.status
    );
    let manifest = read_json(&rd.join("run.json"));
    let settings = &manifest["targets"][0]["settings"];
    assert_eq!(settings["dbdelta.auth"], "SCRAM-SHA-256", "{settings}");
    let stored = std::fs::read_to_string(rd.join("run.json")).unwrap();
    assert!(!stored.contains("--setup-password"), "no password stored");
}
