//! One segment of a run measured by several processes or hosts (`dbdelta run --segment
//! K/N`): the plan every segment must share (what the barrier compares, its differences
//! named), and the barrier a segment joins on each target, kept in the target database or,
//! for engines without SQL (the mock, RocksDB), in a SQLite file all segments reach.

use crate::barrier::{Barrier, BarrierError, Identity};
use crate::error::LabError;
use crate::plan::{RunPlan, Target};
use dbdelta_engine::{Connection, Dialect, Engine, EngineError, OpenOptions};
use dbdelta_model::{Location, TargetSpec};
use dbdelta_runner::{Progress, StopFlag};
use serde_json::{json, Value};

use std::sync::Arc;

pub use crate::plan::{SegmentPlan, DEFAULT_RUN};

/// The plan every segment of a run must share: what is measured and how, never where this
/// segment's results go or which segment it is. The barrier compares it as a whole and
/// names the keys that differ.
pub fn plan_description(plan: &RunPlan) -> Value {
    let mut options = serde_json::to_value(&plan.options).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut options {
        // The block device is this host's, not the plan's.
        o.remove("device");
        o.remove("os_metrics");
    }
    json!({
        "dbdelta": plan.tool.version,
        "options": options,
        "targets": plan.targets.iter().map(|t| json!({"name": t.name, "engine": t.engine})).collect::<Vec<_>>(),
        "base": plan.base,
        "rounds": plan.schedule.rounds,
        "repeats": plan.schedule.repeats,
        "sequential": plan.schedule.sequential,
        "suite": plan.suite.name,
    })
}

/// The barrier of a target and what keeps its store open.
pub(crate) struct Joined {
    /// The barrier, as the runner sees it.
    pub sync: Arc<Barrier>,
    /// The SQLite engine of a `--segment-barrier` file.
    _file: Option<Box<dyn Engine>>,
}

/// Joins the run's barrier on one target: in the target's database, or in the
/// `--segment-barrier` file. Refuses a target whose engine has no SQL without that file.
pub(crate) fn join(
    plan: &RunPlan,
    seg: &SegmentPlan,
    target: &Target,
    engine: &dyn Engine,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> Result<Joined, LabError> {
    // Every segment opens the barrier at once; a store error there (a file other segments
    // are creating, a lock one of them holds) is tried again before it ends the segment.
    let once = || -> Result<Joined, JoinError> {
        let (conns, file) = match &seg.barrier_file {
            Some(path) => {
                let file = open_file(path)
                    .map_err(|e| JoinError::Store(barrier_input(target, &e.to_string())))?;
                (two(&*file), Some(file))
            }
            None => {
                if !matches!(
                    engine.dialect(),
                    Dialect::Sqlite | Dialect::Postgres | Dialect::Mysql
                ) {
                    return Err(JoinError::Other(LabError::Input(format!(
                        "--segment: target {} ({}) has no SQL table to keep the segments' barrier \
                     in: give --segment-barrier FILE, a SQLite file every segment can reach",
                        target.name, target.engine
                    ))));
                }
                (two(engine), None)
            }
        };
        let (a, b) = conns.map_err(|e| JoinError::Store(barrier_input(target, &e.to_string())))?;
        let id = Identity {
            segment: seg.segment,
            run: format!("{}/{}", seg.run, target.name),
            host: hostname(),
            plan: plan_description(plan),
        };
        let barrier = Barrier::join(a, b, id, stop, progress).map_err(|e| match e {
            BarrierError::Store(source) => JoinError::Store(LabError::Input(format!(
                "--segment: target {}: the segments' barrier (table {}) failed: {}",
                target.name,
                crate::barrier_sql::TABLE,
                crate::error::chain(&source)
            ))),
            other => JoinError::Other(LabError::Input(format!(
                "--segment {}: {other}",
                seg.segment
            ))),
        })?;
        Ok(Joined {
            sync: Arc::new(barrier),
            _file: file,
        })
    };
    let mut tries = 1;
    loop {
        match once() {
            Err(JoinError::Store(_)) if tries < JOIN_TRIES && !stop.requested() => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            Err(JoinError::Store(e) | JoinError::Other(e)) => return Err(e),
            Ok(joined) => return Ok(joined),
        }
    }
}

/// Attempts at joining a barrier whose store failed.
const JOIN_TRIES: u32 = 3;

/// Why one attempt at joining failed: the barrier's store (worth another attempt), or
/// anything else (a plan mismatch, the others not coming, a stop).
enum JoinError {
    Store(LabError),
    Other(LabError),
}

/// This host's name, as the manifest's host records it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn barrier_input(target: &Target, why: &str) -> LabError {
    LabError::Input(format!(
        "--segment: target {}: cannot open the segments' barrier: {why}",
        target.name
    ))
}

/// Two connections: one for the barrier's points, one for its heartbeat.
#[allow(clippy::type_complexity)]
fn two(engine: &dyn Engine) -> Result<(Box<dyn Connection>, Box<dyn Connection>), EngineError> {
    Ok((engine.connect()?, engine.connect()?))
}

/// The SQLite engine of a `--segment-barrier` file.
fn open_file(path: &std::path::Path) -> Result<Box<dyn Engine>, EngineError> {
    use dbdelta_engine::EngineKind;
    let spec = TargetSpec {
        name: "segment-barrier".into(),
        engine: "sqlite".into(),
        location: Location::Path {
            path: path.to_path_buf(),
        },
        // No fsync per commit: the barrier is coordination, not data, and a heartbeat whose
        // commit waits seconds for writeback on a busy host reads as a segment gone.
        params: vec![
            ("journal_mode".into(), "WAL".into()),
            ("synchronous".into(), "NORMAL".into()),
        ],
    };
    let config = dbdelta_engine_sqlite::SqliteKind
        .configure(&spec)
        .map_err(|e| match e {
            dbdelta_engine::SpecError::Shape(m) => EngineError::config(m),
            dbdelta_engine::SpecError::Engine(e) => e,
        })?;
    let scratch = path
        .parent()
        .map_or_else(std::env::temp_dir, std::path::Path::to_path_buf);
    config.open(&scratch, &OpenOptions::default())
}
