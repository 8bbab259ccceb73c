//! SCRAM-SHA-256 against a FerretDB started with `auth=scram` (`--test-enable-new-auth` and
//! a start-up user): the right password is accepted, a wrong one refused with the server's
//! own error ("Authentication failed.", code 18 AuthenticationFailed).

use dbdelta_engine::{EngineKind, OpenOptions};
use dbdelta_ferretdb::managed;
use dbdelta_ferretdb::FerretSpec;
use dbdelta_model::testing::require;
use dbdelta_model::TargetSpec;
use std::path::Path;

fn binary() -> Option<String> {
    let bin = std::env::var("DBDELTA_FERRETDB_BIN")
        .unwrap_or_else(|_| "/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb".into());
    require(
        &[&bin],
        "scripts/test.sh builds FerretDB v1.24.2 from the Go module proxy",
    )
    .then_some(bin)
}

#[test]
fn wrong_password_is_refused_with_the_servers_error() {
    let Some(bin) = binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!("f=ferretdb:?binary={bin}&auth=scram")).unwrap();
    let ferret = FerretSpec::parse(&spec).unwrap();
    let opts = OpenOptions {
        database: "dbdelta".into(),
        ..OpenOptions::default()
    };
    let mut server = managed::start("f", &ferret, Path::new(&bin), dir.path(), &opts).unwrap();
    let password = server
        .password
        .clone()
        .expect("auth=scram makes a password");
    let open = |pw: &str| {
        let t = TargetSpec::parse(&format!(
            "m=mongodb://{}:{pw}@127.0.0.1:{}/dbdelta?authMechanism=SCRAM-SHA-256",
            managed::SCRAM_USER,
            server.port
        ))
        .unwrap();
        dbdelta_engine_mongodb::MongodbKind
            .configure(&t)
            .unwrap()
            .open(dir.path(), &opts)
    };
    let engine = open(&password).expect("the right password is accepted");
    let info = engine.info().unwrap();
    assert_eq!(info.settings["dbdelta.auth"], "SCRAM-SHA-256", "{info:?}");
    drop(engine);
    let Err(e) = open("not-the-password") else {
        panic!("a wrong password was accepted");
    };
    let e = e.to_string();
    assert!(e.contains("Authentication failed"), "{e}");
    assert!(
        !e.contains("not-the-password"),
        "no password in errors: {e}"
    );
    server.stop().unwrap();
}
