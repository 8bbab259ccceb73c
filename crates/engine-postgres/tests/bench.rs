//! Client CPU per statement: dbdelta's client vs sysbench (libpq) doing the same prepared
//! point selects against the same managed server. Run by hand, in release mode:
//!
//! ```text
//! cargo test --release -p dbdelta-engine-postgres --test bench -- --ignored --nocapture
//! ```

mod common;

use common::*;
use dbdelta_engine::{Engine, OpenOptions, Value};
use std::process::Command;
use std::time::Instant;

const N: i64 = 20_000;
const ROWS: i64 = 10_000;

fn cpu_us(who: i32) -> f64 {
    // SAFETY: getrusage only writes the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 * 1e6 + tv.tv_usec as f64;
    t(u.ru_utime) + t(u.ru_stime)
}

/// A cheap deterministic id sequence (xorshift), like a benchmark's uniform keys.
fn ids(n: i64) -> Vec<i64> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + (x % ROWS as u64) as i64
        })
        .collect()
}

fn run_ours(eng: &dbdelta_engine_postgres::PostgresEngine, prepared: bool) -> (f64, f64) {
    let c = if prepared {
        eng.connect().unwrap()
    } else {
        let t = dbdelta_model::TargetSpec::parse(&format!(
            "x=postgres://dbdelta@{}/dbdelta",
            eng.address()
        ))
        .unwrap();
        let o = OpenOptions {
            prepared: false,
            ..OpenOptions::default()
        };
        dbdelta_engine_postgres::open(&t, std::path::Path::new("/x"), &o)
            .unwrap()
            .connect()
            .unwrap()
    };
    let mut c = c;
    let st = c.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
    let keys = ids(N);
    for k in &keys[..1000] {
        c.execute(st, &[Value::Int(*k)]).unwrap();
    }
    let cpu0 = cpu_us(libc::RUSAGE_THREAD);
    let t0 = Instant::now();
    let mut rows = 0;
    for k in &keys {
        rows += c.execute(st, &[Value::Int(*k)]).unwrap().rows;
    }
    let wall = t0.elapsed().as_secs_f64() * 1e6 / N as f64;
    let cpu = (cpu_us(libc::RUSAGE_THREAD) - cpu0) / N as f64;
    assert_eq!(rows, N as u64);
    (cpu, wall)
}

#[test]
#[ignore = "micro-benchmark; run by hand in release mode"]
fn client_cpu_per_point_select() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let eng = start(dir.path(), "?shared_buffers=128MB");
    let mut c = eng.connect().unwrap();
    c.batch(DDL).unwrap();
    c.bulk_insert("sbtest1", &mut Rows { n: ROWS, i: 0 })
        .unwrap();
    c.query("VACUUM ANALYZE sbtest1").unwrap();

    let (cpu, wall) = run_ours(&eng, true);
    println!("dbdelta prepared:    client CPU {cpu:.2} us/stmt, wall {wall:.2} us/stmt ({N} point selects)");
    let (cpu, wall) = run_ours(&eng, false);
    println!("dbdelta no-prepared: client CPU {cpu:.2} us/stmt, wall {wall:.2} us/stmt");

    let Ok(path) = which("sysbench") else {
        println!("sysbench not installed: no comparison");
        return;
    };
    let addr = eng.address();
    let (host, port) = addr.rsplit_once(':').unwrap();
    let common = [
        "--db-driver=pgsql".to_string(),
        format!("--pgsql-host={host}"),
        format!("--pgsql-port={port}"),
        "--pgsql-user=dbdelta".into(),
        "--pgsql-db=dbdelta".into(),
        "--tables=1".into(),
        format!("--table-size={ROWS}"),
        "--threads=1".into(),
        "--time=0".into(),
        "--rand-type=uniform".into(),
    ];
    for (mode, extra) in [
        ("prepared", None),
        ("no-prepared", Some("--db-ps-mode=disable")),
    ] {
        let before = cpu_us(libc::RUSAGE_CHILDREN);
        let t0 = Instant::now();
        let out = Command::new(&path)
            .args(&common)
            .arg(format!("--events={N}"))
            .args(extra)
            .args(["oltp_point_select", "run"])
            .output()
            .unwrap();
        let wall = t0.elapsed().as_secs_f64() * 1e6 / N as f64;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cpu = (cpu_us(libc::RUSAGE_CHILDREN) - before) / N as f64;
        println!(
            "sysbench {mode:11}: client CPU {cpu:.2} us/stmt, wall {wall:.2} us/stmt (incl. process start)"
        );
    }
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .ok_or(())
}
