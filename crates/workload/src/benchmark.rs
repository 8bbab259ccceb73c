//! What a benchmark (sysbench, YCSB, db_bench, pgbench, TPC-C) owns beside its terminals:
//! its data set and how to load it, the state one step's terminals share, and the check of
//! its data after a step. The shape of go-ycsb's `pkg/workload` (a workload registers by
//! name and owns its `Load`); the table of benchmarks is [`crate::registry`].

use crate::suite::{Dataset, Step};
use crate::Workload;
use dbdelta_engine::{Connection, Dialect, Engine, EngineError};
use dbdelta_model::{RunOptions, StepResult, ThroughputUnit};
use std::sync::Arc;

/// Why a benchmark's load failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A statement, a connection or the configuration failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A load thread panicked: a bug in dbdelta or an engine, not the target's answer.
    #[error("a load thread panicked: {message}")]
    Panicked {
        /// The panic's message (or a note that it had none).
        message: String,
    },
}

/// One benchmark: the data set its suites declare, its load, its steps' shared state and
/// the check of its data. Implemented once per benchmark, listed in [`crate::registry`].
pub trait Benchmark: Sync {
    /// Its name (`sysbench`, `ycsb`, …), for messages.
    fn name(&self) -> &'static str;
    /// The data set a suite names to run it (`dataset = "…"`).
    fn dataset(&self) -> Dataset;
    /// What a load creates, as the progress line says it (`8 table(s) x 10000 rows`);
    /// `None` when there is nothing to say.
    fn load_summary(&self, opts: &RunOptions) -> Option<String>;
    /// The tables an engine maintains at a settle point.
    fn tables(&self, opts: &RunOptions) -> Vec<String>;
    /// Rows a load writes: they set the settle time.
    fn loaded_rows(&self, opts: &RunOptions) -> u64 {
        opts.table_size
    }
    /// Creates and loads the data set; returns the rows loaded.
    fn load(&self, engine: &dyn Engine, opts: &RunOptions) -> Result<u64, LoadError>;
    /// The state one step's terminals share, for a round at `setup.threads`; `carry` is
    /// what the target's earlier steps handed on.
    fn step(&self, setup: &StepSetup<'_>, carry: &Carry) -> Arc<dyn StepWorkload>;
    /// A number read at the window's edges whose difference the step reports (TPC-C's
    /// new orders); `None` for most.
    fn window_probe(&self) -> Option<WindowProbe> {
        None
    }
    /// True when paced events arrive as a Poisson process (pgbench's `--rate`) rather
    /// than at fixed intervals.
    fn poisson_arrivals(&self) -> bool {
        false
    }
    /// Tries of a transaction when `--max-tries` is not given (pgbench never re-runs;
    /// TPC-C re-runs serialization failures and deadlocks).
    fn default_max_tries(&self) -> u32 {
        1
    }
    /// Checks the data after a measured round and records what it found in `result`
    /// (failing it when the data is inconsistent); most benchmarks check nothing.
    fn check(&self, engine: &dyn Engine, result: &mut StepResult) {
        let _ = (engine, result);
    }
}

/// What a benchmark needs to set up one round of a step.
#[derive(Debug, Clone, Copy)]
pub struct StepSetup<'a> {
    /// The step.
    pub step: &'a Step,
    /// Its threads (terminals) in this round.
    pub threads: u32,
    /// The run's options (sizes, seed, the TPC options).
    pub opts: &'a RunOptions,
    /// The segment of the run this process measures (`--segment K/N`); `None` for a
    /// whole run. `threads` still counts every segment's terminals.
    pub segment: Option<dbdelta_model::Segment>,
}

/// What a target's steps hand on to the next until its next load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carry {
    /// YCSB's next insert key number: steps that insert continue the sequence.
    pub next_insert: u64,
}

impl Carry {
    /// The state right after a load of `opts.table_size` records.
    pub fn after_load(opts: &RunOptions) -> Carry {
        Carry {
            next_insert: opts.table_size,
        }
    }
}

/// What one terminal needs beside the step's shared state.
#[derive(Debug, Clone, Copy)]
pub struct TerminalSetup {
    /// 0-based index of the terminal (worker) in the step.
    pub worker: u32,
    /// Its independent random stream (derived from the step and the worker).
    pub stream: u64,
    /// The run's seed.
    pub seed: u64,
    /// The dialect of its connection.
    pub dialect: Dialect,
}

