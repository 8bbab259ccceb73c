//! Tests against a real MariaDB that each test starts itself from /usr (Debian's
//! mariadb-server). They skip, with a message, only when /usr/sbin/mariadbd is missing and
//! CI is not set.

use dbdelta_engine::{Engine, ErrorKind, OpenOptions, OwnedValue, RowSource, SettleWait, Value};
use dbdelta_engine_mysql::{open, Flavor, MysqlEngine};
use dbdelta_model::TargetSpec;
mod common;

use common::{have_mariadb, start};
use std::path::Path;
use std::time::{Duration, Instant};

/// True when the process is gone (or a zombie about to be reaped).
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// sysbench-like rows: k, c (119 chars), pad (59 chars).
struct Rows {
    left: u64,
    cols: Vec<&'static str>,
}

impl RowSource for Rows {
    fn columns(&self) -> &[&'static str] {
        &self.cols
    }
    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        out.push(OwnedValue::Int((self.left % 1000) as i64));
        out.push(OwnedValue::Text(format!("{:0>119}", self.left)));
        // One row in a thousand has non-ASCII text and a tab.
        let pad = match self.left % 1000 {
            0 => "ünï\t",
            _ => "p'a\\d",
        };
        out.push(OwnedValue::Text(pad.to_string()));
        true
    }
}

/// Rows that all collide with id 1.
struct DupRows(u32);

impl RowSource for DupRows {
    fn columns(&self) -> &[&'static str] {
        &["id", "k"]
    }
    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.0 == 0 {
            return false;
        }
        self.0 -= 1;
        out.extend([OwnedValue::Int(1), OwnedValue::Int(1)]);
        true
    }
}

const DDL: &str = "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB";

