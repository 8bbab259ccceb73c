//! A managed PostgreSQL 15 server end to end: statements, bulk load, settle, info, and the
//! same server reached as an external target (no-prepared mode, password authentication).

mod common;

use common::*;
use dbdelta_engine::{Engine, ErrorKind, OpenOptions, SettleWait, Value};
use dbdelta_model::TargetSpec;
use std::time::{Duration, Instant};

#[test]
fn managed_server_end_to_end() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut eng = start(dir.path(), "?shared_buffers=64MB&synchronous_commit=off");
    assert!(eng.is_managed());
    assert!(eng.log_path().unwrap().is_file());
    assert!(eng.data_dir().unwrap().join("PG_VERSION").is_file());
    let pids = eng.server_pids();
    assert!(pids.len() > 1, "postmaster and its children: {pids:?}");

    let mut c = eng.connect().unwrap();
    c.batch(DDL).unwrap();

    // Bulk load with COPY, including a value that needs escaping.
    let loaded = c
        .bulk_insert("sbtest1", &mut Rows { n: 10_000, i: 0 })
        .unwrap();
    assert_eq!(loaded, 10_000);
    assert_eq!(
        c.query_scalar("SELECT count(*) FROM sbtest1")
            .unwrap()
            .as_deref(),
        Some("10000")
    );
    assert_eq!(
        c.query_scalar("SELECT rtrim(c) FROM sbtest1 WHERE id = 1")
            .unwrap()
            .as_deref(),
        Some(TRICKY)
    );
    assert_eq!(c.query_scalar("SELECT NULL").unwrap(), None);
    assert_eq!(c.query_scalar("SELECT 1 WHERE false").unwrap(), None);
    // A bulk load into a missing table fails cleanly and leaves the connection usable.
    let e = c
        .bulk_insert("nosuch", &mut Rows { n: 1, i: 0 })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Statement, "{e}");
    assert_eq!(c.query_scalar("SELECT 2").unwrap().as_deref(), Some("2"));

    // Prepared statements: rows counted, affected rows parsed.
    let range = c
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    let o = c.execute(range, &[Value::Int(1), Value::Int(100)]).unwrap();
    assert_eq!((o.rows, o.affected, o.has_result), (100, 0, true));
    let o = c
        .execute(range, &[Value::Int(20_000), Value::Int(20_001)])
        .unwrap();
    assert_eq!((o.rows, o.has_result), (0, true));
    let sum = c
        .prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    assert_eq!(
        c.execute(sum, &[Value::Int(1), Value::Int(10)])
            .unwrap()
            .rows,
        1
    );

    let upd = c
        .prepare("UPDATE sbtest1 SET k=k+1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    let o = c.execute(upd, &[Value::Int(1), Value::Int(3)]).unwrap();
    assert_eq!((o.rows, o.affected, o.has_result), (0, 3, false));
    let o = c
        .execute(upd, &[Value::Int(50_000), Value::Int(50_001)])
        .unwrap();
    assert_eq!(o.affected, 0);
    let set_c = c.prepare("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
    assert_eq!(
        c.execute(set_c, &[Value::Text("it's new"), Value::Int(2)])
            .unwrap()
            .affected,
        1
    );
    assert_eq!(
        c.query_scalar("SELECT rtrim(c) FROM sbtest1 WHERE id = 2")
            .unwrap()
            .as_deref(),
        Some("it's new")
    );

    // Row values for workloads that read results (TPC-C): prepared and plain text, NULLs,
    // several rows, and a NULL parameter.
    let mut rows = dbdelta_engine::Rows::new();
    let pick = c
        .prepare("SELECT id, rtrim(c), NULL::int FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY id")
        .unwrap();
    let params = [Value::Int(2), Value::Int(3)];
    let op = dbdelta_engine::Op::Execute {
        stmt: pick,
        params: &params,
    };
    let o = c.run_rows(&op, &mut rows).unwrap();
    assert_eq!((o.rows, rows.len()), (2, 2));
    assert_eq!(rows.int(0, 0).unwrap(), 2);
    assert_eq!(rows.get(0, 1), Some("it's new"));
    assert_eq!(rows.get(0, 2), None, "NULL");
    assert_eq!(rows.int(1, 0).unwrap(), 3);
    let o = c
        .run_rows(
            &dbdelta_engine::Op::Query("SELECT 1.50::numeric(4,2), 'x'"),
            &mut rows,
        )
        .unwrap();
    assert_eq!(
        (o.rows, rows.num(0, 0).unwrap(), rows.get(0, 1)),
        (1, 1.5, Some("x"))
    );
    let is_null = c.prepare("SELECT ?::int IS NULL").unwrap();
    let o = c
        .run_rows(
            &dbdelta_engine::Op::Execute {
                stmt: is_null,
                params: &[Value::Null],
            },
            &mut rows,
        )
        .unwrap();
    assert_eq!((o.rows, rows.get(0, 0)), (1, Some("t")));

    // An IN-list of 100 parameters.
    let marks = vec!["?"; 100].join(", ");
    let inl = c
        .prepare(&format!("SELECT k FROM sbtest1 WHERE id IN ({marks})"))
        .unwrap();
    let ids: Vec<Value<'_>> = (1..=100).map(|i| Value::Int(i * 7)).collect();
    assert_eq!(c.execute(inl, &ids).unwrap().rows, 100);

    // Transactions, delete + insert, and a duplicate key as a retryable error.
    let del = c.prepare("DELETE FROM sbtest1 WHERE id=?").unwrap();
    let ins = c
        .prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
        .unwrap();
    assert_eq!(c.query("BEGIN").unwrap().affected, 0);
    assert_eq!(c.execute(del, &[Value::Int(5)]).unwrap().affected, 1);
    let row = [
        Value::Int(5),
        Value::Int(1),
        Value::Text("c"),
        Value::Text("p"),
    ];
    assert_eq!(c.execute(ins, &row).unwrap().affected, 1);
    let o = c.query("COMMIT").unwrap();
    assert_eq!((o.rows, o.affected, o.has_result), (0, 0, false));
    let e = c.execute(ins, &row).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Retryable, "{e}");
    assert!(e.message.contains("23505"), "{e}");
    // Inside a transaction the error aborts it; rollback makes the connection usable again.
    c.query("BEGIN").unwrap();
    assert!(c.execute(ins, &row).unwrap_err().is_retryable());
    assert!(c.execute(range, &[Value::Int(1), Value::Int(2)]).is_err());
    c.rollback().unwrap();
    assert_eq!(
        c.execute(range, &[Value::Int(1), Value::Int(2)])
            .unwrap()
            .rows,
        2
    );

    // Plain queries report result sets.
    let o = c.query("SELECT id FROM sbtest1 WHERE id <= 10").unwrap();
    assert_eq!((o.rows, o.has_result), (10, true));
    assert_eq!(
        c.query("INSERT INTO sbtest1 (id) VALUES (100001)")
            .unwrap()
            .affected,
        1
    );

    // Bad statements and parameter counts.
    let e = c.prepare("SELEC oops").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Statement);
    assert!(e.message.contains("42601"), "{e}");
    let e = c.execute(range, &[Value::Int(1)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Statement);
    let e = c.query("SELECT 1/0").unwrap_err();
    assert!(e.message.contains("22012"), "{e}");
    assert_eq!(c.query_scalar("SELECT 3").unwrap().as_deref(), Some("3"));

    // settle: VACUUM (ANALYZE, INDEX_CLEANUP ON) per table, then CHECKPOINT, then the
    // rest of the settle time, counted from the settle's start.
    let stopping = || false;
    let wait = SettleWait {
        at_least: Duration::from_millis(1500),
        why: "a test's 1.5 s",
        stopping: &stopping,
    };
    let t = Instant::now();
    let r = eng.settle(&["sbtest1".to_string()], &wait).unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(
        r.actions[..2],
        [
            "VACUUM (ANALYZE, INDEX_CLEANUP ON) sbtest1".to_string(),
            "CHECKPOINT".to_string()
        ]
    );
    assert!(
        r.actions[2].starts_with("waited ")
            && r.actions[2].contains("lasted 1.5 s (a test's 1.5 s)"),
        "{:?}",
        r.actions
    );
    assert!(eng
        .settle(&["x; DROP TABLE sbtest1".to_string()], &SettleWait::none())
        .is_err());

    // info: version and the non-default settings we gave.
    let info = eng.info().unwrap();
    assert!(
        info.version.starts_with("PostgreSQL 15"),
        "{}",
        info.version
    );
    assert_eq!(
        info.settings.get("shared_buffers").map(String::as_str),
        Some("64MB")
    );
    assert_eq!(
        info.settings.get("synchronous_commit").map(String::as_str),
        Some("off")
    );
    assert_eq!(
        info.settings.get("listen_addresses").map(String::as_str),
        Some("127.0.0.1")
    );

    external_same_server(&eng);

    drop(c);
    eng.shutdown().unwrap();
    assert!(eng.server_pids().is_empty());
    for p in pids {
        assert!(gone(p), "pid {p} still running after shutdown");
    }
}

