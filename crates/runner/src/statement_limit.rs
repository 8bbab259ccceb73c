//! `--statement-timeout` for connections that run one statement at a time outside the
//! measured event loop (query sets: setup files, loaders, queries): the server is asked to
//! cancel a statement that runs past the limit — PostgreSQL's `statement_timeout`, MariaDB's
//! `max_statement_time` (MySQL's `max_execution_time`), ClickHouse's `max_execution_time` —
//! and every blocking read of the connection gives up a little later, so a server that
//! stops answering cannot hang the run either.

use dbdelta_engine::{ConnectOptions, Connection, EngineError, ErrorKind};
use dbdelta_model::Dialect;
use std::time::Duration;

/// How long after the server-side limit the client stops waiting for an answer: room for
/// the server's cancel to arrive as a normal error first.
const CLIENT_SLACK: Duration = Duration::from_secs(2);

/// The longest limit every server accepts.
const SERVER_MAX: Duration = Duration::from_secs(24 * 24 * 3600);

/// Connection options whose reads and writes are bounded just past `limit`.
pub(crate) fn connect_options(limit: Duration) -> ConnectOptions {
    ConnectOptions {
        io_timeout: Some(limit.saturating_add(CLIENT_SLACK)),
        ..ConnectOptions::default()
    }
}

/// Asks the server of `conn` to cancel any statement of this session that runs past
/// `limit`. Engines without such a setting (SQLite, the mock, RocksDB) are left as they are.
pub(crate) fn limit_session(conn: &mut dyn Connection, limit: Duration) -> Result<(), EngineError> {
    // PostgreSQL takes at most i32::MAX ms (24.8 days), MariaDB a year: a longer limit is
    // no limit in practice.
    let limit = limit.min(SERVER_MAX);
    let ms = limit.as_millis().max(1);
    match conn.dialect() {
        Dialect::Postgres => conn
            .query(&format!("SET statement_timeout = {ms}"))
            .map(drop),
        // MariaDB takes seconds (fractions allowed); MySQL 5.7+ milliseconds, SELECTs only.
        Dialect::Mysql => conn
            .query(&format!(
                "SET SESSION max_statement_time = {:.3}",
                limit.as_secs_f64().max(0.001)
            ))
            .or_else(|_| conn.query(&format!("SET SESSION max_execution_time = {ms}")))
            .map(drop),
        // Whole seconds: older servers refuse a fraction.
        Dialect::Clickhouse => conn
            .query(&format!(
                "SET max_execution_time = {}",
                limit.as_secs_f64().ceil().max(1.0) as u64
            ))
            .map(drop),
        Dialect::Sqlite | Dialect::Mock | Dialect::Rocksdb => Ok(()),
    }
}

/// The message of a statement that failed: a timeout says which limit it ran into.
pub(crate) fn describe(e: &EngineError, limit: Duration) -> String {
    if e.kind == ErrorKind::Timeout {
        format!(
            "timed out after the --statement-timeout of {} s ({e})",
            limit.as_secs_f64()
        )
    } else {
        e.to_string()
    }
}