#[test]
fn managed_server_end_to_end() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut engine = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M&max_connections=77",
        dir.path(),
        &OpenOptions::default(),
    );
    assert_eq!(engine.flavor(), Flavor::MariaDb);
    let pid = engine.server_pids()[0];
    assert!(engine.data_dir().unwrap().join("mysql").is_dir());
    assert!(engine.log_path().unwrap().exists());
    assert_eq!(engine.server_log().as_deref(), engine.log_path());

    // info: version, flavor, settings read back.
    let info = engine.info().unwrap();
    assert!(info.version.contains("MariaDB"), "{}", info.version);
    assert_eq!(info.settings["flavor"], "MariaDB");
    assert_eq!(info.settings["innodb_buffer_pool_size"], "67108864");
    assert_eq!(info.settings["max_connections"], "77");
    assert!(info.settings.contains_key("performance_schema"));

    let mut c = engine.connect().unwrap();
    c.batch(DDL).unwrap();
    assert_eq!(
        c.query_scalar("SELECT DATABASE()").unwrap().as_deref(),
        Some("dbdelta")
    );
    assert_eq!(c.query_scalar("SELECT NULL").unwrap(), None);

    // Bulk load of 10k rows, then count.
    let mut rows = Rows {
        left: 10_000,
        cols: vec!["k", "c", "pad"],
    };
    assert_eq!(c.bulk_insert("sbtest1", &mut rows).unwrap(), 10_000);
    assert_eq!(
        c.query_scalar("SELECT COUNT(*) FROM sbtest1")
            .unwrap()
            .as_deref(),
        Some("10000")
    );
    assert_eq!(
        c.query_scalar("SELECT MAX(id) FROM sbtest1")
            .unwrap()
            .as_deref(),
        Some("10000")
    );
    let count = |c: &mut Box<dyn dbdelta_engine::Connection>, sql: &str| {
        c.query_scalar(sql).unwrap().unwrap_or_default()
    };
    assert_eq!(
        count(
            &mut c,
            r"SELECT COUNT(*) FROM sbtest1 WHERE pad = 'p''a\\d'"
        ),
        "9990"
    );
    assert_eq!(
        count(&mut c, r"SELECT COUNT(*) FROM sbtest1 WHERE pad = 'ünï\t'"),
        "10"
    );
    // A load that hits duplicate keys fails instead of silently skipping rows.
    let e = c.bulk_insert("sbtest1", &mut DupRows(3)).unwrap_err();
    assert!(e.message.contains("duplicate"), "{e}");
    // Several chunks (4 MiB each) loaded concurrently: AUTO_INCREMENT ids stay dense.
    c.batch(&DDL.replace("sbtest1", "sbtest3")).unwrap();
    let mut rows = Rows {
        left: 60_000,
        cols: vec!["k", "c", "pad"],
    };
    assert_eq!(c.bulk_insert("sbtest3", &mut rows).unwrap(), 60_000);
    assert_eq!(
        count(
            &mut c,
            "SELECT CONCAT(COUNT(*), ' ', MIN(id), ' ', MAX(id)) FROM sbtest3"
        ),
        "60000 1 60000"
    );
    // Without LOCAL INFILE (MySQL 8's default) the load falls back to multi-row INSERTs.
    c.query("SET GLOBAL local_infile = 0").unwrap();
    c.batch(&DDL.replace("sbtest1", "sbtest2")).unwrap();
    let mut rows = Rows {
        left: 3_000,
        cols: vec!["k", "c", "pad"],
    };
    assert_eq!(c.bulk_insert("sbtest2", &mut rows).unwrap(), 3_000);
    assert_eq!(
        count(
            &mut c,
            r"SELECT COUNT(*) FROM sbtest2 WHERE pad = 'p''a\\d'"
        ),
        "2997"
    );
    assert_eq!(
        count(&mut c, r"SELECT COUNT(*) FROM sbtest2 WHERE pad = 'ünï\t'"),
        "3"
    );
    let e = c.bulk_insert("sbtest2", &mut DupRows(2)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Retryable, "{e}");
    c.query("SET GLOBAL local_infile = 1").unwrap();

    // Prepared statements: counted rows, affected rows, 100-parameter IN list.
    let point = c.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
    let o = c.execute(point, &[Value::Int(7)]).unwrap();
    assert!(o.has_result && o.rows == 1 && o.affected == 0, "{o:?}");
    let o = c.execute(point, &[Value::Int(10_001)]).unwrap();
    assert!(o.has_result && o.rows == 0, "{o:?}");
    let range = c
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    assert_eq!(
        c.execute(range, &[Value::Int(1), Value::Int(100)])
            .unwrap()
            .rows,
        100
    );
    let upd = c.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?").unwrap();
    let o = c.execute(upd, &[Value::Int(3)]).unwrap();
    assert!(!o.has_result && o.affected == 1, "{o:?}");
    let marks = vec!["?"; 100].join(",");
    let inlist = c
        .prepare(&format!("SELECT id FROM sbtest1 WHERE id IN ({marks})"))
        .unwrap();
    let ids: Vec<Value> = (1..=100).map(|i| Value::Int(i * 7)).collect();
    assert_eq!(c.execute(inlist, &ids).unwrap().rows, 100);
    let setc = c.prepare("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
    let o = c
        .execute(setc, &[Value::Text("x'y\\z"), Value::Int(9)])
        .unwrap();
    assert_eq!(o.affected, 1);
    // Same statement again (types not resent), then with different parameter types.
    assert_eq!(c.execute(point, &[Value::Int(9)]).unwrap().rows, 1);
    assert_eq!(c.execute(point, &[Value::Text("9")]).unwrap().rows, 1);
    assert_eq!(
        c.query_scalar("SELECT c FROM sbtest1 WHERE id=9")
            .unwrap()
            .as_deref(),
        Some("x'y\\z")
    );
    assert!(c.execute(point, &[]).is_err());

    // Transactions.
    c.query("BEGIN").unwrap();
    let del = c.prepare("DELETE FROM sbtest1 WHERE id=?").unwrap();
    assert_eq!(c.execute(del, &[Value::Int(10)]).unwrap().affected, 1);
    c.rollback().unwrap();
    assert_eq!(c.execute(point, &[Value::Int(10)]).unwrap().rows, 1);
    c.query("BEGIN").unwrap();
    assert_eq!(c.execute(del, &[Value::Int(10)]).unwrap().affected, 1);
    let o = c.query("COMMIT").unwrap();
    assert!(!o.has_result && o.affected == 0);
    assert_eq!(c.execute(point, &[Value::Int(10)]).unwrap().rows, 0);

    // Duplicate key → Retryable; the connection stays usable.
    let ins = c
        .prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
        .unwrap();
    let e = c
        .execute(
            ins,
            &[
                Value::Int(1),
                Value::Int(1),
                Value::Text("c"),
                Value::Text("p"),
            ],
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Retryable, "{e}");
    assert!(e.message.contains("1062"), "{e}");
    let e = c.query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Statement);
    assert!(e.message.contains("1146"), "{e}");
    assert_eq!(c.query("SELECT 1").unwrap().rows, 1);

    // Plain-text scan and multi-statement batch.
    let o = c.query("SELECT * FROM sbtest1").unwrap();
    assert!(o.has_result && o.rows == 9_999, "{o:?}");
    c.batch("CREATE INDEX k_1 ON sbtest1(k); ANALYZE TABLE sbtest1")
        .unwrap();

    // External target by URL: a user with a password, text protocol (no prepared).
    c.query("CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'S3cret-pw'")
        .unwrap();
    c.query("GRANT ALL ON dbdelta.* TO 'bench'@'127.0.0.1'")
        .unwrap();
    let port = engine.port().unwrap();
    let ext = start(
        &format!("ext=mysql://bench:S3cret-pw@127.0.0.1:{port}/dbdelta"),
        dir.path(),
        &OpenOptions {
            prepared: false,
            ..OpenOptions::default()
        },
    );
    assert!(ext.server_pids().is_empty());
    let mut x = ext.connect().unwrap();
    let p = x
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    assert_eq!(
        x.execute(p, &[Value::Int(20), Value::Int(69)])
            .unwrap()
            .rows,
        50
    );
    let p = x.prepare("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
    assert_eq!(
        x.execute(p, &[Value::Text("it's"), Value::Int(11)])
            .unwrap()
            .affected,
        1
    );
    assert_eq!(
        x.query_scalar("SELECT c FROM sbtest1 WHERE id=11")
            .unwrap()
            .as_deref(),
        Some("it's")
    );
    let p = x.prepare("INSERT INTO sbtest1 (id) VALUES (?)").unwrap();
    assert_eq!(
        x.execute(p, &[Value::Int(2)]).unwrap_err().kind,
        ErrorKind::Retryable
    );
    drop(x);
    drop(ext);

    // Wrong password: a clear Config error that never shows the password.
    let spec = TargetSpec::parse(&format!(
        "ext=mysql://bench:Wrong-pw-123@127.0.0.1:{port}/dbdelta"
    ))
    .unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("access denied"), "{e}");
    assert!(
        !e.message.contains("Wrong-pw-123") && !format!("{e:?}").contains("Wrong-pw-123"),
        "{e}"
    );
    // Unknown database.
    let spec = TargetSpec::parse(&format!("ext=mysql://root@127.0.0.1:{port}/nope")).unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("nope"), "{e}");

    // Settle: analyze, flush dirty pages, restore the settings.
    let before = c
        .query_scalar("SELECT @@innodb_max_dirty_pages_pct")
        .unwrap();
    // The whole settle time is waited out, not only until the pool looks clean.
    let stopping = || false;
    let wait = SettleWait {
        at_least: Duration::from_secs(2),
        why: "a test's 2 s",
        stopping: &stopping,
    };
    let t = Instant::now();
    let report = engine.settle(&["sbtest1".to_string()], &wait).unwrap();
    let took = t.elapsed();
    assert!(
        (Duration::from_secs(2)..Duration::from_secs(30)).contains(&took),
        "settle took {took:?}"
    );
    assert_eq!(report.actions[0], "ANALYZE TABLE `sbtest1`");
    let waited = report.actions.last().unwrap();
    assert!(
        waited.starts_with("waited ")
            && waited.contains("lasted 2.0 s (a test's 2 s)")
            && waited.contains("dirty pages"),
        "{:?}",
        report.actions
    );
    eprintln!("settle: {:?}", report.actions);
    assert_eq!(
        c.query_scalar("SELECT @@innodb_max_dirty_pages_pct")
            .unwrap(),
        before
    );
    assert!(engine
        .settle(&["bad name".to_string()], &SettleWait::none())
        .is_err());

    // Explicit shutdown stops the server; a dead server is a Connection error.
    engine.shutdown().unwrap();
    assert!(gone(pid));
    let e = c.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Connection, "{e}");
}

