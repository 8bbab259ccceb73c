//! Managed-server lifecycle: no orphans after drop or panic, clear errors for a missing or
//! wrong bin directory, a busy port, and a setting the server rejects.

mod common;

use common::*;
use dbdelta_engine::{Engine, ErrorKind, OpenOptions};
use dbdelta_model::TargetSpec;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

#[test]
fn drop_stops_the_server() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(dir.path(), "");
    let pids = eng.server_pids();
    assert!(!pids.is_empty());
    let _conn = eng.connect().unwrap();
    drop(eng);
    for p in &pids {
        assert!(gone(*p), "pid {p} survived drop");
    }
}

#[test]
fn panic_stops_the_server() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let postmaster = AtomicU32::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let eng = start(dir.path(), "?max_connections=20");
        postmaster.store(eng.server_pids()[0], Ordering::SeqCst);
        let mut c = eng.connect().unwrap();
        c.query("SELECT 1").unwrap();
        panic!("boom while the engine is in scope");
    }));
    assert!(r.is_err());
    let pid = postmaster.load(Ordering::SeqCst);
    assert_ne!(pid, 0);
    assert!(gone(pid), "postmaster {pid} survived a panic");
}

#[test]
fn bad_setting_error_has_the_log_tail() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let e = dbdelta_engine_postgres::open(
        &managed("?shared_buffers=banana"),
        dir.path(),
        &OpenOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("exited during startup"), "{e}");
    assert!(
        e.message
            .contains("invalid value for parameter \"shared_buffers\""),
        "{e}"
    );
    assert!(e.message.contains("server.log"), "{e}");
}

#[test]
fn missing_or_wrong_bin_dir() {
    let dir = tempfile::tempdir().unwrap();
    let t = TargetSpec::parse("pg=postgres:/nonexistent/pg/bin").unwrap();
    let e = dbdelta_engine_postgres::open(&t, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("/nonexistent/pg/bin"), "{e}");
    assert!(e.message.contains("apt-get install postgresql"), "{e}");

    let empty = tempfile::tempdir().unwrap();
    let t = TargetSpec::parse(&format!("pg=postgres:{}", empty.path().display())).unwrap();
    let e = dbdelta_engine_postgres::open(&t, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("has no 'initdb'"), "{e}");

    let t = TargetSpec::parse("pg=postgres").unwrap();
    let e = dbdelta_engine_postgres::open(&t, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("bin directory"), "{e}");
}

#[test]
fn busy_port_is_never_used() {
    if !have_pg() {
        return;
    }
    // A requested port that is taken: a clear error before anything starts.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let e = dbdelta_engine_postgres::open(
        &managed(&format!("?port={port}")),
        dir.path(),
        &OpenOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("already in use"), "{e}");
    assert!(
        !dir.path().join("pgdata").exists(),
        "nothing provisioned for a busy port"
    );
}

#[test]
fn unreachable_scratch_dir_is_explained() {
    // SAFETY: geteuid has no preconditions.
    if !have_pg() || unsafe { libc::geteuid() } != 0 {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let e = dbdelta_engine_postgres::open(&managed(""), &locked.join("s"), &OpenOptions::default())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("not searchable by others"), "{e}");
}
