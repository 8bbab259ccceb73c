//! A step's window probe: one number read on a connection of its own at the window's
//! edges (TPC-C's `sum(d_next_o_id)`), whose difference the step reports.

use dbdelta_engine::{Connection, Engine, EngineError};
use dbdelta_workload::benchmark::WindowProbe;
use std::sync::Arc;

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

    /// Reads the number now.
    pub(crate) fn read(&mut self) -> Result<f64, ProbeError> {
        let conn = self
            .conn
            .as_mut()
            .map_err(|e| ProbeError::Connect(Arc::clone(e)))?;
        let value = conn.query_scalar(&self.probe.sql)?;
        value
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| ProbeError::NotANumber {
                sql: self.probe.sql.clone(),
                value,
            })
    }
}
