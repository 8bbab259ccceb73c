//! TPC-C's nine tables (clause 1.3) per dialect, their secondary indexes, and statistics.

use crate::schema::{drop_if_owned, ensure_ledger, record_owned};
use dbdelta_engine::{Connection, Dialect, EngineError};

/// The tables, in the specification's order.
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

/// Columns of each table (`T` = timestamp type), and its primary key.
fn columns(table: &str) -> (&'static str, Option<&'static str>) {
    match table {
        "warehouse" => (
            "w_id int not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2)",
            Some("w_id"),
        ),
        "district" => (
            "d_id int not null, d_w_id int not null, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4), d_ytd decimal(12,2), d_next_o_id int",
            Some("d_w_id, d_id"),
        ),
        "customer" => (
            "c_id int not null, c_d_id int not null, c_w_id int not null, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since T, c_credit char(2), c_credit_lim decimal(12,2), c_discount decimal(4,4), c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500)",
            Some("c_w_id, c_d_id, c_id"),
        ),
        "history" => (
            "h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date T, h_amount decimal(6,2), h_data varchar(24)",
            None,
        ),
        "new_order" => (
            "no_o_id int not null, no_d_id int not null, no_w_id int not null",
            Some("no_w_id, no_d_id, no_o_id"),
        ),
        "orders" => (
            "o_id int not null, o_d_id int not null, o_w_id int not null, o_c_id int, o_entry_d T, o_carrier_id int, o_ol_cnt int, o_all_local int",
            Some("o_w_id, o_d_id, o_id"),
        ),
        "order_line" => (
            "ol_o_id int not null, ol_d_id int not null, ol_w_id int not null, ol_number int not null, ol_i_id int, ol_supply_w_id int, ol_delivery_d T, ol_quantity int, ol_amount decimal(6,2), ol_dist_info char(24)",
            Some("ol_w_id, ol_d_id, ol_o_id, ol_number"),
        ),
        "item" => (
            "i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50)",
            Some("i_id"),
        ),
        _ => (
            "s_i_id int not null, s_w_id int not null, s_quantity int, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50)",
            Some("s_w_id, s_i_id"),
        ),
    }
}

/// `CREATE TABLE` of one table in a dialect.
pub fn create_table_sql(dialect: Dialect, table: &str) -> String {
    let (cols, pk) = columns(table);
    let ts = match dialect {
        Dialect::Mysql => "datetime",
        Dialect::Postgres => "timestamp",
        _ => "text",
    };
    let cols = cols
        .replace(" T,", &format!(" {ts},"))
        .replace(" T", &format!(" {ts}"));
    let pk = pk
        .map(|k| format!(", primary key ({k})"))
        .unwrap_or_default();
    let tail = if dialect == Dialect::Mysql {
        " ENGINE=InnoDB"
    } else {
        ""
    };
    format!("CREATE TABLE {table} ({cols}{pk}){tail}")
}

/// The secondary indexes, built after the load: customers by name (Payment and
/// Order-Status by last name) and orders by customer (Order-Status's last order).
pub const INDEXES: [&str; 2] = [
    "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];

/// Drops (only what dbdelta created) and creates the nine tables.
pub fn create_tables(
    conn: &mut dyn Connection,
    i_own_this_database: bool,
) -> Result<(), EngineError> {
    ensure_ledger(conn)?;
    for t in TABLES {
        drop_if_owned(conn, t, i_own_this_database)?;
    }
    let dialect = conn.dialect();
    for t in TABLES {
        conn.query(&create_table_sql(dialect, t))?;
        record_owned(conn, t)?;
    }
    Ok(())
}

/// Builds the secondary indexes.
pub fn create_indexes(conn: &mut dyn Connection) -> Result<(), EngineError> {
    for sql in INDEXES {
        conn.query(sql)?;
    }
    Ok(())
}

/// Gathers optimizer statistics of every table.
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

    #[test]
    fn ddl_per_dialect() {
        let pg = create_table_sql(Dialect::Postgres, "customer");
        assert!(
            pg.contains("c_since timestamp,") && pg.contains("primary key (c_w_id, c_d_id, c_id)")
        );
        let my = create_table_sql(Dialect::Mysql, "order_line");
        assert!(my.contains("ol_delivery_d datetime,") && my.ends_with("ENGINE=InnoDB"));
        let lite = create_table_sql(Dialect::Sqlite, "history");
        assert!(lite.contains("h_date text,") && !lite.contains("primary key"));
        assert!(create_table_sql(Dialect::Sqlite, "stock").contains("s_dist_10 char(24)"));
    }
}
