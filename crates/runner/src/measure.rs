//! Measures one step at one thread count: N workers, each with its own connection and
//! workload, run a warm-up that is not counted, then the measured window.

use crate::connect::{open_all, ConnectPlan, Opened};
use crate::control::StopFlag;
use crate::cpu::process_cpu_secs;
use crate::gate::Gate;
use crate::mux::event_loop::{run_loop, LoopConfig, Terminal};
use crate::op_types::OpTypeRecorder;
use crate::probe::OpenProbe;
use crate::progress::Progress;
use crate::recorder::{Merged, Recorder, SharedRecording, Slice};
use crate::schedule::{PaceTally, Pacer, Schedule, TxnPolicy, TxnTally, Window};
use crate::shared::{
    check_error_rate, count_code, percent, ErrorCodes, Padded, Shared, WorkerOutput,
    ERROR_BUDGET_FLOOR, ERROR_BUDGET_PER_EVENT,
};
use dbdelta_engine::{Engine, EngineError, ErrorKind, ServerThread, SessionParts};
use dbdelta_model::{
    ConnectStats, Interval, Pacing, StepKind, StepResult, StepStatus, Throughput, ThroughputUnit,
    TxnCounts, RESULT_SCHEMA,
};
use dbdelta_osmetrics::{op_costs, SamplerHandle};
use dbdelta_profile::perf::Stopped;
use dbdelta_profile::{ProfileError, ProfileSpec, Recording};
use dbdelta_stats::{new_compact_histogram, new_histogram, record_ns, summarize};
pub use dbdelta_workload::benchmark::WindowProbe;
use dbdelta_workload::{
    run_event, Counters, EventBuffers, Step, StepWorkload, TerminalSetup, Workload, WorkloadKind,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Everything needed to measure one step at one thread count.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// Target name (for the result).
    pub target: String,
    /// The step.
    pub step: Step,
    /// Worker threads (= connections).
    pub threads: u32,
    /// Warm-up, run but not counted.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Number of sbtest tables.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
    /// Run seed.
    pub seed: u64,
    /// Sample OS metrics during the window.
    pub os_metrics: bool,
    /// Block device override for the OS sampler.
    pub device: Option<String>,
    /// Paced load: events per second, all workers together; `None` = closed loop. Every
    /// event intended in the window runs and is measured, also after the window's end.
    pub rate: Option<f64>,
    /// CPU-profile the server (or, for embedded engines, the workers) during the window.
    pub profile: Option<ProfileSpec>,
    /// Connections that run the workload (≤ `threads`); the other connections stay
    /// connected and idle, the production shape of many mostly idle clients.
    pub active: u32,
    /// How connections are opened (rate, timeout); its count is `threads`.
    pub connect: ConnectPlan,
    /// Cancel and fail an operation that runs longer than this (server engines); also how
    /// long a paced step drains the events intended in its window after it ends.
    pub statement_timeout: Duration,
    /// Largest share of failed (not retried) events the step may have and still count.
    pub max_error_rate: f64,
    /// The state the step's terminals share and what the runner asks about the step, from
    /// the suite's benchmark (`dbdelta_workload::registry`).
    pub workload: Arc<dyn StepWorkload>,
    /// pgbench's transaction rules: re-runs, latency limit, Poisson pacing.
    pub txn: TxnPolicy,
    /// A query answering one number the step reports as its difference over the window
    /// (TPC-C: `sum(d_next_o_id)`, the new orders placed), read on a connection of its own
    /// at the window's start and end.
    pub window_probe: Option<WindowProbe>,
    /// Measured in turns with the other targets of an interleaved round (closed-loop
    /// blocking workers only); `None` = the window is this target's alone.
    pub turn: Option<crate::turns::Turn>,
    /// One segment of a run measured by several processes (`--segment K/N`): `threads` and
    /// `active` are this segment's share, its workers carry their run-wide numbers, and the
    /// window starts when the barrier says; `None` = the whole run is this process's.
    pub segment: Option<crate::segment::StepSegment>,
}

impl StepPlan {
    /// Connections running the workload.
    pub fn active_connections(&self) -> u32 {
        self.active.clamp(1, self.threads.max(1))
    }

    /// True when the step's unit is key-value operations (YCSB, db_bench), not statements.
    pub fn counts_operations(&self) -> bool {
        self.workload.counts_operations()
    }

    /// Workers beside the step's threads whose operations are not the step's (the
    /// background writer of db_bench's `*whilewriting`; embedded engines only).
    pub fn background_workers(&self) -> u32 {
        self.workload.background_workers()
    }
}

/// The share of a window the segments' clock offsets may spread before a warning.
const CLOCK_SPREAD_WARN: f64 = 0.01;

/// New connections per second unless `--connect-rate` says otherwise: well below what a
/// listen backlog of 4096 absorbs.
pub const DEFAULT_CONNECT_RATE: f64 = 2000.0;
/// Limit for one connect (TCP, startup, authentication) unless `--connect-timeout` says
/// otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Limit for one operation unless `--statement-timeout` says otherwise.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// One thread of a step: a blocking worker with its own connection, or an event loop
/// driving many connections in session form.
enum Job {
    Thread {
        w: u32,
        pre: Option<(Box<dyn dbdelta_engine::Connection>, Box<dyn Workload>)>,
    },
    Loop(Vec<Terminal>),
}

