//! Where a managed PostgreSQL listens, read from the kernel's socket tables: only loopback,
//! and the settings that could change that are refused before the server starts.

mod common;

use common::*;
use dbdelta_engine::{Engine, ErrorKind, OpenOptions};
use dbdelta_kit::listen;

#[test]
fn a_managed_server_listens_on_loopback_only() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(dir.path(), "?shared_buffers=32MB&max_connections=40");
    let pid = eng.server_pids()[0];
    let addrs = listen::listening(pid).unwrap();
    assert!(!addrs.is_empty(), "postgres {pid} listens on nothing");
    for a in &addrs {
        assert!(
            a.ip().is_loopback(),
            "postgres listens on {a} (all: {addrs:?})"
        );
    }
    listen::check_loopback_only(pid, &[]).unwrap();
}

#[test]
fn a_managed_pgbouncer_listens_on_loopback_only() {
    if !have_pg() {
        return;
    }
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
    let pids = eng.proxy_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    let addrs = listen::listening(pids[0]).unwrap();
    assert!(
        !addrs.is_empty(),
        "pgbouncer {} listens on nothing",
        pids[0]
    );
    assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    for pid in eng.server_pids() {
        listen::check_loopback_only(pid, &[]).unwrap();
    }
}

#[test]
fn listen_and_include_settings_are_refused_before_the_server_starts() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("evil.conf");
    std::fs::write(&conf, "listen_addresses = '*'\n").unwrap();
    let conf = conf.display().to_string();
    for (key, value) in [
        ("listen_addresses", "*"),
        ("LISTEN_ADDRESSES", "*"),
        ("include", conf.as_str()),
        ("include_if_exists", conf.as_str()),
        ("include_dir", "/tmp"),
        ("config_file", conf.as_str()),
        ("data_directory", "/tmp"),
        ("unix_socket_directories", "/tmp"),
    ] {
        let spec = managed(&format!("?{key}={value}"));
        let scratch = dir.path().join("s");
        let e =
            dbdelta_engine_postgres::open(&spec, &scratch, &OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config, "{key}: {e}");
        assert!(
            e.message.contains("'pg'") && e.message.contains(key),
            "{key}: {e}"
        );
        assert!(
            !scratch.join("pgdata").exists(),
            "{key}: the server was started"
        );
    }
}

#[test]
fn a_pgbouncer_fleet_shares_one_port_and_stops_together() {
    if !have_pg() || !std::path::Path::new("/usr/sbin/pgbouncer").is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "postgresql-15 or pgbouncer missing"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(
        dir.path(),
        "?pgbouncer=transaction&pgbouncer.processes=2&pgbouncer.max_client_conn=50",
    );
    let pids = eng.proxy_pids();
    assert_eq!(pids.len(), 2, "{pids:?}");
    let ports: Vec<Vec<u16>> = pids
        .iter()
        .map(|&p| {
            let addrs = listen::listening(p).unwrap();
            assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
            addrs.iter().map(|a| a.port()).collect()
        })
        .collect();
    assert!(!ports[0].is_empty() && ports[0] == ports[1], "{ports:?}");
    // The fleet's capacity is every process's; connections through it work.
    assert_eq!(eng.connection_limit(), Some(100));
    let opts = dbdelta_engine::ConnectOptions::default();
    let mut conns: Vec<_> = (0..4).map(|_| eng.connect_with(&opts).unwrap()).collect();
    for c in &mut conns {
        assert_eq!(c.query_scalar("SELECT 7").unwrap().as_deref(), Some("7"));
    }
    drop(conns);
    drop(eng);
    for p in &pids {
        assert!(gone(*p), "pgbouncer {p} survived drop");
    }
}
