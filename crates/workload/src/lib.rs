//! dbdelta's workloads: suites as data ([`suite`]), sysbench's generators ([`rng`]), its
//! schema and load ([`schema`]) and its statements ([`sysbench`]).
#![deny(missing_docs)]

pub mod benchmark;
pub mod counters;
pub mod dbbench;
#[doc(hidden)]
pub mod fuzzing;
pub mod ibench;
pub mod queryset;
pub mod registry;
pub mod rng;
pub mod schema;
pub mod suite;
pub mod sysbench;
pub mod tpcb;
pub mod tpcc;
pub mod ycsb;

pub use benchmark::{Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup};
pub use counters::Counters;
pub use suite::{Action, DurationClass, Step, Suite, SuiteError, SuiteItem, WorkloadKind};

use dbdelta_engine::{Connection, EngineError, Op, OpBatch, Outcome, Rows, Scratch};

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
    /// Called when operation `op`, marked with [`OpBatch::inspect_last`], completed, with
    /// its outcome and rows: the workload appends the operations that depend on them (an
    /// interactive transaction: TPC-C reads the district's next order number, then inserts
    /// the order). An error fails the event (it is rolled back).
    fn inspect(
        &mut self,
        op: usize,
        outcome: &Outcome,
        rows: &Rows,
        ops: &mut OpBatch,
    ) -> Result<(), EngineError> {
        let _ = (op, outcome, rows, ops);
        Ok(())
    }
    /// Called before the event is run again from its first operation after a
    /// serialization failure or deadlock (`--max-tries`): the workload forgets what the
    /// failed attempt's results told it and keeps its random inputs, as pgbench does.
    fn restart_event(&mut self) {}
    /// How long the terminal waits before its next event in a closed loop (TPC-C's
    /// keying and think times in spec mode); zero for every other workload.
    fn pause(&mut self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Runs the next event without a batch when it is one operation the workload builds
    /// from its own buffers (db_bench's put or get): calls `run` with it and returns what
    /// `run` returned. `None` (the default): the event goes through
    /// [`Workload::next_event`]. A one-operation event needs no batch to be replayed from
    /// (`run` retries it as it is), so the workload's key and value are not copied; on a
    /// 0.8 µs RocksDB put the copy and its indirections were ~2 % of the client's time.
    fn run_direct(
        &mut self,
        run: &mut dyn FnMut(Op<'_>) -> Result<Outcome, EngineError>,
    ) -> Option<Result<Outcome, EngineError>> {
        let _ = run;
        None
    }
}

/// Reused buffers of a terminal's events.
#[derive(Debug, Default)]
pub struct EventBuffers {
    /// The operations of the event under way.
    pub ops: OpBatch,
    /// Storage for the borrowed parameters of one operation.
    pub scratch: Scratch,
    /// The rows of the last inspected operation.
    pub rows: Rows,
}

/// How one event went on a blocking connection.
#[derive(Debug)]
pub struct EventRun {
    /// Its result (the last attempt's).
    pub result: Result<(), EngineError>,
    /// Attempts after the first (serialization failures and deadlocks retried).
    pub retries: u32,
}

/// Produces and runs one event on a blocking connection, counting every executed operation
/// into `n` (those before an error too, as sysbench does). A transaction failing with a
/// serialization failure or deadlock is rolled back and run again from its first operation,
/// with the same inputs, until it has been tried `max_tries` times (pgbench's
/// `--max-tries`; 1 = never retried).
pub fn run_event(
    workload: &mut dyn Workload,
    conn: &mut dyn Connection,
    b: &mut EventBuffers,
    n: &mut Counters,
    max_tries: u32,
) -> EventRun {
    let mut retries = 0;
    let direct = workload.run_direct(&mut |op| loop {
        match conn.run(&op) {
            Err(e) if e.is_serialization() && retries + 1 < max_tries => {
                let _ = conn.rollback();
                retries += 1;
            }
            r => break r,
        }
    });
    if let Some(r) = direct {
        workload.event_done();
        return EventRun {
            result: r.map(|out| n.add(out)),
            retries,
        };
    }
    b.ops.clear();
    if let Err(e) = workload.next_event(&mut b.ops) {
        return EventRun {
            result: Err(e),
            retries: 0,
        };
    }
    let first_len = b.ops.len();
    let result = loop {
        let r = run_attempt(workload, conn, b, n);
        match r {
            Err(e) if e.is_serialization() && retries + 1 < max_tries => {
                let _ = conn.rollback();
                retries += 1;
                b.ops.truncate(first_len);
                workload.restart_event();
            }
            other => break other,
        }
    };
    workload.event_done();
    EventRun { result, retries }
}

/// Runs the operations of one attempt in order, handing inspected results to the workload.
fn run_attempt(
    workload: &mut dyn Workload,
    conn: &mut dyn Connection,
    b: &mut EventBuffers,
    n: &mut Counters,
) -> Result<(), EngineError> {
    let mut i = 0;
    while i < b.ops.len() {
        if b.ops.inspects(i) {
            let rows = &mut b.rows;
            let out = b
                .ops
                .with_op(i, &mut b.scratch, |op| conn.run_rows(&op, rows))?;
            n.add(out);
            workload.inspect(i, &out, &b.rows, &mut b.ops)?;
        } else {
            let out = b.ops.with_op(i, &mut b.scratch, |op| conn.run(&op))?;
            n.add(out);
        }
        i += 1;
    }
    Ok(())
}
