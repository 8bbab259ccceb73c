//! The usertable translation (key-value operations as SQL, `dbdelta_engine::usertable`)
//! run against a real SQL engine: SQLite.

use dbdelta_engine::ops::{run_batch, Scratch};
use dbdelta_engine::usertable::*;
use dbdelta_engine::{Connection, Engine, KvKind, KvOp, OpBatch};
use dbdelta_engine_sqlite::SqliteEngine;

fn sqlite(dir: &std::path::Path) -> Box<dyn Connection> {
    let spec =
        dbdelta_model::TargetSpec::parse(&format!("s=sqlite:{}", dir.join("kv.db").display()))
            .unwrap();
    let e = SqliteEngine::open(&spec, dir, &Default::default()).unwrap();
    e.connect().unwrap()
}

fn op<'a>(
    kind: KvKind,
    key: &'a str,
    fields: &'a [u16],
    values: &'a [&'a [u8]],
    count: u32,
) -> KvOp<'a> {
    KvOp {
        kind,
        key: key.as_bytes(),
        fields,
        values,
        count,
    }
}

/// Runs one key-value operation through the translation; returns rows and affected.
fn run(conn: &mut dyn Connection, route: &KvRoute, o: KvOp<'_>) -> (u64, u64) {
    let mut ops = OpBatch::new();
    route.push(&o, &mut ops).unwrap();
    let (mut rows, mut affected) = (0, 0);
    run_batch(conn, &ops, &mut Scratch::default(), |out| {
        rows += out.rows;
        affected += out.affected;
    })
    .unwrap();
    (rows, affected)
}

#[test]
fn every_operation_on_sqlite_through_the_translation() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = sqlite(dir.path());
    conn.batch(&create_sql(DEFAULT_FIELDS)).unwrap();
    let mut rows = UsertableRows::new(20, DEFAULT_FIELDS, |i, key, values| {
        key.push_str(&format!("user{i:04}"));
        for (f, v) in values.iter_mut().enumerate() {
            v.push_str(&format!("v{i}-{f}"));
        }
    })
    .unwrap();
    assert_eq!(conn.bulk_insert(TABLE, &mut rows).unwrap(), 20);
    let route = KvRoute::prepare(&mut *conn, DEFAULT_FIELDS)
        .unwrap()
        .unwrap();
    assert!(matches!(route, KvRoute::Sql(_)));
    let all: Vec<u16> = (0..DEFAULT_FIELDS).collect();
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Read, "user0003", &[], &[], 0)
        )
        .0,
        1
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Read, "user0003", &[4], &[], 0)
        )
        .0,
        1
    );
    assert_eq!(
        run(&mut *conn, &route, op(KvKind::Read, "nobody", &[], &[], 0)).0,
        0
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Scan, "user0005", &[], &[], 5)
        )
        .0,
        5
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Scan, "user0018", &[], &[], 5)
        )
        .0,
        2
    );
    let vals: Vec<&[u8]> = vec![b"new"; usize::from(DEFAULT_FIELDS)];
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Insert, "user9999", &all, &vals, 0)
        )
        .1,
        1
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Update, "user0001", &[2], &[b"x"], 0)
        )
        .1,
        1
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Update, "user0001", &all, &vals, 0)
        )
        .1,
        1
    );
    let (r, a) = run(
        &mut *conn,
        &route,
        op(KvKind::ReadModifyWrite, "user0002", &[7], &[b"rmw"], 0),
    );
    assert_eq!((r, a), (1, 1));
    assert_eq!(
        conn.query_scalar("SELECT FIELD7 FROM usertable WHERE YCSB_KEY='user0002'")
            .unwrap()
            .as_deref(),
        Some("rmw")
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Delete, "user0003", &[], &[], 0)
        )
        .1,
        1
    );
    assert_eq!(
        run(
            &mut *conn,
            &route,
            op(KvKind::Read, "user0003", &[], &[], 0)
        )
        .0,
        0
    );
    // The scan returns keys in order from the start key.
    let first = conn
        .query_scalar(
            "SELECT YCSB_KEY FROM usertable WHERE YCSB_KEY >= 'user0002' ORDER BY YCSB_KEY LIMIT 1",
        )
        .unwrap();
    assert_eq!(first.as_deref(), Some("user0002"));
}

#[test]
fn bad_operations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = sqlite(dir.path());
    conn.batch(&create_sql(3)).unwrap();
    let t = Usertable::prepare(&mut *conn, 3).unwrap();
    let mut ops = OpBatch::new();
    assert!(t
        .translate(&op(KvKind::Read, "k", &[3], &[], 0), &mut ops)
        .is_err());
    assert!(t
        .translate(&op(KvKind::Insert, "k", &[0], &[b"a"], 0), &mut ops)
        .is_err());
    assert!(t
        .translate(&op(KvKind::Update, "k", &[0], &[], 0), &mut ops)
        .is_err());
    assert!(UsertableRows::new(1, 0, |_, _, _: &mut [String]| {}).is_err());
}
