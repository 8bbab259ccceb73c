//! The Insert Benchmark end to end: every step on SQLite and managed PostgreSQL (two targets
//! each: interleaved rounds) and managed MariaDB (one: every step whole) at tiny scale; bad flag combinations exit 2 naming the flag. That the range and
//! point queries use the covering indexes (EXPLAIN) is tested in crates/lab/tests/ibench.rs.

mod common;

use common::{dbdelta, step_results};
use dbdelta_model::{StepKind, StepStatus};

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
const MEASURED: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// Runs every step at tiny scale and checks each target's results and the report.
fn run_all_steps(targets: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut cmd = dbdelta();
    cmd.args(["run", "--quiet", "--suite", "ibench", "--scale", "quick"]);
    for t in targets {
        cmd.args(["-t", t]);
    }
    let out = cmd
        .args([
            "--rows-load",
            "2000",
            "--rows-write",
            "500",
            "--query-secs",
            "2",
        ])
        .arg("--run-dir")
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in targets {
        let name = t.split('=').next().unwrap();
        let rs = step_results(&rd, name);
        let mut measured: Vec<&str> = rs
            .iter()
            .filter(|r| r.kind == StepKind::Measured)
            .map(|r| r.step.as_str())
            .collect();
        measured.dedup();
        assert_eq!(measured, MEASURED, "{name}");
        // Interleaved rounds (two targets) split a step's batches, never its rows: every
        // step inserts the rows it inserts run whole, l.x runs once.
        let rounds = |s: &str| -> Vec<&dbdelta_model::StepResult> {
            rs.iter().filter(|r| r.step == s).collect()
        };
        let inserted = |s: &str| -> u64 {
            rounds(s)
                .iter()
                .filter_map(|r| r.ibench.as_ref())
                .map(|st| st.rows_inserted)
                .sum()
        };
        assert_eq!(inserted("l.i0"), 2000, "{name}");
        assert_eq!(inserted("l.i1"), 400, "{name}");
        assert_eq!(inserted("l.i2"), 100, "{name}");
        assert_eq!(inserted("qr100"), 200, "{name}");
        assert_eq!(inserted("qp1000"), 2000, "{name}");
        assert_eq!(rounds("l.x").len(), 1, "{name}");
        let numbers = |s: &str| -> Vec<u32> {
            let mut n: Vec<u32> = rounds(s).iter().map(|r| r.repeat).collect();
            n.sort_unstable();
            n
        };
        if targets.len() > 1 {
            assert_eq!(numbers("l.i0"), (1..=10).collect::<Vec<_>>(), "{name}");
            assert_eq!(numbers("l.i1"), (1..=8).collect::<Vec<_>>(), "{name}");
            // Paced steps split in whole seconds: two 1-second rounds of --query-secs 2.
            assert_eq!(numbers("qp500"), [1, 2], "{name}");
            assert_eq!(numbers("l.x"), [0], "{name}");
        } else {
            assert_eq!(
                numbers("l.i0"),
                [0],
                "{name}: one target runs every step whole"
            );
        }
        assert!(rs.iter().any(|r| r.kind == StepKind::Settle && r.is_ok()));
        for r in &rs {
            assert_eq!(r.status, StepStatus::Ok, "{name} {}", r.step);
            let Some(st) = &r.ibench else { continue };
            assert!(st.inserts_per_s > 0.0, "{name} {}", r.step);
            if r.step.starts_with('q') {
                assert!(st.queries > 0, "{name} {}: no query ran", r.step);
                assert!(st.target_insert_rate.is_some());
                assert_eq!(st.rows_deleted, st.rows_inserted, "{name} {}", r.step);
            }
            assert!(st.db_bytes.unwrap_or(0) > 0, "{name} {}: no size", r.step);
        }
        // FIFO: every step after l.x leaves the table as large as l.x did.
        let at_end = |s: &str| {
            rs.iter()
                .find(|r| r.step == s)
                .and_then(|r| r.ibench.as_ref())
                .and_then(|st| st.rows_at_end)
        };
        assert_eq!(at_end("l.x"), Some(2100), "{name}");
        for s in &MEASURED[2..] {
            assert_eq!(at_end(s), Some(2100), "{name} {s}");
            for r in rounds(s) {
                let end = r.ibench.as_ref().and_then(|st| st.rows_at_end);
                assert_eq!(end, Some(2100), "{name} {s} round {}", r.repeat);
            }
        }
    }
    if targets.len() > 1 {
        // Rounds give the ratios intervals: the noise-floor line, the verdicts, and l.x's
        // ratio says why it has none.
        let txt = std::fs::read_to_string(rd.join("report.txt")).unwrap();
        for want in [
            "Noise floor:",
            "Verdicts relative to",
            "no interval: 1 round",
        ] {
            assert!(txt.contains(want), "{want} missing:\n{txt}");
        }
    }
    for table in [
        "Absolute throughput",
        "Relative throughput",
        "Background insert rates",
    ] {
        assert!(stdout.contains(table), "{table} missing:\n{stdout}");
    }
    assert!(
        stdout.contains("\ntarget\t100\t100\t500\t500\t1000\t1000"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(
        html.contains("background:#D7D7D7"),
        "the target row is gray"
    );
    let md = dbdelta()
        .args(["report", "--format", "md"])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(md.status.success());
    assert!(String::from_utf8_lossy(&md.stdout).contains("| dbms | l.i0 | l.x |"));
}

#[test]
fn all_steps_run_on_sqlite() {
    run_all_steps(&[
        "wal=sqlite?journal_mode=WAL&synchronous=NORMAL",
        "wal2=sqlite?journal_mode=WAL&synchronous=OFF",
    ]);
}

fn have(path: &str) -> bool {
    common::require(&[path], "scripts/test.sh installs the servers")
}

#[test]
fn all_steps_run_on_managed_postgres() {
    if have(&format!("{PG_BIN}/initdb")) {
        run_all_steps(&[
            &format!("pg=postgres:{PG_BIN}"),
            &format!("async=postgres:{PG_BIN}?synchronous_commit=off"),
        ]);
    }
}

#[test]
fn all_steps_run_on_managed_mariadb() {
    if have("/usr/sbin/mariadbd") {
        run_all_steps(&["maria=mysql:/usr?innodb_buffer_pool_size=64M"]);
    }
}

#[test]
fn bad_combinations_exit_2_naming_the_flag() {
    for (args, flag) in [
        (
            vec!["--suite", "ibench", "--clients", "2", "--one-table"],
            "--one-table",
        ),
        (vec!["--suite", "ibench", "--threads", "2"], "--threads"),
        (vec!["--suite", "ibench", "--clients", "0"], "--clients"),
        (
            vec!["--suite", "ibench", "--query-secs", "0"],
            "--query-secs",
        ),
        (
            vec!["--suite", "ibench", "--rows-load", "10"],
            "--rows-load",
        ),
        (
            vec!["--suite", "sysbench", "--rows-write", "10"],
            "--rows-write",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dbdelta()
            .arg("run")
            .args(&args)
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn suites_lists_and_shows_ibench() {
    let out = dbdelta().arg("suites").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("ibench"));
    let out = dbdelta()
        .args(["suites", "show", "ibench", "--dialect", "mysql"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("FORCE INDEX (pi1_marketsegment)"), "{text}");
    assert!(
        text.contains("qp1000: point queries with 1000 insert/s per client"),
        "{text}"
    );
    assert!(
        text.contains("order by transactionid asc limit 5"),
        "{text}"
    );
}
