//! One event-loop thread: many connections in session form, each running one terminal's
//! workload, driven by a level-triggered epoll. Closed loop or paced; statement timeouts
//! with a server-side cancel; stops within one poll interval of a stop request.

use super::epoll::{Epoll, Interest, Ready};
use crate::op_types::OpTypeRecorder;
use crate::recorder::Recorder;
use crate::schedule::{Pacer, Schedule, TxnPolicy, TxnTally, Window};
use crate::shared::{
    check_error_rate, count_code, ErrorCodes, Shared, WorkerOutput, ERROR_BUDGET_FLOOR,
    ERROR_BUDGET_PER_EVENT,
};
use dbdelta_engine::Rows;
use dbdelta_engine::{
    Canceller, Decoded, EngineError, ErrorKind, OpBatch, Outcome, Scratch, Session, SessionParts,
    Socket,
};
use dbdelta_stats::{new_histogram, record_ns};
use dbdelta_workload::rng::Rng;
use dbdelta_workload::{Counters, Workload};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{ErrorKind as IoKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a poll may sleep: bounds the reaction time to a stop request and the
/// granularity of timeout checks.
const POLL: Duration = Duration::from_millis(50);
/// First read buffer of a connection; grows for larger responses.
const READ_CHUNK: usize = 16 * 1024;
/// After a cancel was sent, how long the server has to answer before the connection is
/// declared stalled.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// One active connection handed to a loop: its socket, protocol state and terminal.
pub(crate) struct Terminal {
    pub socket: Socket,
    pub session: Box<dyn Session>,
    pub workload: Box<dyn Workload>,
}

/// Opens a new connection for a terminal whose connection dropped, prepares the terminal's
/// statements on it, and gives it back in session form.
pub(crate) type Reconnect<'a> =
    dyn Fn(&mut dyn Workload) -> Result<SessionParts, EngineError> + Sync + 'a;

/// Per-loop settings.
pub(crate) struct LoopConfig<'a> {
    /// When events start (closed loop, fixed or Poisson slots).
    pub schedule: Schedule,
    /// Re-runs, latency limit.
    pub txn: TxnPolicy,
    /// Seeds the loop's Poisson gaps.
    pub seed: u64,
    /// Cancel and fail an operation that runs longer than this; also bounds a paced
    /// step's drain after its window.
    pub statement_timeout: Duration,
    /// Largest share of failed (not retried) events before the step fails.
    pub max_error_rate: f64,
    /// How a dropped connection is replaced.
    pub reconnect: &'a Reconnect<'a>,
    /// Measured in turns with other targets: events start only in this target's turns.
    pub turn: Option<&'a crate::turns::Turn>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for its paced start (in the timer heap).
    Scheduled,
    /// An operation (or the rollback after an error) is outstanding.
    Waiting,
    /// Finished: the window ended.
    Done,
}

struct Conn {
    t: Terminal,
    transactional: bool,
    phase: Phase,
    ops: OpBatch,
    next_op: usize,
    /// Operations the workload produced for the event (before inspected results added more).
    first_len: usize,
    /// Re-runs of the event under way after serialization failures.
    retries: u32,
    /// The rollback under way precedes a re-run of the event.
    rerun: bool,
    /// The rows of the last inspected operation.
    rows: Rows,
    rolling_back: bool,
    /// Counters of the event under way.
    ev: Counters,
    intended: Instant,
    started: Instant,
    sent_at: Instant,
    cancel_sent: Option<Instant>,
    canceller: Option<Box<dyn Canceller>>,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rlen: usize,
    /// What epoll watches the socket for now (changed only when it must).
    interest: Interest,
    /// Its event counts in this target's turn (crate::turns) until it ends.
    in_turn: bool,
    /// Its event started past the window's end and ends a window no event had started in
    /// (crate::shared::Shared::stretch): it counts in the window.
    stretched: bool,
}

