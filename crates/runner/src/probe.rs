//! A step's window probe: one number read on a connection of its own at the window's
//! edges (TPC-C's `sum(d_next_o_id)`), whose difference the step reports.

use dbdelta_engine::{Connection, Engine, EngineError, ErrorKind};
use dbdelta_workload::benchmark::WindowProbe;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a probe waits before it asks again after a retryable error.
const RETRY_PAUSE: Duration = Duration::from_millis(5);

/// Why a window probe has no number.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    /// Its connection could not be opened before the step.
    #[error("the step's counter query could not connect: {0}")]
    Connect(#[source] Arc<EngineError>),
    /// The query failed.
    #[error(transparent)]
    Query(#[from] EngineError),
    /// The query answered something else than a number.
    #[error("{sql} returned {value:?}, not a number")]
    NotANumber {
        /// The query.
        sql: String,
        /// What it returned.
        value: Option<String>,
    },
}

/// A probe's connection (or why it could not connect) and its query. The connection is
/// opened before the step, so reading the number costs one query.
pub(crate) struct OpenProbe<'p> {
    conn: Result<Box<dyn Connection>, Arc<EngineError>>,
    probe: &'p WindowProbe,
}

impl<'p> OpenProbe<'p> {
    /// Connects for `probe`; a failure is kept and reported by every read.
    pub(crate) fn open(engine: &dyn Engine, probe: &'p WindowProbe) -> Self {
        OpenProbe {
            conn: engine.connect().map_err(Arc::new),
            probe,
        }
    }

    /// Reads the number now; a query the engine says may be retried (SQLite's "database
    /// is locked" while a commit waits on a slow disk) is tried again for up to `patience`:
    /// a busy database at the window's edge is a slow read, not a failed step.
    pub(crate) fn read(&mut self, patience: Duration) -> Result<f64, ProbeError> {
        let conn = self
            .conn
            .as_mut()
            .map_err(|e| ProbeError::Connect(Arc::clone(e)))?;
        let start = Instant::now();
        let value = loop {
            match conn.query_scalar(&self.probe.sql) {
                Err(e) if e.kind == ErrorKind::Retryable && start.elapsed() < patience => {
                    std::thread::sleep(RETRY_PAUSE);
                }
                done => break done?,
            }
        };
        value
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| ProbeError::NotANumber {
                sql: self.probe.sql.clone(),
                value,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine::{Dialect, Outcome, SessionParts, StmtId, Value};

    /// Answers "database is locked" `busy` times, then 42.
    struct Locked {
        busy: u32,
    }

    impl Connection for Locked {
        fn dialect(&self) -> Dialect {
            Dialect::Sqlite
        }
        fn prepare(&mut self, _: &str) -> Result<StmtId, EngineError> {
            Err(EngineError::statement("not used"))
        }
        fn execute(&mut self, _: StmtId, _: &[Value<'_>]) -> Result<Outcome, EngineError> {
            Err(EngineError::statement("not used"))
        }
        fn query(&mut self, _: &str) -> Result<Outcome, EngineError> {
            Err(EngineError::statement("not used"))
        }
        fn query_scalar(&mut self, _: &str) -> Result<Option<String>, EngineError> {
            if self.busy == 0 {
                return Ok(Some("42".into()));
            }
            self.busy -= 1;
            Err(EngineError::new(ErrorKind::Retryable, "database is locked"))
        }
        fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>> {
            Err(self)
        }
    }

    fn probe() -> WindowProbe {
        WindowProbe {
            sql: "SELECT sum(d_next_o_id) FROM district".into(),
            name: "new-orders".into(),
            per_minute_unit: None,
        }
    }

    #[test]
    fn a_locked_database_at_the_edge_is_read_again_within_the_patience() {
        let p = probe();
        let mut open = OpenProbe {
            conn: Ok(Box::new(Locked { busy: 3 })),
            probe: &p,
        };
        assert_eq!(open.read(Duration::from_secs(10)).ok(), Some(42.0));
        // Past its patience the error stands.
        let mut open = OpenProbe {
            conn: Ok(Box::new(Locked { busy: u32::MAX })),
            probe: &p,
        };
        let e = open.read(Duration::from_millis(30)).unwrap_err();
        assert!(e.to_string().contains("database is locked"), "{e}");
    }
}
