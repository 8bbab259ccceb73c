//! TPC-C's consistency conditions 1–4 (clause 3.3.2.1–3.3.2.4), each one query that counts
//! the warehouses or districts violating it. They hold after the load and after any run of
//! correct transactions on a correct engine; a violation means one of them is wrong.

use dbdelta_engine::{Connection, EngineError};

/// What each of the four conditions says, in order.
pub const CONDITIONS: [&str; 4] = [
    "W_YTD = sum(D_YTD) per warehouse",
    "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
    "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
    "sum(O_OL_CNT) = rows in ORDER-LINE per district",
];

/// The query counting each condition's violations; plain SQL that PostgreSQL, MariaDB and
/// SQLite all run. Decimals are compared within half a cent: SQLite keeps them as doubles,
/// and every real discrepancy (a payment of at least 1.00 lost or doubled) is far larger.
/// Empty groups count as 0 (a warehouse without districts, a district without orders), so
/// they are not silently skipped by a NULL comparison; districts without new orders are
/// only compared with their orders (condition 2) and not counted by condition 3.
const QUERIES: [&str; 4] = [
    "SELECT count(*) FROM warehouse w WHERE abs(w.w_ytd - coalesce((SELECT sum(d.d_ytd) FROM district d WHERE d.d_w_id = w.w_id), 0)) > 0.005",
    "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> coalesce((SELECT max(o.o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0) OR d.d_next_o_id - 1 <> coalesce((SELECT max(n.no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id), d.d_next_o_id - 1)",
    "SELECT count(*) FROM (SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) v",
    "SELECT count(*) FROM district d WHERE coalesce((SELECT sum(o.o_ol_cnt) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0) <> (SELECT count(*) FROM order_line l WHERE l.ol_w_id = d.d_w_id AND l.ol_d_id = d.d_id)",
];

/// One condition's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// 1–4.
    pub condition: u8,
    /// What the condition says.
    pub description: &'static str,
    /// Warehouses (1) or districts (2–4) violating it; 0 = it holds.
    pub count: u64,
}

