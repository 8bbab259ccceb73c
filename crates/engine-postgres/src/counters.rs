//! The server's own counters around a step's window ([`dbdelta_engine::Engine::counters`]),
//! read over SQL on a side connection so they work for external targets too.
//!
//! * `pg_stat_database` of the current database: blocks read and hit, tuples returned,
//!   fetched, inserted, updated and deleted, commits, rollbacks and temporary-file bytes.
//! * WAL bytes as the WAL insert position (`pg_current_wal_insert_lsn() - '0/0'`), not
//!   `pg_stat_wal.wal_bytes`: the position is exact at the moment it is read, where
//!   `pg_stat_wal` is published as lazily as the database counters, exists only from 14 on
//!   and is zeroed by `pg_stat_reset_shared`. On a standby (in recovery) it is left out.
//! * `pg_stat_bgwriter`'s `buffers_alloc` and `buffers_clean`: the two columns PostgreSQL
//!   15 to 18 all have (17 moved the backend and checkpoint writes to `pg_stat_io` and
//!   `pg_stat_checkpointer`), so one query serves every version.
//!
//! How fresh the numbers are: `pg_stat_clear_snapshot()` before each read drops any cached
//! snapshot, so a read sees what the server has published. But backends publish their
//! database counters at the end of a transaction at most once a second (PostgreSQL 15+,
//! `PGSTAT_MIN_INTERVAL`; before 15 they sent them to the statistics collector every
//! 500 ms), and nothing makes another backend publish sooner (`pg_stat_force_next_flush()`
//! acts on the caller only; having every benchmark connection call it at both edges would
//! put a statement of ours into the measured stream). So each edge of the window misses
//! what every busy backend did since it last published, up to about a second. The edges
//! miss alike on average, so the difference is unbiased, but one step's figures can be off
//! by up to ±1 s of work over the window: on PostgreSQL 15 with 2.3 to 3.7 s windows we
//! measured 0.78 to 1.23 commits per single-statement update or point query (1 is right),
//! which is about ±2 % on a 60 s window and ±0.3 % on a 300 s one. WAL bytes, from the insert
//! position, are exact. The database counters are the whole database's, this side
//! connection's two small queries per edge included; WAL and bgwriter counters are the
//! whole server's.

use crate::conn::{connect_with, ConnParams};
use crate::PgConnection;
use dbdelta_engine::stats_conn::{counter_value, STATS_TIMEOUT};
use dbdelta_engine::{
    ConnectOptions, EngineCounters, EngineError, StatsConnection, DB_COUNTER_PREFIX,
};

/// The counters in the order [`QUERY`] returns them (`db.` is prefixed).
const NAMES: [&str; 13] = [
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "xact_commit",
    "xact_rollback",
    "temp_bytes",
    "wal_bytes",
    "buffers_alloc",
    "buffers_clean",
];

/// One row with every counter of [`NAMES`], as text.
const QUERY: &str = "SELECT d.blks_read, d.blks_hit, d.tup_returned, d.tup_fetched, \
     d.tup_inserted, d.tup_updated, d.tup_deleted, d.xact_commit, d.xact_rollback, \
     d.temp_bytes, \
     CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_insert_lsn() - '0/0'::pg_lsn END, \
     b.buffers_alloc, b.buffers_clean \
     FROM pg_stat_database d, pg_stat_bgwriter b WHERE d.datname = current_database()";

/// Reads the counters on `stats`, opening it to `params` when needed.
pub(crate) fn sample(
    stats: &StatsConnection<PgConnection>,
    params: &ConnParams,
) -> Result<EngineCounters, EngineError> {
    stats.read(
        || {
            let bounded = ConnectOptions {
                source: None,
                timeout: Some(STATS_TIMEOUT),
                io_timeout: Some(STATS_TIMEOUT),
            };
            connect_with(params, &bounded)
        },
        |conn| {
            conn.query_rows("SELECT pg_stat_clear_snapshot()")?;
            let rows = conn.query_rows(QUERY)?;
            let [row] = &rows[..] else {
                return Err(EngineError::statement(format!(
                    "the counter query returned {} rows for the current database, not 1",
                    rows.len()
                )));
            };
            parse(row)
        },
    )
}

/// Names the values of one row of [`QUERY`]; NULLs (WAL on a standby) are left out.
fn parse(row: &[Option<String>]) -> Result<EngineCounters, EngineError> {
    if row.len() != NAMES.len() {
        return Err(EngineError::statement(format!(
            "the counter query returned {} columns, not {}",
            row.len(),
            NAMES.len()
        )));
    }
    let mut out = EngineCounters::default();
    for (name, value) in NAMES.iter().zip(row) {
        let Some(text) = value else { continue };
        let v = counter_value(text).ok_or_else(|| {
            EngineError::statement(format!("counter {name} is not a number: {text:?}"))
        })?;
        out.cumulative
            .insert(format!("{DB_COUNTER_PREFIX}{name}"), v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_is_named_and_nulls_are_left_out() {
        let mut row: Vec<Option<String>> = (0..NAMES.len()).map(|i| Some(i.to_string())).collect();
        row[10] = None;
        let c = parse(&row).unwrap();
        assert_eq!(c.cumulative.len(), NAMES.len() - 1);
        assert_eq!(c.cumulative["db.blks_read"], 0.0);
        assert_eq!(c.cumulative["db.buffers_clean"], 12.0);
        assert!(!c.cumulative.contains_key("db.wal_bytes"));
        assert!(c.current.is_empty());
        // The query's select list and the names agree in length.
        let select = QUERY.split(" FROM pg_stat_database").next().unwrap();
        assert_eq!(select.matches(", ").count() + 1, NAMES.len(), "{select}");
    }

    #[test]
    fn malformed_rows_are_errors() {
        assert!(parse(&[Some("1".into())]).is_err());
        let mut row: Vec<Option<String>> = vec![Some("1".into()); NAMES.len()];
        row[0] = Some("many".into());
        let e = parse(&row).unwrap_err();
        assert!(e.message.contains("blks_read"), "{e}");
    }
}
