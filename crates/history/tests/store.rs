//! Store round-trips, pruning, export and schema migration: SQLite (always) and a managed
//! PostgreSQL 15 (when installed).

use dbdelta_history::{
    epoch_seconds, export, open_store, select, series, Filter, Point, PruneRule, SCHEMA_VERSION,
};

fn point(run: &str, started: &str, target: &str, label: &str, repeat: u32, qps: f64) -> Point {
    Point {
        run_id: run.to_string(),
        run_started: started.to_string(),
        host: "h1".to_string(),
        suite: "sysbench".to_string(),
        target: target.to_string(),
        engine: "postgres".to_string(),
        version: format!("PostgreSQL 15 ({run})"),
        build: "postgres:/usr/lib/postgresql/15/bin".to_string(),
        settings_hash: "00ff".to_string(),
        step: label.split('_').next().unwrap_or(label).to_string(),
        label: label.to_string(),
        threads: 1,
        repeat,
        qps,
        p95_us: 1e6 / qps,
        cpu_us_per_op: if repeat == 1 { Some(12.5) } else { None },
        p99_us: None,
    }
}

fn sample() -> Vec<Point> {
    vec![
        point(
            "r1",
            "2026-01-01T00:00:00Z",
            "pg",
            "update-index",
            1,
            1000.0,
        ),
        point(
            "r1",
            "2026-01-01T00:00:00Z",
            "pg",
            "update-index",
            2,
            1010.0,
        ),
        point("r2", "2026-01-02T00:00:00Z", "pg", "update-index", 1, 560.0),
        point(
            "r2",
            "2026-01-02T00:00:00Z",
            "pg",
            "point-query.pre_range=100",
            1,
            9000.5,
        ),
        point(
            "r2",
            "2026-01-02T00:00:00Z",
            "maria",
            "update-index",
            1,
            700.0,
        ),
    ]
}

/// The binary's PostgreSQL client, as `dbdelta`'s registry passes it.
fn connect_pg(
    spec: &dbdelta_model::TargetSpec,
) -> Result<Box<dyn dbdelta_engine::Connection>, dbdelta_engine::EngineError> {
    use dbdelta_engine::Engine;
    let engine = dbdelta_engine_postgres::open(
        spec,
        &std::env::temp_dir(),
        &dbdelta_engine::OpenOptions::default(),
    )?;
    engine.connect()
}

fn round_trip(spec: &str) {
    let mut store = open_store(spec, &connect_pg).unwrap();
    let pts = sample();
    assert_eq!(store.add(&pts).unwrap(), 5);
    // The same points again are not duplicated.
    assert_eq!(store.add(&pts[..2]).unwrap(), 0);
    drop(store);
    let mut store = open_store(spec, &connect_pg).unwrap();
    let mut back = store.points().unwrap();
    back.sort_by_key(Point::id);
    let mut want = pts.clone();
    want.sort_by_key(Point::id);
    assert_eq!(back, want);
    let filter = Filter {
        target_like: Some("pg".into()),
        step: Some("update-index".into()),
        ..Filter::default()
    };
    let s = series(&back, &filter);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].points.len(), 2);
    assert_eq!(s[0].points[0].repeats, 2);
    assert!((s[0].points[0].qps - 1005.0).abs() < 1e-9);
    assert_eq!(s[0].points[1].run_id, "r2");
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    exported(&s);
    pruned(spec);
}

/// Export writes what the series hold.
fn exported(s: &[dbdelta_history::Series]) {
    let csv = export::csv(s);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[1].starts_with("h1,sysbench,pg,update-index,1,r1,2026-01-01T00:00:00Z,"));
    // Two repeats, mean QPS 1005; only one repeat measured CPU, so the run has none.
    assert!(lines[1].contains(",00ff,2,1005,"), "{}", lines[1]);
    assert!(lines[1].ends_with(','), "{}", lines[1]);
    let json: serde_json::Value = serde_json::from_str(&export::json(s).unwrap()).unwrap();
    assert_eq!(json[0]["points"][1]["run_id"], "r2");
}

