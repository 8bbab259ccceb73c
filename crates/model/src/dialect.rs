//! SQL dialects: the differences in DDL and statement text between engines.

use serde::{Deserialize, Serialize};

/// The SQL dialect a connection speaks. Workloads render statements per dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// SQLite (embedded).
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    Mysql,
    /// The mock engine: accepts any text, executes nothing.
    Mock,
    /// Embedded RocksDB: key-value operations only, no SQL.
    Rocksdb,
    /// ClickHouse (embedded chdb or a server over HTTP): analytic SQL, used by query-set
    /// suites; the OLTP workloads do not run on it.
    Clickhouse,
    /// MongoDB's wire protocol (MongoDB, FerretDB): key-value operations only, no SQL.
    Mongodb,
}

impl Dialect {
    /// The column definition of an auto-assigned integer primary key.
    pub fn serial_pk(self) -> &'static str {
        match self {
            Dialect::Sqlite => "id INTEGER PRIMARY KEY",
            Dialect::Postgres => "id SERIAL",
            Dialect::Mysql
            | Dialect::Mock
            | Dialect::Rocksdb
            | Dialect::Clickhouse
            | Dialect::Mongodb => "id INTEGER NOT NULL AUTO_INCREMENT",
        }
    }
}
