//! TPC-C as a [`Benchmark`]: the initial population of clause 4.3, the terminals of
//! clause 5, and the consistency conditions of clause 3.3.2 after every round.

use super::check::check;
use super::gen::run_constants;
use super::txn::{Tpcc, TpccConfig};
use super::{load, schema};
use crate::benchmark::{
    load_parallel, Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup, WindowProbe,
};
use crate::suite::Dataset;
use crate::Workload;
use dbdelta_engine::{Engine, EngineError};
use dbdelta_model::{RunOptions, StepResult, StepStatus, ThroughputUnit, TpccMode};
use std::sync::Arc;

/// How the reason of a step whose TPC-C consistency conditions failed begins (the CLI
/// exits 1 on it).
pub const INCONSISTENT: &str = "TPC-C consistency:";

/// Tries of a TPC-C transaction unless `--max-tries` says otherwise.
const DEFAULT_TPCC_TRIES: u32 = 10;

/// TPC-C's benchmark: nine tables at `--warehouses`, one [`Tpcc`] terminal per worker.
#[derive(Debug, Clone, Copy)]
pub struct TpccBenchmark;

impl Benchmark for TpccBenchmark {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn dataset(&self) -> Dataset {
        Dataset::Tpcc
    }

    fn load_summary(&self, opts: &RunOptions) -> Option<String> {
        Some(format!("TPC-C, {} warehouse(s)", opts.tpc.warehouses))
    }

    fn tables(&self, _: &RunOptions) -> Vec<String> {
        schema::TABLES.iter().map(|t| t.to_string()).collect()
    }

    /// The items, then each warehouse's rows in parallel by warehouse, then the secondary
    /// indexes.
    fn load(&self, engine: &dyn Engine, opts: &RunOptions) -> Result<u64, LoadError> {
        if opts.tpc.warehouses == 0 {
            return Err(EngineError::config("--warehouses must be at least 1").into());
        }
        let mut conn = engine.connect()?;
        schema::create_tables(&mut *conn, opts.i_own_this_database)?;
        let mut rows = load::load_items(&mut *conn, opts.seed)?;
        rows += load_parallel(engine, u64::from(opts.tpc.warehouses), &|c, part| {
            load::load_warehouse(c, part as i64 + 1, opts.seed)
        })?;
        schema::create_indexes(&mut *conn)?;
        schema::analyze(&mut *conn)?;
        Ok(rows)
    }

    fn step(&self, setup: &StepSetup<'_>, _: &Carry) -> Arc<dyn StepWorkload> {
        let tpc = &setup.opts.tpc;
        Arc::new(TpccStep(TpccConfig {
            warehouses: tpc.warehouses,
            terminals: setup.threads,
            all_warehouses: tpc.all_warehouses,
            spec_waits: tpc.tpcc_mode == TpccMode::Spec,
            c_run: run_constants(setup.opts.seed),
            transactions: tpc.transactions,
        }))
    }

    /// The new orders placed in the window: the districts' next order numbers.
    fn window_probe(&self) -> Option<WindowProbe> {
        Some(WindowProbe {
            sql: "SELECT sum(d_next_o_id) FROM district".into(),
            name: "new-orders".into(),
            per_minute_unit: Some(ThroughputUnit::Nopm),
        })
    }

    /// TPC-C re-runs serialization failures and deadlocks by default; pgbench does not.
    fn default_max_tries(&self) -> u32 {
        DEFAULT_TPCC_TRIES
    }

    /// Each condition's violations go into the result (`consistency.N`), and any violation
    /// fails the step, naming the condition.
    fn check(&self, engine: &dyn Engine, result: &mut StepResult) {
        let checked = engine.connect().and_then(|mut c| check(&mut *c));
        match checked {
            Ok(conditions) => {
                let mut broken = Vec::new();
                for v in &conditions {
                    result
                        .workload_stats
                        .insert(format!("consistency.{}", v.condition), v.count as f64);
                    if v.count > 0 {
                        broken.push(format!(
                            "condition {} ({}) violated {} time(s)",
                            v.condition, v.description, v.count
                        ));
                    }
                }
                if !broken.is_empty() {
                    result.status = StepStatus::Failed {
                        reason: format!(
                            "{INCONSISTENT} {} — the engine or the workload is wrong",
                            broken.join("; ")
                        ),
                    };
                }
            }
            Err(e) => {
                result.status = StepStatus::Failed {
                    reason: format!("TPC-C consistency check could not run: {e}"),
                }
            }
        }
    }
}

/// What a TPC-C step's terminals share: warehouses, terminals, mode and the run's NURand
/// constants.
#[derive(Debug)]
struct TpccStep(TpccConfig);

impl StepWorkload for TpccStep {
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload> {
        Box::new(Tpcc::new(self.0.clone(), t.seed, t.stream, t.worker))
    }

    fn counted(&self) -> bool {
        self.0.transactions.is_some()
    }
}
