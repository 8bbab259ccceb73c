//! dbdelta's workloads: suites as data ([`suite`]), sysbench's generators ([`rng`]), its
//! schema and load ([`schema`]) and its statements ([`sysbench`]).
#![deny(missing_docs)]

pub mod counters;
pub mod dbbench;
pub mod ibench;
pub mod rng;
pub mod schema;
pub mod suite;
pub mod sysbench;
pub mod tpcc;
pub mod ycsb;

pub use counters::Counters;
pub use suite::{Action, DurationClass, Step, Suite, SuiteError, SuiteItem, WorkloadKind};

use dbdelta_engine::{Connection, EngineError, OpBatch, Scratch};

/// One terminal's operation logic: statements prepared once per connection, then the
/// operations of one event at a time. Workloads never execute anything themselves, so the
/// same workload runs on a blocking connection or on a multiplexed session.
pub trait Workload: Send {
    /// Prepares the statements on this terminal's connection.
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError>;
    /// Appends the operations of the next event (a statement or a transaction) to `ops`,
    /// which the caller cleared.
    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError>;
    /// True when events are BEGIN … COMMIT transactions (roll back after an error).
    fn uses_transactions(&self) -> bool;
    /// Called when the last event has finished, successfully or not (YCSB acknowledges
    /// its insert key here, so `latest` never reads a key still being inserted).
    fn event_done(&mut self) {}
    /// The type of the last event, an index into [`Workload::op_type_names`], for
    /// workloads that mix operation types and report each (YCSB); `None` otherwise.
    fn op_type(&self) -> Option<usize> {
        None
    }
    /// True when the workload has done all it was given (db_bench's fillseq and
    /// overwritesome end after a number of operations); the worker stops.
    fn finished(&self) -> bool {
        false
    }
    /// True for a background worker whose events are not the step's (the writer of
    /// db_bench's `*whilewriting` steps): only counted under its operation type.
    fn background(&self) -> bool {
        false
    }
    /// The names of the operation types [`Workload::op_type`] indexes.
    fn op_type_names(&self) -> &'static [&'static str] {
        &[]
    }
}

/// Produces and runs one event on a blocking connection, counting every executed operation
/// into `n` (those before an error too, as sysbench does).
pub fn run_event(
    workload: &mut dyn Workload,
    conn: &mut dyn Connection,
    ops: &mut OpBatch,
    scratch: &mut Scratch,
    n: &mut Counters,
) -> Result<(), EngineError> {
    ops.clear();
    workload.next_event(ops)?;
    let r = dbdelta_engine::ops::run_batch(conn, ops, scratch, |o| n.add(o));
    workload.event_done();
    r
}
