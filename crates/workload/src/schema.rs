//! The sbtest schema (sysbench's oltp_common.lua): DDL per dialect, row content, and the ownership ledger that
//! keeps dbdelta from dropping tables it did not create.

use crate::rng::{Rng, C_TEMPLATE, PAD_TEMPLATE};
use dbdelta_engine::{Connection, Dialect, EngineError, OwnedValue, RowSource};

/// dbdelta's ledger of the tables it created, in the target database.
pub const LEDGER: &str = "dbdelta_objects";

/// `CREATE TABLE sbtest<t>` for a dialect (secondary index is built after the load); on
/// MySQL in `engine` (the target's table engine), else InnoDB as sysbench's
/// `--mysql-storage-engine` default.
pub fn create_table_sql(dialect: Dialect, engine: Option<&str>, t: u32) -> String {
    let tail = match dialect {
        Dialect::Sqlite => "",
        Dialect::Postgres => ",\n  PRIMARY KEY (id)",
        Dialect::Mysql
        | Dialect::Mock
        | Dialect::Rocksdb
        | Dialect::Clickhouse
        | Dialect::Mongodb => ",\n  PRIMARY KEY (id)",
    };
    let engine = if dialect == Dialect::Mysql {
        format!(" /*! ENGINE = {} */", engine.unwrap_or("innodb"))
    } else {
        String::new()
    };
    format!(
        "CREATE TABLE sbtest{t}(\n  {},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{tail}\n){engine}",
        dialect.serial_pk()
    )
}

/// `CREATE INDEX k_<t> ON sbtest<t>(k)`.
pub fn create_index_sql(t: u32) -> String {
    format!("CREATE INDEX k_{t} ON sbtest{t}(k)")
}

fn exists_sql(dialect: Dialect, table: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='{table}'"
        ),
        Dialect::Postgres => format!(
            "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = '{table}'"
        ),
        Dialect::Mysql => format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
        ),
        Dialect::Mock | Dialect::Rocksdb | Dialect::Clickhouse | Dialect::Mongodb => "SELECT 0".to_string(),
    }
}

fn table_exists(conn: &mut dyn Connection, table: &str) -> Result<bool, EngineError> {
    let n = conn.query_scalar(&exists_sql(conn.dialect(), table))?;
    Ok(n.and_then(|v| v.parse::<i64>().ok()).unwrap_or(0) > 0)
}

/// Creates the ledger table if needed.
pub fn ensure_ledger(conn: &mut dyn Connection) -> Result<(), EngineError> {
    conn.query(&format!(
        "CREATE TABLE IF NOT EXISTS {LEDGER} (name VARCHAR(128) NOT NULL PRIMARY KEY)"
    ))
    .map(|_| ())
}

/// Refuses `table` when it exists and dbdelta's ledger does not say dbdelta created it,
/// unless the user passed `--i-own-this-database`: an error that names the table and the
/// flag. Reads only, and a database without the ledger has nothing of dbdelta's, so a
/// refused database is left as it was. True when the table exists (and may be dropped).
pub fn check_owned(
    conn: &mut dyn Connection,
    table: &str,
    i_own_this_database: bool,
) -> Result<bool, EngineError> {
    if conn.dialect() == Dialect::Mock || !table_exists(conn, table)? {
        return Ok(false);
    }
    let ours = table_exists(conn, LEDGER)?
        && conn
            .query_scalar(&format!(
                "SELECT count(*) FROM {LEDGER} WHERE name = '{table}'"
            ))?
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
            > 0;
    if !ours && !i_own_this_database {
        return Err(EngineError::config(format!(
            "table {table} already exists and was not created by dbdelta; refusing to drop it. \
             Use another database, or pass --i-own-this-database to allow dbdelta to drop it"
        )));
    }
    Ok(true)
}

/// Drops `table` if it exists — only when dbdelta's ledger says dbdelta created it, or the
/// user passed `--i-own-this-database`. Otherwise an error that names the table and the flag.
pub fn drop_if_owned(
    conn: &mut dyn Connection,
    table: &str,
    i_own_this_database: bool,
) -> Result<(), EngineError> {
    if check_owned(conn, table, i_own_this_database)? {
        conn.query(&format!("DROP TABLE {table}"))?;
    }
    Ok(())
}

/// Records that dbdelta created `table`.
pub fn record_owned(conn: &mut dyn Connection, table: &str) -> Result<(), EngineError> {
    conn.query(&format!("DELETE FROM {LEDGER} WHERE name = '{table}'"))?;
    conn.query(&format!("INSERT INTO {LEDGER} (name) VALUES ('{table}')"))?;
    Ok(())
}

/// The rows of one sbtest table: `k` uniform in [1, N], random `c` and `pad` (oltp_common.lua);
/// `id` is assigned by the database (1..N in insert order).
pub struct SbtestRows {
    rng: Rng,
    left: u64,
    size: i64,
    c: String,
    pad: String,
}

