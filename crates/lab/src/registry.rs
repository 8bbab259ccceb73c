//! The engines the lab knows: name → validation and opening. Only the lab knows every
//! concrete engine; the runner sees the `Engine` trait.

use crate::error::{input, LabError};
use dbdelta_engine::{Connection, Engine, EngineError, OpenOptions};
use dbdelta_engine_mock::{MockConfig, MockEngine};
use dbdelta_engine_rocksdb::RocksdbEngine;
use dbdelta_engine_sqlite::SqliteEngine;
use dbdelta_model::{Location, TargetSpec};
use std::path::Path;

/// Engine names, for error messages.
pub const KNOWN: &[&str] = &[
    "sqlite",
    "postgres",
    "postgres-build",
    "mysql",
    "rocksdb",
    "clickhouse",
    "chdb",
    "mock",
];

/// Engines that only run query-set suites: analytic SQL, no OLTP statements.
pub const ANALYTIC: &[&str] = &["clickhouse", "chdb"];

/// Cheap validation before anything runs: known engine, well-formed parameters.
pub fn check(t: &TargetSpec) -> Result<(), LabError> {
    match t.engine.as_str() {
        "sqlite" => {
            if matches!(t.location, Location::Url { .. }) {
                return Err(input!(
                    "--target {}: sqlite takes a file path (sqlite:/path/file.db), not a URL",
                    t.name
                ));
            }
            SqliteEngine::check_spec(t).map_err(LabError::Target)
        }
        "rocksdb" => RocksdbEngine::check_spec(t)
            .map(|_| ())
            .map_err(LabError::Target),
        "mock" => MockConfig::from_spec(t)
            .map(|_| ())
            .map_err(LabError::Target),
        crate::build::BUILD_ENGINE => crate::build::check(t),
        "clickhouse" => dbdelta_engine_clickhouse::check_spec(t).map_err(LabError::Target),
        "chdb" => dbdelta_engine_clickhouse::ChdbEngine::check_spec(t)
            .map(|_| ())
            .map_err(LabError::Target),
        "postgres" | "mysql" => {
            // net=…: valid, on a managed target, and buildable here (root, ip, tc, netem).
            dbdelta_kit::netns::check_spec(t).map_err(LabError::Target)?;
            check_server(t)
        }
        other => Err(input!(
            "--target {}: unknown engine '{other}': known engines are {}",
            t.name,
            KNOWN.join(", ")
        )),
    }
}

/// [`check`] of a postgres or mysql target.
fn check_server(t: &TargetSpec) -> Result<(), LabError> {
    match &t.location {
        Location::Default => Err(input!(
            "--target {}: {} needs a bin/base directory (managed, e.g. {}:/usr/lib/postgresql/15/bin) or a URL (external, e.g. {}://user@host:port/db)",
            t.name, t.engine, t.engine, t.engine
        )),
        Location::Path { path } if !path.is_dir() => Err(input!(
            "--target {}: {} is not a directory: point at the server's bin (postgres) or base (mysql) directory",
            t.name,
            path.display()
        )),
        _ if t.engine == "mysql" => {
            dbdelta_engine_mysql::check_spec(t).map_err(LabError::Target)
        }
        _ => dbdelta_engine_postgres::check_spec(t).map_err(LabError::Target),
    }
}

/// Provisions a target: opens the file, starts the managed server or connects.
pub fn open(
    t: &TargetSpec,
    scratch: &Path,
    opts: &OpenOptions,
) -> Result<Box<dyn Engine>, EngineError> {
    Ok(match t.engine.as_str() {
        "sqlite" => Box::new(SqliteEngine::open(t, scratch, opts)?),
        "rocksdb" => Box::new(RocksdbEngine::open(t, scratch, opts)?),
        "mock" => Box::new(MockEngine::new(MockConfig::from_spec(t)?)),
        "postgres" => Box::new(dbdelta_engine_postgres::open(t, scratch, opts)?),
        "mysql" => Box::new(dbdelta_engine_mysql::open(t, scratch, opts)?),
        "clickhouse" | "chdb" => dbdelta_engine_clickhouse::open(t, scratch, opts)?,
        other => {
            return Err(EngineError::config(format!(
                "unknown engine '{other}': known engines are {}",
                KNOWN.join(", ")
            )))
        }
    })
}

/// A connection to the PostgreSQL server of a `--store postgres://…` results history,
/// through the PostgreSQL engine's client (the history crate names no engine).
pub fn history_connection(t: &TargetSpec) -> Result<Box<dyn Connection>, EngineError> {
    let engine = dbdelta_engine_postgres::open(t, &std::env::temp_dir(), &OpenOptions::default())?;
    engine.connect()
}

/// Engines whose connections each need a thread of their own (no session form): embedded
/// engines run statements on the caller's thread, and ClickHouse's HTTP connections are
/// blocking request/response pairs.
pub fn thread_per_connection(t: &TargetSpec) -> bool {
    matches!(
        t.engine.as_str(),
        "sqlite" | "rocksdb" | "mock" | "clickhouse" | "chdb"
    )
}

/// Refuses a target whose engine cannot run `suite`: ClickHouse (server or chDB) runs
/// query-set suites only, not the OLTP suites built into dbdelta.
pub fn check_suite(t: &TargetSpec, suite: &str) -> Result<(), LabError> {
    if ANALYTIC.contains(&t.engine.as_str()) {
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