/// What the loop measured, or why the step must fail.
pub(crate) fn run_loop(
    terminals: Vec<Terminal>,
    cfg: &LoopConfig<'_>,
    shared: &Shared<'_>,
    live: &crate::shared::Padded,
    index: usize,
) -> Result<WorkerOutput, EngineError> {
    let mut ep = Epoll::new(terminals.len().min(1024))
        .map_err(|e| EngineError::connection(format!("epoll: {e}")))?;
    let mut conns: Vec<Conn> = Vec::with_capacity(terminals.len());
    for (i, t) in terminals.into_iter().enumerate() {
        t.socket
            .set_nonblocking(true)
            .map_err(|e| EngineError::connection(format!("non-blocking socket: {e}")))?;
        ep.add(t.socket.as_raw_fd(), i as u64, Interest::Read)
            .map_err(|e| EngineError::connection(format!("epoll add: {e}")))?;
        let now = Instant::now();
        conns.push(Conn {
            transactional: t.workload.uses_transactions(),
            canceller: t.session.canceller(),
            t,
            phase: Phase::Scheduled,
            ops: OpBatch::new(),
            next_op: 0,
            first_len: 0,
            retries: 0,
            rerun: false,
            rows: Rows::new(),
            rolling_back: false,
            ev: Counters::default(),
            intended: now,
            started: now,
            sent_at: now,
            cancel_sent: None,
            wbuf: Vec::new(),
            wpos: 0,
            rbuf: Vec::new(),
            rlen: 0,
            interest: Interest::Read,
            in_turn: false,
            stretched: false,
        });
    }
    if let Some(t) = cfg.turn {
        // Loop k of every target on one CPU: the turns then share that CPU's phases. The
        // loop is registered with the turns (crate::turns::Turns::register) only beside the
        // server threads serving its connections: the loop is one link of each
        // connection's chain, and its waits alone charged PostgreSQL targets 4x their own
        // windows' rates at a load of 12 (two_postgres_versions_compare).
        crate::turns::pin_worker(index);
        if shared.register_clients {
            t.turns.register(t.index, crate::cpu::gettid());
        }
    }
    shared.barrier.wait();
    let t0 = *shared.start.get().unwrap_or(&Instant::now());
    let window = Window::new(t0, shared.warmup, shared.window, cfg.statement_timeout);
    let pacer = Pacer::new(cfg.schedule, window, cfg.txn.latency_limit);
    let mut lp = Loop {
        cfg,
        shared,
        live,
        end: window.end,
        // A closed loop stops at the window's end; a paced one drains what was intended in
        // it.
        works_until: if cfg.schedule.paced() {
            pacer.works_until()
        } else {
            window.end
        },
        pacer,
        t0,
        rec: Recorder::new(t0 + shared.warmup, shared.recording.clone()),
        lag: new_histogram(),
        service: new_histogram(),
        counters: Counters::default(),
        events: 0,
        errors: 0,
        failed: 0,
        codes: ErrorCodes::new(),
        op_types: OpTypeRecorder::default(),
        timers: BinaryHeap::new(),
        scratch: Scratch::default(),
        done: 0,
        tally: TxnTally::default(),
        rng: Rng::new(cfg.seed, 0x5C4E_D100 ^ index as u64),
        paused: false,
        parked: Vec::new(),
        turn_again: None,
    };
    for i in 0..conns.len() {
        lp.schedule(&mut conns, i)?;
        lp.flush(&mut conns, &ep, i)?;
    }
    let mut last_check = Instant::now();
    let mut ready: Vec<Ready> = Vec::with_capacity(1024);
    while lp.done < conns.len() {
        if shared.stop.requested() || shared.abort.load(Ordering::Relaxed) {
            break;
        }
        let now = Instant::now();
        let wait = lp
            .timers
            .peek()
            .map(|Reverse((at, _))| at)
            .into_iter()
            .chain(&lp.turn_again)
            .min()
            .map_or(POLL, |at| at.saturating_duration_since(now))
            .min(POLL);
        ready.clear();
        ep.wait(wait, |r| ready.push(r))
            .map_err(|e| EngineError::connection(format!("epoll wait: {e}")))?;
        for &r in &ready {
            let i = r.token as usize;
            let mut served = Ok(());
            if r.writable {
                served = lp.flush(&mut conns, &ep, i);
            }
            if r.readable && served.is_ok() {
                served = lp.on_readable(&mut conns, &ep, i);
            }
            match served {
                Err(e) if e.kind == ErrorKind::Connection && conns[i].phase != Phase::Done => {
                    lp.replace_connection(&mut conns, &mut ep, i, e)?;
                }
                other => other?,
            }
        }
        lp.fire_timers(&mut conns, &ep)?;
        lp.unpark(&mut conns, &ep)?;
        let now = Instant::now();
        if now - last_check >= POLL {
            last_check = now;
            lp.check_timeouts(&mut conns, now)?;
        }
    }
    // Events cut short by a stop or an error no longer hold this target's turn.
    for i in 0..conns.len() {
        lp.release_turn(&mut conns, i);
    }
    lp.rec.finish();
    // Counted terminals (pgbench's -t) that all did their share end the step early: its
    // window is that long.
    let all_finished = conns.iter().all(|c| c.t.workload.finished());
    Ok(WorkerOutput {
        counters: lp.counters,
        events: lp.events,
        errors: lp.errors,
        busy: 0,
        failed: lp.failed,
        codes: lp.codes,
        lag: lp.lag,
        service: lp.service,
        op_types: lp.op_types,
        done_at: all_finished.then(Instant::now),
        background: false,
        txn: lp.tally,
        paused: lp.paused,
        pace: lp.pacer.tally,
    })
}

