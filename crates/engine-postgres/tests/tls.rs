//! TLS against managed servers with certificates from throwaway CAs made by openssl: `--tls`
//! (verify-full), each `sslmode`, client certificates (`hostssl … cert`), channel binding
//! (SCRAM-SHA-256-PLUS) and `prefer` falling back on a server without TLS.

mod common;

use common::*;
use dbdelta_engine::{Engine, ErrorKind, OpenOptions, Value};
use dbdelta_kit::test_certs::{have_openssl, make_ca, make_cert, openssl, Key};
use dbdelta_model::TargetSpec;
use std::path::Path;
use std::process::Command;

#[test]
fn tls_verified_against_sslrootcert() {
    if !have_pg() || !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Key and certificates live in the scratch dir, which is given to the server's user.
    let d = &dir.path().join("scratch");
    std::fs::create_dir(d).unwrap();
    make_ca(d, "ca", Key::EcP256);
    make_ca(d, "other", Key::EcP256);
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

/// One value from a fresh connection of an external target `query` to the server on `port`.
fn ext_open(
    user: &str,
    port: &str,
    query: &str,
) -> Result<dbdelta_engine_postgres::PostgresEngine, dbdelta_engine::EngineError> {
    let t = TargetSpec::parse(&format!(
        "x=postgres://{user}@127.0.0.1:{port}/dbdelta?{query}"
    ))
    .unwrap();
    dbdelta_engine_postgres::open(&t, Path::new("/x"), &OpenOptions::default())
}

fn scalar(eng: &dbdelta_engine_postgres::PostgresEngine, sql: &str) -> String {
    let mut c = dbdelta_engine::Engine::connect(eng).unwrap();
    c.query_scalar(sql).unwrap().unwrap_or_default()
}

const SSL_OF_ME: &str = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

/// sslmode levels against a certificate that names another host, client certificates
/// (`hostssl … cert`), SCRAM-SHA-256-PLUS, and prefer against a server without TLS.
#[test]
fn sslmodes_client_certificates_and_channel_binding() {
    if !have_pg() || !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().join("scratch");
    std::fs::create_dir(d).unwrap();
    make_ca(d, "ca", Key::EcP256);
    // Self-signed (no CA), for a name that is not the host we connect to.
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "self.key",
            "-out",
            "self.crt",
            "-days",
            "2",
            "-subj",
            "/CN=wrong.example",
            "-addext",
            "subjectAltName=DNS:wrong.example",
        ],
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("self.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }
    // Signed by the CA, for the wrong name too.
    make_cert(
        d,
        "wrong",
        "wrong.example",
        "subjectAltName=DNS:wrong.example\nbasicConstraints=CA:FALSE\n",
        "ca",
        Key::EcP256,
    );
    // The client certificate of role certuser (cert auth maps the CN to the role).
    make_cert(
        d,
        "client",
        "certuser",
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        "ca",
        Key::EcP256,
    );
    std::fs::write(
        d.join("hba.conf"),
        "hostssl all certuser 127.0.0.1/32 cert\n\
         host all scramuser 127.0.0.1/32 scram-sha-256\n\
         host all all 127.0.0.0/8 trust\n",
    )
    .unwrap();
    let p = |f: &str| d.join(f).display().to_string();
    // The admin side is plain (no sslmode on the managed target); the server offers TLS with
    // the self-signed certificate first.
    let eng = dbdelta_engine_postgres::open(
        &managed(&format!(
            "?ssl=on&ssl_cert_file={}&ssl_key_file={}&ssl_ca_file={}&hba_file={}&log_connections=on",
            p("self.crt"),
            p("self.key"),
            p("ca.crt"),
            p("hba.conf")
        )),
        d,
        &OpenOptions::default(),
    )
    .unwrap();
    let addr = eng.address();
    let (_, port) = addr.rsplit_once(':').unwrap();
    let mut admin = dbdelta_engine::Engine::connect(&eng).unwrap();
    admin.query("CREATE ROLE certuser LOGIN").unwrap();
    admin
        .query("CREATE ROLE scramuser LOGIN PASSWORD 'pw-of-scram'")
        .unwrap();
    assert_eq!(
        admin.query_scalar(SSL_OF_ME).unwrap().as_deref(),
        Some("f"),
        "no sslmode on the managed target: plain"
    );

    // require: encrypted, and neither the issuer nor the name is checked.
    let e = ext_open("dbdelta", port, "sslmode=require").unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "t");
    assert_eq!(Engine::info(&e).unwrap().settings["dbdelta.tls"], "on");
    // prefer against a TLS server: TLS.
    let e = ext_open("dbdelta", port, "sslmode=prefer").unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "t");
    // verify-full (also what --tls means) refuses it: no trusted issuer…
    let e = ext_open("dbdelta", port, "sslmode=verify-full").unwrap_err();
    assert!(e.message.contains("TLS handshake"), "{e}");
    // …and verify-ca refuses an untrusted chain too.
    let e = ext_open(
        "dbdelta",
        port,
        &format!("sslmode=verify-ca&sslrootcert={}", p("ca.crt")),
    )
    .unwrap_err();
    assert!(e.message.contains("TLS handshake"), "{e}");

    // Switch the server to the CA-signed certificate for the wrong name.
    admin
        .query(&format!(
            "ALTER SYSTEM SET ssl_cert_file = '{}'",
            p("wrong.crt")
        ))
        .unwrap();
    admin
        .query(&format!(
            "ALTER SYSTEM SET ssl_key_file = '{}'",
            p("wrong.key")
        ))
        .unwrap();
    admin.query("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let ca = format!("sslrootcert={}", p("ca.crt"));
    // verify-ca: the chain is trusted, the name is not compared.
    let e = ext_open("dbdelta", port, &format!("sslmode=verify-ca&{ca}")).unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "t");
    // verify-full: the name 127.0.0.1 is not in the certificate.
    let e = ext_open("dbdelta", port, &format!("sslmode=verify-full&{ca}")).unwrap_err();
    assert!(e.message.contains("TLS handshake"), "{e}");
    // A CA that did not sign it: refused by verify-ca, and by require with sslrootcert
    // (as libpq: a root certificate makes require check the chain).
    make_ca(d, "other", Key::EcP256);
    let other = format!("sslrootcert={}", p("other.crt"));
    for mode in ["verify-ca", "require"] {
        let e = ext_open("dbdelta", port, &format!("sslmode={mode}&{other}")).unwrap_err();
        assert!(e.message.contains("TLS handshake"), "{mode}: {e}");
    }

    // Client certificate: cert auth works with sslcert/sslkey and fails without.
    let client = format!("sslcert={}&sslkey={}", p("client.crt"), p("client.key"));
    let e = ext_open(
        "certuser",
        port,
        &format!("sslmode=verify-ca&{ca}&{client}"),
    )
    .unwrap();
    assert_eq!(scalar(&e, "SELECT current_user"), "certuser");
    assert_eq!(
        scalar(
            &e,
            "SELECT client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
        ),
        "/CN=certuser"
    );
    let e = ext_open("certuser", port, &format!("sslmode=verify-ca&{ca}")).unwrap_err();
    assert!(e.message.contains("certificate"), "{e}");
    // The key without its certificate is a configuration error naming both parameters.
    let e = ext_open(
        "certuser",
        port,
        &format!("sslmode=require&sslkey={}", p("client.key")),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("sslcert and sslkey go together"), "{e}");

    // Channel binding: require succeeds over TLS only, where SCRAM-SHA-256-PLUS ran (the
    // client refuses AuthenticationOk otherwise; see auth::tests).
    let scram = "scramuser:pw-of-scram";
    let e = ext_open(scram, port, "sslmode=require&channel_binding=require").unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "t");
    let e = ext_open(scram, port, "sslmode=disable&channel_binding=require").unwrap_err();
    assert!(
        e.message.contains("channel_binding=require") && e.message.contains("not TLS"),
        "{e}"
    );
    assert!(!e.message.contains("pw-of-scram"), "{e}");
    // trust authenticates without SCRAM: require refuses that too.
    let e = ext_open("dbdelta", port, "sslmode=require&channel_binding=require").unwrap_err();
    assert!(e.message.contains("channel_binding=require"), "{e}");
    // The end-point hash follows the certificate's signature hash (RFC 5929): re-sign the
    // server certificate with ECDSA-SHA384 and bind again; a wrong hash would make the
    // server refuse ("channel binding check failed").
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-sha384",
            "-in",
            "wrong.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "wrong384.crt",
            "-days",
            "2",
            "-extfile",
            "wrong.ext",
        ],
    );
    let sig = Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(d.join("wrong384.crt"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&sig.stdout).contains("ecdsa-with-SHA384"),
        "the test certificate is not signed with SHA-384"
    );
    admin
        .query(&format!(
            "ALTER SYSTEM SET ssl_cert_file = '{}'",
            p("wrong384.crt")
        ))
        .unwrap();
    admin.query("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let e = ext_open(scram, port, "sslmode=require&channel_binding=require").unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "t");
    // prefer binds when it can and still connects without TLS.
    ext_open(scram, port, "sslmode=require&channel_binding=prefer").unwrap();
    ext_open(scram, port, "sslmode=disable").unwrap();
    ext_open(scram, port, "sslmode=require&channel_binding=disable").unwrap();

    // Bad values name the parameter and the valid values.
    let e = ext_open("dbdelta", port, "sslmode=verify").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains("sslmode=verify")
            && e.message
                .contains("disable, prefer, require, verify-ca, verify-full"),
        "{e}"
    );
    let e = ext_open("dbdelta", port, "channel_binding=yes").unwrap_err();
    assert!(e.message.contains("channel_binding=yes"), "{e}");
    drop(admin);
    drop(eng);

    // A server without TLS: prefer falls back to plain, require refuses.
    let plain = start(&dir.path().join("plain"), "");
    let addr = plain.address();
    let (_, port) = addr.rsplit_once(':').unwrap();
    let e = ext_open("dbdelta", port, "sslmode=prefer").unwrap();
    assert_eq!(scalar(&e, SSL_OF_ME), "f");
    assert_eq!(Engine::info(&e).unwrap().settings["dbdelta.tls"], "off");
    let e = ext_open("dbdelta", port, "sslmode=require").unwrap_err();
    assert!(e.message.contains("does not accept TLS"), "{e}");
}

/// Bad values are caught before anything starts, naming the parameter and the valid values.
#[test]
fn bad_sslmode_and_channel_binding_values_name_the_parameter() {
    let e = dbdelta_engine_postgres::check_spec(&managed("?sslmode=verify_full")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains("sslmode=verify_full")
            && e.message
                .contains("disable, prefer, require, verify-ca, verify-full"),
        "{e}"
    );
    let t = TargetSpec::parse("x=postgres://u@h/db?channel_binding=always").unwrap();
    let e = dbdelta_engine_postgres::check_spec(&t).unwrap_err();
    assert!(
        e.message.contains("channel_binding=always")
            && e.message.contains("disable, prefer, require"),
        "{e}"
    );
    let t =
        TargetSpec::parse("x=postgres://u@h/db?sslmode=verify-ca&channel_binding=require").unwrap();
    dbdelta_engine_postgres::check_spec(&t).unwrap();
}
