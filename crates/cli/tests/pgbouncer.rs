//! A managed pgbouncer in front of a managed PostgreSQL: benchmark connections go through
//! it (transaction pooling: statements as text), the manifest says so, and neither a normal
//! end nor Ctrl-C leaves a pgbouncer behind.

mod common;

use common::{dbdelta, interrupt, processes_mentioning, read_json, spawn_dbdelta, wait_for_files};
use std::path::Path;
use std::time::Duration;

const BIN: &str = "/usr/lib/postgresql/15/bin";

fn require() -> bool {
    common::require(
        &["/usr/lib/postgresql/15/bin/initdb", "/usr/sbin/pgbouncer"],
        "apt-get install postgresql-15 pgbouncer",
    )
}

fn bouncers(rd: &Path) -> Vec<u32> {
    processes_mentioning(&rd.display().to_string())
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.starts_with("pgbouncer"))
        })
        .collect()
}

#[test]
fn steps_run_through_a_managed_pgbouncer_in_transaction_mode() {
    if !require() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "--no-store", "--keep-data", "-t"])
        .arg(format!(
            "pgb=postgres:{BIN}?pgbouncer=transaction&pgbouncer.default_pool_size=4"
        ))
        .args([
            "--steps",
            "point-query,read-only,update-index",
            "--connections",
            "24",
            "--read-secs",
            "1",
            "--write-secs",
            "1",
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
    let mut measured = 0;
    for e in std::fs::read_dir(rd.join("results/pgb")).unwrap().flatten() {
        let r = read_json(&e.path());
        assert_eq!(
            r["status"]["state"],
            "ok",
            "{}: {}",
            e.path().display(),
            r["status"]
        );
        // pgbouncer's own CPU per operation: a process group beside server and client.
        // The load goes to the server directly; measured steps go through pgbouncer.
        let load = e.file_name().to_string_lossy().contains("load");
        if r["costs"].is_object() && !load {
            let proxy = r["costs"]["proxy_cpu_us_op"].as_f64().unwrap_or(0.0);
            assert!(
                proxy > 0.0,
                "{}: proxy CPU {}",
                e.path().display(),
                r["costs"]
            );
            measured += 1;
        }
    }
    assert!(measured >= 3, "{measured} steps with costs");
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(report.contains("host\tserver\tproxy\tclient"), "{report}");
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(md.contains("| client µs/op | proxy µs/op |"), "{md}");
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(html.contains("<th>proxy µs/op</th>"));
    let settings = read_json(&rd.join("targets/pgb/settings.json"));
    assert_eq!(settings["pgbouncer.pool_mode"], "transaction");
    assert!(settings["dbdelta.statements"]
        .as_str()
        .unwrap()
        .starts_with("text with literals"));
    let log = std::fs::read_to_string(rd.join("data/pgb/pgbouncer/pgbouncer.log")).unwrap();
    let logins = log.matches("login attempt").count();
    assert!(logins >= 24, "{logins} logins through pgbouncer:\n{log}");
    assert!(bouncers(&rd).is_empty(), "pgbouncer left running");
}

#[test]
fn ctrl_c_leaves_no_pgbouncer_behind() {
    if !require() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = spawn_dbdelta([
        "run".to_string(),
        "--quiet".into(),
        "--no-store".into(),
        "-t".into(),
        format!("pgb=postgres:{BIN}?pgbouncer=session"),
        "--steps".into(),
        "point-query".into(),
        "--read-secs".into(),
        "30".into(),
        "--warmup-secs".into(),
        "0".into(),
        "--table-size".into(),
        "1000".into(),
        "--run-dir".into(),
        rd.display().to_string(),
    ]);
    // The load's and settle's results exist once the step is under way.
    wait_for_files(&rd.join("results/pgb"), 2, Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!bouncers(&rd).is_empty(), "pgbouncer runs during the step");
    interrupt(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        bouncers(&rd).is_empty(),
        "pgbouncer left running after Ctrl-C"
    );
}

#[test]
fn a_bad_pool_mode_names_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args(["run", "--no-store", "-t"])
        .arg(format!("pgb=postgres:{BIN}?pgbouncer=sometimes"))
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pgbouncer=sometimes"));
}
