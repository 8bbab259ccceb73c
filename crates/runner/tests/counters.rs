//! An engine's counters around the window: their differences land in the result, and a
//! failed read costs the step its counters (with a message), never the step.

use dbdelta_engine::{
    Connection, Dialect, Engine, EngineCounters, EngineError, EngineInfo, OpenOptions,
    SettleReport, SettleWait,
};
use dbdelta_engine_sqlite::SqliteEngine;
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{StepKind, StepResult, StepStatus, TargetSpec};
use dbdelta_runner::{run_target, Progress, StopFlag};
use dbdelta_workload::Suite;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// SQLite with counters of its own: the number of reads so far, or a read that fails.
struct Counted {
    inner: SqliteEngine,
    fail: bool,
    reads: AtomicU64,
}

impl Engine for Counted {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        self.inner.connect()
    }
    fn info(&self) -> Result<EngineInfo, EngineError> {
        self.inner.info()
    }
    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        self.inner.settle(tables, wait)
    }
    fn embedded(&self) -> bool {
        true
    }
    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        if self.fail {
            return Err(EngineError::connection("stats server gone"));
        }
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        let mut c = EngineCounters::default();
        c.cumulative.insert("db.reads".into(), n as f64);
        Ok(Some(c))
    }
}

/// Keeps the messages.
#[derive(Default)]
struct Messages(Mutex<Vec<String>>);

impl Progress for Messages {
    fn step_started(&self, _: &str, _: &str, _: u32, _: Duration, _: Duration) {}
    fn step_tick(&self, _: Duration, _: u64) {}
    fn step_finished(&self, _: &StepResult) {}
    fn message(&self, text: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.push(text.to_string());
        }
    }
}

/// Runs point-query for a fifth of a second on `fail`-ing or working counters.
fn point_query(fail: bool) -> (StepResult, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse("lite=sqlite").unwrap();
    let e = Counted {
        inner: SqliteEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap(),
        fail,
        reads: AtomicU64::new(0),
    };
    let opts = OptionsBuilder::new()
        .tables(1, 500)
        .secs(0.2)
        .warmup(0.0)
        .steps(&["point-query"])
        .seed(1)
        .os_metrics(false)
        .build();
    let progress = Messages::default();
    let mut results = Vec::new();
    let mut sink = |r: &StepResult| -> Result<(), String> {
        results.push(r.clone());
        Ok(())
    };
    let suite = Suite::load("sysbench").unwrap();
    run_target(
        &e,
        "lite",
        &suite,
        &opts,
        &StopFlag::new(),
        &progress,
        &mut sink,
    )
    .unwrap();
    let r = results
        .into_iter()
        .find(|r| r.kind == StepKind::Measured && r.step == "point-query")
        .expect("point-query result");
    let messages = progress.0.into_inner().unwrap();
    (r, messages)
}

#[test]
fn counters_are_differenced_over_the_window() {
    let (r, messages) = point_query(false);
    assert_eq!(r.status, StepStatus::Ok);
    // The end's sample minus the start's: the next read.
    assert_eq!(r.engine_stats.get("db.reads"), Some(&1.0), "{r:?}");
    assert!(r.has_db_counters());
    // Embedded: this process is the database, so its CPU is recorded beside.
    assert!(r.engine_stats.contains_key("process.user-cpu-secs"));
    assert!(
        messages.iter().all(|m| !m.contains("counters")),
        "{messages:?}"
    );
}

#[test]
fn a_failed_read_costs_the_counters_not_the_step() {
    let (r, messages) = point_query(true);
    assert_eq!(r.status, StepStatus::Ok);
    assert!(r.queries > 0);
    assert!(r.engine_stats.is_empty(), "{:?}", r.engine_stats);
    let said: Vec<&String> = messages
        .iter()
        .filter(|m| m.contains("counters could not be read") && m.contains("stats server gone"))
        .collect();
    assert_eq!(
        said.len(),
        1,
        "said once (the end is not read): {messages:?}"
    );
    assert!(said[0].contains("[lite] point-query"), "{}", said[0]);
}