#[test]
fn server_stops_on_drop_and_on_panic() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = start(
        "m=mysql:/usr",
        &dir.path().join("a"),
        &OpenOptions::default(),
    );
    let pid = engine.server_pids()[0];
    assert!(!gone_now(pid));
    drop(engine);
    assert!(gone(pid), "server {pid} still runs after drop");

    let scratch = dir.path().join("b");
    let pid = std::sync::Mutex::new(0u32);
    let r = std::panic::catch_unwind(|| {
        let engine = start("m=mysql:/usr", &scratch, &OpenOptions::default());
        *pid.lock().unwrap() = engine.server_pids()[0];
        let _c = engine.connect().unwrap();
        panic!("boom while the server runs");
    });
    assert!(r.is_err());
    let pid = *pid.lock().unwrap();
    assert!(pid > 0);
    assert!(gone(pid), "server {pid} still runs after a panic");
}

fn gone_now(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn bad_basedir_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse("m=mysql:/nonexistent/mariadb").unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("/nonexistent/mariadb"), "{e}");
    assert!(e.message.contains("apt-get install mariadb-server"), "{e}");
    // A basedir that exists but holds no server.
    let spec = TargetSpec::parse(&format!("m=mysql:{}", dir.path().display())).unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    // No location at all, a reserved setting, and unsupported TLS/compression.
    let e = open(
        &TargetSpec::parse("m=mysql").unwrap(),
        dir.path(),
        &OpenOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("mysql:/usr"), "{e}");
    if have_mariadb() {
        let spec = TargetSpec::parse("m=mysql:/usr?port=3306").unwrap();
        let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("'port'"), "{e}");
    }
    // ssl_ca is the only parameter of an external target, and only with --tls.
    let spec = TargetSpec::parse("x=mysql://root@127.0.0.1:1/db?ssl_ca=/nonexistent.pem").unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("--tls"), "{e}");
    let e = open(&spec, dir.path(), &tls_opts()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("/nonexistent.pem"), "{e}");
    if have_mariadb() {
        // A managed target with its own certificate must name its CA.
        let spec = TargetSpec::parse("m=mysql:/usr?ssl_cert=/x.pem&ssl_key=/x.key").unwrap();
        let e = open(&spec, dir.path(), &tls_opts()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("ssl_ca"), "{e}");
        // ... and a CA alone does not go with the certificate dbdelta makes.
        let spec = TargetSpec::parse("m=mysql:/usr?ssl_ca=/x.pem").unwrap();
        let e = open(&spec, dir.path(), &tls_opts()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("ssl_cert"), "{e}");
    }
}

