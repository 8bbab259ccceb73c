//! TPC-C's nine tables (clause 1.3) per dialect, their secondary indexes, and statistics.

use crate::schema::{drop_if_owned, ensure_ledger, record_owned};
use dbdelta_engine::{Connection, Dialect, EngineError};

/// The tables, in the specification's order (`orders`: ORDER is a reserved word).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// Marks the date-and-time columns, whose type differs per dialect.
const TS: &str = "timestamp";

/// One table: its columns (name, type) and its primary key (`None`: history has none).
struct TableDef {
    name: &'static str,
    columns: &'static [(&'static str, &'static str)],
    key: Option<&'static str>,
}

/// Clause 1.3's columns. Integers are `int` throughout: counters such as S_ORDER_CNT
/// outgrow numeric(4) in long unpaced runs, and one integer type keeps every engine's
/// parameter binding alike. Decimals are the specification's precisions.
const DEFS: [TableDef; 9] = [
    TableDef {
        name: "warehouse",
        columns: &[
            ("w_id", "int not null"),
            ("w_name", "varchar(10)"),
            ("w_street_1", "varchar(20)"),
            ("w_street_2", "varchar(20)"),
            ("w_city", "varchar(20)"),
            ("w_state", "char(2)"),
            ("w_zip", "char(9)"),
            ("w_tax", "decimal(4,4)"),
            ("w_ytd", "decimal(12,2)"),
        ],
        key: Some("w_id"),
    },
    TableDef {
        name: "district",
        columns: &[
            ("d_id", "int not null"),
            ("d_w_id", "int not null"),
            ("d_name", "varchar(10)"),
            ("d_street_1", "varchar(20)"),
            ("d_street_2", "varchar(20)"),
            ("d_city", "varchar(20)"),
            ("d_state", "char(2)"),
            ("d_zip", "char(9)"),
            ("d_tax", "decimal(4,4)"),
            ("d_ytd", "decimal(12,2)"),
            ("d_next_o_id", "int"),
        ],
        key: Some("d_w_id, d_id"),
    },
    TableDef {
        name: "customer",
        columns: &[
            ("c_id", "int not null"),
            ("c_d_id", "int not null"),
            ("c_w_id", "int not null"),
            ("c_first", "varchar(16)"),
            ("c_middle", "char(2)"),
            ("c_last", "varchar(16)"),
            ("c_street_1", "varchar(20)"),
            ("c_street_2", "varchar(20)"),
            ("c_city", "varchar(20)"),
            ("c_state", "char(2)"),
            ("c_zip", "char(9)"),
            ("c_phone", "char(16)"),
            ("c_since", TS),
            ("c_credit", "char(2)"),
            ("c_credit_lim", "decimal(12,2)"),
            ("c_discount", "decimal(4,4)"),
            ("c_balance", "decimal(12,2)"),
            ("c_ytd_payment", "decimal(12,2)"),
            ("c_payment_cnt", "int"),
            ("c_delivery_cnt", "int"),
            ("c_data", "varchar(500)"),
        ],
        key: Some("c_w_id, c_d_id, c_id"),
    },
    TableDef {
        name: "history",
        columns: &[
            ("h_c_id", "int"),
            ("h_c_d_id", "int"),
            ("h_c_w_id", "int"),
            ("h_d_id", "int"),
            ("h_w_id", "int"),
            ("h_date", TS),
            ("h_amount", "decimal(6,2)"),
            ("h_data", "varchar(24)"),
        ],
        key: None,
    },
    TableDef {
        name: "new_order",
        columns: &[
            ("no_o_id", "int not null"),
            ("no_d_id", "int not null"),
            ("no_w_id", "int not null"),
        ],
        key: Some("no_w_id, no_d_id, no_o_id"),
    },
    TableDef {
        name: "orders",
        columns: &[
            ("o_id", "int not null"),
            ("o_d_id", "int not null"),
            ("o_w_id", "int not null"),
            ("o_c_id", "int"),
            ("o_entry_d", TS),
            ("o_carrier_id", "int"),
            ("o_ol_cnt", "int"),
            ("o_all_local", "int"),
        ],
        key: Some("o_w_id, o_d_id, o_id"),
    },
    TableDef {
        name: "order_line",
        columns: &[
            ("ol_o_id", "int not null"),
            ("ol_d_id", "int not null"),
            ("ol_w_id", "int not null"),
            ("ol_number", "int not null"),
            ("ol_i_id", "int"),
            ("ol_supply_w_id", "int"),
            ("ol_delivery_d", TS),
            ("ol_quantity", "int"),
            ("ol_amount", "decimal(6,2)"),
            ("ol_dist_info", "char(24)"),
        ],
        key: Some("ol_w_id, ol_d_id, ol_o_id, ol_number"),
    },
    TableDef {
        name: "item",
        columns: &[
            ("i_id", "int not null"),
            ("i_im_id", "int"),
            ("i_name", "varchar(24)"),
            ("i_price", "decimal(5,2)"),
            ("i_data", "varchar(50)"),
        ],
        key: Some("i_id"),
    },
    TableDef {
        name: "stock",
        columns: &[
            ("s_i_id", "int not null"),
            ("s_w_id", "int not null"),
            ("s_quantity", "int"),
            ("s_dist_01", "char(24)"),
            ("s_dist_02", "char(24)"),
            ("s_dist_03", "char(24)"),
            ("s_dist_04", "char(24)"),
            ("s_dist_05", "char(24)"),
            ("s_dist_06", "char(24)"),
            ("s_dist_07", "char(24)"),
            ("s_dist_08", "char(24)"),
            ("s_dist_09", "char(24)"),
            ("s_dist_10", "char(24)"),
            ("s_ytd", "int"),
            ("s_order_cnt", "int"),
            ("s_remote_cnt", "int"),
            ("s_data", "varchar(50)"),
        ],
        key: Some("s_w_id, s_i_id"),
    },
];