struct Loop<'a, 's> {
    cfg: &'a LoopConfig<'a>,
    shared: &'a Shared<'s>,
    live: &'a crate::shared::Padded,
    t0: Instant,
    end: Instant,
    /// Past this a dropped connection is not replaced: the window's end, or for paced
    /// steps the drain's limit.
    works_until: Instant,
    /// Paced steps: the slots, and the backlogs at the window's edges.
    pacer: Pacer,
    rec: Recorder,
    lag: hdrhistogram::Histogram<u64>,
    service: hdrhistogram::Histogram<u64>,
    counters: Counters,
    events: u64,
    errors: u64,
    /// Events that failed and were not retried.
    failed: u64,
    codes: ErrorCodes,
    op_types: OpTypeRecorder,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    scratch: Scratch,
    /// Connections whose terminal has finished.
    done: usize,
    tally: TxnTally,
    /// Draws the Poisson gaps of the loop's slots.
    rng: Rng,
    /// A terminal waited between events by design.
    paused: bool,
    /// Connections whose event waits for this target's turn.
    parked: Vec<usize>,
    /// When to ask for the turn again.
    turn_again: Option<Instant>,
}

impl Loop<'_, '_> {
    /// Decides when connection `i` starts its next event: now (closed loop), at its paced
    /// slot, or never (the window is over; for paced steps: the slots intended in it are
    /// all taken, or the drain is out of time).
    fn schedule(&mut self, conns: &mut [Conn], i: usize) -> Result<(), EngineError> {
        // Its previous event (if any) is over.
        self.release_turn(conns, i);
        let now = Instant::now();
        if let (Some(t), true) = (self.cfg.turn, conns[i].stretched) {
            // The event that ended a window no event had started in: in turns, the target's
            // window holds the turn it ran in.
            t.turns.extend(t.index, now);
        }
        let paced = self.cfg.schedule.paced();
        if paced {
            self.pacer.ended(now);
        }
        if conns[i].t.workload.finished() {
            return self.retire(conns, i);
        }
        let at = if paced {
            let next = self
                .pacer
                .next(&self.shared.slots, &mut self.rng, &mut self.tally.skipped);
            match next {
                Some(at) => at,
                None => return self.retire(conns, i),
            }
        } else {
            // A terminal that waits between events (TPC-C's keying and think times).
            let pause = conns[i].t.workload.pause();
            self.paused |= !pause.is_zero();
            let at = now.max(self.t0) + pause;
            if (at >= self.end || now >= self.end) && !self.may_stretch(at) {
                return self.retire(conns, i);
            }
            at
        };
        conns[i].intended = at;
        if at > now {
            conns[i].phase = Phase::Scheduled;
            self.timers.push(Reverse((at, i)));
            Ok(())
        } else {
            self.begin(conns, i, now)
        }
    }

