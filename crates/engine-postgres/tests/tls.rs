//! `--tls` against a managed server with a certificate from a throwaway CA made by openssl.

mod common;

use common::*;
use dbdelta_engine::{ErrorKind, OpenOptions, Value};
use dbdelta_model::TargetSpec;
use std::path::Path;
use std::process::Command;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA named `name` (`name.crt`, `name.key`) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
        ],
    );
}

#[test]
fn tls_verified_against_sslrootcert() {
    if !have_pg() {
        return;
    }
    if Command::new("openssl").arg("version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "openssl is missing and CI is set: it makes the test certificates"
        );
        eprintln!("SKIPPED: openssl is needed to make test certificates");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Key and certificates live in the scratch dir, which is given to the server's user.
    let d = &dir.path().join("scratch");
    std::fs::create_dir(d).unwrap();
    make_ca(d, "ca");
    make_ca(d, "other");
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        d.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("server.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }
    let p = |f: &str| d.join(f).display().to_string();
    let spec = managed(&format!(
        "?ssl=on&ssl_cert_file={}&ssl_key_file={}&sslrootcert={}",
        p("server.crt"),
        p("server.key"),
        p("ca.crt")
    ));
    let tls = OpenOptions {
        tls: true,
        ..OpenOptions::default()
    };
    let eng = dbdelta_engine_postgres::open(&spec, d, &tls).unwrap();
    let mut c = dbdelta_engine::Engine::connect(&eng).unwrap();
    assert_eq!(
        c.query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .unwrap()
            .as_deref(),
        Some("t")
    );
    let st = c.prepare("SELECT generate_series(1, ?)").unwrap();
    assert_eq!(c.execute(st, &[Value::Int(5000)]).unwrap().rows, 5000);

    // The same server through an external URL: a wrong CA or host name is refused.
    let addr = eng.address();
    let (_, port) = addr.rsplit_once(':').unwrap();
    let ext = |host: &str, ca: &str| {
        let t = TargetSpec::parse(&format!(
            "x=postgres://dbdelta@{host}:{port}/dbdelta?sslrootcert={}",
            p(ca)
        ))
        .unwrap();
        dbdelta_engine_postgres::open(&t, Path::new("/x"), &tls)
    };
    assert!(ext("127.0.0.1", "ca.crt").is_ok());
    let e = ext("127.0.0.1", "other.crt").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("TLS handshake"), "{e}");
    let e = ext("localhost", "ca.crt").unwrap_err();
    assert!(e.message.contains("TLS handshake"), "{e}");
}