fn def(table: &str) -> Result<&'static TableDef, EngineError> {
    DEFS.iter()
        .find(|d| d.name == table)
        .ok_or_else(|| EngineError::config(format!("{table} is not a TPC-C table")))
}

/// The column names of one of [`TABLES`], in `CREATE TABLE` order (the loader's rows follow
/// it); an error for any other name.
pub fn column_names(table: &str) -> Result<Vec<&'static str>, EngineError> {
    Ok(def(table)?.columns.iter().map(|(n, _)| *n).collect())
}

/// `CREATE TABLE` of one of [`TABLES`] in a dialect; an error for any other name. Dates
/// are `timestamp` (PostgreSQL), `datetime` (MySQL) or `text` (SQLite, which compares
/// `YYYY-MM-DD HH:MM:SS` text in time order); the mock is served SQLite's DDL.
pub fn create_table_sql(
    dialect: Dialect,
    engine: Option<&str>,
    table: &str,
) -> Result<String, EngineError> {
    let d = def(table)?;
    let ts = match dialect {
        Dialect::Mysql => "datetime",
        Dialect::Postgres => "timestamp",
        Dialect::Sqlite
        | Dialect::Mock
        | Dialect::Rocksdb
        | Dialect::Clickhouse
        | Dialect::Mongodb => "text",
    };
    let mut sql = format!("CREATE TABLE {} (", d.name);
    for (i, (name, ty)) in d.columns.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(name);
        sql.push(' ');
        sql.push_str(if *ty == TS { ts } else { ty });
    }
    if let Some(key) = d.key {
        sql.push_str(", primary key (");
        sql.push_str(key);
        sql.push(')');
    }
    sql.push(')');
    if dialect == Dialect::Mysql {
        sql.push_str(" ENGINE=");
        sql.push_str(engine.unwrap_or("InnoDB"));
    }
    Ok(sql)
}