/// Prune lists (run, target) pairs, and removing them leaves exactly the rest.
fn pruned(spec: &str) {
    let mut store = open_store(spec, &connect_pg).unwrap();
    let runs = store.runs().unwrap();
    let listed: Vec<(&str, &str, usize)> = runs
        .iter()
        .map(|r| (r.run_id.as_str(), r.target.as_str(), r.points))
        .collect();
    assert_eq!(
        listed,
        [("r1", "pg", 2), ("r2", "maria", 1), ("r2", "pg", 2)]
    );
    let rule = PruneRule {
        started_before: epoch_seconds("2026-01-01T12:00:00Z"),
        ..PruneRule::default()
    };
    let old = select(&runs, &rule);
    assert_eq!(old.len(), 1);
    assert_eq!(store.remove(&old).unwrap(), 2);
    let maria = PruneRule {
        target: Some("maria".into()),
        host: Some("h1".into()),
        ..PruneRule::default()
    };
    let gone = select(&store.runs().unwrap(), &maria);
    assert_eq!(store.remove(&gone).unwrap(), 1);
    drop(store);
    let mut store = open_store(spec, &connect_pg).unwrap();
    let left = store.points().unwrap();
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|p| p.run_id == "r2" && p.target == "pg"));
}

const V1: &str = include_str!("data/schema_v1.sql");

/// A store written before the schema was versioned opens at the current version with its
/// four points, lists its runs from the new columns, and takes new points.
fn migrated(spec: &str) {
    let mut store = open_store(spec, &connect_pg).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let mut back = store.points().unwrap();
    back.sort_by_key(Point::id);
    assert_eq!(back.len(), 4);
    assert_eq!(back[0].run_id, "20260101T000000Z-sysbench");
    assert_eq!(back[0].cpu_us_per_op, Some(12.5));
    let runs = store.runs().unwrap();
    let listed: Vec<(&str, &str, &str, usize)> = runs
        .iter()
        .map(|r| {
            (
                r.run_started.as_str(),
                r.run_id.as_str(),
                r.host.as_str(),
                r.points,
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("2026-01-01T00:00:00Z", "20260101T000000Z-sysbench", "h1", 2),
            ("2026-01-02T00:00:00Z", "20260102T000000Z-sysbench", "h1", 2)
        ]
    );
    assert_eq!(store.add(&sample()).unwrap(), 5);
    drop(store);
    // Opening again finds the schema current and changes nothing.
    let mut store = open_store(spec, &connect_pg).unwrap();
    assert_eq!(store.points().unwrap().len(), 9);
    assert_eq!(store.runs().unwrap().len(), 5);
}

#[test]
fn sqlite_store_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path().join("sub/history.sqlite").to_str().unwrap());
}

#[test]
fn sqlite_store_of_the_unversioned_schema_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(V1)
        .unwrap();
    migrated(path.to_str().unwrap());
}

#[test]
fn sqlite_store_of_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite");
    drop(open_store(path.to_str().unwrap(), &connect_pg).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("UPDATE dbdelta_schema_version SET version = version + 1")
        .unwrap();
    let err = open_store(path.to_str().unwrap(), &connect_pg)
        .err()
        .expect("a newer schema is refused");
    assert!(err.to_string().contains("is newer than"), "{err}");
}

#[test]
fn postgres_store_round_trip_on_a_managed_server() {
    const BIN: &str = "/usr/lib/postgresql/15/bin";
    if !std::path::Path::new(BIN).join("initdb").is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{BIN}/initdb is missing and CI is set (apt-get install postgresql-15)"
        );
        eprintln!("SKIPPED: {BIN}/initdb is missing (apt-get install postgresql-15)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // As root the managed server runs as user dbdelta, which must reach the data directory.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let spec = dbdelta_model::TargetSpec::parse(&format!("pg=postgres:{BIN}")).unwrap();
    let mut engine =
        dbdelta_engine_postgres::open(&spec, dir.path(), &dbdelta_engine::OpenOptions::default())
            .unwrap_or_else(|e| panic!("managed server failed to start: {e}"));
    let url = format!(
        "postgres://dbdelta@{}/{}",
        engine.address(),
        engine.database()
    );
    round_trip(&url);
    // The same database again, as an older dbdelta left it.
    let target = dbdelta_model::TargetSpec::parse(&format!("history={url}")).unwrap();
    let mut conn = connect_pg(&target).unwrap();
    conn.batch("DROP TABLE dbdelta_history; DROP TABLE dbdelta_schema_version")
        .unwrap();
    conn.batch(V1).unwrap();
    drop(conn);
    migrated(&url);
    use dbdelta_engine::Engine;
    engine.shutdown().unwrap();
}
