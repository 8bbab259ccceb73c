//! Store round-trips: SQLite (always) and a managed PostgreSQL 15 (when installed).

use dbdelta_history::{open_store, series, Filter, Point};

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
}

#[test]
fn sqlite_store_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path().join("sub/history.sqlite").to_str().unwrap());
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
    use dbdelta_engine::Engine;
    engine.shutdown().unwrap();
}