    /// Connection `i`'s event no longer counts in this target's turn.
    fn release_turn(&mut self, conns: &mut [Conn], i: usize) {
        if let (Some(t), true) = (self.cfg.turn, conns[i].in_turn) {
            conns[i].in_turn = false;
            t.turns.end_event(t.index);
        }
    }

    /// Starts the parked connections' events once this target's turn is on; the first one
    /// the turn refuses goes back on top and the rest wait with it (one look per wake-up,
    /// not one per connection).
    fn unpark(&mut self, conns: &mut [Conn], ep: &Epoll) -> Result<(), EngineError> {
        let now = Instant::now();
        if self.turn_again.is_some_and(|at| now < at) {
            return Ok(());
        }
        self.turn_again = None;
        while let Some(i) = self.parked.pop() {
            if now >= self.end && !self.may_stretch(now) {
                self.retire(conns, i)?;
                continue;
            }
            self.begin(conns, i, now)?;
            if self.parked.last() == Some(&i) {
                break;
            }
            self.flush(conns, ep, i)?;
        }
        Ok(())
    }

    /// Connection `i` has nothing more to run.
    fn retire(&mut self, conns: &mut [Conn], i: usize) -> Result<(), EngineError> {
        self.release_turn(conns, i);
        conns[i].phase = Phase::Done;
        self.done += 1;
        Ok(())
    }

    /// Starts connection `i`'s event, due at `now`, unless a paced step's drain is out of
    /// time (then the connection is done).
    fn begin(&mut self, conns: &mut [Conn], i: usize, now: Instant) -> Result<(), EngineError> {
        if self.cfg.schedule.paced()
            && !self.pacer.start(conns[i].intended, now, &self.shared.slots)
        {
            return self.retire(conns, i);
        }
        if let (Some(t), false) = (self.cfg.turn, conns[i].in_turn) {
            match t.turns.try_begin(t.index, now) {
                Ok(()) => conns[i].in_turn = true,
                Err(again) => {
                    // Not this target's turn: the event starts when it is.
                    conns[i].phase = Phase::Scheduled;
                    conns[i].intended = again;
                    self.parked.push(i);
                    self.turn_again = Some(self.turn_again.map_or(again, |t| t.min(again)));
                    return Ok(());
                }
            }
            // Its intended start is when its turn let it start (closed loop).
            conns[i].intended = now;
        }
        if !self.cfg.schedule.paced() && now >= self.end {
            // Past the end only to end a window no event started in: the first such event
            // is the window's, the others are not run.
            let (t0, timeout) = (self.t0, self.cfg.statement_timeout);
            if !self
                .shared
                .stretch(t0, self.end, now, timeout, self.cfg.turn)
            {
                return self.retire(conns, i);
            }
            conns[i].stretched = true;
        }
        self.shared.event_started(now, self.t0 + self.shared.warmup);
        self.start_event(conns, i, now)
    }

    /// True while a closed loop may still start an event at `at`, past the window's end:
    /// no event started in the window yet (crate::shared::Shared::may_stretch).
    fn may_stretch(&self, at: Instant) -> bool {
        !self.cfg.schedule.paced()
            && self
                .shared
                .may_stretch(self.end, at, self.cfg.statement_timeout)
    }

    fn fire_timers(&mut self, conns: &mut [Conn], ep: &Epoll) -> Result<(), EngineError> {
        let now = Instant::now();
        while let Some(Reverse((at, i))) = self.timers.peek().copied() {
            if at > now {
                break;
            }
            self.timers.pop();
            let now = Instant::now();
            // A closed loop's pause that ends past the window: no event (unless it ends a
            // window no event started in). A paced slot is intended before the window's
            // end and runs even when it fires after it.
            if now >= self.end && !self.cfg.schedule.paced() && !self.may_stretch(now) {
                self.retire(conns, i)?;
                continue;
            }
            self.begin(conns, i, now)?;
            self.flush(conns, ep, i)?;
        }
        Ok(())
    }

