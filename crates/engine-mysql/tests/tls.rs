//! `ssl-mode` levels, `ssl-ca`, and client certificates (`REQUIRE X509`) against managed
//! MariaDB servers with certificates from a throwaway CA made by openssl.

mod common;

use common::*;
use dbdelta_engine::{Engine, EngineError, ErrorKind, OpenOptions};
use dbdelta_engine_mysql::{check_spec, open, MysqlEngine};
use dbdelta_kit::test_certs::{have_openssl, make_ca, make_cert, Key};
use dbdelta_model::TargetSpec;
use std::path::Path;

/// An external target for `user` on the managed server's `port` with `query`.
fn ext(user: &str, port: u16, query: &str) -> Result<MysqlEngine, EngineError> {
    let spec = TargetSpec::parse(&format!(
        "x=mysql://{user}@127.0.0.1:{port}/dbdelta?{query}"
    ))
    .unwrap();
    open(&spec, Path::new("/nonexistent"), &OpenOptions::default())
}

/// The session's TLS cipher ("" on a plain connection).
fn cipher(engine: &MysqlEngine) -> String {
    let mut c = engine.connect().unwrap();
    c.query_scalar(
        "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'",
    )
    .unwrap()
    .unwrap_or_default()
}

#[test]
fn ssl_modes_and_client_certificates() {
    if !have_mariadb() || !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().join("s");
    std::fs::create_dir(d).unwrap();
    make_ca(d, "ca", Key::Rsa2048);
    make_ca(d, "other", Key::Rsa2048);
    // Like MySQL's auto-generated certificates: signed by a CA, naming no host we connect to.
    make_cert(
        d,
        "server",
        "MySQL_Server_Auto_Generated_Server_Certificate",
        "subjectAltName=DNS:wrong.example\nbasicConstraints=CA:FALSE\n",
        "ca",
        Key::Rsa2048,
    );
    make_cert(
        d,
        "client",
        "x509user",
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        "ca",
        Key::Rsa2048,
    );
    let p = |f: &str| d.join(f).display().to_string();
    // No ssl-mode and no --tls: the server has TLS, the admin client stays plain.
    let engine = start(
        &format!(
            "maria=mysql:/usr?innodb_buffer_pool_size=64M&ssl_cert={}&ssl_key={}&ssl_ca={}",
            p("server.crt"),
            p("server.key"),
            p("ca.crt")
        ),
        d,
        &OpenOptions::default(),
    );
    assert_eq!(cipher(&engine), "", "no TLS asked for");
    let port = engine.port().unwrap();
    let mut admin = engine.connect().unwrap();
    admin
        .query("CREATE USER 'x509user'@'%' REQUIRE X509")
        .unwrap();
    admin
        .query("GRANT ALL ON dbdelta.* TO 'x509user'@'%'")
        .unwrap();

    // REQUIRED: encrypted; the certificate's issuer (not in the system roots) and name are
    // not checked.
    let e = ext("root", port, "ssl-mode=REQUIRED").unwrap();
    assert!(!cipher(&e).is_empty());
    // PREFERRED against a TLS server: TLS.
    let e = ext("root", port, "ssl-mode=preferred").unwrap();
    assert!(!cipher(&e).is_empty());
    // VERIFY_IDENTITY (what --tls means) refuses an untrusted issuer…
    let e = ext("root", port, "ssl-mode=VERIFY_IDENTITY").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    // …and with the right CA still the name 127.0.0.1 the certificate does not carry.
    let ca = format!("ssl-ca={}", p("ca.crt"));
    let e = ext("root", port, &format!("ssl-mode=VERIFY_IDENTITY&{ca}")).unwrap_err();
    assert!(e.message.contains("TLS handshake"), "{e}");
    // VERIFY_CA: the chain is trusted, the name is not compared.
    let e = ext("root", port, &format!("ssl-mode=VERIFY_CA&{ca}")).unwrap();
    assert!(!cipher(&e).is_empty());
    // The old spelling ssl_ca works too.
    ext(
        "root",
        port,
        &format!("ssl-mode=VERIFY_CA&ssl_ca={}", p("ca.crt")),
    )
    .unwrap();
    // A CA that did not sign it: refused by VERIFY_CA, and by REQUIRED once a CA is given.
    for mode in ["VERIFY_CA", "REQUIRED"] {
        let e = ext(
            "root",
            port,
            &format!("ssl-mode={mode}&ssl-ca={}", p("other.crt")),
        )
        .unwrap_err();
        assert!(e.message.contains("TLS handshake"), "{mode}: {e}");
    }

    // REQUIRE X509: works with ssl-cert/ssl-key, fails without.
    let client = format!("ssl-cert={}&ssl-key={}", p("client.crt"), p("client.key"));
    let e = ext(
        "x509user",
        port,
        &format!("ssl-mode=VERIFY_CA&{ca}&{client}"),
    )
    .unwrap();
    assert!(!cipher(&e).is_empty());
    let mut c = e.connect().unwrap();
    assert_eq!(
        c.query_scalar("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)")
            .unwrap()
            .as_deref(),
        Some("x509user")
    );
    let e = ext("x509user", port, &format!("ssl-mode=VERIFY_CA&{ca}")).unwrap_err();
    assert!(e.message.contains("1045"), "{e}");
    // A key without its certificate names both parameters.
    let e = ext(
        "x509user",
        port,
        &format!("ssl-mode=REQUIRED&ssl-key={}", p("client.key")),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains("ssl-cert and ssl-key go together"),
        "{e}"
    );
    // A CA file with TLS off is an error, not silently unused.
    let e = ext("root", port, &format!("ssl-mode=DISABLED&{ca}")).unwrap_err();
    assert!(
        e.message.contains("ssl-ca") && e.message.contains("--tls"),
        "{e}"
    );
    // DISABLED: plain, though the server offers TLS.
    let e = ext("root", port, "ssl-mode=DISABLED").unwrap();
    assert_eq!(cipher(&e), "");
    drop(c);
    drop(admin);
    drop(engine);

    // A server without TLS: PREFERRED falls back to plain, REQUIRED refuses.
    let plain = start(
        "plain=mysql:/usr?innodb_buffer_pool_size=64M&ssl=0",
        &dir.path().join("plain"),
        &OpenOptions::default(),
    );
    let port = plain.port().unwrap();
    let e = ext("root", port, "ssl-mode=PREFERRED").unwrap();
    assert_eq!(cipher(&e), "");
    let e = ext("root", port, "ssl-mode=REQUIRED").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("does not accept TLS"), "{e}");
}

