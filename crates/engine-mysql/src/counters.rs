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
//!
//! A MyRocks target (`engine=rocksdb`) reads MyRocks' status variables
//! ([`crate::myrocks::STATUS`]: rows, block cache, memtable, WAL, flush and compaction bytes,
//! stalls) in place of InnoDB's, whose counters there only see the system tables.

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

/// InnoDB's own variables (the first eight of [`STATUS`]), left out on MyRocks targets.
const INNODB_PREFIX: &str = "Innodb_";

/// The side connection and what it learned once on opening.
pub(crate) struct StatsSession {
    conn: MysqlConnection,
    /// `@@log_bin`: whether binary log bytes mean anything.
    log_bin: bool,
    /// The variables this target reads.
    names: Vec<&'static str>,
}

impl std::fmt::Debug for StatsSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsSession")
            .field("log_bin", &self.log_bin)
            .field("names", &self.names.len())
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
            let names = names(endpoint.table_engine.is_some());
            Ok(StatsSession {
                conn,
                log_bin,
                names,
            })
        },
        |s| {
            let rows = s.conn.rows(&query(&s.names))?;
            Ok(parse(&rows, &s.names, s.log_bin))
        },
    )
}

/// The variables a target reads: [`STATUS`], on MyRocks targets with MyRocks' in place of
/// InnoDB's.
fn names(myrocks: bool) -> Vec<&'static str> {
    if myrocks {
        STATUS
            .iter()
            .copied()
            .filter(|n| !n.starts_with(INNODB_PREFIX))
            .chain(crate::myrocks::STATUS)
            .collect()
    } else {
        STATUS.to_vec()
    }
}

/// `SHOW GLOBAL STATUS` of `names` only: the server then fills (and its handler counters
/// count) a handful of rows, not all of its several hundred.
fn query(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(",")
    )
}

/// Names the `(Variable_name, Value)` rows; unknown names and non-numbers are skipped (a
/// server can add variables; none of ours is ever text).
fn parse(rows: &[Vec<Option<String>>], names: &[&str], log_bin: bool) -> EngineCounters {
    let mut out = EngineCounters::default();
    for row in rows {
        let [Some(name), Some(value)] = &row[..] else {
            continue;
        };
        let Some(known) = names.iter().find(|n| n.eq_ignore_ascii_case(name)) else {
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
        let c = parse(&rows, &STATUS, false);
        assert_eq!(c.cumulative["db.innodb_rows_read"], 120.0);
        assert_eq!(c.cumulative["db.handler_commit"], 7.0);
        assert_eq!(c.cumulative.len(), 2, "{c:?}");
        let c = parse(&rows, &STATUS, true);
        assert_eq!(c.cumulative["db.binlog_bytes_written"], 4096.0);
    }

    #[test]
    fn the_query_names_every_variable() {
        let q = query(&names(false));
        for n in STATUS {
            assert!(q.contains(&format!("'{n}'")), "{q}");
        }
    }

    #[test]
    fn myrocks_targets_read_myrocks_counters_in_place_of_innodb() {
        let n = names(true);
        let q = query(&n);
        assert!(!q.contains("Innodb_"), "{q}");
        for v in [
            "Rocksdb_block_cache_miss",
            "Rocksdb_wal_bytes",
            "Handler_commit",
        ] {
            assert!(q.contains(&format!("'{v}'")), "{q}");
        }
        let rows = vec![
            row("Rocksdb_compact_write_bytes", "8192"),
            row("Innodb_rows_read", "120"),
        ];
        let c = parse(&rows, &n, false);
        assert_eq!(c.cumulative["db.rocksdb_compact_write_bytes"], 8192.0);
        assert_eq!(c.cumulative.len(), 1, "{c:?}");
    }
}