/// The secondary indexes, built after the load: customers by name (Payment and
/// Order-Status by last name) and orders by customer (Order-Status's last order).
pub const INDEXES: [&str; 2] = [
    "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];

/// [`INDEXES`]: one text serves all three dialects.
pub fn create_index_sql() -> [&'static str; 2] {
    INDEXES
}

/// Drops (only what dbdelta created) and creates the nine tables. Key-value engines are
/// refused: TPC-C needs SQL.
pub fn create_tables(
    conn: &mut dyn Connection,
    i_own_this_database: bool,
) -> Result<(), EngineError> {
    let dialect = conn.dialect();
    if matches!(dialect, Dialect::Rocksdb | Dialect::Mongodb) {
        return Err(EngineError::config(
            "TPC-C needs an SQL engine; RocksDB and MongoDB serve key-value workloads only",
        ));
    }
    // Every table is checked (and dropped) before the ledger is written: a refused
    // database keeps no trace of dbdelta.
    for t in TABLES {
        drop_if_owned(conn, t, i_own_this_database)?;
    }
    ensure_ledger(conn)?;
    for t in TABLES {
        conn.query(&create_table_sql(dialect, conn.table_engine(), t)?)?;
        record_owned(conn, t)?;
    }
    Ok(())
}

/// Builds the secondary indexes.
pub fn create_indexes(conn: &mut dyn Connection) -> Result<(), EngineError> {
    for sql in create_index_sql() {
        conn.query(sql)?;
    }
    Ok(())
}

/// Gathers optimizer statistics of every table, after the indexes exist.
pub fn analyze(conn: &mut dyn Connection) -> Result<(), EngineError> {
    match conn.dialect() {
        Dialect::Mysql => {
            for t in TABLES {
                conn.query(&format!("ANALYZE TABLE {t}"))?;
            }
        }
        _ => {
            conn.query("ANALYZE")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddl(dialect: Dialect, table: &str) -> String {
        create_table_sql(dialect, None, table).expect(table)
    }

    #[test]
    fn ddl_per_dialect() {
        let pg = ddl(Dialect::Postgres, "customer");
        assert!(
            pg.contains("c_since timestamp,") && pg.contains("primary key (c_w_id, c_d_id, c_id)"),
            "{pg}"
        );
        let my = ddl(Dialect::Mysql, "order_line");
        assert!(my.contains("ol_delivery_d datetime,") && my.ends_with("ENGINE=InnoDB"));
        assert!(my.contains("primary key (ol_w_id, ol_d_id, ol_o_id, ol_number)"));
        let lite = ddl(Dialect::Sqlite, "history");
        assert!(lite.contains("h_date text,") && !lite.contains("primary key"));
        assert!(!lite.contains("ENGINE"));
        assert!(ddl(Dialect::Sqlite, "stock").contains("s_dist_10 char(24)"));
        assert!(ddl(Dialect::Mock, "orders").contains("o_entry_d text,"));
    }

    #[test]
    fn every_table_has_the_specified_keys_and_decimals() {
        let keys = [
            ("warehouse", Some("(w_id)")),
            ("district", Some("(d_w_id, d_id)")),
            ("customer", Some("(c_w_id, c_d_id, c_id)")),
            ("history", None),
            ("new_order", Some("(no_w_id, no_d_id, no_o_id)")),
            ("orders", Some("(o_w_id, o_d_id, o_id)")),
            ("order_line", Some("(ol_w_id, ol_d_id, ol_o_id, ol_number)")),
            ("item", Some("(i_id)")),
            ("stock", Some("(s_w_id, s_i_id)")),
        ];
        for (dialect, (table, key)) in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite]
            .into_iter()
            .flat_map(|d| keys.iter().map(move |k| (d, k)))
        {
            let sql = ddl(dialect, table);
            assert!(sql.starts_with(&format!("CREATE TABLE {table} (")), "{sql}");
            match key {
                Some(k) => assert!(sql.contains(&format!("primary key {k}")), "{sql}"),
                None => assert!(!sql.contains("primary key"), "{sql}"),
            }
        }
        let decimals = [
            ("warehouse", "w_tax decimal(4,4)"),
            ("warehouse", "w_ytd decimal(12,2)"),
            ("district", "d_tax decimal(4,4)"),
            ("district", "d_ytd decimal(12,2)"),
            ("customer", "c_credit_lim decimal(12,2)"),
            ("customer", "c_discount decimal(4,4)"),
            ("customer", "c_balance decimal(12,2)"),
            ("customer", "c_ytd_payment decimal(12,2)"),
            ("history", "h_amount decimal(6,2)"),
            ("order_line", "ol_amount decimal(6,2)"),
            ("item", "i_price decimal(5,2)"),
            ("stock", "s_ytd int"),
        ];
        for (table, col) in decimals {
            assert!(
                ddl(Dialect::Postgres, table).contains(col),
                "{table}: {col}"
            );
        }
        let counts: Vec<usize> = TABLES
            .iter()
            .map(|t| column_names(t).map(|c| c.len()).unwrap_or(0))
            .collect();
        assert_eq!(counts, [9, 11, 21, 8, 3, 8, 10, 5, 17]);
    }

    #[test]
    fn unknown_tables_are_refused() {
        assert!(create_table_sql(Dialect::Sqlite, None, "sbtest1").is_err());
        assert!(column_names("order").is_err());
    }

    #[test]
    fn indexes_follow_the_spec_names() {
        let [name, by_customer] = create_index_sql();
        assert!(name.contains("customer_name ON customer (c_w_id, c_d_id, c_last, c_first)"));
        assert!(by_customer.contains("orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)"));
    }
}
