//! `--statement-timeout` for SQLite, which has no server to cancel a statement: a progress
//! handler (called every [`CHECK_OPS`] virtual-machine instructions) interrupts a statement
//! that has run past the limit, and the statement fails with `SQLITE_INTERRUPT`, told as a
//! timeout. Each statement the connection starts bumps a counter (one relaxed atomic add);
//! the handler notes when it first sees a new value, so a statement shorter than
//! [`CHECK_OPS`] instructions never reads the clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Instructions between two checks of the clock: a few microseconds of work.
const CHECK_OPS: i32 = 10_000;

/// The statement counter of one connection with a limit.
#[derive(Debug, Clone, Default)]
pub(crate) struct StatementLimit {
    started: Arc<AtomicU64>,
}

impl StatementLimit {
    /// Installs the handler on `conn` that interrupts statements running past `limit`.
    pub(crate) fn install(conn: &rusqlite::Connection, limit: Duration) -> StatementLimit {
        let this = StatementLimit::default();
        let started = Arc::clone(&this.started);
        let mut seen = u64::MAX;
        let mut since = Instant::now();
        conn.progress_handler(
            CHECK_OPS,
            Some(move || {
                let now = started.load(Ordering::Relaxed);
                if now != seen {
                    seen = now;
                    since = Instant::now();
                    return false;
                }
                since.elapsed() > limit
            }),
        );
        this
    }

    /// A statement starts (every path that runs one calls this first).
    #[inline]
    pub(crate) fn tick(&self) {
        self.started.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runaway_statement_is_interrupted_and_the_next_one_runs() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let limit = StatementLimit::install(&conn, Duration::from_millis(200));
        limit.tick();
        let started = Instant::now();
        let e = conn
            .query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_err();
        assert_eq!(
            e.sqlite_error_code(),
            Some(rusqlite::ffi::ErrorCode::OperationInterrupted)
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        // Long after the first began, a new statement gets its own limit.
        std::thread::sleep(Duration::from_millis(300));
        limit.tick();
        let n: i64 = conn
            .query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT count(*) FROM c",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 20000);
    }
}
