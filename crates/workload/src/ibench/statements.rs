//! The FIFO delete, the covering-index range queries and the point query of
//! iibench.py's statement_maker and query threads, per dialect.

use dbdelta_engine::Dialect;

/// The delete of the oldest `rows` rows at or above `min_id`.
pub fn delete_sql(dialect: Dialect, table: &str, min_id: i64, rows: u64) -> String {
    match dialect {
        Dialect::Mysql | Dialect::Mock | Dialect::Rocksdb | Dialect::Clickhouse | Dialect::Mongodb => format!(
            "delete from {table} where transactionid >= {min_id} order by transactionid asc limit {rows}"
        ),
        // SQLite has no DELETE … LIMIT in default builds: the PostgreSQL form.
        Dialect::Postgres | Dialect::Sqlite => format!(
            "delete from {table} where transactionid in (select transactionid from {table} where transactionid >= {min_id} order by transactionid asc limit {rows})"
        ),
    }
}

/// The three range queries (market, register, pdc) with one `?` parameter each, and the
/// exclusive upper bound of that parameter's `randrange(0, n)`.
pub fn range_queries(dialect: Dialect, table: &str) -> [(String, i64); 3] {
    let hint = |ix: &str| match dialect {
        Dialect::Mysql
        | Dialect::Mock
        | Dialect::Rocksdb
        | Dialect::Clickhouse
        | Dialect::Mongodb => {
            format!(" FORCE INDEX ({table}_{ix})")
        }
        Dialect::Sqlite => format!(" INDEXED BY {table}_{ix}"),
        Dialect::Postgres => String::new(),
    };
    [
        (
            format!(
                "SELECT productid, customerid, price FROM {table}{} WHERE (productid >= ?) ORDER BY productid, customerid, price LIMIT 10",
                hint("marketsegment")
            ),
            10_000,
        ),
        (
            format!(
                "SELECT cashregisterid,customerid,price FROM {table}{} WHERE (cashregisterid > ?) ORDER BY cashregisterid, customerid, price LIMIT 10",
                hint("registersegment")
            ),
            1_000,
        ),
        (
            format!(
                "SELECT price,dateandtime,customerid FROM {table}{} WHERE (price >= ?) ORDER BY price, dateandtime, customerid LIMIT 10",
                hint("pdc")
            ),
            500,
        ),
    ]
}

/// Ids per point query.
pub const POINT_IDS: usize = 10;

/// The point query with [`POINT_IDS`] `?` parameters.
pub fn point_query(table: &str) -> String {
    let marks = ["?"; POINT_IDS].join(",");
    format!("SELECT transactionid, productid, data FROM {table} WHERE transactionid in ({marks})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_per_dialect() {
        assert_eq!(
            delete_sql(Dialect::Mysql, "pi1", 7, 50),
            "delete from pi1 where transactionid >= 7 order by transactionid asc limit 50"
        );
        assert!(delete_sql(Dialect::Postgres, "pi1", 7, 5).contains("in (select transactionid"));
        let q = range_queries(Dialect::Mysql, "pi3");
        assert!(q[0].0.contains("FORCE INDEX (pi3_marketsegment)"));
        assert!(q[1].0.contains("cashregisterid > ?"));
        assert_eq!(q[2].1, 500);
        assert!(!range_queries(Dialect::Postgres, "pi1")[0]
            .0
            .contains("FORCE"));
        assert_eq!(point_query("pi1").matches('?').count(), 10);
    }
}