    /// Starts connection `i`'s next event at `now`.
    fn start_event(
        &mut self,
        conns: &mut [Conn],
        i: usize,
        now: Instant,
    ) -> Result<(), EngineError> {
        let c = &mut conns[i];
        c.ops.clear();
        c.t.workload.next_event(&mut c.ops)?;
        c.first_len = c.ops.len();
        c.retries = 0;
        c.next_op = 0;
        c.ev = Counters::default();
        c.started = now;
        self.send_next(conns, i)
    }

    /// Encodes the connection's next operation and writes as much as the socket takes.
    fn send_next(&mut self, conns: &mut [Conn], i: usize) -> Result<(), EngineError> {
        let c = &mut conns[i];
        c.wbuf.clear();
        c.wpos = 0;
        let (session, wbuf) = (&mut c.t.session, &mut c.wbuf);
        if c.ops.inspects(c.next_op) {
            session.capture_next()?;
        }
        c.ops
            .with_op(c.next_op, &mut self.scratch, |op| session.encode(&op, wbuf))?;
        c.phase = Phase::Waiting;
        c.sent_at = Instant::now();
        c.cancel_sent = None;
        write_some(c)
    }

    fn flush(&mut self, conns: &mut [Conn], ep: &Epoll, i: usize) -> Result<(), EngineError> {
        let c = &mut conns[i];
        if c.wpos < c.wbuf.len() {
            write_some(c)?;
        }
        let want = if c.wpos < c.wbuf.len() {
            Interest::ReadWrite
        } else {
            Interest::Read
        };
        if want == c.interest {
            return Ok(());
        }
        c.interest = want;
        ep.modify(c.t.socket.as_raw_fd(), i as u64, want)
            .map_err(|e| EngineError::connection(format!("epoll modify: {e}")))
    }