impl SbtestRows {
    /// `count` rows for a table of `table_size` rows, from the given random stream.
    pub fn new(count: u64, table_size: u64, seed: u64, stream: u64) -> Self {
        SbtestRows {
            rng: Rng::new(seed, stream),
            left: count,
            size: table_size.max(1) as i64,
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
        }
    }
}

const COLUMNS: &[&str] = &["k", "c", "pad"];

impl RowSource for SbtestRows {
    fn columns(&self) -> &[&'static str] {
        COLUMNS
    }

    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        let k = self.rng.uniform(1, self.size);
        self.rng.fill_template(C_TEMPLATE, &mut self.c);
        self.rng.fill_template(PAD_TEMPLATE, &mut self.pad);
        out.push(OwnedValue::Int(k));
        out.push(OwnedValue::Text(self.c.clone()));
        out.push(OwnedValue::Text(self.pad.clone()));
        true
    }
}

/// Timings of loading one table.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TableLoad {
    /// Rows inserted.
    pub rows: u64,
    /// Seconds spent inserting.
    pub load_secs: f64,
    /// Seconds spent building the k index.
    pub index_secs: f64,
}

/// Drops (if owned), creates, loads and indexes `sbtest<t>`.
pub fn load_table(
    conn: &mut dyn Connection,
    t: u32,
    table_size: u64,
    seed: u64,
    i_own_this_database: bool,
) -> Result<TableLoad, EngineError> {
    let name = format!("sbtest{t}");
    let dialect = conn.dialect();
    drop_if_owned(conn, &name, i_own_this_database)?;
    conn.query(&create_table_sql(dialect, conn.table_engine(), t))?;
    record_owned(conn, &name)?;
    let start = std::time::Instant::now();
    let mut rows = SbtestRows::new(table_size, table_size, seed, 0x10AD_0000 + u64::from(t));
    let n = conn.bulk_insert(&name, &mut rows)?;
    let load_secs = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    conn.query(&create_index_sql(t))?;
    Ok(TableLoad {
        rows: n,
        load_secs,
        index_secs: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A MyRocks target's table engine reaches every MySQL `CREATE TABLE` of the workloads
    /// (sysbench, the Insert Benchmark, pgbench's TPC-B, TPC-C); without one they stay
    /// InnoDB, and other dialects name no engine.
    #[test]
    fn every_mysql_ddl_names_the_target_engine() {
        let rocks = Some("ROCKSDB");
        let all = |dialect: Dialect, engine: Option<&str>| -> Vec<String> {
            let mut v = vec![
                create_table_sql(dialect, engine, 1),
                crate::tpcb::create_table_sql(dialect, engine, "pgbench_accounts", 1),
                crate::tpcc::schema::create_table_sql(dialect, engine, "customer").unwrap(),
            ];
            v.extend(crate::ibench::schema::create_table_sql(
                dialect, engine, "pi1",
            ));
            v
        };
        for ddl in all(Dialect::Mysql, rocks) {
            let upper = ddl.to_ascii_uppercase();
            assert!(
                upper.contains("ENGINE = ROCKSDB") || upper.contains("ENGINE=ROCKSDB"),
                "{ddl}"
            );
            assert!(!upper.contains("INNODB"), "{ddl}");
        }
        for ddl in all(Dialect::Mysql, None) {
            assert!(ddl.to_ascii_uppercase().contains("INNODB"), "{ddl}");
        }
        for ddl in all(Dialect::Postgres, rocks) {
            assert!(!ddl.to_ascii_uppercase().contains("ENGINE"), "{ddl}");
        }
    }

    #[test]
    fn ddl_per_dialect() {
        let pg = create_table_sql(Dialect::Postgres, None, 1);
        assert!(
            pg.contains("id SERIAL") && pg.contains("PRIMARY KEY (id)"),
            "{pg}"
        );
        let my = create_table_sql(Dialect::Mysql, None, 2);
        assert!(my.starts_with("CREATE TABLE sbtest2(") && my.contains("AUTO_INCREMENT"));
        assert!(my.contains("ENGINE = innodb"));
        let lite = create_table_sql(Dialect::Sqlite, None, 3);
        assert!(lite.contains("id INTEGER PRIMARY KEY") && !lite.contains("PRIMARY KEY (id)"));
        assert_eq!(create_index_sql(4), "CREATE INDEX k_4 ON sbtest4(k)");
    }

    #[test]
    fn rows_match_templates() {
        let mut rows = SbtestRows::new(3, 100, 1, 1);
        let mut out = Vec::new();
        let mut n = 0;
        while {
            out.clear();
            rows.next_row(&mut out)
        } {
            n += 1;
            match (&out[0], &out[1], &out[2]) {
                (OwnedValue::Int(k), OwnedValue::Text(c), OwnedValue::Text(pad)) => {
                    assert!((1..=100).contains(k));
                    assert_eq!(c.len(), 119);
                    assert_eq!(pad.len(), 59);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(n, 3);
    }
}
