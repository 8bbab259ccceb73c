//! `mongodb://` targets from the command line: bad specs exit 2 naming the key at fault
//! before anything starts, and the password never appears in what dbdelta prints.

mod common;

use common::dbdelta;

fn run(target: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args([
            "run",
            "--no-store",
            "--suite",
            "ycsb",
            "-t",
            target,
            "--run-dir",
        ])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_mongodb_specs_exit_2_naming_the_key() {
    for (target, named) in [
        ("m=mongodb://", "no host"),
        ("m=mongodb://u:pw@/db", "no host"),
        ("m=mongodb://db1?w=banana", "w=banana"),
        ("m=mongodb://db1?nosuch=1", "unknown option 'nosuch'"),
        ("m=mongodb://db1?j=sometimes", "j=sometimes"),
        (
            "m=mongodb://db1?readPreference=fastest",
            "readPreference=fastest",
        ),
        (
            "m=mongodb://db1?authMechanism=GSSAPI",
            "authMechanism=GSSAPI",
        ),
        ("m=mongodb://db1?tlsCAFile=/ca.pem", "tlsCAFile needs TLS"),
        ("m=mongodb", "mongodb needs a URL"),
    ] {
        let (code, err) = run(target);
        assert_eq!(code, Some(2), "{target}: {err}");
        assert!(err.contains(named), "{target} must name {named}: {err}");
        assert!(!err.contains("panicked"), "{target}: {err}");
    }
}

#[test]
fn an_unreachable_server_is_refused_without_showing_the_password() {
    // Port 1 on loopback: nothing listens there.
    let (code, err) = run("m=mongodb://bob:s3cr3t-pw@127.0.0.1:1/ycsb?w=1");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(!err.contains("s3cr3t-pw"), "the password leaked: {err}");
}

#[test]
fn sql_suites_are_refused_on_a_document_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args(["run", "--no-store", "-t", "m=mongodb://db1", "--run-dir"])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("mongodb is a key-value store"), "{err}");
}
