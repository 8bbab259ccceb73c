//! The server's own counters around a step's window ([`dbdelta_engine::Engine::counters`]):
//! `SHOW GLOBAL STATUS` on a side connection, so they work for external targets too.
//!
//! InnoDB's buffer pool reads and read requests, rows read, inserted, updated and deleted
//! (MySQL; MariaDB 10.6 and later no longer have them), data and redo log bytes written;
//! the handler calls both servers count (every kind of row read, row writes, updates,
//! deletes, commits); and binary log bytes when the server writes a binary log (MariaDB
//! counts them; MySQL has no such status variable). A variable the server does not have is
//! left out, never an error. The server keeps these counters current (a `SHOW GLOBAL
//! STATUS` sums every session's), so both edges of the window are exact; they are the whole
//! server's, this side connection's reads included (on MariaDB each read adds about twenty
//! handler row reads and temporary-table writes of its own).

use crate::connection::MysqlConnection;
use crate::endpoint::Endpoint;
use dbdelta_engine::stats_conn::{counter_value, STATS_TIMEOUT};
use dbdelta_engine::{
    ConnectOptions, EngineCounters, EngineError, StatsConnection, DB_COUNTER_PREFIX,
};
use std::sync::Arc;

/// The status variables read; each becomes `db.<name in lower case>`.
const STATUS: [&str; 20] = [
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_prev",
    "Handler_read_first",
    "Handler_read_last",
    "Handler_read_rnd",
    "Handler_read_rnd_next",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Handler_commit",
    "Binlog_bytes_written",
];

/// Only meaningful with a binary log: without one it stays 0, which would read as "free".
const BINLOG_BYTES: &str = "Binlog_bytes_written";

/// The side connection and what it learned once on opening.
pub(crate) struct StatsSession {
    conn: MysqlConnection,
    /// `@@log_bin`: whether binary log bytes mean anything.
    log_bin: bool,
}

impl std::fmt::Debug for StatsSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsSession")
            .field("log_bin", &self.log_bin)
            .finish_non_exhaustive()
    }
}

/// Reads the counters on `stats`, opening it to `endpoint` when needed.
pub(crate) fn sample(
    stats: &StatsConnection<StatsSession>,
    endpoint: &Arc<Endpoint>,
) -> Result<EngineCounters, EngineError> {
    stats.read(
        || {
            let bounded = ConnectOptions {
                source: None,
                timeout: Some(STATS_TIMEOUT),
                io_timeout: Some(STATS_TIMEOUT),
            };
            let mut conn = MysqlConnection::open(Arc::clone(endpoint), false, &bounded)?;
            let log_bin = conn
                .rows("SELECT @@log_bin")?
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("on"));
            Ok(StatsSession { conn, log_bin })
        },
        |s| {
            let rows = s.conn.rows(&query())?;
            Ok(parse(&rows, s.log_bin))
        },
    )
}

/// `SHOW GLOBAL STATUS` of [`STATUS`] only: the server then fills (and its handler counters
/// count) a handful of rows, not all of its several hundred.
fn query() -> String {
    let names: Vec<String> = STATUS.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(",")
    )
}

/// Names the `(Variable_name, Value)` rows; unknown names and non-numbers are skipped (a
/// server can add variables; none of ours is ever text).
fn parse(rows: &[Vec<Option<String>>], log_bin: bool) -> EngineCounters {
    let mut out = EngineCounters::default();
    for row in rows {
        let [Some(name), Some(value)] = &row[..] else {
            continue;
        };
        let Some(known) = STATUS.iter().find(|n| n.eq_ignore_ascii_case(name)) else {
            continue;
        };
        if *known == BINLOG_BYTES && !log_bin {
            continue;
        }
        if let Some(v) = counter_value(value) {
            out.cumulative.insert(
                format!("{DB_COUNTER_PREFIX}{}", known.to_ascii_lowercase()),
                v,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: &str, v: &str) -> Vec<Option<String>> {
        vec![Some(k.into()), Some(v.into())]
    }

    #[test]
    fn status_rows_become_db_counters() {
        let rows = vec![
            row("Innodb_rows_read", "120"),
            row("HANDLER_COMMIT", "7"),
            row("Binlog_bytes_written", "4096"),
            row("Uptime", "99"),
            vec![Some("Handler_write".into()), None],
        ];
        let c = parse(&rows, false);
        assert_eq!(c.cumulative["db.innodb_rows_read"], 120.0);
        assert_eq!(c.cumulative["db.handler_commit"], 7.0);
        assert_eq!(c.cumulative.len(), 2, "{c:?}");
        let c = parse(&rows, true);
        assert_eq!(c.cumulative["db.binlog_bytes_written"], 4096.0);
    }

    #[test]
    fn the_query_names_every_variable() {
        let q = query();
        for n in STATUS {
            assert!(q.contains(&format!("'{n}'")), "{q}");
        }
    }
}