/// Runs the step and returns its result; a failure is a result with a `Failed` status.
///
/// Embedded engines run one worker thread per connection (the threads are the engine).
/// Server engines first open every connection (the connect phase, paced), then run the
/// active ones in session form on a few event-loop threads, about one per core; a
/// connection that cannot be split (TLS) keeps the blocking thread-per-connection path.
pub fn measure_step(
    engine: &dyn Engine,
    plan: &StepPlan,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> StepResult {
    progress.step_started(
        &plan.target,
        &plan.step.label,
        plan.threads,
        plan.warmup,
        plan.window,
    );
    let kind = step_kind(plan);
    if let Some(seg) = plan.segment.as_ref().filter(|_| plan.threads == 0) {
        // Fewer connections than segments: this one has none at this step, yet meets the
        // others so that their windows start together.
        let r = empty_share(plan, kind, seg, stop, progress);
        progress.step_finished(&r);
        return r;
    }
    let mut connect = None;
    let mut idle: Vec<dbdelta_engine::Socket> = Vec::new();
    let mut idle_blocking: Vec<Box<dyn dbdelta_engine::Connection>> = Vec::new();
    // Client memory is charged over the whole step (connect phase, warm-up, window), not
    // only what is still resident after the connect phase.
    let memory = crate::memory::StepMemory::start();
    let mut servers = Vec::new();
    let jobs = if engine.embedded() {
        (0..plan.active_connections() + plan.background_workers())
            .map(|w| Job::Thread { w, pre: None })
            .collect()
    } else {
        match connect_phase(engine, plan, stop) {
            Ok(c) => {
                let (jobs, stats) = c.into_jobs(&mut idle, &mut idle_blocking, &mut servers);
                connect = Some(stats);
                jobs
            }
            Err(e) => {
                let mut r = failed_result(plan, kind, e.to_string());
                if stop.requested() {
                    r.status = StepStatus::Interrupted;
                }
                progress.step_finished(&r);
                return r;
            }
        }
    };
    let mut result = run_jobs(engine, plan, stop, progress, jobs, &servers);
    if let Some(c) = connect.as_mut() {
        c.client_bytes_per_connection = memory.per_connection(c.connections);
    }
    result.connect = connect;
    drop(idle);
    drop(idle_blocking);
    progress.step_finished(&result);
    result
}

fn step_kind(plan: &StepPlan) -> StepKind {
    if plan.step.warm {
        StepKind::Warm
    } else {
        StepKind::Measured
    }
}

/// A terminal's workload on a connection of the given dialect.
fn workload_for(plan: &StepPlan, w: u32, dialect: dbdelta_engine::Dialect) -> Box<dyn Workload> {
    // A segment's workers are the run's workers of its stripe: the same streams (and TPC-C
    // home warehouses) as in one process.
    let w = plan.segment.as_ref().map_or(w, |s| s.global_worker(w));
    plan.workload.terminal(&TerminalSetup {
        worker: w,
        stream: (u64::from(plan.step.order) << 20) | u64::from(w),
        seed: plan.seed,
        dialect,
    })
}

/// A connection after the connect phase.
enum Prepared {
    /// An active connection, its workload, and the server thread serving it on this host
    /// when the engine names one.
    Active(
        Box<dyn dbdelta_engine::Connection>,
        Box<dyn Workload>,
        Option<ServerThread>,
    ),
    /// An idle connection reduced to its socket as soon as it is open: its protocol
    /// buffers go back to the allocator before the next connection is opened, so they are
    /// never all resident at once.
    Idle(dbdelta_engine::Socket),
    /// An idle connection that cannot be split (TLS) stays whole.
    IdleWhole(Box<dyn dbdelta_engine::Connection>),
}

struct Connected {
    opened: Opened<Prepared>,
    active: u64,
    server_rss0: Option<u64>,
    server_rss1: Option<u64>,
}

/// Opens every connection of the step and prepares the active ones' statements.
fn connect_phase(
    engine: &dyn Engine,
    plan: &StepPlan,
    stop: &StopFlag,
) -> Result<Connected, EngineError> {
    let connect = ConnectPlan {
        count: plan.threads,
        ..plan.connect.clone()
    };
    let server_rss0 = crate::cpu::tree_rss_bytes(&server_side_pids(engine));
    let active = plan.active_connections() as usize;
    let run_wide = |i: usize| {
        plan.segment
            .as_ref()
            .map_or(i, |s| s.global_worker(i as u32) as usize)
    };
    let opened = open_all(engine, &connect, stop, &run_wide, &|i, mut conn| {
        if i < active {
            let mut w = workload_for(plan, i as u32, conn.dialect());
            w.prepare(&mut *conn)?;
            let server = conn.server_thread();
            Ok(Prepared::Active(conn, w, server))
        } else {
            Ok(match conn.into_session() {
                Ok(parts) => Prepared::Idle(parts.socket),
                Err(conn) => Prepared::IdleWhole(conn),
            })
        }
    })?;
    Ok(Connected {
        opened,
        active: active as u64,
        server_rss0,
        server_rss1: crate::cpu::tree_rss_bytes(&server_side_pids(engine)),
    })
}

/// The processes that hold the server side of connections: the server and any proxy.
fn server_side_pids(engine: &dyn Engine) -> Vec<u32> {
    let mut pids = engine.server_pids();
    pids.extend(engine.proxy_pids());
    pids
}

impl Connected {
    /// Splits the connections into session form and deals the active ones to event loops
    /// (about one per core); connections that cannot be split get a blocking thread each.
    /// The server threads the engine named for the active connections go to `servers`.
    fn into_jobs(
        self,
        idle: &mut Vec<dbdelta_engine::Socket>,
        idle_blocking: &mut Vec<Box<dyn dbdelta_engine::Connection>>,
        servers: &mut Vec<ServerThread>,
    ) -> (Vec<Job>, ConnectStats) {
        let n = self.opened.items.len() as u64;
        let per = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if n > 0 => Some(b.saturating_sub(a) as f64 / n as f64),
            _ => None,
        };
        let stats = ConnectStats {
            connections: n,
            active: self.active,
            seconds: self.opened.elapsed.as_secs_f64(),
            latency: self.opened.latency,
            client_bytes_per_connection: None,
            server_bytes_per_connection: per(self.server_rss0, self.server_rss1),
        };
        let mut terminals = Vec::new();
        let mut threads = Vec::new();
        for (w, p) in self.opened.items.into_iter().enumerate() {
            if let Prepared::Active(_, _, Some(server)) = &p {
                servers.push(*server);
            }
            match p {
                Prepared::Active(conn, workload, _) => match conn.into_session() {
                    Ok(parts) => terminals.push(Terminal {
                        socket: parts.socket,
                        session: parts.session,
                        workload,
                    }),
                    Err(conn) => threads.push(Job::Thread {
                        w: w as u32,
                        pre: Some((conn, workload)),
                    }),
                },
                // An idle connection keeps only its socket: a few hundred bytes of client
                // memory, the rest is in the kernel.
                Prepared::Idle(socket) => idle.push(socket),
                Prepared::IdleWhole(conn) => idle_blocking.push(conn),
            }
        }
        let loops = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(terminals.len())
            .max(1);
        let mut dealt: Vec<Vec<Terminal>> = (0..loops).map(|_| Vec::new()).collect();
        for (i, t) in terminals.into_iter().enumerate() {
            dealt[i % loops].push(t);
        }
        threads.extend(dealt.into_iter().filter(|d| !d.is_empty()).map(Job::Loop));
        (threads, stats)
    }
}

