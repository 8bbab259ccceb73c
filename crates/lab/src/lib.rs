//! The dbdelta run as a library. The binary resolves flags, config files and target specs
//! into one [`RunPlan`]; [`Lab::prepare`] checks it against this machine and creates the run
//! directory, [`Lab::run`] provisions the targets, measures them (interleaved rounds, one
//! after another, or a query set), writes the reports and indexes the run in the history,
//! and [`RunOutcome::conclude`] says how it ended. Progress goes through [`LabProgress`];
//! the lab never prints.
//!
//! Modules by step: [`plan`] (what to run), [`build`] (servers built from source), [`dist`] (fetched
//! server binaries),
//! [`capacity`] and [`disk`] (what this machine can hold), [`rundir`] (the run directory),
//! [`registry`] (the engine table), `target` (provision and retire), `sequential` and
//! `interleave` (schedules), [`queryset`] (query-set runs), `reports` (the report files),
//! [`gate`] (`--fail-on`), [`history`] (indexing), [`interrupt`] (Ctrl-C and SIGTERM),
//! [`profiling`], [`outcome`] (how a run ended), [`resolve`] (`--resolve`: rounds until resolved),
//! [`rerun`] (`detect --profile-on-change`: profiling the two sides of a new regression),
//! [`segment`] and [`barrier`] (one segment of a run measured by several processes),
//! [`merge`] (segments merged into one run).
#![deny(missing_docs)]

pub mod barrier;
pub mod barrier_sql;
pub mod build;
pub mod capacity;
pub mod disk;
pub mod dist;
pub mod error;
mod ferret;
pub mod gate;
pub mod history;
mod interleave;
pub mod interrupt;
mod lab;
pub mod merge;
pub mod merge_step;
pub mod outcome;
pub mod plan;
pub mod plan_diff;
pub mod prepared;
pub mod profiling;
pub mod progress;
pub mod queryset;
pub mod registry;
mod reports;
pub mod rerun;
pub mod resolve;
pub mod rocks_build;
pub mod rundir;
pub mod segment;
mod sequential;
mod target;
pub mod time;

pub use error::LabError;
pub use lab::Lab;
pub use outcome::{Conclusion, End, RunOutcome};
pub use plan::{History, OutDir, QuerySetPlan, RunPlan, Schedule};
pub use progress::{BuildEvent, LabProgress};
