//! `--statement-timeout` for connections that run one statement at a time outside the
//! measured event loop (query sets: setup files, loaders, queries): the server is asked to
//! cancel a statement that runs past the limit — PostgreSQL's `statement_timeout`, MariaDB's
//! `max_statement_time` (MySQL's `max_execution_time`), ClickHouse's `max_execution_time` —
//! and every blocking read of the connection gives up a little later, so a server that
//! stops answering cannot hang the run either. SQLite, without a server, takes the
//! connection's I/O bound as the limit of each statement (a progress handler interrupts it).

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
/// `limit`. SQLite bounds its statements by the connection's options ([`connect_options`]);
/// the mock and RocksDB have nothing to bound.
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
        Dialect::Sqlite | Dialect::Mock | Dialect::Rocksdb | Dialect::Mongodb => Ok(()),
    }
}

/// The servers' codes for a statement cancelled by its time limit: PostgreSQL's
/// `query_canceled` (the only cancel this connection asks for is the limit), MariaDB's
/// `ER_STATEMENT_TIMEOUT`, MySQL's `ER_QUERY_TIMEOUT`, ClickHouse's `TIMEOUT_EXCEEDED`.
const TIMEOUT_CODES: [&str; 4] = [
    "SQLSTATE 57014",
    "MySQL 1969",
    "MySQL 3024",
    "ClickHouse 159",
];

/// True when `e` is a statement that ran past its limit: cancelled by the server, or no
/// answer within the client's bound.
pub(crate) fn is_timeout(e: &EngineError) -> bool {
    e.kind == ErrorKind::Timeout
        || e.code
            .as_deref()
            .is_some_and(|c| TIMEOUT_CODES.contains(&c))
}

/// The message of a statement that failed: a timeout says which limit it ran into.
pub(crate) fn describe(e: &EngineError, limit: Duration) -> String {
    if is_timeout(e) {
        format!(
            "timed out after the --statement-timeout of {} s ({e})",
            limit.as_secs_f64()
        )
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_cancels_and_client_timeouts_are_told_as_timeouts() {
        let limit = Duration::from_secs(3);
        let pg = EngineError::new(
            ErrorKind::Statement,
            "canceling statement due to statement timeout",
        )
        .with_code("SQLSTATE 57014");
        assert!(describe(&pg, limit).starts_with("timed out after the --statement-timeout of 3 s"));
        let client = EngineError::new(ErrorKind::Timeout, "no answer");
        assert!(is_timeout(&client));
        let other =
            EngineError::new(ErrorKind::Statement, "syntax error").with_code("SQLSTATE 42601");
        assert_eq!(describe(&other, limit), "syntax error");
        assert_eq!(
            connect_options(limit).io_timeout,
            Some(limit + CLIENT_SLACK)
        );
    }
}