/// The result of a segment with no connection at a step: it met the others (or says why
/// not) and measured nothing.
fn empty_share(
    plan: &StepPlan,
    kind: StepKind,
    seg: &crate::segment::StepSegment,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> StepResult {
    match seg.sync.meet(&seg.what(&plan.step.label), stop, progress) {
        Ok(m) => {
            let mut r = StepResult::empty(
                &plan.target,
                &plan.step.name,
                &plan.step.label,
                plan.step.order,
                plan.step.group,
                kind,
                0,
            );
            r.started_unix = m.window.start_unix + plan.warmup.as_secs_f64();
            r.seconds = plan.window.as_secs_f64();
            r.warmup_secs = plan.warmup.as_secs_f64();
            r.throughput.unit = unit_of(plan);
            r.segments = Some(m.window);
            r
        }
        Err(e) => failed_result(plan, kind, e.to_string()),
    }
}

/// Runs the jobs through warm-up and the measured window and assembles the result.
fn run_jobs(
    engine: &dyn Engine,
    plan: &StepPlan,
    stop: &StopFlag,
    progress: &dyn Progress,
    jobs: Vec<Job>,
    servers: &[ServerThread],
) -> StepResult {
    let mut started_unix = now_unix() + plan.warmup.as_secs_f64();
    // A segment's window: where the segments met, or why they could not.
    let mut met: Option<Result<dbdelta_model::SegmentWindow, String>> = None;
    let live: Vec<Padded> = (0..jobs.len()).map(|_| Padded::default()).collect();
    let n_jobs = jobs.len();
    // A server target's work runs in the server threads serving its connections too: in
    // turns their run-queue waits are read beside the client's and reported, not taken off
    // (crate::turns says why).
    let servers_read = !engine.embedded() && servers_read(plan, servers);
    let shared = Shared {
        stop,
        start: OnceLock::new(),
        barrier: Gate::new(n_jobs + 1),
        slots: AtomicU64::new(0),
        tids: Arc::new(Mutex::new(Vec::new())),
        finished: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        release: Gate::new(n_jobs + 1),
        warmup: plan.warmup,
        window: plan.window,
        recording: SharedRecording::default(),
        window_used: AtomicBool::new(false),
        stretched_end_ns: AtomicU64::new(0),
        register_clients: engine.embedded() || servers_read,
    };
    // A closed loop stretches a window no event started in (a stall or one slow event
    // covered it) to its first event after the end; paced steps measure by intended time.
    let stretchable = plan.rate.is_none();
    // In turns, the machine and this process are shared with the other targets for the
    // whole window: their CPU and OS counters are not this target's, only its own
    // server's counters are (an embedded engine's are the process's).
    let shared_host = plan.turn.is_some();
    let reconnect_opts = dbdelta_engine::ConnectOptions {
        source: None,
        timeout: Some(plan.connect.timeout),
        io_timeout: plan.connect.io_timeout,
    };
    let reconnect = |w: &mut dyn Workload| -> Result<SessionParts, EngineError> {
        let mut conn = engine.connect_with(&reconnect_opts)?;
        w.prepare(&mut *conn)?;
        conn.into_session().map_err(|_| {
            EngineError::connection("the new connection has no session form (TLS or compression)")
        })
    };
    let loop_cfg = LoopConfig {
        schedule: Schedule::new(plan.rate, plan.txn.poisson),
        txn: plan.txn,
        seed: plan.seed,
        statement_timeout: plan.statement_timeout,
        max_error_rate: plan.max_error_rate,
        reconnect: &reconnect,
        turn: plan.turn.as_ref(),
    };
    let (mut cpu_at_window, mut cpu_at_end) = (None, None);
    // A closed-loop window of its own: its workers' run-queue waits at its edges.
    let (mut waits_at_window, mut waits_at_end) = (Vec::new(), Vec::new());
    let (mut counters_at_window, mut counters_at_end) = (None, None);
    // The probe's connection is opened before the step so reading it costs one query.
    let mut probe = plan
        .window_probe
        .as_ref()
        .map(|p| OpenProbe::open(engine, p));
    let (mut probe_at_window, mut probe_at_end) = (None, None);
    // How late the probe's first number was read after the window began (a coordinator
    // woken on a busy host, a read queued behind a commit): its count starts then.
    let mut probe_lag = Duration::ZERO;
    let mut sampler: Option<SamplerHandle> = None;
    let mut recording: Option<Result<Recording, ProfileError>> = None;
    let mut actual_window = plan.window;

    #[allow(clippy::type_complexity)]
    let outputs: (
        Vec<Result<WorkerOutput, EngineError>>,
        Option<_>,
        Option<Result<Stopped, ProfileError>>,
    ) = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .into_iter()
            .enumerate()
            .map(|(j, job)| {
                let (live, shared, loop_cfg) = (&live[j], &shared, &loop_cfg);
                let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                    // A panicking worker must still reach the release barrier.
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        if let Ok(mut t) = shared.tids.lock() {
                            t.push(crate::cpu::gettid());
                        }
                        match job {
                            Job::Thread { w, pre } => worker(engine, plan, w, pre, live, shared),
                            Job::Loop(terminals) => run_loop(terminals, loop_cfg, shared, live, j),
                        }
                    }))
                    .unwrap_or_else(|_| Err(EngineError::statement("worker thread panicked")));
                    if out.is_err() {
                        shared.abort.store(true, Ordering::SeqCst);
                    }
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                    shared.release.wait();
                    out
                });
                spawned.map_err(|e| {
                    // The others must not wait for this one: let them go, and stop.
                    shared.abort.store(true, Ordering::SeqCst);
                    shared.barrier.break_open();
                    shared.release.break_open();
                    EngineError::config(format!(
                        "cannot start worker thread {} of {n_jobs}: {e}; use fewer --threads",
                        j + 1
                    ))
                })
            })
            .collect();
        // Targets in turns share one clock: their windows start together.
        // Segments of one run start together at the time their barrier chose.
        let t0 = match (&plan.turn, &plan.segment) {
            (Some(t), _) => t.turns.meet(plan.warmup, plan.window),
            (None, Some(seg)) => match seg.sync.meet(&seg.what(&plan.step.label), stop, progress) {
                Ok(m) => {
                    // Windows are aligned by wall clock: clocks further apart than a
                    // hundredth of the window shift the segments' windows noticeably.
                    let spread_s = m.window.clock_spread_ms() / 1000.0;
                    if spread_s > CLOCK_SPREAD_WARN * plan.window.as_secs_f64() {
                        progress.message(&format!(
                            "warning: [{}] {}: the segments' clocks are {:.0} ms apart, more than                              {:.0} % of the {:.1} s window; sync the hosts' clocks (NTP)",
                            plan.target,
                            plan.step.label,
                            spread_s * 1000.0,
                            CLOCK_SPREAD_WARN * 100.0,
                            plan.window.as_secs_f64()
                        ));
                    }
                    started_unix = m.window.start_unix + plan.warmup.as_secs_f64();
                    met = Some(Ok(m.window));
                    m.start
                }
                Err(e) => {
                    // Nothing is measured: the workers leave at once.
                    shared.abort.store(true, Ordering::SeqCst);
                    met = Some(Err(e.to_string()));
                    Instant::now()
                }
            },
            (None, None) => Instant::now(),
        };
        let _ = shared.start.set(t0);
        // With no warm-up (a counted step) the workers start on the window's first
        // operation the moment the barrier opens: sample the window's start before it, or a
        // sampler descheduled on a busy host counts the first operations' costs as before.
        let sample_before = plan.warmup.is_zero();
        if sample_before {
            cpu_at_window = Some(process_cpu_secs());
            if !(shared_host && engine.embedded()) {
                counters_at_window = engine_counters(engine, plan, "start", progress);
            }
            probe_at_window = probe.as_mut().map(|p| p.read(plan.statement_timeout));
        }
        shared.barrier.wait();
        let window_start = t0 + plan.warmup;
        let end = window_start + plan.window;
        // perf takes a second or more to start on a loaded machine: start it disabled now
        // (the workers' thread ids are known after the barrier) and enable it when the
        // window begins, so the profile covers the whole window.
        recording = plan
            .profile
            .as_ref()
            .map(|p| crate::observe::start_profile(engine, p, &shared.tids));
        let mut window_begun = false;
        loop {
            let now = Instant::now();
            if !window_begun && now >= window_start {
                window_begun = true;
                if !sample_before {
                    // First: the probe's number is the window's edge (TPC-C's new orders),
                    // and every other reading takes time in which the terminals commit.
                    probe_at_window = probe.as_mut().map(|p| p.read(plan.statement_timeout));
                    probe_lag = Instant::now().saturating_duration_since(window_start);
                }
                waits_at_window = window_waits(&shared);
                if !sample_before {
                    cpu_at_window = Some(process_cpu_secs());
                    if !(shared_host && engine.embedded()) {
                        counters_at_window = engine_counters(engine, plan, "start", progress);
                    }
                }
                if !shared_host {
                    sampler = crate::observe::start_sampler(
                        engine,
                        plan.os_metrics,
                        &plan.device,
                        Some(&shared.tids),
                    );
                }
                if let Some(Ok(r)) = recording.as_mut() {
                    r.enable();
                }
            }
            let total: u64 = live.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
            progress.step_tick(now - t0, total);
            // A stall that covered the whole window stretches it to the first event that
            // starts after it (for at most the statement timeout), so a short window on a
            // busy host is a slow measurement, not an empty one.
            let stalled_through = stretchable
                && !shared.window_used.load(Ordering::SeqCst)
                && now < end + plan.statement_timeout;
            if (now >= end && !stalled_through)
                || shared.finished.load(Ordering::SeqCst) == n_jobs as u64
                || shared.abort.load(Ordering::SeqCst)
            {
                break;
            }
            if stop.requested() {
                actual_window = now.saturating_duration_since(window_start);
                break;
            }
            let next_edge = if now < window_start {
                window_start
            } else if now < end {
                end
            } else {
                now + Duration::from_millis(1)
            };
            std::thread::sleep(Duration::from_millis(100).min(next_edge - now));
        }
        let stretched = shared.stretched_end_ns.load(Ordering::SeqCst);
        if stretched > 0 && !stop.requested() {
            actual_window =
                (t0 + Duration::from_nanos(stretched)).saturating_duration_since(window_start);
        }
        // The client's CPU of the window, not of a paced step's drain after it.
        cpu_at_end = Some(process_cpu_secs());
        waits_at_end = window_waits(&shared);
        let os = sampler.take().map(SamplerHandle::stop);
        // A failed or interrupted step is not compared, and its server may be the reason
        // (stalled): do not wait on it for counters.
        let ending_normally = !shared.abort.load(Ordering::SeqCst) && !stop.requested();
        counters_at_end = counters_at_window
            .as_ref()
            .filter(|_| ending_normally)
            .and_then(|_| engine_counters(engine, plan, "end", progress));
        if probe_at_window.is_some() {
            probe_at_end = probe.as_mut().map(|p| p.read(plan.statement_timeout));
        }
        let stopped = recording.take().map(|r| r.and_then(|r| r.stop()));
        // A paced step's workers drain the events intended in the window: keep showing
        // progress until they are done.
        let mut tick = Instant::now();
        while plan.rate.is_some()
            && shared.finished.load(Ordering::SeqCst) < n_jobs as u64
            && !shared.abort.load(Ordering::SeqCst)
            && !stop.requested()
        {
            if tick.elapsed() >= Duration::from_millis(100) {
                tick = Instant::now();
                let total: u64 = live.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
                progress.step_tick(t0.elapsed(), total);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        shared.release.wait();
        let outputs = handles
            .into_iter()
            .map(|h| {
                h?.join().unwrap_or_else(|_| {
                    Err(EngineError::new(
                        ErrorKind::Statement,
                        "worker thread panicked",
                    ))
                })
            })
            .collect();
        (outputs, os, stopped)
    });
    let (outputs, stopped) = ((outputs.0, outputs.1), outputs.2);
    // A counted step (db_bench's fillseq) ends when its last worker is done: its window is
    // that long, not the planned one.
    let done: Option<Vec<Instant>> = outputs
        .0
        .iter()
        .filter_map(|o| o.as_ref().ok())
        .filter(|o| !o.background)
        .map(|o| o.done_at)
        .collect();
    if let (Some(t0), Some(last)) = (shared.start.get(), done.and_then(|d| d.into_iter().max())) {
        actual_window = last.saturating_duration_since(*t0 + plan.warmup);
    }
    let cpu_used = cpu_at_window
        .zip(cpu_at_end)
        .map(|(start, end)| end - start)
        .filter(|_| !shared_host);
    // In turns, the rates are over the time this target could run in its own turns inside
    // the window.
    let wall_window = actual_window;
    let (mut charge, mut waited) = (None, None);
    if let (Some(t), false) = (&plan.turn, stop.requested()) {
        let mut c = t.turns.charge(t.index);
        if !engine.embedded() {
            // Charged whole: the chain's waits are reported, not taken off.
            waited = servers_read.then_some(c.lost);
            c.lost = Duration::ZERO;
        }
        actual_window = charged(c);
        charge = Some(c);
    }
    let stretched = shared.stretched_end_ns.load(Ordering::SeqCst);
    let extended = (stretched > 0 && !stop.requested())
        .then(|| Duration::from_nanos(stretched).saturating_sub(plan.warmup + plan.window));
    let interrupted = stop.requested();
    // As in turns: an embedded engine's workers (a server target's waits are not what it
    // lost, crate::turns).
    let own = |start: &[(u32, u64)], end: &[(u32, u64)]| -> Vec<u64> {
        start
            .iter()
            .filter_map(|(tid, a)| {
                let (_, b) = end.iter().find(|(t, _)| t == tid)?;
                Some(b.saturating_sub(*a))
            })
            .collect()
    };
    let could_run =
        (engine.embedded() && plan.turn.is_none() && plan.rate.is_none() && !interrupted)
            .then(|| could_run(&own(&waits_at_window, &waits_at_end), wall_window))
            .flatten();
    let merged = std::mem::take(
        &mut *shared
            .recording
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let mut result = assemble(
        plan,
        outputs.0,
        merged,
        Windows {
            counted: actual_window,
            wall: wall_window,
            charge,
            waited,
            extended,
        },
        started_unix,
        cpu_used,
        interrupted,
    );
    // A counted step that ran out of its window before its operations were done (db_bench's
    // fillseq): what it left undone is what the later steps would miss.
    if let (false, true, Some(why)) = (interrupted, result.is_ok(), plan.workload.shortfall()) {
        result.status = StepStatus::Failed { reason: why };
    }
    result.could_run = could_run;
    result.server_waits_read = (!engine.embedded() && plan.turn.is_some()).then_some(servers_read);
    match met {
        Some(Ok(window)) => result.segments = Some(window),
        Some(Err(why)) => {
            result.status = StepStatus::Failed {
                reason: format!("the segments did not meet: {why}"),
            }
        }
        None => {}
    }
    if let Some(p) = &plan.window_probe {
        match (probe_at_window, probe_at_end) {
            (Some(Ok(a)), Some(Ok(b))) => {
                let diff = b - a;
                result.workload_stats.insert(p.name.clone(), diff);
                let lag = probe_lag.as_secs_f64();
                result
                    .workload_stats
                    .insert(format!("{}.start_lag_ms", p.name), lag * 1000.0);
                if let Some(unit) = p.per_minute_unit {
                    if result.is_ok() {
                        // Over the time the counter counted: from its first reading on.
                        let counted = result.seconds - lag;
                        let secs = if counted > 0.5 * result.seconds {
                            counted
                        } else {
                            result.seconds
                        };
                        result.throughput = Throughput {
                            value: diff / secs.max(1e-9) * 60.0,
                            unit,
                        };
                    }
                }
            }
            (Some(Err(e)), _) | (_, Some(Err(e))) if result.is_ok() => {
                result.status = StepStatus::Failed {
                    reason: format!("reading {}: {e}", p.name),
                };
            }
            _ => {}
        }
    }
    if let Some(os) = outputs.1 {
        if result.is_ok() {
            // Per operation of the headline: a new order for TPC-C (NOPM is per minute), a
            // thousand rows for scan. Scan's headline is one thread's rate (the published oltp_scan comparison's) while the
            // CPU is every thread's, so its costs divide by the rows all threads scanned.
            let per_sec = match result.throughput.unit {
                ThroughputUnit::Nopm => result.throughput.value / 60.0,
                ThroughputUnit::KrowsPerSec if result.seconds > 0.0 => {
                    result.events as f64 * plan.table_size as f64 / 1000.0 / result.seconds
                }
                _ => result.throughput.value,
            };
            result.costs = op_costs(&os.summary, per_sec);
        }
        result.os = Some(os);
    }
    if let (Some(a), Some(b)) = (&counters_at_window, &counters_at_end) {
        result.engine_stats = dbdelta_engine::EngineCounters::step(a, b);
    }
    if let Some(spec) = &plan.profile {
        crate::observe::keep_profile(spec, stopped, result.queries);
    }
    result
}

