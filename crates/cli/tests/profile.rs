//! `run --profile` with real perf: a managed PostgreSQL is profiled during point-query and
//! update-index, a target with `log_statement=all` (work added to every statement) is
//! explained by the logging frames, and without perf the run completes and says why.

mod common;

use common::{dbdelta, succeed};
use std::path::Path;

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// perf is installed and can record here (a container may forbid perf events).
fn perf_works() -> bool {
    let Ok(perf) = dbdelta_profile::check_perf() else {
        eprintln!(
            "SKIPPED: perf is missing or not permitted (apt-get install linux-perf; run as root)"
        );
        return false;
    };
    let dir = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new(perf)
        .args(["record", "-q", "-e", "cpu-clock", "-F", "99", "-g", "-o"])
        .arg(dir.path().join("probe.data"))
        .args(["--", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "`perf record -e cpu-clock` fails under CI (apt-get install linux-perf; scripts/test.sh does)"
        );
        eprintln!("SKIPPED: `perf record -e cpu-clock` fails on this machine");
    }
    ok
}

fn have_pg_and_perf() -> bool {
    common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) && perf_works()
}

fn folded(dir: &Path, label: &str) -> String {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.contains(label) && n.ends_with(".folded")
        })
        .unwrap_or_else(|| panic!("no folded profile of {label} in {}", dir.display()));
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn postgres_profiles_name_its_functions_and_explain_finds_the_logging() {
    if !have_pg_and_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "-t"])
        .arg(format!("pg=postgres:{BIN}"))
        .arg("-t")
        .arg(format!("pglog=postgres:{BIN}?log_statement=all"))
        .args([
            "--steps",
            "point-query,update-index",
            "--read-secs",
            "2",
            "--write-secs",
            "2",
            // perf needs a second or more to start on a loaded machine: it starts with
            // the warm-up and records from the window's start.
            "--warmup-secs",
            "1.5",
            "--table-size",
            "1000",
            "--profile",
            "--profile-freq",
            "999",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let pg = rd.join("profiles/pg");
    // PostgreSQL's own functions are in the stacks of both steps.
    let pq = folded(&pg, "point-query");
    let ui = folded(&pg, "update-index");
    for f in [&pq, &ui] {
        assert!(f.contains(";PostgresMain;"), "{f}");
        assert!(f.contains(";PortalRun"), "{f}");
    }
    assert!(
        ui.contains("ExecInsertIndexTuples") || ui.contains("XLogFlush"),
        "{ui}"
    );
    // Per step: flamegraph, speedscope, info; per non-base target: a differential SVG.
    for stem_part in ["point-query", "update-index"] {
        let names: Vec<String> = std::fs::read_dir(rd.join("profiles/pglog"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.contains(stem_part))
            .collect();
        for ext in [".svg", ".speedscope.json", ".json", ".diff-vs-pg.svg"] {
            assert!(
                names.iter().any(|n| n.ends_with(ext)),
                "{stem_part} has no {ext}: {names:?}"
            );
        }
    }
    let info: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            std::fs::read_dir(&pg)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    let n = p.to_string_lossy();
                    n.contains("point-query") && n.ends_with(".dop1.json")
                })
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(info["samples"].as_u64().unwrap() > 100, "{info}");
    // The known effect: every statement is logged, so the logging frames grew most.
    let out = dbdelta()
        .arg("explain")
        .arg(&rd)
        .args(["--step", "point-query", "--target", "pglog"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logging = ["errfinish", "EmitErrorReport", "send_message_to_server_log"];
    // On a 2-core machine the client competes with the server, so waiting-for-the-client
    // frames move too: a logging frame must be among the first three that grew.
    let grown: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("user-space functions whose share grew most"))
        .skip(2)
        .take(3)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(grown.iter().any(|f| logging.contains(f)), "{text}");
    // The drill-down descends from the top through PostgresMain.
    let legend: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" - ").map(|(_, f)| f))
        .collect();
    assert!(legend.contains(&"PostgresMain"), "{text}");
    assert!(rd.join("profiles/explain.txt").is_file());
    // report.html links the profiled rows to their flamegraphs and shows the drill-down.
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(html.contains("<a href=\"#prof-1-point-query"), "row link");
    assert!(html.contains("<pre class=\"drill\">"), "drill-down table");
    let diff_link = html
        .split("href=\"")
        .filter_map(|s| s.split('"').next())
        .find(|h| h.ends_with(".diff-vs-pg.svg"))
        .expect("a differential flamegraph link");
    assert!(rd.join(diff_link).is_file(), "{diff_link}");
}