/// Checks the four conditions; one entry per condition, in order.
pub fn check(conn: &mut dyn Connection) -> Result<Vec<Violation>, EngineError> {
    let mut out = Vec::with_capacity(CONDITIONS.len());
    for (i, (description, sql)) in CONDITIONS.iter().zip(QUERIES).enumerate() {
        let v = conn.query_scalar(sql)?;
        let count = v
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| {
                EngineError::statement(format!(
                    "consistency condition {} returned {v:?}, not a count",
                    i + 1
                ))
            })? as u64;
        out.push(Violation {
            condition: i as u8 + 1,
            description,
            count,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{load, schema};
    use super::*;
    use dbdelta_engine::{Engine, OpenOptions};
    use dbdelta_model::TargetSpec;
    use std::time::Instant;

    /// A connection to a fresh embedded SQLite database in `dir`.
    fn sqlite(dir: &std::path::Path) -> Box<dyn Connection> {
        let spec = TargetSpec::parse("tpcc=sqlite:").expect("spec");
        dbdelta_engine_sqlite::SqliteEngine::open(&spec, dir, &OpenOptions::default())
            .expect("sqlite")
            .connect()
            .expect("connect")
    }

    fn counts(conn: &mut dyn Connection) -> Vec<u64> {
        check(conn)
            .expect("check")
            .iter()
            .map(|v| v.count)
            .collect()
    }

    fn scalar(conn: &mut dyn Connection, sql: &str) -> String {
        conn.query_scalar(sql).expect(sql).unwrap_or_default()
    }

    /// The whole path on the embedded SQLite: tables, one warehouse, indexes, statistics;
    /// the conditions hold, then catch a corrupted district and warehouse.
    #[test]
    fn sqlite_load_is_consistent_until_corrupted() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = sqlite(dir.path());
        let conn = &mut *conn;
        schema::create_tables(conn, false).expect("tables");
        // A second creation drops and recreates dbdelta's own tables.
        schema::create_tables(conn, false).expect("tables again");
        let start = Instant::now();
        let items = load::load_items(conn, 1).expect("items");
        let items_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let rows = load::load_warehouse(conn, 1, 1).expect("warehouse 1");
        let warehouse_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        schema::create_indexes(conn).expect("indexes");
        schema::analyze(conn).expect("analyze");
        let index_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        assert_eq!(counts(conn), [0, 0, 0, 0], "a fresh load is consistent");
        let check_secs = start.elapsed().as_secs_f64();
        eprintln!(
            "tpcc sqlite ({} build): items {items} rows {items_secs:.2}s, warehouse 1 {rows} rows \
             {warehouse_secs:.2}s, indexes+analyze {index_secs:.2}s, check {check_secs:.2}s",
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        assert_eq!(items, 100_000);
        assert_eq!(
            scalar(conn, "SELECT count(*) FROM order_line"),
            scalar(conn, "SELECT sum(o_ol_cnt) FROM orders")
        );
        assert_eq!(scalar(conn, "SELECT count(*) FROM new_order"), "9000");
        assert_eq!(
            scalar(
                conn,
                "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL"
            ),
            "9000"
        );
        // Decimals arrive as numbers, dates as the spec's text form.
        assert_eq!(
            scalar(
                conn,
                "SELECT sum(d_ytd) = w_ytd FROM warehouse, district GROUP BY w_id"
            ),
            "1"
        );
        assert_eq!(
            scalar(conn, "SELECT min(c_balance) FROM customer"),
            scalar(conn, "SELECT max(c_balance) FROM customer")
        );
        assert_eq!(
            scalar(conn, "SELECT length(max(o_entry_d)) FROM orders"),
            "19"
        );
        assert_eq!(
            scalar(
                conn,
                "SELECT count(*) FROM customer WHERE c_last = 'PRICALLYOUGHT' AND c_id = 372"
            ),
            "10"
        );

        conn.query(
            "UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 3",
        )
        .expect("corrupt a district");
        assert_eq!(counts(conn), [0, 1, 0, 0]);
        conn.query("UPDATE warehouse SET w_ytd = w_ytd + 1")
            .expect("corrupt the warehouse");
        assert_eq!(counts(conn), [1, 1, 0, 0]);
        // A gap in a district's new orders, and an order line gone.
        conn.query("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id = 2500")
            .expect("delete a new order");
        conn.query(
            "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 7 AND ol_o_id = 5 AND ol_number = 1",
        )
        .expect("delete an order line");
        assert_eq!(counts(conn), [1, 1, 1, 1]);
        let v = check(conn).expect("check");
        assert_eq!(
            v.iter().map(|v| v.condition).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        assert_eq!(v[1].description, CONDITIONS[1]);
    }

    #[test]
    fn a_district_without_new_orders_is_compared_with_its_orders_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = sqlite(dir.path());
        let conn = &mut *conn;
        schema::create_tables(conn, false).expect("tables");
        // One warehouse, two districts with two orders of one line each; district 1 has
        // delivered both (no new orders), district 2 has order 2 undelivered.
        conn.batch(
            "INSERT INTO warehouse (w_id, w_ytd) VALUES (1, 30.50);
             INSERT INTO district (d_id, d_w_id, d_ytd, d_next_o_id) VALUES (1, 1, 10.25, 3), (2, 1, 20.25, 3);
             INSERT INTO orders (o_id, o_d_id, o_w_id, o_ol_cnt) VALUES (1, 1, 1, 1), (2, 1, 1, 1), (1, 2, 1, 1), (2, 2, 1, 1);
             INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number) VALUES (1, 1, 1, 1), (2, 1, 1, 1), (1, 2, 1, 1), (2, 2, 1, 1);
             INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2, 2, 1)",
        )
        .expect("rows");
        assert_eq!(counts(conn), [0, 0, 0, 0]);
        // A district whose orders are all gone still owes its d_next_o_id − 1.
        conn.batch("DELETE FROM orders WHERE o_d_id = 1; DELETE FROM order_line WHERE ol_d_id = 1")
            .expect("delete");
        assert_eq!(counts(conn), [0, 1, 0, 0]);
    }
}
