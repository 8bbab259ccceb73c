//! dbdelta's workloads: suites as data ([`suite`]), sysbench's generators ([`rng`]), its
//! schema and load ([`schema`]) and its statements ([`sysbench`]).
#![deny(missing_docs)]

pub mod counters;
pub mod ibench;
pub mod rng;
pub mod schema;
pub mod suite;
pub mod sysbench;

pub use counters::Counters;
pub use suite::{Action, DurationClass, Step, Suite, SuiteError, SuiteItem, WorkloadKind};

use dbdelta_engine::{Connection, EngineError};

/// One worker's statement logic: prepared once per connection, then one call per event.
pub trait Workload: Send {
    /// Prepares the statements on this worker's connection.
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError>;
    /// Runs one event (a statement or a transaction), counting every statement into `n`.
    fn event(&mut self, conn: &mut dyn Connection, n: &mut Counters) -> Result<(), EngineError>;
    /// True when events are BEGIN … COMMIT transactions (roll back after an error).
    fn uses_transactions(&self) -> bool;
}