/// The engine's own counters, with this process's CPU and memory beside them for an
/// embedded engine (db_bench's `/usr/bin/time` and `ps` columns: the process is the
/// database). A failed read is said once per edge and leaves the step without counters.
fn engine_counters(
    engine: &dyn Engine,
    plan: &StepPlan,
    edge: &str,
    progress: &dyn Progress,
) -> Option<dbdelta_engine::EngineCounters> {
    let mut c = match engine.counters() {
        Ok(c) => c?,
        Err(e) => {
            progress.message(&format!(
                "[{}] {}: the engine's counters could not be read at the window's {edge} \
                 ({e}); the step's result has none",
                plan.target, plan.step.label
            ));
            return None;
        }
    };
    if !engine.embedded() {
        return Some(c);
    }
    let (user, sys) = crate::cpu::process_cpu_split();
    c.cumulative.insert("process.user-cpu-secs".into(), user);
    c.cumulative.insert("process.sys-cpu-secs".into(), sys);
    if let Some(rss) = crate::cpu::process_rss_bytes() {
        c.current.insert("process.rss-bytes".into(), rss as f64);
    }
    Some(c)
}

fn worker(
    engine: &dyn Engine,
    plan: &StepPlan,
    w: u32,
    pre: Option<(Box<dyn dbdelta_engine::Connection>, Box<dyn Workload>)>,
    live: &Padded,
    shared: &Shared<'_>,
) -> Result<WorkerOutput, EngineError> {
    let setup = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(pre) = pre {
            return Ok(pre);
        }
        let mut conn = engine.connect()?;
        let mut workload = workload_for(plan, w, conn.dialect());
        workload.prepare(&mut *conn)?;
        Ok::<_, EngineError>((conn, workload))
    }))
    .unwrap_or_else(|_| Err(EngineError::statement("worker setup panicked")));
    if let Some(t) = &plan.turn {
        // Worker w of every target on one CPU: the turns then share that CPU's phases.
        crate::turns::pin_worker(w as usize);
        // An embedded engine's workers are the engine: the time they wait for a CPU is
        // time the target could not run. A server target's are one link of its chain,
        // registered only beside its server threads (crate::turns).
        if shared.register_clients {
            t.turns.register(t.index, crate::cpu::gettid());
        }
    }
    // Always meet the barrier, even after a setup error, so the others are not stuck.
    shared.barrier.wait();
    let (mut conn, mut workload) = setup?;
    let stop = shared.stop;
    let t0 = *shared.start.get().unwrap_or(&Instant::now());
    let window_start = t0 + plan.warmup;
    let end = window_start + plan.window;
    let mut rec = Recorder::new(window_start, shared.recording.clone());
    // Only paced steps record lag and service time: a closed loop of a thousand workers
    // would otherwise hold two idle full-precision histograms each (23 MB, heaptrack).
    let mut tally = TxnTally::default();
    let mut srng = dbdelta_workload::rng::Rng::new(plan.seed, 0x5C4E_D000 ^ u64::from(w));
    let (mut lag, mut service) = if plan.rate.is_some() {
        (new_histogram(), new_histogram())
    } else {
        (new_compact_histogram(), new_compact_histogram())
    };
    let mut counters = Counters::default();
    let mut op_types = OpTypeRecorder::default();
    let (mut events, mut errors, mut failed) = (0u64, 0u64, 0u64);
    let mut codes = ErrorCodes::new();
    let busy_before = conn.busy_retries();
    let transactional = workload.uses_transactions();
    // A background worker paces itself and is never the step's: only its type counts.
    let background = workload.background();
    let schedule = if background {
        Schedule::Closed
    } else {
        Schedule::new(plan.rate, plan.txn.poisson)
    };
    let paced = schedule.paced();
    let mut pacer = Pacer::new(
        schedule,
        Window::new(t0, plan.warmup, plan.window, plan.statement_timeout),
        plan.txn.latency_limit,
    );
    // A closed loop stops at the window's end; a paced one drains what was intended in it.
    let works_until = if paced { pacer.works_until() } else { end };
    let mut paused = false;
    let mut buffers = EventBuffers::default();
    let mut done_at = None;
    // Closed loop: the clock read that ended an event starts the next one when nothing
    // waited in between, so an event costs one clock read (db_bench's `FinishedOps` reads
    // the clock once an operation; on a VM a read is ~25 ns, 3 % of a RocksDB put).
    let mut last_done: Option<Instant> = None;
    loop {
        if stop.requested() || shared.abort.load(Ordering::Relaxed) {
            break;
        }
        if workload.finished() {
            done_at = Some(Instant::now());
            break;
        }
        // A terminal that waits between events (TPC-C's keying and think times).
        if !paced {
            let pause = workload.pause();
            if !pause.is_zero() {
                paused = true;
                last_done = None;
                let at = Instant::now() + pause;
                if at >= end || !crate::connect::sleep_until(at, stop) {
                    break;
                }
            }
        }
        // Open loop: take the next slot of the shared schedule and start at its intended
        // time; latency counts from that time, so a backlog shows as latency (no
        // coordinated omission) and never aborts the run. Slots intended in the window
        // still run after it (the drain), until the drain's limit.
        // In turns, a closed-loop event starts only in this target's turn.
        let turn = match &plan.turn {
            Some(t) if !paced => {
                let stopped = || stop.requested() || shared.abort.load(Ordering::Relaxed);
                // A window no event started in yet waits for this target's next turn past
                // its end (the stretch below), for at most the statement timeout.
                let until = if shared.window_used.load(Ordering::Relaxed) {
                    end
                } else {
                    end + plan.statement_timeout
                };
                match t.turns.begin(t.index, until, &stopped) {
                    Some(g) => Some(g),
                    None => break,
                }
            }
            _ => None,
        };
        let (intended, start) = if paced {
            let intended = match pacer.next(&shared.slots, &mut srng, &mut tally.skipped) {
                Some(at) if crate::connect::sleep_until(at, stop) => at,
                _ => break,
            };
            let start = Instant::now();
            if !pacer.start(intended, start, &shared.slots) {
                break;
            }
            (intended, start)
        } else {
            // Closed loop: the event starts when it is due (one clock read an event); a
            // turn may have waited, so its event reads the clock afresh.
            let now = match last_done.take() {
                Some(d) if turn.is_none() => d,
                _ => Instant::now(),
            };
            let timeout = plan.statement_timeout;
            if now >= end && !shared.stretch(t0, end, now, timeout, plan.turn.as_ref()) {
                break;
            }
            if !background {
                shared.event_started(now, window_start);
            }
            (now, now)
        };
        let mut counts = pacer.counts(intended, start);
        if !paced && start >= end {
            // The event that ends a window a stall covered: it is the window's.
            counts.rate = true;
            counts.latency = true;
        }
        let mut ev = Counters::default();
        let run = run_event(
            &mut *workload,
            &mut *conn,
            &mut buffers,
            &mut ev,
            plan.txn.max_tries,
        );
        let outcome = run.result;
        drop(turn);
        if let (Some(t), true) = (&plan.turn, !paced && start >= end) {
            // The event that ends a window no event had started in: in turns, the target's
            // window holds the turn it ran in (else a target the other's slow event kept
            // from its turns would be charged nothing for its event).
            t.turns.extend(t.index, Instant::now());
        }
        if background {
            if counts.latency && outcome.is_ok() {
                op_types.completed(&*workload, intended.elapsed());
            }
            outcome?;
            continue;
        }
        let done = Instant::now();
        if paced {
            pacer.ended(done);
        }
        live.add(ev.queries);
        if counts.rate {
            // Statements run before an error count too, as in sysbench.
            counters.merge(&ev);
        }
        match outcome {
            Ok(()) => {
                last_done = Some(done);
                let took = done - intended;
                match (counts.rate, counts.latency) {
                    (true, true) => {
                        events += 1;
                        rec.event(done, took, ev.queries);
                        op_types.completed(&*workload, took);
                    }
                    // Intended in the warm-up, run in the window (its backlog).
                    (true, false) => {
                        events += 1;
                        rec.ran(done, ev.queries);
                        op_types.ran(&*workload);
                    }
                    // Intended in the window, run after it (the drain).
                    (false, true) => {
                        pacer.tally.drained += 1;
                        rec.drained(took);
                        op_types.drained(&*workload, took);
                    }
                    (false, false) => {}
                }
                if counts.latency {
                    tally.completed(run.retries, took, plan.txn.latency_limit);
                    if paced {
                        record_ns(&mut lag, (start - intended).as_nanos() as u64);
                        record_ns(&mut service, (done - start).as_nanos() as u64);
                    }
                }
            }
            Err(e) if e.is_retryable() && !plan.txn.failures_count => {
                if transactional {
                    let _ = conn.rollback();
                }
                if counts.any() {
                    errors += 1;
                    count_code(&mut codes, &e);
                    rec.error(start);
                    if errors > ERROR_BUDGET_FLOOR + ERROR_BUDGET_PER_EVENT * events {
                        return Err(EngineError::statement(format!(
                            "error budget exceeded: {errors} retried errors for {events} events; last: {e}"
                        )));
                    }
                }
            }
            // A failed statement or a dropped connection costs the event, not the step:
            // counted, the connection restored, and the step fails only past
            // --max-error-rate. Timeouts (a stalled server) and configuration errors end it.
            Err(e)
                if matches!(e.kind, ErrorKind::Statement | ErrorKind::Connection)
                    || e.is_retryable() =>
            {
                if counts.any() {
                    failed += 1;
                    count_code(&mut codes, &e);
                    rec.error(start);
                    op_types.failed(&*workload);
                    check_error_rate(failed, events, plan.max_error_rate, &e)?;
                }
                if e.kind == ErrorKind::Connection {
                    conn = reconnect(engine, &mut *workload, stop, works_until, &e)?;
                } else if transactional {
                    let _ = conn.rollback();
                }
            }
            Err(e) => return Err(e),
        }
    }
    let busy = conn.busy_retries().saturating_sub(busy_before);
    rec.finish();
    Ok(WorkerOutput {
        counters,
        events,
        errors,
        busy,
        failed,
        codes,
        lag,
        service,
        op_types,
        done_at,
        background,
        txn: tally,
        paused,
        pace: pacer.tally,
    })
}