fn tls_opts() -> OpenOptions {
    OpenOptions {
        tls: true,
        ..OpenOptions::default()
    }
}

/// A session status variable of a fresh connection.
fn session_status(engine: &MysqlEngine, name: &str) -> String {
    let mut c = engine.connect().unwrap();
    c.query_scalar(&format!(
        "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = '{name}'"
    ))
    .unwrap()
    .unwrap_or_default()
}

/// Table, bulk load (LOAD DATA LOCAL), prepared and text statements, a large result.
fn exercise(engine: &MysqlEngine) {
    let mut c = engine.connect().unwrap();
    c.batch(DDL).unwrap();
    let mut rows = Rows {
        left: 20_000,
        cols: vec!["k", "c", "pad"],
    };
    assert_eq!(c.bulk_insert("sbtest1", &mut rows).unwrap(), 20_000);
    let st = c
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    for i in 0..200 {
        let o = c
            .execute(st, &[Value::Int(i * 10 + 1), Value::Int(i * 10 + 100)])
            .unwrap();
        assert_eq!(o.rows, 100);
    }
    let up = c
        .prepare("UPDATE sbtest1 SET k = k + 1 WHERE id = ?")
        .unwrap();
    assert_eq!(c.execute(up, &[Value::Int(5)]).unwrap().affected, 1);
    // A result of several MiB: many compressed frames, rows cut across them.
    let all = c.query("SELECT * FROM sbtest1").unwrap();
    assert_eq!(all.rows, 20_000);
    let long = format!("SELECT '{}' AS x", "y".repeat(300_000));
    assert_eq!(c.query(&long).unwrap().rows, 1);
    assert_eq!(
        c.query_scalar("SELECT SUM(k) FROM sbtest1")
            .unwrap()
            .as_deref(),
        Some(
            ((0..20_000u64).map(|i| i % 1000).sum::<u64>() + 1)
                .to_string()
                .as_str()
        )
    );
    // Row values (TPC-C reads them): binary rows of a prepared statement decoded by column
    // type, text rows of a plain query, NULLs, and a NULL parameter.
    let mut kept = dbdelta_engine::Rows::new();
    let typed = c
        .prepare(
            "SELECT id, CAST(? AS DECIMAL(6,2)), CAST('2026-11-25 03:04:05' AS DATETIME), \
             CAST(-3 AS SIGNED), 2.5e0, NULL, ? IS NULL FROM sbtest1 WHERE id BETWEEN 5 AND 6",
        )
        .unwrap();
    let params = [Value::Text("12.34"), Value::Null];
    let op = dbdelta_engine::Op::Execute {
        stmt: typed,
        params: &params,
    };
    for _ in 0..2 {
        let o = c.run_rows(&op, &mut kept).unwrap();
        assert_eq!((o.rows, kept.len()), (2, 2));
        assert_eq!(kept.int(1, 0).unwrap(), 6);
        assert_eq!(kept.get(0, 1), Some("12.34"));
        assert_eq!(kept.get(0, 2), Some("2026-11-25 03:04:05"));
        assert_eq!(kept.int(0, 3).unwrap(), -3);
        assert_eq!(kept.num(0, 4).unwrap(), 2.5);
        assert_eq!(kept.get(0, 5), None);
        assert_eq!(kept.int(0, 6).unwrap(), 1, "a NULL parameter");
    }
    let o = c
        .run_rows(
            &dbdelta_engine::Op::Query("SELECT k, NULL FROM sbtest1 WHERE id = 5"),
            &mut kept,
        )
        .unwrap();
    let k = c
        .query_scalar("SELECT k FROM sbtest1 WHERE id = 5")
        .unwrap()
        .unwrap();
    assert_eq!(
        (o.rows, kept.get(0, 0), kept.get(0, 1)),
        (1, Some(k.as_str()), None)
    );
    c.batch("DROP TABLE sbtest1").unwrap();
    // Compressed and TLS connections cannot be multiplexed: they give themselves back,
    // still usable.
    let mut back = c
        .into_session()
        .expect_err("a compressed or TLS connection split into a session");
    assert_eq!(back.query("SELECT 1").unwrap().rows, 1);
}

