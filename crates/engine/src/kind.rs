//! Engine kinds: how a target's spec text becomes a validated, typed configuration, and how
//! that configuration opens the engine.
//!
//! A spec is parsed once, when the run is checked ([`EngineKind::configure`]); the typed
//! result travels with the plan and provisioning opens from it ([`EngineConfig::open`]), so
//! what was validated is exactly what is opened, and an engine's parameters are read in one
//! place. The lab keeps one table of kinds and asks it everything it needs to know about an
//! engine by name.

use crate::{Engine, EngineError, OpenOptions};
use dbdelta_model::{Location, TargetSpec};
use std::path::{Path, PathBuf};

/// One kind of engine (`sqlite`, `postgres`, …): its name in target specs and how a spec of
/// that kind is validated. Implemented by each engine crate as a unit struct; the lab's
/// registry lists one per line.
pub trait EngineKind: Send + Sync + std::fmt::Debug {
    /// The engine name targets give (`NAME=<engine>:…`).
    fn name(&self) -> &'static str;

    /// Parses and validates `spec` (whose engine is this kind) without opening anything
    /// lasting: the cheap checks that refuse bad input before a run starts. Errors name the
    /// target and the fix, as users see them.
    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError>;

    /// True when every connection of this kind needs a thread of its own (no sans-IO
    /// session form): embedded engines run statements on the caller's thread, and blocking
    /// request/response clients cannot be multiplexed. The lab checks the thread limit then.
    fn thread_per_connection(&self) -> bool;

    /// True when the kind runs only query-set suites (analytic SQL), not dbdelta's built-in
    /// OLTP suites with their single-row updates, transactions and auto-increment keys.
    fn analytic_only(&self) -> bool {
        false
    }

    /// False for a native key-value store that has no SQL at all: it runs the key-value
    /// suites (their operations natively), never a suite whose steps are SQL statements.
    fn serves_sql(&self) -> bool {
        true
    }

    /// True when this kind's engines may share one window in turns of a few milliseconds
    /// ([`Engine::fit_for_turns`], which asks its kind): known before anything opens, so
    /// that a dry run plans the windows the run will take.
    fn fit_for_turns(&self) -> bool {
        true
    }
}

/// Why a spec was refused.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The spec has the wrong shape for its kind (a URL for an embedded engine, no location
    /// for a server): the whole message, naming the `--target` flag and the target, as the
    /// command line's own checks word it.
    #[error("{0}")]
    Shape(String),
    /// The engine refused a parameter or the location; the message names the target.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A target's validated configuration: what its kind parsed from the spec, ready to open.
/// Lives in the plan from the check to the end of the run, and may open the engine more
/// than once (each repeat of a run provisions afresh).
pub trait EngineConfig: Send + Sync + std::fmt::Debug {
    /// Provisions the target: opens the file, starts the managed server in `scratch`, or
    /// connects to the external server. Call from a long-lived thread: managed servers tie
    /// their death signal to the thread that started them.
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError>;

    /// The directory whose filesystem will hold the target's data, before anything is
    /// opened, so a run that cannot fit is refused up front; `runs` is where the run's
    /// directory goes. `None` when the data is not on a local disk of ours (external
    /// servers, the mock) or the engine does not say.
    fn data_parent(&self, runs: &Path) -> Option<PathBuf> {
        let _ = runs;
        None
    }
}

/// The checks every server kind (`postgres`, `mysql`) makes before anything starts, after
/// its emulated link (`net=`): the location (a managed server's existing bin or base
/// directory, or a URL), so the message names what is missing first; then the engine's
/// own parameters (`engine`).
pub fn check_server(
    spec: &TargetSpec,
    engine: impl FnOnce(&TargetSpec) -> Result<(), EngineError>,
) -> Result<(), SpecError> {
    match &spec.location {
        Location::Default => Err(SpecError::Shape(format!(
            "--target {}: {} needs a bin/base directory (managed, e.g. {}:/usr/lib/postgresql/15/bin) or a URL (external, e.g. {}://user@host:port/db)",
            spec.name, spec.engine, spec.engine, spec.engine
        ))),
        Location::Path { path } if !path.is_dir() => Err(SpecError::Shape(format!(
            "--target {}: {} is not a directory: point at the server's bin (postgres) or base (mysql) directory",
            spec.name,
            path.display()
        ))),
        _ => Ok(engine(spec)?),
    }
}

/// Where a server target's data lives, for [`EngineConfig::data_parent`]: a managed
/// server keeps it in the run's scratch area; an external one is not on a disk of ours.
pub fn server_data_parent(spec: &TargetSpec, runs: &Path) -> Option<PathBuf> {
    match spec.location {
        Location::Url { .. } => None,
        _ => Some(runs.to_path_buf()),
    }
}
