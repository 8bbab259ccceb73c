//! The Insert Benchmark runner on SQLite: the FIFO invariant of l.i1/l.i2, paced background
//! inserts within 2 % of their rate, and a target with a slow insert reported as an SLA
//! failure.

use dbdelta_engine::{
    Connection, Dialect, Engine, EngineError, EngineInfo, OpenOptions, Outcome, SettleReport,
    SettleWait, StmtId, Value,
};
use dbdelta_engine_sqlite::SqliteEngine;
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::{StepResult, StepStatus, TargetSpec};
use dbdelta_runner::ibench::{create_tables, run_step, Share, StepContext};
use dbdelta_runner::StopFlag;
use dbdelta_workload::ibench::steps::builtin;
use dbdelta_workload::ibench::IbenchStep;
use std::path::Path;
use std::time::Duration;

fn sqlite(dir: &Path) -> SqliteEngine {
    let spec = TargetSpec::parse("lite=sqlite?journal_mode=WAL&synchronous=NORMAL").unwrap();
    SqliteEngine::open(&spec, dir, &OpenOptions::default()).unwrap()
}

fn opts(clients: u32, rows_load: u64, rows_write: u64, query_secs: f64) -> IbenchOptions {
    IbenchOptions {
        clients,
        rows_load,
        rows_write,
        query_secs,
        settle_sleep_secs: 0.0,
        ..IbenchOptions::quick(clients)
    }
}

fn step(name: &str) -> (IbenchStep, u32) {
    let steps = builtin();
    let i = steps.iter().position(|s| s.name == name).unwrap();
    (steps[i].clone(), i as u32 + 1)
}

fn run(engine: &dyn Engine, o: &IbenchOptions, name: &str, loaded: u64) -> StepResult {
    let (s, order) = step(name);
    let ctx = StepContext {
        target: "t",
        opts: o,
        step: &s,
        order,
        loaded_rows: loaded,
        os_metrics: false,
        device: None,
        share: Share::WHOLE,
    };
    let r = run_step(engine, &ctx, &StopFlag::new());
    assert_eq!(r.status, StepStatus::Ok, "{name}: {:?}", r.status);
    r
}

fn scalar(engine: &dyn Engine, sql: &str) -> i64 {
    engine
        .connect()
        .unwrap()
        .query_scalar(sql)
        .unwrap()
        .unwrap()
        .parse()
        .unwrap()
}

/// (count, min id, max id) of a table.
fn shape(engine: &dyn Engine, t: &str) -> (i64, i64, i64) {
    (
        scalar(engine, &format!("select count(*) from {t}")),
        scalar(engine, &format!("select min(transactionid) from {t}")),
        scalar(engine, &format!("select max(transactionid) from {t}")),
    )
}

#[test]
fn fifo_keeps_the_row_count_and_the_newest_ids() {
    let dir = tempfile::tempdir().unwrap();
    let e = sqlite(dir.path());
    let o = opts(2, 3000, 1000, 1.0);
    create_tables(&e, &o, false).unwrap();
    let l0 = run(&e, &o, "l.i0", 0);
    assert_eq!(l0.ibench.as_ref().unwrap().rows_inserted, 6000);
    let lx = run(&e, &o, "l.x", 6000);
    let st = lx.ibench.as_ref().unwrap();
    assert!(st.indexed_rows_per_s.unwrap() > 0.0);
    assert_eq!(
        scalar(
            &e,
            "select count(*) from sqlite_master where type='index' and name like 'pi%'"
        ),
        6
    );
    // SQLite assigns max+1, so ids are contiguous and the newest are a known range.
    let after_lx = shape(&e, "pi1");
    assert_eq!(after_lx, (3100, 1, 3100));
    assert_eq!(shape(&e, "pi2"), after_lx);
    let mut inserted = 3100i64;
    for (name, rows) in [("l.i1", 800i64), ("l.i2", 200)] {
        let r = run(&e, &o, name, 6000);
        let st = r.ibench.as_ref().unwrap();
        assert_eq!(st.rows_inserted, 2 * rows as u64, "{name}");
        assert_eq!(st.rows_deleted, st.rows_inserted, "{name}");
        assert!(st.inserts_per_s > 0.0 && st.target_insert_rate.is_none());
        inserted += rows;
        for t in ["pi1", "pi2"] {
            assert_eq!(
                shape(&e, t),
                (after_lx.0, inserted - after_lx.0 + 1, inserted),
                "{name} {t}: the live rows must be exactly the newest {}",
                after_lx.0
            );
        }
        assert_eq!(st.rows_at_end, Some(2 * after_lx.0 as u64));
    }
}

#[test]
fn paced_background_inserts_hit_their_rate_within_2_percent() {
    let dir = tempfile::tempdir().unwrap();
    let e = sqlite(dir.path());
    let o = opts(1, 2000, 100, 3.0);
    create_tables(&e, &o, false).unwrap();
    run(&e, &o, "l.i0", 0);
    run(&e, &o, "l.x", 2000);
    for name in ["qr100", "qp500", "qr1000"] {
        let r = run(&e, &o, name, 2000);
        let st = r.ibench.as_ref().unwrap();
        let target = st.target_insert_rate.unwrap();
        let err = (st.inserts_per_s - target).abs() / target;
        assert!(
            err <= 0.02,
            "{name}: {:.1} rows/s vs target {target} ({:.1} % off) in {:.3} s",
            st.inserts_per_s,
            err * 100.0,
            r.seconds
        );
        assert!(!st.sla_failed, "{name}");
        assert!(st.queries > 0 && st.queries_per_s > 0.0, "{name}");
        assert_eq!(st.rows_deleted, st.rows_inserted, "{name}");
        assert_eq!(shape(&e, "pi1").0, 2100, "{name}: FIFO keeps the size");
    }
}

/// SQLite whose INSERT statements take at least `delay`.
struct SlowInsert {
    inner: SqliteEngine,
    delay: Duration,
}

struct SlowConn {
    inner: Box<dyn Connection>,
    delay: Duration,
}

impl Connection for SlowConn {
    fn into_session(
        self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        Err(self)
    }

    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        self.inner.prepare(sql)
    }
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        self.inner.execute(stmt, params)
    }
    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        if sql.starts_with("insert into pi") {
            std::thread::sleep(self.delay);
        }
        self.inner.query(sql)
    }
    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        self.inner.query_scalar(sql)
    }
}

impl Engine for SlowInsert {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(SlowConn {
            inner: self.inner.connect()?,
            delay: self.delay,
        }))
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
}

#[test]
fn a_target_that_cannot_keep_up_fails_the_sla() {
    let dir = tempfile::tempdir().unwrap();
    let fast = sqlite(dir.path());
    let o = opts(1, 1000, 100, 1.0);
    create_tables(&fast, &o, false).unwrap();
    run(&fast, &o, "l.i0", 0);
    run(&fast, &o, "l.x", 1000);
    // 1000 rows/s needs 20 inserts of 50 rows per second; 150 ms each allows about 6.
    let slow = SlowInsert {
        inner: sqlite(dir.path()),
        delay: Duration::from_millis(150),
    };
    let r = run(&slow, &o, "qp1000", 1000);
    let st = r.ibench.as_ref().unwrap();
    assert_eq!(st.target_insert_rate, Some(1000.0));
    assert!(st.inserts_per_s < 950.0, "{}", st.inserts_per_s);
    assert!(st.sla_failed, "{st:?}");
    // It ran longer instead of skipping rows, as iibench.py's pacing does: all rows were still inserted.
    assert_eq!(st.rows_inserted, 1000);
    assert!(r.seconds > 1.5, "{}", r.seconds);
}