#[test]
fn managed_server_with_compression() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = OpenOptions {
        compress: true,
        ..OpenOptions::default()
    };
    let engine = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M",
        dir.path(),
        &opts,
    );
    assert_eq!(session_status(&engine, "COMPRESSION"), "ON");
    assert_eq!(session_status(&engine, "SSL_CIPHER"), "");
    assert_eq!(engine.info().unwrap().settings["compression"], "on");
    exercise(&engine);
    // The text protocol too.
    let engine2 = {
        let spec = TargetSpec::parse(&format!(
            "x=mysql://root@127.0.0.1:{}/dbdelta",
            engine.port().unwrap()
        ))
        .unwrap();
        open(
            &spec,
            dir.path(),
            &OpenOptions {
                prepared: false,
                ..opts.clone()
            },
        )
        .unwrap()
    };
    assert_eq!(session_status(&engine2, "COMPRESSION"), "ON");
    exercise(&engine2);
}

#[test]
fn managed_server_with_tls() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M",
        &dir.path().join("s"),
        &tls_opts(),
    );
    let cipher = session_status(&engine, "SSL_CIPHER");
    assert!(!cipher.is_empty(), "no TLS cipher");
    eprintln!("cipher: {cipher}");
    assert_eq!(session_status(&engine, "COMPRESSION"), "OFF");
    assert_eq!(engine.info().unwrap().settings["tls"], "on");
    exercise(&engine);

    // The same server as an external target: trusted through ssl_ca, with compression too.
    let port = engine.port().unwrap();
    let ca = dir
        .path()
        .join("s")
        .canonicalize()
        .unwrap()
        .join("tls/ca.pem");
    let spec = TargetSpec::parse(&format!(
        "x=mysql://root@127.0.0.1:{port}/dbdelta?ssl_ca={}",
        ca.display()
    ))
    .unwrap();
    let both = OpenOptions {
        compress: true,
        ..tls_opts()
    };
    let ext = open(&spec, dir.path(), &both).unwrap();
    assert!(!session_status(&ext, "SSL_CIPHER").is_empty());
    assert_eq!(session_status(&ext, "COMPRESSION"), "ON");
    exercise(&ext);

    // Another CA, and a host name the certificate does not carry: refused, as Config errors.
    let other = dir.path().join("other-ca.pem");
    let out = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=not the right CA", "-keyout"])
        .arg(dir.path().join("other-ca.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = TargetSpec::parse(&format!(
        "x=mysql://root@127.0.0.1:{port}/dbdelta?ssl_ca={}",
        other.display()
    ))
    .unwrap();
    let e = open(&spec, dir.path(), &tls_opts()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(
        e.message.contains("TLS") && e.message.contains("certificate"),
        "{e}"
    );
    eprintln!("wrong CA: {e}");
    let spec = TargetSpec::parse(&format!(
        "x=mysql://root@localhost:{port}/dbdelta?ssl_ca={}",
        ca.display()
    ))
    .unwrap();
    // localhost is in the certificate: accepted (when it resolves to the loopback).
    if let Ok(e) = open(&spec, dir.path(), &tls_opts()) {
        assert!(!session_status(&e, "SSL_CIPHER").is_empty());
    }
    // A managed target that brings its own certificate and CA.
    let tls_dir = dir.path().join("s").canonicalize().unwrap().join("tls");
    let own = start(
        &format!(
            "own=mysql:/usr?innodb_buffer_pool_size=64M&ssl-cert={}&ssl-key={}&ssl_ca={}",
            tls_dir.join("server.pem").display(),
            tls_dir.join("server.key").display(),
            ca.display()
        ),
        &dir.path().join("own"),
        &tls_opts(),
    );
    assert!(!session_status(&own, "SSL_CIPHER").is_empty());
    assert!(!dir.path().join("own/tls").exists());
    drop(own);

    // Without --tls the server still accepts plain connections.
    let spec = TargetSpec::parse(&format!("x=mysql://root@127.0.0.1:{port}/dbdelta")).unwrap();
    let plain = open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(session_status(&plain, "SSL_CIPHER"), "");
}

