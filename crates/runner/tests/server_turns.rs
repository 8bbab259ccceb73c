//! A server target in turns is charged its turns less what its client AND the backend
//! serving its connection could not run: two managed PostgreSQL 15 servers take turns on
//! point queries while competitors spin on every CPU during target 0's turns only. Charged
//! whole turns, target 0's rate would fall with what the competitors took; charged the time
//! its chain (event loop, then backend) could run, the two identical targets' rates stay
//! close.

use dbdelta_engine::OpenOptions;
use dbdelta_engine_postgres::PostgresEngine;
use dbdelta_model::testing::{require, OptionsBuilder};
use dbdelta_model::{StepResult, StepStatus, TargetSpec};
use dbdelta_runner::turns::{pin_worker, Turn, Turns};
use dbdelta_runner::{measure_step, ConnectPlan, Silent, StepPlan, StopFlag};
use dbdelta_workload::benchmark::Benchmark;
use dbdelta_workload::sysbench::{SysbenchBenchmark, SysbenchStep};
use dbdelta_workload::Suite;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = "/usr/lib/postgresql/15/bin";
const ROUNDS: usize = 6;
const WINDOW: Duration = Duration::from_millis(600);

fn start(dir: &std::path::Path) -> PostgresEngine {
    let spec = TargetSpec::parse(&format!("pg=postgres:{BIN}")).unwrap();
    dbdelta_engine_postgres::open(&spec, dir, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("managed server failed to start: {e}"))
}

fn plan(target: &str, turn: Turn) -> StepPlan {
    let suite = Suite::load("sysbench").unwrap();
    let step = suite
        .steps()
        .find(|s| s.label == "point-query_range=100")
        .unwrap()
        .clone();
    let workload = Arc::new(SysbenchStep::new(step.params.clone(), 1, 1000));
    StepPlan {
        target: target.into(),
        step,
        threads: 1,
        warmup: Duration::from_millis(50),
        window: WINDOW,
        tables: 1,
        table_size: 1000,
        seed: 7,
        os_metrics: false,
        device: None,
        rate: None,
        profile: None,
        active: 1,
        connect: ConnectPlan {
            count: 1,
            rate: 2000.0,
            timeout: Duration::from_secs(10),
            io_timeout: None,
        },
        statement_timeout: Duration::from_secs(60),
        max_error_rate: 0.01,
        workload,
        txn: Default::default(),
        window_probe: None,
        turn: Some(turn),
        segment: None,
    }
}

/// Events, charged seconds, turn seconds of one target's rounds.
fn totals(rs: &[StepResult]) -> (f64, f64, f64) {
    rs.iter().fold((0.0, 0.0, 0.0), |(e, s, t), r| {
        let turns = r.turns.unwrap_or_default();
        (e + r.events as f64, s + r.seconds, t + turns.turn_secs)
    })
}

#[test]
fn a_postgres_target_is_not_charged_what_its_backend_could_not_run() {
    if !require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let engines: Vec<PostgresEngine> = dirs.iter().map(|d| start(d.path())).collect();
    let opts = OptionsBuilder::new().tables(1, 1000).seed(7).build();
    for e in &engines {
        SysbenchBenchmark.load(e, &opts).unwrap();
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let current: Mutex<Option<Arc<Turns>>> = Mutex::new(None);
    let done = AtomicBool::new(false);
    let mut results: [Vec<StepResult>; 2] = [Vec::new(), Vec::new()];
    std::thread::scope(|s| {
        // A competitor on every CPU, busy only while target 0 holds the turn: its event
        // loop and its backend wait for a CPU, target 1's do not (more than the host does).
        for k in 0..cpus {
            let (current, done) = (&current, &done);
            s.spawn(move || {
                pin_worker(k);
                while !done.load(Ordering::Relaxed) {
                    let t = current.lock().unwrap().clone();
                    if t.is_some_and(|t| t.owner() == 0) {
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_millis(1) {}
                    } else {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            });
        }
        for round in 0..ROUNDS {
            let turns = Arc::new(Turns::new(2, Duration::from_millis(10), round % 2));
            *current.lock().unwrap() = Some(turns.clone());
            let rs: Vec<StepResult> = std::thread::scope(|r| {
                let hs: Vec<_> = engines
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let p = plan(
                            ["a", "b"][i],
                            Turn {
                                turns: turns.clone(),
                                index: i,
                            },
                        );
                        r.spawn(move || measure_step(e, &p, &StopFlag::new(), &Silent))
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            *current.lock().unwrap() = None;
            for (i, r) in rs.into_iter().enumerate() {
                assert_eq!(r.status, StepStatus::Ok, "{r:?}");
                // Managed on this host: the backend's statistics are read.
                assert_eq!(r.server_waits_read, Some(true), "{r:?}");
                results[i].push(r);
            }
        }
        done.store(true, Ordering::Relaxed);
    });
    let (a, b) = (totals(&results[0]), totals(&results[1]));
    let could = |(_, charged, turns): (f64, f64, f64)| charged / turns;
    let charged = (a.0 / a.1) / (b.0 / b.1);
    let whole = (a.0 / a.2) / (b.0 / b.2);
    let seen = format!(
        "a could run {:.2} of its turns, b {:.2}; rate a/b charged {charged:.2}, whole turns \
         {whole:.2}",
        could(a),
        could(b)
    );
    eprintln!("{seen}");
    // The starved target is charged less than its turns: its backend's and its event
    // loop's waits were read.
    assert!(a.1 < a.2, "{seen}");
    if could(b) < 0.4 {
        // A host so busy that even target 1 could run under 0.4 of its turns (two CPU hogs:
        // each woken link of the chain waits out a hog's time slice) has both near the most
        // taken off (three quarters): nothing to tell apart.
        return;
    }
    assert!(could(a) < 0.9 * could(b), "{seen}");
    // Identical servers charged alike: closer rates than whole turns, and the same rate
    // within a wide margin (the charged time is a difference of two large ones on a busy
    // host).
    assert!(charged.ln().abs() < whole.ln().abs(), "{seen}");
    assert!((0.5..=2.0).contains(&charged), "{seen}");
}
