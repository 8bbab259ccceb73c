//! The Insert Benchmark sequence (Mark Callaghan's ibench: `iibench.py` and its steps)
//! against one target or, in interleaved rounds, several (crate::ibench::rounds): create the
//! `pi<n>` tables, then l.i0, l.x, l.i1, l.i2, settle, qr100 … qp1000 in order, each result
//! handed to the sink the moment it exists.

pub mod client;
pub mod rounds;
pub mod step;

pub use rounds::{run_ibench_rounds, IbenchRun, IbenchTarget};
pub use step::{run_step, Share, StepContext};

use crate::control::StopFlag;
use crate::progress::Progress;
use crate::sequence::TargetOutcome;
use dbdelta_engine::{Engine, EngineError, SettleWait};
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::StepResult;
use dbdelta_workload::ibench::schema::create_table_sql;
use dbdelta_workload::ibench::IbenchStep;
use dbdelta_workload::schema::{drop_if_owned, ensure_ledger, record_owned};
use std::time::Duration;

/// Where the OS sampler looks and whether dbdelta may drop foreign tables.
#[derive(Debug, Clone, Default)]
pub struct IbenchEnv {
    /// Sample OS metrics during steps.
    pub os_metrics: bool,
    /// Block device override.
    pub device: Option<String>,
    /// Allow dropping `pi<n>` tables that dbdelta did not create.
    pub i_own_this_database: bool,
}

/// Drops (if owned) and creates the `pi<n>` tables, without secondary indexes.
pub fn create_tables(
    engine: &dyn Engine,
    opts: &IbenchOptions,
    i_own: bool,
) -> Result<(), EngineError> {
    let mut conn = engine.connect()?;
    ensure_ledger(&mut *conn)?;
    let dialect = conn.dialect();
    for t in opts.tables() {
        drop_if_owned(&mut *conn, &t, i_own)?;
        for sql in create_table_sql(dialect, conn.table_engine(), &t) {
            conn.query(&sql)?;
        }
        record_owned(&mut *conn, &t)?;
    }
    Ok(())
}

/// The settle ("vac") step of the Insert Benchmark's sequence: the engine's vacuum/analyze/checkpoint/flush, then the
/// rest of the run's settle sleep (server engines wait it out, MySQL with InnoDB's
/// dirty-page flushing raised); what was done, for the result.
pub(crate) fn settle(
    engine: &dyn Engine,
    opts: &IbenchOptions,
    stop: &StopFlag,
) -> Result<Vec<String>, EngineError> {
    let why = format!(
        "the Insert Benchmark's settle sleep of {} s; the published scale's is min(1200, 60 + nr1/1e6) in iq.sh's vac",
        opts.settle_sleep_secs
    );
    let stopping = || stop.requested();
    let wait = SettleWait {
        at_least: Duration::try_from_secs_f64(opts.settle_sleep_secs).unwrap_or(Duration::ZERO),
        why: &why,
        stopping: &stopping,
    };
    Ok(engine.settle(&opts.tables(), &wait)?.actions)
}

/// Runs the Insert Benchmark against one target, every step whole. `sink` persists each
/// result; an error from it stops the target and is returned.
#[allow(clippy::too_many_arguments)]
pub fn run_ibench<E>(
    engine: &dyn Engine,
    target: &str,
    steps: &[IbenchStep],
    opts: &IbenchOptions,
    env: &IbenchEnv,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<TargetOutcome, E> {
    let one = [IbenchTarget {
        name: target,
        engine,
    }];
    let run = IbenchRun {
        steps,
        opts,
        env,
        rounds: 1,
    };
    let mut outcomes = run_ibench_rounds(&one, &run, stop, progress, sink)?;
    Ok(outcomes.pop().unwrap_or(TargetOutcome::Complete))
}