#[test]
fn tls_to_a_server_without_tls_is_refused() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M&ssl=0",
        dir.path(),
        &OpenOptions::default(),
    );
    let port = engine.port().unwrap();
    let spec = TargetSpec::parse(&format!(
        "x=mysql://root@127.0.0.1:{port}/dbdelta?ssl_ca=/etc/ssl/certs/ca-certificates.crt"
    ))
    .unwrap();
    if !Path::new("/etc/ssl/certs/ca-certificates.crt").exists() {
        return;
    }
    let e = open(&spec, dir.path(), &tls_opts()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("does not accept TLS"), "{e}");
}

#[test]
fn server_that_fails_to_start_reports_its_log() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, setting) in [
        "no_such_option_xyz=1",
        "innodb_buffer_pool_size=banana",
        "init_file=/nonexistent/dbdelta.sql",
    ]
    .iter()
    .enumerate()
    {
        let spec = TargetSpec::parse(&format!("m=mysql:/usr?{setting}")).unwrap();
        let t = Instant::now();
        let e = open(
            &spec,
            &dir.path().join(i.to_string()),
            &OpenOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config, "{e}");
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "took {:?}",
            t.elapsed()
        );
        let key = setting.split('=').next().unwrap();
        let value = setting.split('=').nth(1).unwrap();
        assert!(
            e.message.contains(key) || e.message.contains(value),
            "error should quote the log: {e}"
        );
        eprintln!("{setting}: {e}");
    }
}

