//! Paced (open-loop) load on the mock engine with a fixed service time: below capacity the
//! latency is the service time; above capacity the backlog shows up as latency (no
//! coordinated omission), every event intended in the window is run and measured (the
//! backlog is drained after the window, up to the statement timeout), and the run still
//! completes.
//!
//! One worker runs one event at a time and the mock sleeps at least its service time per
//! event, so on any machine, however loaded, a window of W seconds starts at most
//! W / service + 1 events: the bounds below follow from that, not from timing luck.

use dbdelta_engine_mock::{LatencyDist, MockConfig, MockEngine};
use dbdelta_model::StepStatus;
use dbdelta_runner::{measure_step, ConnectPlan, Silent, StepPlan, StopFlag};
use dbdelta_workload::sysbench::SysbenchStep;
use dbdelta_workload::Suite;
use std::time::Duration;

fn plan(rate: f64, secs: f64) -> StepPlan {
    let suite = Suite::load("sysbench").unwrap();
    let step = suite
        .steps()
        .find(|s| s.label == "point-query_range=100")
        .unwrap()
        .clone();
    let workload = std::sync::Arc::new(SysbenchStep::new(step.params.clone(), 1, 1000));
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
        workload,
        txn: Default::default(),
        window_probe: None,
        turn: None,
        segment: None,
    }
}

fn engine() -> MockEngine {
    engine_with(Duration::from_millis(1))
}

/// The mock with a fixed service time per statement (a point query is one statement).
fn engine_with(latency: Duration) -> MockEngine {
    MockEngine::new(MockConfig {
        latency,
        dist: LatencyDist::Fixed,
        error_rate: 0.0,
        fail_rate: 0.0,
        fail_on: None,
        seed: 1,
        families: &[dbdelta_engine::Family::Sql],
        stall_once: None,
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
    // Kept up: every intended event was measured and the drain is at most the event in
    // flight at the end (1 ms, plus a scheduling hiccup on a loaded machine).
    assert_eq!(p.intended, 600, "{p:?}");
    assert_eq!(r.latency.count, 600, "{p:?}");
    assert!(p.drain_secs < 0.5, "{p:?}");
    assert!(p.backlog <= p.intended / 20, "{p:?}");
    assert_eq!((p.not_executed, p.warmup_backlog), (0, 0), "{p:?}");
}

#[test]
fn above_capacity_latency_grows_with_the_backlog() {
    // Ask for 2000/s from a 1000/s server for 2 s: the backlog grows by ~1000 events per
    // second, so late events wait a second or more; a closed loop would report ~1 ms.
    let r = measure_step(&engine(), &plan(2000.0, 2.0), &StopFlag::new(), &Silent);
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
    // At most 2 s / 1 ms + 1 of the 4000 intended events start in the window.
    assert!(p.backlog >= 4000 - 2001, "backlog {}", p.backlog);
}

#[test]
fn overload_measures_every_intended_event_and_drains_the_backlog() {
    // 1000/s for 0.5 s from a server that does at most 200/s: 500 events are intended, at
    // most 101 start in the window, the rest are drained after it at ≤ 200/s.
    let service = Duration::from_millis(5);
    let r = measure_step(
        &engine_with(service),
        &plan(1000.0, 0.5),
        &StopFlag::new(),
        &Silent,
    );
    assert_eq!(r.status, StepStatus::Ok);
    let p = r.pacing.as_ref().unwrap();
    assert_eq!(p.intended, 500, "{p:?}");
    // Every intended event is measured, not capacity × window.
    assert_eq!(r.latency.count, 500, "{p:?}");
    assert!(r.events <= 101, "{} events started in the window", r.events);
    assert_eq!(r.events + p.drained, 500, "{p:?}");
    assert_eq!(p.backlog, p.drained, "{p:?}");
    assert!(p.backlog >= 399, "{p:?}");
    assert_eq!((p.not_executed, p.warmup_backlog), (0, 0), "{p:?}");
    // The rates count only what started in the window.
    assert!(!p.sustained && p.achieved_per_s <= 101.0 / 0.5, "{p:?}");
    assert!((r.tps - p.achieved_per_s).abs() < 1e-9);
    // One worker drains one event per service time at best, and the last event intended
    // in the window waited the whole drain at least.
    let drain = p.drained as f64 * service.as_secs_f64();
    assert!(p.drain_secs >= drain, "{p:?}");
    assert!(
        r.latency.max_us >= 0.95 * p.drain_secs * 1e6,
        "max {} us, drain {} s",
        r.latency.max_us,
        p.drain_secs
    );
    // The per-second series covers the window only.
    assert_eq!(r.intervals.len(), 1);
}

#[test]
fn a_drain_longer_than_the_statement_timeout_is_cut_and_counted() {
    // As above, with a 1 s statement timeout: at most 1 s / 5 ms + 1 = 201 events of the
    // ≥ 399 backlog run after the window; the rest never start.
    let mut plan = plan(1000.0, 0.5);
    plan.statement_timeout = Duration::from_secs(1);
    let r = measure_step(
        &engine_with(Duration::from_millis(5)),
        &plan,
        &StopFlag::new(),
        &Silent,
    );
    assert_eq!(r.status, StepStatus::Ok);
    let p = r.pacing.as_ref().unwrap();
    assert_eq!(p.intended, 500, "{p:?}");
    assert!(p.not_executed >= 399 - 201, "{p:?}");
    assert_eq!(p.drained + p.not_executed, p.backlog, "{p:?}");
    assert_eq!(r.latency.count, 500 - p.not_executed, "{p:?}");
    // The drain stopped at the timeout, not later than the event then in flight.
    assert!((1.0..3.0).contains(&p.drain_secs), "{p:?}");
}

#[test]
fn a_backlog_built_in_the_warm_up_is_reported() {
    // 300/s from a 200/s server: of the 300 events intended in a 1 s warm-up at most 201
    // start in it, so at least 99 are still due when the window begins.
    let mut plan = plan(300.0, 1.0);
    plan.warmup = Duration::from_secs(1);
    let r = measure_step(
        &engine_with(Duration::from_millis(5)),
        &plan,
        &StopFlag::new(),
        &Silent,
    );
    let p = r.pacing.as_ref().unwrap();
    assert!(p.warmup_backlog >= 99, "{p:?}");
    assert_eq!(p.intended, 300, "{p:?}");
    // The rates count what the server did in the window, the warm-up's backlog included;
    // the latency every one of the 300 events intended in it, which queued behind that
    // backlog (slots are taken in order).
    assert_eq!(r.status, StepStatus::Ok);
    assert!(r.events <= 201, "{} {p:?}", r.events);
    assert_eq!(r.latency.count, 300, "{p:?}");
    assert!(p.drained > 0, "{p:?}");
}