/// A new connection for a worker whose connection dropped, with the workload's statements
/// prepared again; retried every 100 ms until the window ends.
fn reconnect(
    engine: &dyn Engine,
    workload: &mut dyn Workload,
    stop: &StopFlag,
    end: Instant,
    cause: &EngineError,
) -> Result<Box<dyn dbdelta_engine::Connection>, EngineError> {
    loop {
        let attempt = engine.connect().and_then(|mut c| {
            workload.prepare(&mut *c)?;
            Ok(c)
        });
        match attempt {
            Ok(c) => return Ok(c),
            Err(e) if Instant::now() + Duration::from_millis(100) >= end || stop.requested() => {
                return Err(EngineError::connection(format!(
                    "the connection dropped ({cause}) and reconnecting failed: {e}"
                )))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The unit of a step's headline number.
fn unit_of(plan: &StepPlan) -> ThroughputUnit {
    if plan.step.params.kind == WorkloadKind::Scan {
        ThroughputUnit::KrowsPerSec
    } else if plan.counts_operations() {
        ThroughputUnit::OpsPerSec
    } else if plan.step.params.kind.counts_transactions() {
        ThroughputUnit::Tps
    } else {
        ThroughputUnit::Qps
    }
}

/// A result for a step that did not produce numbers.
pub fn failed_result(plan: &StepPlan, kind: StepKind, reason: String) -> StepResult {
    let s = &plan.step;
    let mut r = StepResult::empty(
        &plan.target,
        &s.name,
        &s.label,
        s.order,
        s.group,
        kind,
        plan.threads,
    );
    r.status = StepStatus::Failed { reason };
    r.started_unix = now_unix();
    r.warmup_secs = plan.warmup.as_secs_f64();
    r
}

/// A window's length as counted for rates, and on the wall clock: they differ in turns.
struct Windows {
    counted: Duration,
    wall: Duration,
    /// In turns: this target's turns and what of them it could not run.
    charge: Option<crate::turns::Charge>,
    /// A server target in turns: what its client and server threads waited for a CPU in
    /// its turns (reported, not taken off).
    waited: Option<Duration>,
    /// How far the window ran past its planned end (stretched to its first event).
    extended: Option<Duration>,
}

/// The run-queue waits (ns) of the step's worker threads now, by thread id.
fn window_waits(shared: &Shared<'_>) -> Vec<(u32, u64)> {
    let tids = shared.tids.lock().map(|t| t.clone()).unwrap_or_default();
    tids.into_iter()
        .filter_map(|tid| {
            let w = crate::runqueue::ThreadClock::open(tid)?.wait_ns()?;
            Some((tid, w))
        })
        .collect()
}

/// The share of a `window` an embedded target could run: one less the mean of its workers'
/// run-queue waits over it (crate::runqueue::lost_in_chain); `None` without the workers'
/// readings at both edges.
fn could_run(workers: &[u64], window: Duration) -> Option<f64> {
    if workers.is_empty() || window.is_zero() {
        return None;
    }
    let lost = crate::runqueue::lost_in_chain(window, window, &[workers]);
    Some(1.0 - lost.as_secs_f64() / window.as_secs_f64())
}

/// Registers a server target's server threads with its turns, so the CPU waits of its
/// chain are read and reported: true when at least one can be read (false outside turns).
fn servers_read(plan: &StepPlan, servers: &[ServerThread]) -> bool {
    plan.turn.as_ref().is_some_and(|t| {
        servers
            .iter()
            .map(|s| t.turns.register_server(t.index, s.pid, s.tid))
            .fold(false, |any, ok| any | ok)
    })
}

/// The most of a target's turns taken off as time it could not run: a target that ran a
/// quarter of its turns or less is not measured (crate::sequence::rounds measures the round
/// again), and its rate is not blown up beyond 4x meanwhile.
const MAX_LOST_SHARE: f64 = 0.75;

/// The time a target in turns is charged: its turns less the time it waited for a CPU.
fn charged(c: crate::turns::Charge) -> Duration {
    c.turns
        .saturating_sub(c.lost.min(c.turns.mul_f64(MAX_LOST_SHARE)))
}

fn assemble(
    plan: &StepPlan,
    outputs: Vec<Result<WorkerOutput, EngineError>>,
    merged: Merged,
    window: Windows,
    started_unix: f64,
    cpu_used: Option<f64>,
    interrupted: bool,
) -> StepResult {
    let kind = step_kind(plan);
    let mut ok = Vec::with_capacity(outputs.len());
    for o in outputs {
        match o {
            Ok(o) => ok.push(o),
            Err(e) => return failed_result(plan, kind, e.to_string()),
        }
    }
    let mut counters = Counters::default();
    let Merged { hist, seconds } = merged;
    let (mut events, mut errors, mut busy, mut failed) = (0, 0, 0, 0);
    let mut codes = ErrorCodes::new();
    let (mut lag, mut service) = (new_histogram(), new_histogram());
    let mut op_types = OpTypeRecorder::default();
    let mut tally = TxnTally::default();
    let mut pace = PaceTally::default();
    let paused = ok.iter().any(|o| o.paused);
    for o in ok {
        op_types.merge(o.op_types);
        tally.merge(&o.txn);
        pace.merge(&o.pace);
        let _ = lag.add(&o.lag);
        let _ = service.add(&o.service);
        counters.merge(&o.counters);
        events += o.events;
        errors += o.errors;
        busy += o.busy;
        failed += o.failed;
        for (k, n) in o.codes {
            *codes.entry(k).or_insert(0) += n;
        }
    }
    let error_rate = if failed > 0 {
        failed as f64 / (failed + events) as f64
    } else {
        0.0
    };
    let secs = window.counted.as_secs_f64().max(1e-9);
    let wall_secs = window.wall.as_secs_f64().max(secs);
    let latency = summarize(&hist);
    let throughput = if plan.step.params.kind == WorkloadKind::Scan {
        // As the published oltp_scan comparison reports it: rows per table / mean time of one
        // full scan, in thousands of rows per second.
        let mean_s = latency.mean_us / 1e6;
        Throughput {
            value: if mean_s > 0.0 {
                plan.table_size as f64 / 1000.0 / mean_s
            } else {
                0.0
            },
            unit: ThroughputUnit::KrowsPerSec,
        }
    } else if plan.counts_operations() {
        Throughput {
            value: events as f64 / secs,
            unit: ThroughputUnit::OpsPerSec,
        }
    } else if plan.step.params.kind.counts_transactions() {
        Throughput {
            value: events as f64 / secs,
            unit: ThroughputUnit::Tps,
        }
    } else {
        Throughput {
            value: counters.queries as f64 / secs,
            unit: ThroughputUnit::Qps,
        }
    };
    let status = if interrupted {
        StepStatus::Interrupted
    } else if events == 0 {
        StepStatus::Failed {
            reason: format!("no event completed in {secs:.1} s ({errors} retried errors)"),
        }
    } else if error_rate > plan.max_error_rate {
        let top: Vec<String> = codes.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        StepStatus::Failed {
            reason: format!(
                "error rate {} is over --max-error-rate {} ({failed} failed events: {})",
                percent(error_rate),
                percent(plan.max_error_rate),
                top.join(", ")
            ),
        }
    } else {
        StepStatus::Ok
    };
    let mut intervals = merge_slices(seconds, wall_secs);
    if plan.turn.is_some() {
        // Seconds of wall clock of which this target had its turns' share.
        let scale = wall_secs / secs;
        for iv in &mut intervals {
            iv.qps *= scale;
            iv.tps *= scale;
        }
    }
    let stalled = if paused {
        None
    } else {
        stall_in(&intervals, plan.rate)
    };
    let status = match (&status, stalled) {
        (StepStatus::Ok, Some(reason)) => StepStatus::Stalled { reason },
        _ => status,
    };
    // The rates count the events that started in the window; the drained ones are in the
    // latency only, or a backlog worked off after the window would read as throughput.
    let pacing = plan.rate.map(|target| {
        let achieved = events as f64 / secs;
        Pacing {
            target_per_s: target,
            achieved_per_s: achieved,
            sustained: achieved >= 0.95 * target,
            backlog: pace.backlog,
            intended: pace.intended,
            drained: pace.drained,
            not_executed: pace.not_executed,
            drain_secs: pace.drain.as_secs_f64(),
            warmup_backlog: pace.warmup_backlog,
            lag: summarize(&lag),
            service: summarize(&service),
        }
    });
    StepResult {
        schema: RESULT_SCHEMA,
        target: plan.target.clone(),
        step: plan.step.name.clone(),
        label: plan.step.label.clone(),
        order: plan.step.order,
        group: plan.step.group,
        kind,
        threads: plan.threads,
        status,
        started_unix,
        seconds: secs,
        warmup_secs: plan.warmup.as_secs_f64(),
        events,
        queries: counters.queries,
        reads: counters.reads,
        writes: counters.writes,
        others: counters.others,
        rows_returned: counters.rows,
        rows_affected: counters.affected,
        errors,
        failed_events: failed,
        error_codes: codes,
        busy_retries: busy,
        qps: counters.queries as f64 / secs,
        tps: events as f64 / secs,
        throughput,
        latency,
        intervals,
        // Per operation of the headline unit: statements, YCSB's operations, or
        // transactions (pgbench, TPC-C).
        client_cpu_us_per_op: {
            let ops = if plan.counts_operations() || plan.step.params.kind.counts_transactions() {
                events
            } else {
                counters.queries
            };
            cpu_used.filter(|_| ops > 0).map(|c| c * 1e6 / ops as f64)
        },
        os: None,
        costs: None,
        pacing,
        ibench: None,
        repeat: 0,
        connect: None,
        op_types: op_types.stats(secs),
        engine_stats: Default::default(),
        txn: plan.txn.is_set().then(|| TxnCounts {
            max_tries: plan.txn.max_tries,
            latency_limit_ms: plan.txn.latency_limit.map(|d| d.as_secs_f64() * 1000.0),
            poisson: plan.txn.poisson,
            retries: tally.retries,
            retried: tally.retried,
            late: tally.late,
            skipped: tally.skipped,
        }),
        workload_stats: Default::default(),
        actions: Vec::new(),
        turns: plan.turn.as_ref().map(|t| {
            let c = window.charge.unwrap_or_default();
            dbdelta_model::TurnsInfo {
                slice_ms: t.turns.slice().as_secs_f64() * 1000.0,
                targets: t.turns.targets() as u32,
                wall_secs,
                turn_secs: c.turns.as_secs_f64(),
                lost_secs: c.turns.saturating_sub(charged(c)).as_secs_f64(),
                waited_secs: window.waited.map(|w| w.as_secs_f64()),
                retries: 0,
            }
        }),
        resolved: None,
        extended_secs: window.extended.map(|d| d.as_secs_f64()),
        could_run: None,
        server_waits_read: None,
        segments: None,
    }
}

/// Whole seconds in a row with no completed operation that make a step stalled.
const STALL_SECONDS: usize = 2;

/// Why a step counts as stalled: `STALL_SECONDS` or more whole seconds in a row in which
/// nothing completed. Paced steps slower than 10 events/s may have such seconds by design.
fn stall_in(intervals: &[Interval], rate: Option<f64>) -> Option<String> {
    if rate.is_some_and(|r| r < 10.0) {
        return None;
    }
    let mut best: Option<(usize, usize)> = None;
    let mut run_start = None;
    for (i, iv) in intervals.iter().enumerate() {
        let whole = iv.t - i as f64 >= 0.999;
        if whole && iv.tps == 0.0 {
            let s = *run_start.get_or_insert(i);
            if best.is_none_or(|(a, b)| i + 1 - s > b - a) {
                best = Some((s, i + 1));
            }
        } else {
            run_start = None;
        }
    }
    let (a, b) = best.filter(|(a, b)| b - a >= STALL_SECONDS)?;
    Some(format!(
        "no operation completed for {} s (seconds {a} to {b} of the window)",
        b - a
    ))
}

/// Merges every worker's slices into one series: interval i covers [i, i+1) seconds of the
/// window (the last one is cut at the window's end).
fn merge_slices(slices: Vec<Slice>, window_secs: f64) -> Vec<Interval> {
    // The seconds are already merged across workers (second i at index i, possibly fewer
    // than the window when the last seconds saw nothing): read them as they are, without a
    // full-precision copy per second.
    let n = window_secs.ceil() as usize;
    let mut by_index: Vec<Option<Slice>> = (0..n).map(|_| None).collect();
    for s in slices {
        if let Some(slot) = by_index.get_mut(s.index) {
            *slot = Some(s);
        }
    }
    by_index
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let len = (window_secs - i as f64).clamp(1e-9, 1.0);
            let (events, queries, errors) = s
                .as_ref()
                .map_or((0, 0, 0), |s| (s.events, s.queries, s.errors));
            let q = |p: f64| match &s {
                Some(s) if !s.hist.is_empty() => s.hist.value_at_quantile(p) as f64 / 1000.0,
                _ => 0.0,
            };
            Interval {
                t: (i as f64 + len).min(window_secs),
                qps: queries as f64 / len,
                tps: events as f64 / len,
                p95_us: q(0.95),
                p99_us: q(0.99),
                p50_us: q(0.5),
                max_us: q(1.0),
                errors,
            }
        })
        .collect()
}
