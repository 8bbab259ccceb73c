//! The runner: measures steps with one connection per worker thread (closed loop), warm-up
//! run but not counted, per-worker histograms merged at the end, 1 s intervals; and runs a
//! suite's sequence against one target, handing each result to a sink the moment it exists.
//!
//! It knows the engine trait and the workloads, never a concrete engine, the CLI or files.
#![deny(missing_docs)]

pub mod conformance;
pub mod connect;
pub mod control;
pub mod cpu;
pub mod families;
mod gate;
pub mod ibench;
pub mod measure;
pub mod memory;
mod mux;
mod observe;
mod op_types;
pub mod planned;
mod probe;
pub mod progress;
pub mod queryset;
pub mod recorder;
mod runqueue;
pub mod schedule;
pub mod segment;
pub mod sequence;
mod shared;
mod statement_limit;
pub mod turns;

pub use connect::ConnectPlan;
pub use control::StopFlag;
pub use measure::{measure_step, StepPlan};
pub use planned::PlannedStep;
pub use progress::{Progress, Silent, StepStart};
pub use sequence::estimate::planned_steps;
pub use sequence::{
    run_interleaved, run_interleaved_with, run_target, run_target_profiled, FixedRounds,
    RoundPolicy, TargetOutcome, TargetProfiling, TargetUnderTest,
};
