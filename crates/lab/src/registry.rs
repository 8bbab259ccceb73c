//! The engines the lab knows: one table of engine kinds, each line naming the kind a crate
//! implements. A target spec is configured once, when the plan is checked; provisioning
//! opens from that configuration. Only the lab knows every concrete engine; the runner sees
//! the `Engine` trait.

use crate::error::{input, LabError};
pub use crate::plan::Target;
use dbdelta_engine::{Connection, Engine, EngineError, EngineKind, OpenOptions};
use dbdelta_model::TargetSpec;

/// Every engine kind, in the order error messages list them. Adding an engine: its crate
/// (implementing `EngineKind` and `EngineConfig`), its dependency, and one line here.
pub static KINDS: &[&dyn EngineKind] = &[
    &dbdelta_engine_sqlite::SqliteKind,
    &dbdelta_engine_postgres::PostgresKind,
    &crate::build::PostgresBuildKind,
    &crate::dist::PostgresDistKind,
    &dbdelta_engine_mysql::MysqlKind,
    &dbdelta_engine_rocksdb::RocksdbKind,
    &dbdelta_engine_clickhouse::ClickhouseKind,
    &dbdelta_engine_clickhouse::ChdbKind,
    &dbdelta_engine_mock::MockKind,
    &dbdelta_engine_mongodb::MongodbKind,
    &crate::rocks_build::RocksdbBuildKind,
    &dbdelta_ferretdb::kind::FerretdbKind,
];

/// Engine names, for error messages.
pub fn known() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.name()).collect()
}

/// The kind of an engine name.
pub fn kind(name: &str) -> Option<&'static dyn EngineKind> {
    KINDS.iter().copied().find(|k| k.name() == name)
}

/// Validation before anything runs: a known engine, a well-formed spec. The typed
/// configuration is kept in the returned target, which the plan carries.
pub fn check(t: &TargetSpec) -> Result<Target, LabError> {
    let Some(kind) = kind(&t.engine) else {
        return Err(input!(
            "--target {}: unknown engine '{}': known engines are {}",
            t.name,
            t.engine,
            known().join(", ")
        ));
    };
    Target::configure(kind, t)
}

/// A connection to the PostgreSQL server of a `--store postgres://…` results history,
/// through the PostgreSQL engine's client (the history crate names no engine).
pub fn history_connection(t: &TargetSpec) -> Result<Box<dyn Connection>, EngineError> {
    let engine = dbdelta_engine_postgres::open(t, &std::env::temp_dir(), &OpenOptions::default())?;
    engine.connect()
}

/// Refuses a target whose engine cannot run `suite`: ClickHouse (server or chDB) runs
/// query-set suites only, not the OLTP suites built into dbdelta.
/// A key-value store (RocksDB) runs only suites whose `families` do not need SQL.
pub fn check_suite(
    t: &Target,
    suite: &str,
    families: &[dbdelta_engine::Family],
) -> Result<(), LabError> {
    if !t.kind().serves_sql() && families.contains(&dbdelta_engine::Family::Sql) {
        return Err(input!(
            "--target {}: {} is a key-value store and cannot run the {suite} suite (its steps \
             are SQL statements); run --suite kv or --suite ycsb on it, or drop this target",
            t.name,
            t.engine
        ));
    }
    if t.kind().analytic_only() {
        return Err(input!(
            "--target {}: {} is an analytic engine and cannot run the {suite} suite (its OLTP statements: \
             single-row updates, transactions, auto-increment keys); run a query-set suite on it \
             (dbdelta run --suite ./my-queries/) or drop this target",
            t.name,
            t.engine
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(keep: impl Fn(&dyn EngineKind) -> bool) -> Vec<&'static str> {
        KINDS
            .iter()
            .filter(|k| keep(**k))
            .map(|k| k.name())
            .collect()
    }

    #[test]
    fn the_table_lists_each_kind_once_with_its_facts() {
        assert_eq!(
            known(),
            [
                "sqlite",
                "postgres",
                "postgres-build",
                "postgres-dist",
                "mysql",
                "rocksdb",
                "clickhouse",
                "chdb",
                "mock",
                "mongodb",
                "rocksdb-build",
                "ferretdb"
            ]
        );
        assert_eq!(
            names(|k| k.thread_per_connection()),
            [
                "sqlite",
                "rocksdb",
                "clickhouse",
                "chdb",
                "mock",
                "rocksdb-build"
            ]
        );
        assert_eq!(names(|k| k.analytic_only()), ["clickhouse", "chdb"]);
        assert_eq!(names(|k| !k.fit_for_turns()), ["mysql"]);
    }

    #[test]
    fn specs_are_configured_once_with_the_messages_of_the_check() {
        let t = TargetSpec::parse("x=nosuch").unwrap();
        let e = check(&t).unwrap_err().to_string();
        assert!(
            e.starts_with("--target x: unknown engine 'nosuch': known engines are sqlite, "),
            "{e}"
        );
        let t = TargetSpec::parse("l=sqlite://h/db").unwrap();
        assert_eq!(
            check(&t).unwrap_err().to_string(),
            "--target l: sqlite takes a file path (sqlite:/path/file.db), not a URL"
        );
        let t = TargetSpec::parse("p=postgres").unwrap();
        assert!(check(&t)
            .unwrap_err()
            .to_string()
            .starts_with("--target p: postgres needs a bin/base directory"));
        let t = check(&TargetSpec::parse("m=mock?latency=0").unwrap()).unwrap();
        assert_eq!((t.kind().name(), t.thread_per_connection()), ("mock", true));
        let dir = std::env::temp_dir();
        let engine = t.open(&dir, &OpenOptions::default()).unwrap();
        assert!(engine.connect().is_ok());
        let runs = std::path::Path::new("/runs");
        let data = |spec: &str| {
            check(&TargetSpec::parse(spec).unwrap())
                .unwrap()
                .config()
                .data_parent(runs)
        };
        assert_eq!(data("l=sqlite"), Some(runs.to_path_buf()));
        assert_eq!(data("l=sqlite:/tmp/x.db"), Some("/tmp".into()));
        assert_eq!(data("p=postgres://u@127.0.0.1:5432/db"), None);
        assert_eq!(data("m=mock"), None);
        let c = check(&TargetSpec::parse("c=chdb").unwrap()).unwrap();
        let sql = [dbdelta_engine::Family::Sql];
        assert!(check_suite(&c, "sysbench", &sql)
            .unwrap_err()
            .to_string()
            .contains("analytic engine"));
        let r = check(&TargetSpec::parse("r=rocksdb").unwrap()).unwrap();
        assert!(check_suite(&r, "tpcc", &sql)
            .unwrap_err()
            .to_string()
            .contains("rocksdb is a key-value store and cannot run the tpcc suite"));
        let kv = [dbdelta_engine::Family::RawKeyValue];
        assert!(check_suite(&r, "kv", &kv).is_ok());
    }
}
