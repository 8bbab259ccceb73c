//! Paced (open-loop) load on the mock engine with a fixed 1 ms service time: below capacity
//! the latency is the service time; above capacity the backlog shows up as latency (no
//! coordinated omission) and the run still completes.

use dbdelta_engine::mock::{LatencyDist, MockConfig, MockEngine};
use dbdelta_model::StepStatus;
use dbdelta_runner::{measure_step, ConnectPlan, Silent, StepPlan, StopFlag};
use dbdelta_workload::Suite;
use std::time::Duration;

fn plan(rate: f64, secs: f64) -> StepPlan {
    let suite = Suite::load("sysbench").unwrap();
    let step = suite
        .steps()
        .find(|s| s.label == "point-query_range=100")
        .unwrap()
        .clone();
    StepPlan {
        target: "mock".into(),
        step,
        threads: 1,
        warmup: Duration::ZERO,
        window: Duration::from_secs_f64(secs),
        tables: 1,
        table_size: 1000,
        seed: 1,
        os_metrics: false,
        device: None,
        rate: Some(rate),
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
        ycsb: None,
        db_bench: None,
        tpcb: None,
        tpcc: None,
        txn: Default::default(),
        window_probe: None,
    }
}

fn engine() -> MockEngine {
    MockEngine::new(MockConfig {
        latency: Duration::from_millis(1),
        dist: LatencyDist::Fixed,
        error_rate: 0.0,
        fail_rate: 0.0,
        fail_on: None,
        seed: 1,
        families: &[dbdelta_engine::Family::Sql],
    })
}

#[test]
fn below_capacity_latency_is_the_service_time() {
    // 1 thread, 1 ms per event: capacity ~1000/s; ask for 300/s.
    let r = measure_step(&engine(), &plan(300.0, 2.0), &StopFlag::new(), &Silent);
    assert_eq!(r.status, StepStatus::Ok);
    let p = r.pacing.as_ref().unwrap();
    assert!(p.sustained, "{p:?}");
    assert!(
        (p.achieved_per_s / 300.0 - 1.0).abs() < 0.05,
        "{}",
        p.achieved_per_s
    );
    assert!(
        (r.latency.p50_us - 1000.0).abs() < 250.0,
        "p50 {} us should be about the 1 ms service time",
        r.latency.p50_us
    );
    assert!(p.lag.p50_us < 200.0, "lag {}", p.lag.p50_us);
}

#[test]
fn above_capacity_latency_grows_with_the_backlog() {
    // Ask for 3000/s from a 1000/s server for 2 s: the backlog grows by ~2000 events per
    // second, so late events wait about a second; a closed loop would report ~1 ms.
    let r = measure_step(&engine(), &plan(3000.0, 2.0), &StopFlag::new(), &Silent);
    assert_eq!(r.status, StepStatus::Ok);
    let p = r.pacing.as_ref().unwrap();
    assert!(!p.sustained, "{p:?}");
    assert!(p.achieved_per_s < 1100.0);
    assert!(p.service.p50_us < 1500.0, "service {}", p.service.p50_us);
    assert!(
        r.latency.p99_us > 500_000.0,
        "p99 {} us must include the queueing delay",
        r.latency.p99_us
    );
    // Latency rises over the window: the last interval's p95 is well above the first's.
    let first = r.intervals.first().unwrap().p95_us;
    let last = r.intervals.last().unwrap().p95_us;
    assert!(last > 1.5 * first, "first {first} last {last}");
    assert!(p.backlog > 2000, "backlog {}", p.backlog);
}