    fn on_readable(&mut self, conns: &mut [Conn], ep: &Epoll, i: usize) -> Result<(), EngineError> {
        let c = &mut conns[i];
        if c.rbuf.len() - c.rlen < READ_CHUNK / 4 {
            let grow = c.rbuf.len().max(READ_CHUNK);
            c.rbuf.resize(c.rbuf.len() + grow, 0);
        }
        match c.t.socket.read(&mut c.rbuf[c.rlen..]) {
            Ok(0) => {
                return Err(EngineError::connection(
                    "the server closed the connection during the step",
                ))
            }
            Ok(n) => c.rlen += n,
            Err(e) if e.kind() == IoKind::WouldBlock || e.kind() == IoKind::Interrupted => {
                return Ok(())
            }
            Err(e) => return Err(EngineError::connection(format!("read: {e}"))),
        }
        loop {
            let c = &mut conns[i];
            if c.phase != Phase::Waiting {
                if c.rlen > 0 {
                    return Err(EngineError::connection(
                        "the server sent data with no request outstanding",
                    ));
                }
                return Ok(());
            }
            let decoded = c.t.session.decode(&c.rbuf[..c.rlen])?;
            let (consumed, result) = match decoded {
                Decoded::Partial { consumed } => (consumed, None),
                Decoded::Complete { consumed, result } => (consumed, Some(result)),
            };
            c.rbuf.copy_within(consumed..c.rlen, 0);
            c.rlen -= consumed;
            match result {
                None => {
                    // A request the response needs first (a MongoDB getMore).
                    let c = &mut conns[i];
                    if c.wpos == c.wbuf.len() {
                        c.wbuf.clear();
                        c.wpos = 0;
                    }
                    if c.t.session.follow_up(&mut c.wbuf) {
                        self.flush(conns, ep, i)?;
                    }
                    return Ok(());
                }
                Some(result) => {
                    self.on_complete(conns, i, result)?;
                    self.flush(conns, ep, i)?;
                    if conns[i].rlen == 0 {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn on_complete(
        &mut self,
        conns: &mut [Conn],
        i: usize,
        result: Result<Outcome, EngineError>,
    ) -> Result<(), EngineError> {
        let c = &mut conns[i];
        if c.cancel_sent.is_some() {
            return Err(timeout_error(self.cfg.statement_timeout, true));
        }
        let mut counts = self.pacer.counts(c.intended, c.started);
        if c.stretched {
            counts.rate = true;
            counts.latency = true;
        }
        if c.rolling_back {
            c.rolling_back = false;
            if std::mem::take(&mut c.rerun) {
                // The same transaction again, from its first operation, same inputs.
                c.retries += 1;
                c.ops.truncate(c.first_len);
                c.t.workload.restart_event();
                c.next_op = 0;
                return self.send_next(conns, i);
            }
            return self.schedule(conns, i);
        }
        let result = match result {
            Ok(o) if c.ops.inspects(c.next_op) => {
                c.t.session.take_rows(&mut c.rows);
                c.t.workload
                    .inspect(c.next_op, &o, &c.rows, &mut c.ops)
                    .map(|()| o)
            }
            other => other,
        };
        match result {
            Err(e) if e.is_serialization() && c.retries + 1 < self.cfg.txn.max_tries => {
                c.rerun = true;
                start_rollback(c)
            }
            Ok(o) => {
                c.ev.add(o);
                c.next_op += 1;
                if c.next_op < c.ops.len() {
                    return self.send_next(conns, i);
                }
                let done = Instant::now();
                self.live.add(c.ev.queries);
                c.t.workload.event_done();
                let took = done - c.intended;
                if counts.rate {
                    self.counters.merge(&c.ev);
                    self.events += 1;
                }
                match (counts.rate, counts.latency) {
                    (true, true) => {
                        self.rec.event(done, took, c.ev.queries);
                        self.op_types.completed(&*c.t.workload, took);
                    }
                    // Intended in the warm-up, run in the window (its backlog).
                    (true, false) => {
                        self.rec.ran(done, c.ev.queries);
                        self.op_types.ran(&*c.t.workload);
                    }
                    // Intended in the window, run after it (the drain).
                    (false, true) => {
                        self.pacer.tally.drained += 1;
                        self.rec.drained(took);
                        self.op_types.drained(&*c.t.workload, took);
                    }
                    (false, false) => {}
                }
                if counts.latency {
                    self.tally
                        .completed(c.retries, took, self.cfg.txn.latency_limit);
                    if self.cfg.schedule.paced() {
                        record_ns(&mut self.lag, (c.started - c.intended).as_nanos() as u64);
                        record_ns(&mut self.service, (done - c.started).as_nanos() as u64);
                    }
                }
                self.schedule(conns, i)
            }
            Err(e) if e.is_retryable() && !self.cfg.txn.failures_count => {
                c.t.workload.event_done();
                self.live.add(c.ev.queries);
                // Statements run before an error count too, as in sysbench.
                if counts.rate {
                    self.counters.merge(&c.ev);
                }
                if counts.any() {
                    self.errors += 1;
                    self.rec.error(c.started);
                    if self.errors > ERROR_BUDGET_FLOOR + ERROR_BUDGET_PER_EVENT * self.events {
                        return Err(EngineError::statement(format!(
                            "error budget exceeded: {} retried errors for {} events; last: {e}",
                            self.errors, self.events
                        )));
                    }
                }
                if c.transactional {
                    return start_rollback(c);
                }
                self.schedule(conns, i)
            }
            // A failed statement costs the event, not the step (see --max-error-rate).
            Err(e) if e.kind == ErrorKind::Statement || e.is_retryable() => {
                self.live.add(c.ev.queries);
                c.t.workload.event_done();
                if counts.rate {
                    self.counters.merge(&c.ev);
                }
                if counts.any() {
                    self.failed += 1;
                    self.op_types.failed(&*c.t.workload);
                    count_code(&mut self.codes, &e);
                    self.rec.error(c.started);
                    check_error_rate(self.failed, self.events, self.cfg.max_error_rate, &e)?;
                }
                if c.transactional {
                    return start_rollback(c);
                }
                self.schedule(conns, i)
            }
            Err(e) => Err(e),
        }
    }

    /// Replaces connection `i`, which dropped (`cause`): the event under way counts as
    /// failed, a new connection is opened with the terminal's statements prepared (on this
    /// loop's thread: connects on loopback take milliseconds), and the terminal goes on.
    fn replace_connection(
        &mut self,
        conns: &mut [Conn],
        ep: &mut Epoll,
        i: usize,
        cause: EngineError,
    ) -> Result<(), EngineError> {
        let c = &mut conns[i];
        if self.pacer.counts(c.intended, c.started).any() && c.phase == Phase::Waiting {
            self.failed += 1;
            count_code(&mut self.codes, &cause);
            self.rec.error(c.started);
            check_error_rate(self.failed, self.events, self.cfg.max_error_rate, &cause)?;
        }
        let _ = ep.delete(c.t.socket.as_raw_fd());
        let parts = loop {
            match (self.cfg.reconnect)(&mut *c.t.workload) {
                Ok(p) => break p,
                Err(e)
                    if Instant::now() + Duration::from_millis(100) >= self.works_until
                        || self.shared.stop.requested() =>
                {
                    return Err(EngineError::connection(format!(
                        "the connection dropped ({cause}) and reconnecting failed: {e}"
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        parts
            .socket
            .set_nonblocking(true)
            .map_err(|e| EngineError::connection(format!("non-blocking socket: {e}")))?;
        c.t.socket = parts.socket;
        c.t.session = parts.session;
        c.canceller = c.t.session.canceller();
        c.cancel_sent = None;
        c.rolling_back = false;
        c.wbuf.clear();
        c.wpos = 0;
        c.rlen = 0;
        c.interest = Interest::Read;
        ep.add(c.t.socket.as_raw_fd(), i as u64, Interest::Read)
            .map_err(|e| EngineError::connection(format!("epoll add: {e}")))?;
        self.schedule(conns, i)?;
        self.flush(conns, ep, i)
    }

    /// Cancels operations past the statement timeout; fails the step when a cancelled one
    /// does not end within the grace period (the server is stalled).
    fn check_timeouts(&mut self, conns: &mut [Conn], now: Instant) -> Result<(), EngineError> {
        let limit = self.cfg.statement_timeout;
        for c in conns.iter_mut().filter(|c| c.phase == Phase::Waiting) {
            match c.cancel_sent {
                None if now - c.sent_at > limit => {
                    c.cancel_sent = Some(now);
                    if let Some(k) = c.canceller.take() {
                        // Cancelling opens a side connection: never on the loop thread.
                        std::thread::spawn(move || {
                            let _ = k.cancel();
                        });
                    }
                }
                Some(at) if now - at > CANCEL_GRACE => {
                    return Err(timeout_error(limit, false));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn timeout_error(limit: Duration, answered: bool) -> EngineError {
    let what = if answered {
        "it was cancelled on the server"
    } else {
        "the server did not answer the cancel either (stalled)"
    };
    EngineError::new(
        ErrorKind::Timeout,
        format!(
            "timeout: an operation ran longer than the statement timeout of {:.1} s and {what}; \
             raise --statement-timeout if such operations are expected",
            limit.as_secs_f64()
        ),
    )
}

/// Rolls back the failed event's transaction; the next event starts when it completes.
fn start_rollback(c: &mut Conn) -> Result<(), EngineError> {
    c.rolling_back = true;
    c.wbuf.clear();
    c.wpos = 0;
    c.t.session.encode_rollback(&mut c.wbuf)?;
    c.sent_at = Instant::now();
    write_some(c)
}

/// Writes what the socket takes now; the rest goes when it reports writable.
fn write_some(c: &mut Conn) -> Result<(), EngineError> {
    while c.wpos < c.wbuf.len() {
        match c.t.socket.write(&c.wbuf[c.wpos..]) {
            Ok(0) => return Err(EngineError::connection("write: the connection is closed")),
            Ok(n) => c.wpos += n,
            Err(e) if e.kind() == IoKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == IoKind::Interrupted => {}
            Err(e) => return Err(EngineError::connection(format!("write: {e}"))),
        }
    }
    Ok(())
}