/// The second known effect: `shared_buffers=256kB` makes almost every page read miss
/// PostgreSQL's buffer pool, so the buffer-read path (ReadBufferExtended → mdread → pread)
/// must rank among the frames whose share grew most.
#[test]
fn tiny_shared_buffers_rank_the_buffer_read_path_first() {
    if !have_pg_and_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args(["run", "--quiet", "-t"])
            .arg(format!("pg=postgres:{BIN}"))
            .arg("-t")
            .arg(format!("pgsb=postgres:{BIN}?shared_buffers=256kB"))
            .args([
                "--steps",
                "random-points",
                "--read-secs",
                "2",
                "--warmup-secs",
                "1.5",
                "--table-size",
                "20000",
                "--profile",
                "--profile-freq",
                "499",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let out = dbdelta()
        .arg("explain")
        .arg(&rd)
        .args(["--step", "random-points_range=100", "--top", "5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let grown: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("user-space functions whose share grew most"))
        .skip(2)
        .take(3)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let read_path = [
        "ReadBufferExtended",
        "ReadBuffer_common",
        "mdread",
        "FileRead",
        "__libc_pread",
        "__pread64",
        "pread64",
    ];
    assert!(
        grown.iter().any(|f| read_path.contains(f)),
        "top grown {grown:?}:\n{text}"
    );
    // The drill-down path descends into the buffer-read path.
    let legend: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" - ").map(|(_, f)| f))
        .collect();
    assert!(
        legend.iter().any(|f| read_path.contains(f)),
        "legend {legend:?}:\n{text}"
    );
}

#[test]
fn without_perf_the_run_completes_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .env("PATH", &empty)
        .args([
            "run",
            "--quiet",
            "-t",
            "a=sqlite",
            "--steps",
            "point-query",
            "--read-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "--table-size",
            "500",
            "--profile",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("no profiles: --profile: `perf` was not found on PATH; install it"),
        "{stderr}"
    );
    let why = std::fs::read_to_string(rd.join("profiles/NO-PROFILES.txt")).unwrap();
    assert!(why.contains("apt-get install linux-perf"), "{why}");
    // The HTML report says why there are no profiles.
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(
        html.contains("No profiles: --profile was given but no profiles were taken: --profile: `perf` was not found on PATH"),
        "report.html does not say why"
    );
    assert!(rd.join("results/a").is_dir());
    let out = dbdelta()
        .arg("explain")
        .arg(&rd)
        .args(["--step", "point-query"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("perf` was not found on PATH"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn embedded_sqlite_profiles_the_worker_threads() {
    if !perf_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "-t",
                "a=sqlite",
                "--steps",
                "point-query,update-index",
                "--profile-steps",
                "point-query",
                "--read-secs",
                "1",
                "--write-secs",
                "0.3",
                "--warmup-secs",
                "1.5",
                "--table-size",
                "500",
                "--profile-freq",
                "499",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let f = folded(&rd.join("profiles/a"), "point-query");
    assert!(f.contains("sqlite3VdbeExec"), "{f}");
    // --profile-steps: update-index was measured but not profiled.
    let names: Vec<String> = std::fs::read_dir(rd.join("profiles/a"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("update-index")),
        "{names:?}"
    );
}

#[test]
fn a_bad_profile_frequency_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .current_dir(dir.path())
        .args([
            "run",
            "--profile-freq",
            "0",
            "-t",
            "a=sqlite",
            "--steps",
            "point-query",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--profile-freq 0"), "{err}");
    // Rejected before anything was created.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn mariadb_profiles_name_its_cpp_functions() {
    if !common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server") {
        return;
    }
    if !perf_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "-t",
                "maria=mysql:/usr?innodb_buffer_pool_size=64M",
                "--steps",
                "point-query",
                "--read-secs",
                "1.5",
                "--warmup-secs",
                "0.2",
                "--table-size",
                "500",
                "--profile-freq",
                "499",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let f = folded(&rd.join("profiles/maria"), "point-query");
    // mariadbd's threads, C++ names demangled.
    assert!(
        f.contains("dispatch_command") || f.contains("mysql_execute_command"),
        "{f}"
    );
    assert!(f.contains("::"), "no demangled C++ name: {f}");
}