#[test]
fn unreachable_external_server_is_a_connection_error() {
    let port = dbdelta_kit::server::free_loopback_port().unwrap();
    let spec = TargetSpec::parse(&format!("x=mysql://root:pw@127.0.0.1:{port}/db")).unwrap();
    let e = open(&spec, Path::new("/tmp"), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Connection, "{e}");
    assert!(
        e.message.contains(&port.to_string()) && !e.message.contains(":pw"),
        "{e}"
    );
}

/// `binlog_reset=true` on a managed MariaDB with binary logging on (the published sysbench
/// scripts' `reset master`): the hook
/// before write steps drops every binary log (one small file is left), the settle begins
/// with the same reset, and the manifest's settings say so. Without `log_bin` nothing is run.
#[test]
fn binlog_reset_before_write_steps() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = start(
        "maria=mysql:/usr?log_bin=binlog&binlog_reset=true",
        dir.path(),
        &OpenOptions::default(),
    );
    let mut c = engine.connect().unwrap();
    let logs =
        |c: &mut Box<dyn dbdelta_engine::Connection>| c.query("SHOW BINARY LOGS").unwrap().rows;
    // A few logs' worth: writes, and two rotations.
    c.batch(DDL).unwrap();
    let mut rows = Rows {
        left: 2_000,
        cols: vec!["k", "c", "pad"],
    };
    c.bulk_insert("sbtest1", &mut rows).unwrap();
    c.query("FLUSH BINARY LOGS").unwrap();
    c.query("FLUSH BINARY LOGS").unwrap();
    assert!(logs(&mut c) >= 3);
    let first = engine.data_dir().unwrap().join("binlog.000001");
    let big = std::fs::metadata(&first).unwrap().len();
    assert!(big > 100_000, "the load is in the first log: {big} bytes");

    let done = engine.before_write_step().unwrap();
    assert_eq!(
        done.as_deref(),
        Some("RESET MASTER (binary logging is on, binlog_reset=true)")
    );
    assert_eq!(logs(&mut c), 1);
    assert_eq!(
        c.query_scalar("SHOW BINARY LOGS").unwrap().as_deref(),
        Some("binlog.000001")
    );
    let small = std::fs::metadata(&first).unwrap().len();
    assert!(
        small < 4096,
        "a fresh log holds its header only: {small} bytes"
    );

    let report = engine
        .settle(&["sbtest1".to_string()], &SettleWait::none())
        .unwrap();
    assert_eq!(
        report.actions[0],
        "RESET MASTER (binary logging is on, binlog_reset=true)"
    );
    let info = engine.info().unwrap();
    assert_eq!(
        info.settings["binlog_reset"],
        "RESET MASTER before every write step and settle"
    );
    assert!(!info.settings.contains_key("binlog-reset"));

    // Asked for without a binary log: nothing to do, and the manifest says why.
    let dir = tempfile::tempdir().unwrap();
    let plain = start(
        "plain=mysql:/usr?binlog_reset=true",
        dir.path(),
        &OpenOptions::default(),
    );
    assert_eq!(plain.before_write_step().unwrap(), None);
    assert!(plain.info().unwrap().settings["binlog_reset"].contains("log_bin is off"));
}

#[test]
fn a_bad_binlog_reset_value_names_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse("m=mysql:/usr?binlog_reset=maybe").unwrap();
    let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("binlog_reset=maybe"), "{e}");
    // Refused before any server starts.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
