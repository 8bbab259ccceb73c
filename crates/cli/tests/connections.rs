//! Many connections from one dbdelta process: 10,000 to a managed MariaDB with the thread
//! pool, a few of them active, each costing the client a few KB; and a connection count
//! the machine cannot hold is refused before anything starts.

mod common;

use common::{dbdelta, read_json};

fn require_mariadb() -> bool {
    common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server")
}

#[test]
fn ten_thousand_connections_to_mariadb_from_one_process() {
    if !require_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "my=mysql:/usr?thread_handling=pool-of-threads&max_connections=10100",
            "--steps",
            "point-query",
            "--connections",
            "10000",
            "--active",
            "8",
            "--connect-rate",
            "5000",
            "--read-secs",
            "2",
            "--warmup-secs",
            "0",
            "--table-size",
            "1000",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read_dir(rd.join("results/my"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .contains("point-query_range=100.dop10000")
        })
        .expect("the point-query result at 10000 connections");
    let r = read_json(&file);
    assert_eq!(r["status"]["state"], "ok", "{}", r["status"]);
    assert_eq!(r["connect"]["connections"], 10000);
    assert_eq!(r["connect"]["active"], 8);
    assert!(r["qps"].as_f64().unwrap() > 100.0, "qps {}", r["qps"]);
    let client = r["connect"]["client_bytes_per_connection"]
        .as_f64()
        .unwrap();
    // The step's peak over its connections (connect phase, warm-up and window): an idle
    // connection is only its socket, the goal is at most 10 KB (measured: about 0.5 KB).
    assert!(
        client < 10.0 * 1024.0,
        "the client's peak memory grew {client} bytes per connection over the step"
    );
    let server = r["connect"]["server_bytes_per_connection"]
        .as_f64()
        .unwrap();
    assert!(server > 1024.0, "server memory per connection {server}");
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        report.contains("10000 (8)"),
        "the report's connections table"
    );
}

#[test]
fn more_connections_than_the_kernel_allows_are_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args([
            "run",
            "--no-store",
            "-t",
            "m=mock",
            "--connections",
            "50000000",
        ])
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // Refused by the flag's own ceiling (a million: Linux's default fs.nr_open is 1,048,576
    // files per process) before the open-file check would be reached.
    assert!(
        err.contains("--connections 50000000") && err.contains("files per process"),
        "{err}"
    );
    assert!(!dir.path().join("run").exists(), "nothing was started");
}

#[test]
fn connection_flags_are_checked() {
    for (args, flag) in [
        (&["--connections", "4", "--threads", "2"][..], "--threads"),
        (&["--active", "0"][..], "--active"),
        (&["--statement-timeout", "0"][..], "--statement-timeout"),
        (&["--connect-timeout", "1e30"][..], "--connect-timeout"),
        (&["--connect-rate", "nan"][..], "--connect-rate"),
    ] {
        let out = dbdelta()
            .args(["run", "--no-store", "-t", "m=mock"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn a_paced_step_on_the_event_loops_holds_its_rate() {
    if !require_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "my=mysql:/usr",
            "--steps",
            "point-query",
            "--connections",
            "8",
            "--rate",
            "400",
            "--read-secs",
            "3",
            "--warmup-secs",
            "0.5",
            "--table-size",
            "1000",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read_dir(rd.join("results/my"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("point-query_range=100.dop8"))
        .unwrap();
    let r = read_json(&file);
    let achieved = r["pacing"]["achieved_per_s"].as_f64().unwrap();
    assert!(
        (380.0..=420.0).contains(&achieved),
        "400 events/s asked, {achieved} achieved"
    );
    assert_eq!(r["pacing"]["sustained"], true);
    // Latency counts from the intended start: never below the schedule lag.
    assert!(
        r["latency"]["p50_us"].as_f64().unwrap() >= r["pacing"]["lag"]["p50_us"].as_f64().unwrap()
    );
}

/// A rate no server reaches on the event loops (10^6 events/s on one connection: a loopback
/// round trip alone takes several µs): every event intended in the 0.5 s window is run and
/// measured, or counted as not executed once the drain after the window reaches the 1 s
/// statement timeout; the rates count only the events that started in the window.
#[test]
fn an_overloaded_paced_step_on_the_event_loops_drains_up_to_the_statement_timeout() {
    if !require_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "my=mysql:/usr",
            "--steps",
            "point-query",
            "--connections",
            "1",
            "--rate",
            "1000000",
            "--read-secs",
            "0.5",
            "--warmup-secs",
            "0",
            "--statement-timeout",
            "1",
            "--table-size",
            "1000",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read_dir(rd.join("results/my"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("point-query_range=100.dop1"))
        .unwrap();
    let r = read_json(&file);
    let p = &r["pacing"];
    let n = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    assert_eq!(n("intended"), 500_000, "{p}");
    assert_eq!(n("drained") + n("not_executed"), n("backlog"), "{p}");
    assert!(n("not_executed") > 0, "{p}");
    let events = r["events"].as_u64().unwrap();
    assert_eq!(events + n("backlog"), n("intended"), "{p}");
    let failed = r["failed_events"].as_u64().unwrap_or(0);
    assert_eq!(
        r["latency"]["count"].as_u64().unwrap() + failed,
        n("intended") - n("not_executed"),
        "every event that ran is measured: {p}"
    );
    let drain = p["drain_secs"].as_f64().unwrap();
    assert!((1.0..3.0).contains(&drain), "{p}");
    // The last drained event waited at least the drain.
    assert!(r["latency"]["max_us"].as_f64().unwrap() >= 0.95 * drain * 1e6);
    assert_eq!(p["sustained"], false);
}
