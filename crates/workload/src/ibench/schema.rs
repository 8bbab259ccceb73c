//! The `pi<n>` table and its 3 covering secondary indexes per dialect (iibench.py's create_table).

use dbdelta_engine::Dialect;

/// The secondary indexes: (name suffix, columns) in the order the scripts create them.
pub const INDEXES: [(&str, &str); 3] = [
    ("marketsegment", "productid, customerid, price"),
    ("registersegment", "cashregisterid, customerid, price"),
    ("pdc", "price, dateandtime, customerid"),
];

/// The statements that create `table` (no secondary indexes); MySQL's in `engine` (the
/// target's table engine, as iibench.py's `--engine`), else InnoDB.
pub fn create_table_sql(dialect: Dialect, engine: Option<&str>, table: &str) -> Vec<String> {
    let cols = "dateandtime {ts},\n  cashregisterid int not null,\n  customerid int not null,\n  productid int not null,\n  price int not null,\n  data varchar(4000)";
    match dialect {
        Dialect::Postgres => vec![
            format!(
                "create table {table} (transactionid bigserial primary key,\n  {})",
                cols.replace("{ts}", "timestamp without time zone")
            ),
            format!("alter sequence {table}_transactionid_seq cache 1000"),
        ],
        Dialect::Sqlite => vec![format!(
            "create table {table} (transactionid integer primary key,\n  {})",
            cols.replace("{ts}", "datetime")
        )],
        Dialect::Mysql | Dialect::Mock | Dialect::Rocksdb | Dialect::Clickhouse | Dialect::Mongodb => vec![format!(
            "create table {table} (transactionid bigint not null auto_increment,\n  {},\n  primary key (transactionid)) engine={}",
            cols.replace("{ts}", "datetime"),
            engine.unwrap_or("InnoDB")
        )],
    }
}

/// The statements that create the 3 secondary indexes of `table` (iibench.py's create_table): one ALTER TABLE on
/// InnoDB, three CREATE INDEX elsewhere.
pub fn create_indexes_sql(dialect: Dialect, table: &str) -> Vec<String> {
    match dialect {
        Dialect::Mysql
        | Dialect::Mock
        | Dialect::Rocksdb
        | Dialect::Clickhouse
        | Dialect::Mongodb => {
            let adds: Vec<String> = INDEXES
                .iter()
                .map(|(n, c)| format!("add index {table}_{n} ({c})"))
                .collect();
            vec![format!("alter table {table} {}", adds.join(", "))]
        }
        Dialect::Postgres | Dialect::Sqlite => INDEXES
            .iter()
            .map(|(n, c)| format!("create index {table}_{n} on {table} ({c})"))
            .collect(),
    }
}

/// A query for the database's size on disk in bytes (`dbGB` of np.sh).
pub fn db_size_sql(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::Postgres => Some("select pg_database_size(current_database())"),
        Dialect::Mysql => Some(
            "select sum(data_length + index_length) from information_schema.tables where table_schema = database()",
        ),
        Dialect::Sqlite => {
            Some("select page_count * page_size from pragma_page_count(), pragma_page_size()")
        }
        Dialect::Mock | Dialect::Rocksdb | Dialect::Clickhouse | Dialect::Mongodb => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_per_dialect() {
        let pg = create_table_sql(Dialect::Postgres, None, "pi1");
        assert!(pg[0].contains("transactionid bigserial primary key"));
        assert_eq!(pg[1], "alter sequence pi1_transactionid_seq cache 1000");
        let my = create_table_sql(Dialect::Mysql, None, "pi2");
        assert!(my[0].contains("auto_increment") && my[0].contains("data varchar(4000)"));
        let ix = create_indexes_sql(Dialect::Mysql, "pi2");
        assert_eq!(ix.len(), 1);
        assert!(ix[0].contains("add index pi2_pdc (price, dateandtime, customerid)"));
        let ix = create_indexes_sql(Dialect::Postgres, "pi1");
        assert_eq!(
            ix[0],
            "create index pi1_marketsegment on pi1 (productid, customerid, price)"
        );
        assert_eq!(ix.len(), 3);
    }
}