#[test]
fn a_managed_target_takes_ssl_mode_as_the_clients() {
    if !have_mariadb() || !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // ssl-mode alone turns TLS on (with dbdelta's throwaway CA); it is not a my.cnf line.
    let engine = start(
        "m=mysql:/usr?innodb_buffer_pool_size=64M&ssl-mode=VERIFY_CA",
        dir.path(),
        &OpenOptions::default(),
    );
    assert!(!cipher(&engine).is_empty());
    assert_eq!(engine.info().unwrap().settings["tls"], "on");
}

#[test]
fn bad_ssl_mode_names_the_parameter_and_the_valid_values() {
    for spec in [
        "x=mysql://root@127.0.0.1:1/db?ssl-mode=SOMETIMES",
        "m=mysql:/usr?ssl_mode=SOMETIMES",
    ] {
        let t = TargetSpec::parse(spec).unwrap();
        let e = check_spec(&t).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(
            e.message.contains("ssl-mode=SOMETIMES")
                && e.message
                    .contains("DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"),
            "{e}"
        );
    }
    // open says the same before connecting anywhere.
    let t = TargetSpec::parse("x=mysql://root@127.0.0.1:1/db?ssl-mode=SOMETIMES").unwrap();
    let e = open(&t, Path::new("/nonexistent"), &OpenOptions::default()).unwrap_err();
    assert!(e.message.contains("ssl-mode=SOMETIMES"), "{e}");
}