/// The managed server reached as an external target: `--no-prepared` mode and password
/// authentication (scram-sha-256 and md5 required by pg_hba.conf for two roles).
fn external_same_server(eng: &dbdelta_engine_postgres::PostgresEngine) {
    let addr = eng.address();
    let no_ps = OpenOptions {
        prepared: false,
        ..OpenOptions::default()
    };
    let ext = TargetSpec::parse(&format!("ext=postgres://dbdelta@{addr}/dbdelta")).unwrap();
    let e =
        dbdelta_engine_postgres::open(&ext, std::path::Path::new("/nonexistent"), &no_ps).unwrap();
    assert!(!e.is_managed());
    assert!(e.server_pids().is_empty());
    assert_eq!(e.data_dir(), eng.data_dir());
    let mut c = e.connect().unwrap();
    let range = c
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    let o = c.execute(range, &[Value::Int(1), Value::Int(10)]).unwrap();
    assert_eq!((o.rows, o.has_result), (10, true));
    let upd = c.prepare("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
    assert_eq!(
        c.execute(upd, &[Value::Text("o'k \\ x"), Value::Int(3)])
            .unwrap()
            .affected,
        1
    );
    assert_eq!(
        c.query_scalar("SELECT rtrim(c) FROM sbtest1 WHERE id = 3")
            .unwrap()
            .as_deref(),
        Some("o'k \\ x")
    );
    let ins = c
        .prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
        .unwrap();
    let row = [
        Value::Int(3),
        Value::Int(1),
        Value::Text("c"),
        Value::Text("p"),
    ];
    assert!(c.execute(ins, &row).unwrap_err().is_retryable());

    // Password users; pg_hba.conf lines placed before initdb's trust lines.
    c.batch(
        "CREATE ROLE scram_user LOGIN PASSWORD 'Right-Scram-1'; \
         SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'Right-Md5-2'",
    )
    .unwrap();
    let hba = eng.data_dir().unwrap().join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!(
            "host all scram_user 127.0.0.1/32 scram-sha-256\nhost all md5_user 127.0.0.1/32 md5\n{old}"
        ),
    )
    .unwrap();
    c.query("SELECT pg_reload_conf()").unwrap();

    let open = |userinfo: &str, db: &str| {
        let t = TargetSpec::parse(&format!("ext=postgres://{userinfo}@{addr}/{db}")).unwrap();
        dbdelta_engine_postgres::open(
            &t,
            std::path::Path::new("/nonexistent"),
            &OpenOptions::default(),
        )
    };
    // The reload is asynchronous: wait until the wrong password is refused.
    let deadline = Instant::now() + Duration::from_secs(10);
    let err = loop {
        match open("scram_user:Wr0ng-Secret-xyz", "dbdelta") {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(_) => panic!("pg_hba.conf reload did not take effect"),
        }
    };
    assert_eq!(err.kind, ErrorKind::Config, "{err}");
    assert!(err.message.contains("authentication failed"), "{err}");
    assert!(err.message.contains("scram_user"), "{err}");
    assert!(!err.message.contains("Wr0ng-Secret-xyz"), "{err}");
    assert!(!format!("{err:?}").contains("Wr0ng-Secret-xyz"));

    let ok = open("scram_user:Right-Scram-1", "dbdelta").unwrap();
    assert_eq!(
        ok.connect()
            .unwrap()
            .query_scalar("SELECT current_user")
            .unwrap()
            .as_deref(),
        Some("scram_user")
    );
    assert!(!format!("{ok:?}").contains("Right-Scram-1"));
    let e = open("md5_user:bad-md5-pw", "dbdelta").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(!e.message.contains("bad-md5-pw"), "{e}");
    let ok = open("md5_user:Right-Md5-2", "dbdelta").unwrap();
    assert!(ok.connect().is_ok());

    // No password anywhere (PGPASSWORD/pgpass are not set up for these users in tests).
    if std::env::var_os("PGPASSWORD").is_none() {
        let e = open("scram_user", "dbdelta").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("asks for a password"), "{e}");
    }
    // A missing database names the fix.
    let e = open("dbdelta", "no_such_db").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("does not exist"), "{e}");
}

#[test]
fn nothing_listening_is_a_clear_error() {
    let port = dbdelta_kit::server::free_loopback_port().unwrap();
    let t = TargetSpec::parse(&format!("ext=postgres://u@127.0.0.1:{port}/db")).unwrap();
    let e = dbdelta_engine_postgres::open(&t, std::path::Path::new("/x"), &OpenOptions::default())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("is the server running"), "{e}");
}
