//! The workload both ClickHouse engines must pass: one log-like table holding the same
//! column as String, LowCardinality(String), Enum8 and FixedString, generated rows, a
//! GROUP BY, row values as text and the table's size from the catalog.
#![allow(dead_code)]

use dbdelta_engine::{Connection, Engine, ErrorKind, Op, Rows, SettleWait, Value};

/// The setup script (several statements, a comment holding a `;`).
pub const SETUP: &str = "
DROP TABLE IF EXISTS logs;
-- one column, four types; the ; in this comment is not a statement end
CREATE TABLE logs (
    id UInt64,
    level_s String,
    level_lc LowCardinality(String),
    level_e Enum8('debug' = 1, 'info' = 2, 'warn' = 3, 'error' = 4),
    level_f FixedString(5),
    msg Nullable(String)
) ENGINE = MergeTree ORDER BY id;
INSERT INTO logs
    SELECT number, l, l, l, l, if(number % 10 = 0, NULL, concat('m;', toString(number % 7)))
    FROM (SELECT number, arrayElement(['debug', 'info', 'warn', 'error'], number % 4 + 1) AS l
          FROM numbers(10000));
";

/// All rows of a result of `cols` columns as `Vec<Vec<Option<String>>>`.
pub fn values(conn: &mut dyn Connection, sql: &str, cols: usize) -> Vec<Vec<Option<String>>> {
    let mut rows = Rows::new();
    let out = conn
        .run_rows(&Op::Query(sql), &mut rows)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(out.rows as usize, rows.len());
    (0..rows.len())
        .map(|r| {
            (0..cols)
                .map(|c| rows.get(r, c).map(str::to_string))
                .collect()
        })
        .collect()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// Runs the workload on `conn`; returns the values of the checked queries (to compare
/// two engines).
pub fn types_workload(engine: &dyn Engine) -> Vec<Vec<Vec<Option<String>>>> {
    let mut conn = engine.connect().unwrap();
    let conn = &mut *conn;
    conn.batch(SETUP).expect("setup script");

    // query() reads the whole result and counts rows.
    let all = conn.query("SELECT * FROM logs").unwrap();
    assert_eq!(all.rows, 10000);
    assert!(all.has_result);
    let none = conn.query("SELECT * FROM logs WHERE id > 1e9").unwrap();
    assert_eq!(
        (none.rows, none.has_result),
        (0, true),
        "an empty result set"
    );
    let ddl = conn
        .query("CREATE TABLE IF NOT EXISTS logs (a UInt8) ENGINE = Memory")
        .unwrap();
    assert_eq!((ddl.rows, ddl.has_result), (0, false));
    assert_eq!(
        conn.query_scalar("SELECT count() FROM logs")
            .unwrap()
            .as_deref(),
        Some("10000")
    );

    let by_enum = values(
        conn,
        "SELECT level_e, count(), uniqExact(level_lc) FROM logs GROUP BY level_e ORDER BY level_e",
        3,
    );
    assert_eq!(
        by_enum,
        vec![
            vec![s("debug"), s("2500"), s("1")],
            vec![s("info"), s("2500"), s("1")],
            vec![s("warn"), s("2500"), s("1")],
            vec![s("error"), s("2500"), s("1")],
        ]
    );
    let by_lc = values(
        conn,
        "SELECT level_lc, count(), countIf(msg IS NULL) FROM logs WHERE level_s != 'warn' \
         GROUP BY level_lc ORDER BY level_lc",
        3,
    );
    assert_eq!(
        by_lc,
        vec![
            vec![s("debug"), s("2500"), s("500")],
            vec![s("error"), s("2500"), s("0")],
            vec![s("info"), s("2500"), s("0")],
        ]
    );
    // FixedString pads with NUL bytes; NULL stays NULL; a value with a tab and a newline
    // comes back as written.
    let fixed = values(
        conn,
        "SELECT level_f, msg, concat('a\\tb', '\\n') FROM logs WHERE id IN (0, 1) ORDER BY id",
        3,
    );
    assert_eq!(
        fixed,
        vec![
            vec![s("debug"), None, s("a\tb\n")],
            vec![s("info\0"), s("m;1"), s("a\tb\n")],
        ]
    );

    // Sizes from system.parts: compressed on disk, and before compression.
    let size = conn
        .table_size("logs")
        .unwrap()
        .expect("a MergeTree table has a size");
    assert!(size.data_bytes > 0, "{size:?}");
    let raw = size
        .uncompressed_bytes
        .expect("ClickHouse keeps uncompressed bytes");
    assert!(raw > size.data_bytes, "repeated strings compress: {size:?}");
    assert!(raw >= 10000 * (8 + 1 + 5), "{size:?}");
    conn.batch("DROP TABLE IF EXISTS mem; CREATE TABLE mem (a UInt8) ENGINE = Memory")
        .unwrap();
    assert_eq!(
        conn.table_size("mem").unwrap(),
        None,
        "Memory tables keep no parts"
    );

    // Settle merges a MergeTree table's parts (two INSERTs, two parts) and names the
    // Memory table as skipped.
    conn.batch(
        "DROP TABLE IF EXISTS two_parts; \
         CREATE TABLE two_parts (a UInt8) ENGINE = MergeTree ORDER BY a; \
         INSERT INTO two_parts VALUES (1); INSERT INTO two_parts VALUES (2)",
    )
    .unwrap();
    let parts = "SELECT count() FROM system.parts WHERE active AND database = currentDatabase() AND table = 'two_parts'";
    assert_eq!(conn.query_scalar(parts).unwrap().as_deref(), Some("2"));
    let report = engine
        .settle(
            &["two_parts".to_string(), "mem".to_string()],
            &SettleWait::none(),
        )
        .unwrap();
    assert_eq!(
        report.actions[0], "OPTIMIZE TABLE two_parts FINAL",
        "{report:?}"
    );
    assert!(report.actions[1].contains("Memory"), "{report:?}");
    assert_eq!(conn.query_scalar(parts).unwrap().as_deref(), Some("1"));
    assert!(engine
        .settle(&["nope".to_string()], &SettleWait::none())
        .is_err());
    let e = conn.table_size("no_such_table").unwrap_err();
    assert!(e.message.contains("no_such_table"), "{e}");

    // Prepared texts are interpolated with ClickHouse literals (backslash and quote).
    let count = conn
        .prepare("SELECT count() FROM logs WHERE level_s = ? AND id < ?")
        .unwrap();
    let out = conn
        .execute(count, &[Value::Text("info"), Value::Int(100)])
        .unwrap();
    assert_eq!(out.rows, 1);
    let echo = conn.prepare("SELECT ?, ?").unwrap();
    let mut rows = Rows::new();
    let tricky = "it's a \\ path\twith tab";
    conn.run_rows(
        &Op::Execute {
            stmt: echo,
            params: &[Value::Text(tricky), Value::Null],
        },
        &mut rows,
    )
    .unwrap();
    assert_eq!((rows.get(0, 0), rows.get(0, 1)), (Some(tricky), None));
    conn.run_rows(
        &Op::Execute {
            stmt: count,
            params: &[Value::Text("info"), Value::Int(100)],
        },
        &mut rows,
    )
    .unwrap();
    assert_eq!(rows.get(0, 0), Some("25"));

    // Errors carry the server's code.
    let e = conn.query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Statement);
    assert_eq!(e.code.as_deref(), Some("ClickHouse 60"), "{e}");
    vec![by_enum, by_lc, fixed]
}