/// The state one step's terminals share (YCSB's insert sequence, db_bench's value buffer,
/// TPC-C's NURand constants), and what the runner asks about the step. Built once per
/// round, before any connection; nothing here runs per event.
pub trait StepWorkload: std::fmt::Debug + Send + Sync {
    /// A terminal's workload.
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload>;
    /// True when the step's unit is key-value operations (YCSB, db_bench), not statements.
    fn counts_operations(&self) -> bool {
        false
    }
    /// Workers beside the step's threads whose operations are not the step's (the
    /// background writer of db_bench's `*whilewriting`).
    fn background_workers(&self) -> u32 {
        0
    }
    /// True when the engine flushes its writes before the step: db_bench runs each job in
    /// a new process that reopens the database, which flushes the memtables.
    fn flush_before(&self) -> bool {
        false
    }
    /// True when the step ends after a number of operations (db_bench's fillseq and
    /// overwritesome, `--transactions` for pgbench and TPC-C) rather than after a time:
    /// every operation is measured, without a warm-up.
    fn counted(&self) -> bool {
        false
    }
    /// After the measured window: what the step was asked to do and did not (db_bench's
    /// fillseq that ran out of its window before every key was written), as the reason the
    /// step fails; `None` when nothing is missing.
    fn shortfall(&self) -> Option<String> {
        None
    }
    /// Hands on what the target's next step continues from (YCSB's insert sequence).
    fn carry_on(&self, carry: &mut Carry) {
        let _ = carry;
    }
}

/// A number read from the database at the window's edges (see
/// [`Benchmark::window_probe`]).
#[derive(Debug, Clone)]
pub struct WindowProbe {
    /// The query; its first column of its first row is the number.
    pub sql: String,
    /// The name the difference is reported under in `workload_stats`.
    pub name: String,
    /// Report the difference per minute of the window as the headline, in this unit.
    pub per_minute_unit: Option<ThroughputUnit>,
}

/// Connections a load uses at most (sysbench's tables, pgbench's account ranges, TPC-C's
/// warehouses).
pub const LOAD_PARALLEL: u64 = 8;

/// Runs `work` over the parts `0..parts` on up to [`LOAD_PARALLEL`] connections (one for
/// embedded engines, whose writers serialize anyway); returns the rows loaded. A panicking
/// thread is reported as [`LoadError::Panicked`] with its message.
pub fn load_parallel(
    engine: &dyn Engine,
    parts: u64,
    work: &(dyn Fn(&mut dyn Connection, u64) -> Result<u64, EngineError> + Sync),
) -> Result<u64, LoadError> {
    let n = if engine.embedded() {
        1
    } else {
        parts.clamp(1, LOAD_PARALLEL)
    };
    let results: Vec<Result<u64, LoadError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                s.spawn(move || -> Result<u64, EngineError> {
                    let mut conn = engine.connect()?;
                    let mut rows = 0;
                    for part in (i..parts).step_by(n as usize) {
                        rows += work(&mut *conn, part)?;
                    }
                    Ok(rows)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r.map_err(LoadError::from),
                Err(payload) => Err(LoadError::Panicked {
                    message: panic_message(payload.as_ref()),
                }),
            })
            .collect()
    });
    results.into_iter().sum()
}

/// The text a panic was raised with (`panic!("…")` carries a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine_mock::{MockConfig, MockEngine};
    use dbdelta_model::TargetSpec;

    #[test]
    fn a_panicking_load_thread_is_reported_as_a_panic_with_its_message() {
        let spec = TargetSpec::parse("m=mock").unwrap();
        let engine = MockEngine::new(MockConfig::from_spec(&spec).unwrap());
        let e = load_parallel(&engine, 3, &|_, part| {
            if part == 1 {
                panic!("part {part} is broken");
            }
            Ok(10)
        })
        .unwrap_err();
        assert!(
            matches!(&e, LoadError::Panicked { message } if message == "part 1 is broken"),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "a load thread panicked: part 1 is broken");
        assert_eq!(load_parallel(&engine, 3, &|_, _| Ok(10)).unwrap(), 30);
    }
}
