//! The Insert Benchmark sequence (Mark Callaghan's ibench: `iibench.py` and its steps)
//! against one target: create the `pi<n>` tables, then l.i0, l.x, l.i1, l.i2, settle,
//! qr100 … qp1000 in order, each result handed to the sink the moment it exists.

pub mod client;
pub mod step;

pub use step::{run_step, StepContext};

use crate::control::StopFlag;
use crate::progress::Progress;
use crate::sequence::TargetOutcome;
use dbdelta_engine::{Engine, EngineError, SettleWait};
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::{Group, StepKind, StepResult, StepStatus};
use dbdelta_workload::ibench::schema::create_table_sql;
use dbdelta_workload::ibench::IbenchStep;
use dbdelta_workload::schema::{drop_if_owned, ensure_ledger, record_owned};
use std::time::{Duration, Instant};

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
fn settle(
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

/// Runs the Insert Benchmark against one target. `sink` persists each result; an error from
/// it stops the target and is returned.
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
    progress.message(&format!(
        "[{target}] ibench: {} client(s), tables {}",
        opts.clients,
        opts.tables().join(",")
    ));
    if let Err(e) = create_tables(engine, opts, env.i_own_this_database) {
        let reason = e.to_string();
        let mut r = StepResult::empty(target, "l.i0", "l.i0", 1, Group::Write, StepKind::Load, 1);
        r.status = StepStatus::Failed {
            reason: reason.clone(),
        };
        sink(&r)?;
        return Ok(TargetOutcome::LoadFailed(reason));
    }
    let mut loaded_rows = 0u64;
    for (i, step) in steps.iter().enumerate() {
        if stop.requested() {
            return Ok(TargetOutcome::Interrupted);
        }
        let order = i as u32 + 1;
        if step.settle {
            progress.message(&format!("[{target}] settle"));
            let start = Instant::now();
            let mut r = StepResult::empty(
                target,
                &step.name,
                &step.name,
                order,
                Group::Write,
                StepKind::Settle,
                1,
            );
            match settle(engine, opts, stop) {
                Ok(actions) => r.actions = actions,
                Err(e) => {
                    r.status = StepStatus::Failed {
                        reason: e.to_string(),
                    }
                }
            }
            r.seconds = start.elapsed().as_secs_f64();
            sink(&r)?;
            continue;
        }
        let ctx = StepContext {
            target,
            opts,
            step,
            order,
            loaded_rows,
            os_metrics: env.os_metrics,
            device: env.device.clone(),
        };
        let expected = if step.rate.is_some() {
            Duration::from_secs_f64(opts.query_secs)
        } else {
            Duration::ZERO
        };
        progress.step_started(target, &step.name, opts.clients, Duration::ZERO, expected);
        let r = run_step(engine, &ctx, stop);
        progress.step_finished(&r);
        sink(&r)?;
        if let StepStatus::Failed { reason } = &r.status {
            if i == 0 {
                return Ok(TargetOutcome::LoadFailed(reason.clone()));
            }
            progress.message(&format!(
                "[{target}] {} failed: the remaining steps depend on it and are skipped",
                step.name
            ));
            return Ok(TargetOutcome::Complete);
        }
        if i == 0 {
            loaded_rows = r.ibench.as_ref().map_or(0, |s| s.rows_inserted);
        }
    }
    Ok(if stop.requested() {
        TargetOutcome::Interrupted
    } else {
        TargetOutcome::Complete
    })
}
