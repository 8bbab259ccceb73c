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
    // A query makes pgbouncer pair the client with a server connection: still none.
    c.query_scalar("SELECT 1").unwrap();
    assert_eq!(c.server_thread(), None);
}
