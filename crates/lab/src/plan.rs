//! The plan: everything one run needs, resolved and validated by the binary from its flags,
//! config file and target specs. The lab reads nothing else (ripgrep's low-args →
//! high-args: after resolving, no flag is read again).

use crate::error::LabError;
use dbdelta_engine::{Engine, EngineConfig, EngineError, EngineKind, OpenOptions, SpecError};
use dbdelta_model::{IbenchOptions, RunOptions, Segment, TargetSpec, ToolInfo};
use dbdelta_profile::ProfileSettings;
use dbdelta_workload::queryset::QuerySet;
use dbdelta_workload::Suite;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything a run needs, validated.
#[derive(Debug)]
pub struct RunPlan {
    /// Resolved options (also stored in run.json).
    pub options: RunOptions,
    /// The suite.
    pub suite: Suite,
    /// Targets in column order, each with its engine's configuration (checked once).
    pub targets: Vec<Target>,
    /// The base target's name.
    pub base: String,
    /// How engines are opened.
    pub open: OpenOptions,
    /// Parent directory of the run directory, or the exact run directory.
    pub out: OutDir,
    /// Keep database files after the run.
    pub keep_data: bool,
    /// `--use-existing`: the data `dbdelta prepare` loaded under this `--data-dir` (one
    /// directory per target) is checked and used instead of a load.
    pub existing: Option<PathBuf>,
    /// The Insert Benchmark's options when the suite is `ibench`.
    pub ibench: Option<IbenchOptions>,
    /// The query-set suite when the suite is a directory, with its runs per query.
    pub queryset: Option<QuerySetPlan>,
    /// How the targets take turns: interleaved rounds or whole runs one after another.
    pub schedule: Schedule,
    /// `--fail-on regression>N%`: the run fails when a step is significantly slower than
    /// the base by more than this fraction.
    pub fail_on: Option<f64>,
    /// Where the finished run is indexed.
    pub history: History,
    /// CPU profiling of the servers; `None` = not asked.
    pub profile: Option<ProfileSettings>,
    /// The command line as given, with passwords of target URLs redacted (for run.json).
    pub command: Vec<String>,
    /// The dbdelta that runs (for run.json).
    pub tool: ToolInfo,
    /// One segment of a run measured by several processes (`--segment K/N`); `None` = the
    /// whole run.
    pub segment: Option<SegmentPlan>,
}

/// A target of the plan: its spec as given and its kind's validated configuration, which
/// provisioning opens. Derefs to the spec, which most of the lab reads (name, engine,
/// location).
#[derive(Debug, Clone)]
pub struct Target {
    /// The target as given (after a `postgres-build:` target is built, the `postgres:`
    /// target it became).
    pub spec: TargetSpec,
    kind: &'static dyn EngineKind,
    config: Arc<dyn EngineConfig>,
}

impl std::ops::Deref for Target {
    type Target = TargetSpec;
    fn deref(&self) -> &TargetSpec {
        &self.spec
    }
}

/// The directory of target `name`'s prepared data under `--data-dir` (`dbdelta prepare`,
/// `run --use-existing`).
pub fn prepared_dir(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(dbdelta_model::result::file_safe(name))
}

impl RunPlan {
    /// Where target `name` keeps its data in this run: the prepared data's directory with
    /// `--use-existing`, else `fallback` (the run directory's scratch area).
    pub fn scratch_dir(
        &self,
        name: &str,
        fallback: impl FnOnce() -> Result<PathBuf, crate::LabError>,
    ) -> Result<PathBuf, crate::LabError> {
        match &self.existing {
            Some(dir) => Ok(prepared_dir(dir, name)),
            None => fallback(),
        }
    }
}

impl Target {
    /// Configures `spec` (whose engine is `kind`) once: the kind's checks, and the typed
    /// configuration provisioning opens. A spec of the wrong shape is an input error worded
    /// as the command line's; an engine's refusal keeps the engine's error as its source.
    pub fn configure(kind: &'static dyn EngineKind, spec: &TargetSpec) -> Result<Self, LabError> {
        let config = kind.configure(spec).map_err(|e| match e {
            SpecError::Shape(message) => LabError::Input(message),
            SpecError::Engine(e) => LabError::Target(e),
        })?;
        Ok(Target {
            spec: spec.clone(),
            kind,
            config: Arc::from(config),
        })
    }

    /// The target's engine kind.
    pub fn kind(&self) -> &'static dyn EngineKind {
        self.kind
    }

    /// The configuration its kind checked.
    pub fn config(&self) -> &dyn EngineConfig {
        &*self.config
    }

    /// Engines whose connections each need a thread of their own (no session form):
    /// embedded engines run statements on the caller's thread, and ClickHouse's HTTP
    /// connections are blocking request/response pairs.
    pub fn thread_per_connection(&self) -> bool {
        self.kind.thread_per_connection()
    }

    /// Provisions the target from its configuration: opens the file, starts the managed
    /// server or connects.
    pub fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        self.config.open(scratch, opts)
    }
}

/// A query-set suite and how often each query runs.
#[derive(Debug)]
pub struct QuerySetPlan {
    /// The suite.
    pub set: QuerySet,
    /// Runs of each query per target; the first (cold) one is reported apart.
    pub repeat: u32,
}

/// How the targets of a run take turns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Rounds per step when the targets are interleaved.
    pub rounds: u32,
    /// Whole runs per target when they run one after another.
    pub repeats: u32,
    /// One target after another even with two or more targets.
    pub sequential: bool,
    /// Keep each target's server and data between sequential repeats.
    pub reuse_load: bool,
    /// `--resolve`/`--budget`: interleaved rounds are added to each step until its interval
    /// is narrow enough (`rounds` is then the fewest a step runs); `None` = `rounds` rounds.
    pub resolve: Option<crate::resolve::Resolve>,
}

/// Where the run directory goes.
#[derive(Debug, Clone)]
pub enum OutDir {
    /// Create `<parent>/<UTC time>-<suite>`.
    Under(PathBuf),
    /// Create exactly this directory.
    Exact(PathBuf),
}

/// The results history a finished run is indexed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum History {
    /// Not indexed.
    Off,
    /// Indexed in this store: a SQLite file or `postgres://` URL; `None` = `$DBDELTA_STORE`,
    /// else the default file.
    Store(Option<String>),
}

/// What makes a process a segment of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentPlan {
    /// Which segment (`--segment K/N`).
    pub segment: Segment,
    /// The run's name at the barrier (`--segment-run`): segments of one run share it.
    pub run: String,
    /// A SQLite file that holds the barrier instead of the target database
    /// (`--segment-barrier`): for engines without SQL, or when the segments should not
    /// write to the target.
    pub barrier_file: Option<PathBuf>,
}

/// The run name segments meet under unless `--segment-run` gives another.
pub const DEFAULT_RUN: &str = "dbdelta";
