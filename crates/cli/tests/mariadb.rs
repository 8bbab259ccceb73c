//! `dbdelta run` against a real MariaDB the tests start themselves: a managed comparison of
//! two settings runs without leaving a server behind, its reads in a window per target in
//! every round (MySQL targets are unfit for turns), and binlog_reset resets the binary log. The suite as a library (conformance, external targets) is tested in
//! crates/lab/tests/mariadb.rs.

mod common;

use common::{dbdelta, processes_mentioning};
use dbdelta_model::StepResult;

fn have_mariadb() -> bool {
    common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server")
}

#[test]
fn settings_comparison_from_the_cli_leaves_no_server_behind() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "-t",
            "ps_off=mysql:/usr?performance_schema=OFF",
            "-t",
            "ps_on=mysql:/usr?performance_schema=ON",
            "--steps",
            "point-query,update-index",
            "--repeat",
            "2",
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
    assert!(stdout.contains("/ps_off") && stdout.contains("update-index_range=100"));
    let settings = std::fs::read_to_string(rd.join("targets/ps_on/settings.json")).unwrap();
    assert!(settings.contains("performance_schema"), "{settings}");
    let version = std::fs::read_to_string(rd.join("targets/ps_on/version.txt")).unwrap();
    assert!(version.contains("MariaDB"), "{version}");
    let orphans = processes_mentioning(rd.to_str().unwrap());
    assert!(orphans.is_empty(), "orphan server processes {orphans:?}");
    // Both rounds of the read step, the first too, in a window of each target's own.
    for target in ["ps_off", "ps_on"] {
        let rounds: Vec<StepResult> = common::step_results(&rd, target)
            .into_iter()
            .filter(|r| r.kind == dbdelta_model::StepKind::Measured && r.step == "point-query")
            .collect();
        assert_eq!(rounds.len(), 2, "{target}");
        assert!(
            rounds.iter().all(|r| r.turns.is_none()),
            "{target}: {rounds:?}"
        );
    }
}

/// `binlog_reset=true` from the command line (MySQL's RESET MASTER): every measured write step's
/// result says the binary log was reset before it, read steps do not reset, each settle
/// begins with the reset and says how long it waited and why, and the manifest records the
/// option (a bad value is refused in bad_input.rs).
#[test]
fn binlog_reset_is_run_before_write_steps_and_recorded() {
    if !common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server") {
        return;
    }
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "my=mysql:/usr?log_bin=binlog&binlog_reset=true",
        "--steps",
        "point-query,update-index",
        "--read-secs",
        "0.3",
        "--write-secs",
        "0.3",
        "--warmup-secs",
        "0",
        "--table-size",
        "1000",
        "--settle-secs",
        "1",
    ]);
    let all = common::step_results(&rd, "my");
    let reset = "RESET MASTER (binary logging is on, binlog_reset=true)";
    let update = all.iter().find(|r| r.step == "update-index").unwrap();
    assert_eq!(
        update.actions,
        vec![reset.to_string()],
        "{:?}",
        update.actions
    );
    let point = all.iter().find(|r| r.step == "point-query").unwrap();
    assert!(point.actions.is_empty(), "{:?}", point.actions);
    let settles: Vec<&StepResult> = all
        .iter()
        .filter(|r| r.kind == dbdelta_model::StepKind::Settle)
        .collect();
    assert_eq!(settles.len(), 2);
    for s in settles {
        assert_eq!(s.actions[0], reset, "{:?}", s.actions);
        let waited = s.actions.last().unwrap();
        assert!(
            waited.contains("lasted 1.0 s (--settle-secs 1;") && waited.contains("dirty pages"),
            "{:?}",
            s.actions
        );
        assert!(s.seconds >= 1.0, "{}", s.seconds);
    }
    let settings = std::fs::read_to_string(rd.join("targets/my/settings.json")).unwrap();
    assert!(
        settings.contains("RESET MASTER before every write step and settle"),
        "{settings}"
    );
    let manifest = common::read_json(&rd.join("run.json"));
    assert_eq!(manifest["options"]["settle"]["secs"], 1.0, "{manifest}");
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains(reset), "{text}");
}
