//! Where a managed MariaDB listens, read from the kernel's socket tables: only loopback,
//! whatever spelling of a listen option the target tries.

use dbdelta_engine::{Engine, ErrorKind, OpenOptions};
use dbdelta_engine_mysql::open;
use dbdelta_kit::listen;
use dbdelta_model::TargetSpec;
mod common;

use common::{have_mariadb, start};

#[test]
fn a_managed_server_listens_on_loopback_only() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Allowed settings, some in the server's own prefixed spellings.
    let engine = start(
        "m=mysql:/usr?loose-innodb-buffer-pool-size=32M&port_open_timeout=5&max_connections=50",
        dir.path(),
        &OpenOptions::default(),
    );
    let pid = engine.server_pids()[0];
    let addrs = listen::listening(pid).unwrap();
    assert!(!addrs.is_empty(), "mariadbd {pid} listens on nothing");
    for a in &addrs {
        assert!(
            a.ip().is_loopback(),
            "mariadbd listens on {a} (all: {addrs:?})"
        );
    }
    listen::check_loopback_only(pid, &[]).unwrap();
}

#[test]
fn listen_option_spellings_are_refused_before_the_server_starts() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (key, value) in [
        ("loose-bind-address", "0.0.0.0"),
        ("loose_bind_address", "0.0.0.0"),
        ("bind", "0.0.0.0"),
        ("bind-addr", "0.0.0.0"),
        ("BIND-ADDRESS", "0.0.0.0"),
        ("loose-port", "3306"),
        ("loose-skip-networking", "1"),
        ("skip_networking", "0"),
        ("skip-skip-networking", "1"),
        ("extra-port", "3307"),
        ("x.bind-address", "0.0.0.0"),
        ("wsrep_on", "ON"),
    ] {
        let spec = TargetSpec::parse(&format!("m=mysql:/usr?{key}={value}")).unwrap();
        let e = open(&spec, &dir.path().join("s"), &OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config, "{key}: {e}");
        assert!(
            e.message.contains("target 'm'") && e.message.contains(&format!("'{key}'")),
            "{key}: {e}"
        );
        // Refused before anything was started or written.
        assert!(!dir.path().join("s").join("mysqldata").exists(), "{key}");
    }
}
