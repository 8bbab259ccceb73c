//! Client CPU per statement and bulk-load speed against a managed MariaDB from /usr.
//!
//! ```text
//! cargo run --release -p dbdelta-engine-mysql --example point_select_cpu [ROWS] [STATEMENTS]
//! ```
//!
//! Loads ROWS (default 100000) sysbench-like rows into sbtest1 (then the k index, as
//! sysbench prepare does), and runs STATEMENTS (default 20000) point selects on one
//! connection, prepared and then as text, printing client CPU µs per statement (getrusage
//! of this thread). With `DBDELTA_MYSQL_URL=mysql://root@127.0.0.1:PORT/sbtest` it skips the
//! load and measures against that server's sbtest1 of ROWS rows.
//! With `SYSBENCH=1` it also times `sysbench oltp_point_select prepare` of ROWS rows into
//! database sbtest of the same managed server.

use dbdelta_engine::{Connection, Engine, OpenOptions, OwnedValue, RowSource, Value};
use dbdelta_model::TargetSpec;
use std::time::Instant;

/// sysbench's row content: k uniform, c = 10 groups of 11 digits, pad = 5 groups.
struct SbRows {
    left: u64,
    table_size: u64,
    rng: u64,
}

impl SbRows {
    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
    fn digits(&mut self, groups: usize) -> String {
        let mut s = String::with_capacity(groups * 12);
        for g in 0..groups {
            if g > 0 {
                s.push('-');
            }
            for _ in 0..11 {
                s.push(char::from(b'0' + (self.next() % 10) as u8));
            }
        }
        s
    }
}

impl RowSource for SbRows {
    fn columns(&self) -> &[&'static str] {
        &["k", "c", "pad"]
    }
    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        let k = 1 + self.next() % self.table_size;
        out.push(OwnedValue::Int(k as i64));
        let c = self.digits(10);
        out.push(OwnedValue::Text(c));
        let pad = self.digits(5);
        out.push(OwnedValue::Text(pad));
        true
    }
}

fn thread_cpu_us() -> f64 {
    // SAFETY: getrusage writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn children_cpu_us() -> f64 {
    // SAFETY: getrusage writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// sysbench's client CPU per point select on the same server: (run of n - run of 1) / (n - 1).
fn sysbench_point_selects(port: u16, rows: u64, n: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut cpu = Vec::new();
    let mut qps = String::new();
    for events in [1, n] {
        let before = children_cpu_us();
        let out = std::process::Command::new("sysbench")
            .args([
                "oltp_point_select",
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
                "--mysql-user=root",
                "--mysql-db=sbtest",
                "--tables=1",
                "--threads=1",
                "--time=0",
            ])
            .arg(format!("--mysql-port={port}"))
            .arg(format!("--table-size={rows}"))
            .arg(format!("--events={events}"))
            .arg("run")
            .output()?;
        cpu.push(children_cpu_us() - before);
        if let Some(l) = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains("queries:"))
        {
            qps = l.trim().to_string();
        }
    }
    println!(
        "sysbench (libmariadb, prepared): {qps}; client CPU {:.2} µs/statement",
        (cpu[1] - cpu[0]) / (n - 1) as f64
    );
    Ok(())
}

fn run(
    c: &mut dyn Connection,
    rows: u64,
    n: u64,
    label: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let st = c.prepare("SELECT c FROM sbtest1 WHERE id=?")?;
    let mut x = 88172645463325252u64;
    let mut found = 0;
    let cpu0 = thread_cpu_us();
    let t0 = Instant::now();
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let id = 1 + (x % rows) as i64;
        found += c.execute(st, &[Value::Int(id)])?.rows;
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_us() - cpu0;
    println!(
        "{label}: {n} point selects ({found} rows) in {wall:.2} s = {:.0} qps; client CPU {:.2} µs/statement",
        n as f64 / wall,
        cpu / n as f64
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let n: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(20_000);
    let dir = tempfile::tempdir()?;
    if let Ok(url) = std::env::var("DBDELTA_MYSQL_URL") {
        // An existing server with a loaded sbtest1 (e.g. by sysbench prepare): same server
        // for both clients.
        for prepared in [true, false] {
            let opts = OpenOptions {
                prepared,
                ..OpenOptions::default()
            };
            let e = dbdelta_engine_mysql::open(
                &TargetSpec::parse(&format!("x={url}"))?,
                dir.path(),
                &opts,
            )?;
            let label = if prepared {
                "prepared (binary protocol)"
            } else {
                "text (no prepared)"
            };
            run(e.connect()?.as_mut(), rows, n, label)?;
        }
        return Ok(());
    }
    let spec = TargetSpec::parse("maria=mysql:/usr?innodb_buffer_pool_size=1G")?;
    let t = Instant::now();
    let engine = dbdelta_engine_mysql::open(&spec, dir.path(), &OpenOptions::default())?;
    println!(
        "started {} in {:.1} s",
        engine.version(),
        t.elapsed().as_secs_f64()
    );
    let mut c = engine.connect()?;
    c.batch("CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB")?;
    let t = Instant::now();
    let loaded = c.bulk_insert(
        "sbtest1",
        &mut SbRows {
            left: rows,
            table_size: rows,
            rng: 0x9E3779B97F4A7C15,
        },
    )?;
    let load = t.elapsed().as_secs_f64();
    let t = Instant::now();
    c.query("CREATE INDEX k_1 ON sbtest1(k)")?;
    let index = t.elapsed().as_secs_f64();
    println!(
        "loaded {loaded} rows in {load:.2} s ({:.0} rows/s), k index {index:.2} s, total {:.2} s",
        loaded as f64 / load,
        load + index
    );
    if std::env::var("SYSBENCH").is_ok() {
        c.query("CREATE DATABASE sbtest")?;
        let t = Instant::now();
        let out = std::process::Command::new("sysbench")
            .args([
                "oltp_point_select",
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
                "--mysql-user=root",
                "--mysql-db=sbtest",
                "--tables=1",
            ])
            .arg(format!("--mysql-port={}", engine.port().unwrap_or(3306)))
            .arg(format!("--table-size={rows}"))
            .arg("prepare")
            .output()?;
        println!(
            "sysbench prepare: {:.2} s ({})",
            t.elapsed().as_secs_f64(),
            out.status
        );
    }
    run(c.as_mut(), rows, n, "prepared (binary protocol)")?;
    let text = dbdelta_engine_mysql::open(
        &TargetSpec::parse(&format!(
            "text=mysql://root@127.0.0.1:{}/dbdelta",
            engine.port().unwrap_or(3306)
        ))?,
        dir.path(),
        &OpenOptions {
            prepared: false,
            ..OpenOptions::default()
        },
    )?;
    run(text.connect()?.as_mut(), rows, n, "text (no prepared)")?;
    if std::env::var("SYSBENCH").is_ok() {
        let port = engine.port().unwrap_or(3306);
        for _ in 0..2 {
            sysbench_point_selects(port, rows, n)?;
            run(c.as_mut(), rows, n, "prepared (binary protocol)")?;
        }
    }
    Ok(())
}
