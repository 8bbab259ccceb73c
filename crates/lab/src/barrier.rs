//! A coordinated start without a coordinator: the segments of one run meet at a barrier kept
//! in the target database itself ([`crate::barrier_sql`]). Each segment joins with its
//! plan (a mismatch is refused with the difference named), keeps a heartbeat while it runs,
//! and at each load, settle point and window writes a row and reads the others'. A
//! window starts at one wall-clock time chosen from the segments' arrivals once every
//! live segment is there; a segment whose heartbeat stops is named in every result it
//! missed, so a merge never passes fewer segments off as the whole.

use crate::barrier_sql::{unix_us, Mark, Row, Store};
use dbdelta_engine::{Connection, EngineError};
use dbdelta_model::{Segment, SegmentWindow};
use dbdelta_runner::segment::{Meeting, SegmentSync, SyncError};
use dbdelta_runner::{Progress, StopFlag};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting segment reads the barrier.
const POLL: Duration = Duration::from_millis(100);
/// How often a segment's heartbeat is written.
const BEAT: Duration = Duration::from_secs(1);
/// A segment not heard of for this long has died.
const DEAD_US: i64 = 10_000_000;
/// A window starts this long after the last segment arrived, so that every segment (each
/// reading the barrier every [`POLL`]) sees the start before it comes.
const START_LEAD_US: i64 = 1_000_000;
/// How long a segment waits for the others to join.
const JOIN_WAIT: Duration = Duration::from_secs(600);

/// Why a segment could not join its run.
#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    /// The barrier's table could not be created, read or written.
    #[error("the segment barrier in the target database failed")]
    Store(#[source] EngineError),
    /// Another segment runs another plan.
    #[error(
        "segment {other} runs another plan than this segment {this}: {difference}; start every \
         segment with the same flags (only --segment differs)"
    )]
    PlanMismatch {
        /// This segment.
        this: u32,
        /// The segment with the other plan.
        other: u32,
        /// The first differences, named.
        difference: String,
    },
    /// The others did not join in time.
    #[error("segment(s) {missing} of {count} did not join run '{run}' within {secs} s: start them with --segment K/{count} and the same flags")]
    Timeout {
        /// The run's name.
        run: String,
        /// Segments that did not come.
        missing: String,
        /// Segments of the run.
        count: u32,
        /// How long this one waited.
        secs: u64,
    },
    /// A stop was requested while waiting.
    #[error("stopped while waiting for the other segments to join")]
    Stopped,
}

/// Who this segment is at the barrier.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The segment.
    pub segment: Segment,
    /// The run's name (`--segment-run`): segments with the same name meet.
    pub run: String,
    /// This host's name.
    pub host: String,
    /// The plan every segment must share, as JSON.
    pub plan: serde_json::Value,
}

/// The state the barrier keeps between points.
struct State {
    store: Store,
    /// The point the next call reaches.
    point: u32,
    /// Each other segment's session as it joined.
    sessions: BTreeMap<u32, i64>,
}

/// A segment's place at its run's barrier; leaves the run when dropped.
pub struct Barrier {
    id: Identity,
    session: i64,
    state: Mutex<State>,
    beating: Arc<AtomicBool>,
    heart: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier")
            .field("segment", &self.id.segment)
            .field("run", &self.id.run)
            .finish()
    }
}

impl Barrier {
    /// Joins the run: writes this segment's join row, starts its heartbeat (on `beat`, a
    /// connection of its own) and waits until every segment joined with the same plan.
    pub fn join(
        conn: Box<dyn Connection>,
        beat: Box<dyn Connection>,
        id: Identity,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<Barrier, BarrierError> {
        let mut store = Store::open(conn).map_err(BarrierError::Store)?;
        let mut beat = Store::open(beat).map_err(BarrierError::Store)?;
        let session = session_number();
        let k = id.segment.index;
        store.clear(&id.run, k).map_err(BarrierError::Store)?;
        let offset = store.offset_us().map_err(BarrierError::Store)?;
        let plan = id.plan.to_string();
        store
            .mark(&Mark {
                run: &id.run,
                segment: k,
                point: 0,
                what: "join",
                session,
                host: &id.host,
                at_us: unix_us(),
                offset_us: offset,
                state: "joined",
                value: &plan,
            })
            .map_err(BarrierError::Store)?;
        let beating = Arc::new(AtomicBool::new(true));
        let heart = {
            let (beating, run) = (beating.clone(), id.run.clone());
            std::thread::Builder::new()
                .name("dbdelta-segment-beat".into())
                .spawn(move || {
                    while beating.load(Ordering::SeqCst) {
                        let _ = beat.beat(&run, k, session);
                        let until = Instant::now() + BEAT;
                        while beating.load(Ordering::SeqCst) && Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                    let _ = beat.leave(&run, k, session);
                })
                .ok()
        };
        let mut barrier = Barrier {
            id,
            session,
            state: Mutex::new(State {
                store,
                point: 1,
                sessions: BTreeMap::new(),
            }),
            beating,
            heart,
        };
        barrier.wait_for_joins(stop, progress)?;
        Ok(barrier)
    }

    fn wait_for_joins(
        &mut self,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<(), BarrierError> {
        let started = Instant::now();
        let mut told = false;
        let count = self.id.segment.count;
        let this = self.id.segment.index;
        loop {
            let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
            let joins = state
                .store
                .joins(&self.id.run)
                .map_err(BarrierError::Store)?;
            let live: Vec<&Row> = joins
                .iter()
                .filter(|r| r.state == "joined" && r.age_us < DEAD_US && r.segment <= count)
                .collect();
            // A segment that refused this plan left at once: its row still names its plan.
            for r in joins
                .iter()
                .filter(|r| r.age_us < DEAD_US && r.segment <= count)
            {
                if r.segment == this {
                    continue;
                }
                let theirs: serde_json::Value =
                    serde_json::from_str(&r.value).unwrap_or(serde_json::Value::Null);
                if theirs != self.id.plan {
                    return Err(BarrierError::PlanMismatch {
                        this,
                        other: r.segment,
                        difference: crate::plan_diff::plan_difference(&self.id.plan, &theirs),
                    });
                }
            }
            let missing: Vec<u32> = (1..=count)
                .filter(|k| !live.iter().any(|r| r.segment == *k))
                .collect();
            if missing.is_empty() {
                state.sessions = live.iter().map(|r| (r.segment, r.session)).collect();
                return Ok(());
            }
            if stop.requested() {
                return Err(BarrierError::Stopped);
            }
            if started.elapsed() > JOIN_WAIT {
                return Err(BarrierError::Timeout {
                    run: self.id.run.clone(),
                    missing: list(&missing),
                    count,
                    secs: JOIN_WAIT.as_secs(),
                });
            }
            if !told {
                told = true;
                progress.message(&format!(
                    "segment {}: waiting for segment(s) {} to join run '{}'",
                    self.id.segment,
                    list(&missing),
                    self.id.run
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Writes this segment's row at the next point; the point's number.
    fn arrive(
        &self,
        state: &mut State,
        what: &str,
        row_state: &str,
        value: &str,
    ) -> Result<(u32, i64), SyncError> {
        let point = state.point;
        state.point += 1;
        let offset = state.store.offset_us().map_err(store_err)?;
        state
            .store
            .mark(&Mark {
                run: &self.id.run,
                segment: self.id.segment.index,
                point,
                what,
                session: self.session,
                host: &self.id.host,
                at_us: unix_us(),
                offset_us: offset,
                state: row_state,
                value,
            })
            .map_err(store_err)?;
        Ok((point, offset))
    }

    /// Waits until every live segment wrote its row at `point` (or, with `only`, that one
    /// segment did); the rows there and the segments that died without one.
    fn gather(
        &self,
        state: &mut State,
        point: u32,
        what: &str,
        only: Option<u32>,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<(Vec<Row>, Vec<u32>), SyncError> {
        let mut told = Instant::now();
        loop {
            let joins = state.store.joins(&self.id.run).map_err(store_err)?;
            let rows: Vec<Row> = state
                .store
                .at(&self.id.run, point)
                .map_err(store_err)?
                .into_iter()
                .filter(|r| {
                    r.segment == self.id.segment.index
                        || state.sessions.get(&r.segment) == Some(&r.session)
                })
                .collect();
            if let Some(r) = rows.iter().find(|r| r.what != what) {
                return Err(SyncError::Diverged(format!(
                    "segment {} is at '{}' where segment {} is at '{what}' (point {point}): the \
                     segments' runs went apart",
                    r.segment, r.what, self.id.segment.index
                )));
            }
            let mut waiting = Vec::new();
            let mut gone = Vec::new();
            for k in 1..=self.id.segment.count {
                if only.is_some_and(|o| o != k) || rows.iter().any(|r| r.segment == k) {
                    continue;
                }
                if self.alive(state, &joins, k) {
                    waiting.push(k);
                } else {
                    gone.push(k);
                }
            }
            if waiting.is_empty() {
                return Ok((rows, gone));
            }
            if stop.requested() {
                return Err(SyncError::Stopped);
            }
            if told.elapsed() >= Duration::from_secs(5) {
                told = Instant::now();
                progress.message(&format!(
                    "segment {}: waiting at '{what}' for segment(s) {}",
                    self.id.segment,
                    list(&waiting)
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Segment `k` still runs this run: its join row is the one it joined with, it has not
    /// left, and its heartbeat is recent.
    fn alive(&self, state: &State, joins: &[Row], k: u32) -> bool {
        if k == self.id.segment.index {
            return true;
        }
        joins.iter().any(|r| {
            r.segment == k
                && state.sessions.get(&k) == Some(&r.session)
                && r.state == "joined"
                && r.age_us < DEAD_US
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SegmentSync for Barrier {
    fn segment(&self) -> Segment {
        self.id.segment
    }

    fn lead(&self, what: &str, outcome: Result<(), String>) -> Result<(), SyncError> {
        let mut state = self.lock();
        let value = match &outcome {
            Ok(()) => String::new(),
            Err(why) => why.clone(),
        };
        let row_state = if outcome.is_ok() { "lead" } else { "failed" };
        self.arrive(&mut state, what, row_state, &value).map(|_| ())
    }

    fn follow(
        &self,
        what: &str,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<Result<(), String>, SyncError> {
        let mut state = self.lock();
        let (point, _) = self.arrive(&mut state, what, "follow", "")?;
        let (rows, gone) = self.gather(&mut state, point, what, Some(1), stop, progress)?;
        match rows.iter().find(|r| r.segment == 1) {
            Some(r) if r.state == "lead" => Ok(Ok(())),
            Some(r) => Ok(Err(r.value.clone())),
            None if !gone.is_empty() => Err(SyncError::LeaderGone(format!(
                "segment 1, which runs '{what}' for every segment, left the run before it \
                 (no heartbeat for {} s)",
                DEAD_US / 1_000_000
            ))),
            None => Err(SyncError::LeaderGone(format!(
                "segment 1 did not run '{what}'"
            ))),
        }
    }

    fn meet(
        &self,
        what: &str,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<Meeting, SyncError> {
        let what = format!("start of {what}");
        let mut state = self.lock();
        let (point, _) = self.arrive(&mut state, &what, "ready", "")?;
        let (rows, missing) = self.gather(&mut state, point, &what, None, stop, progress)?;
        drop(state);
        // Every segment computes the same start from the same rows: the last arrival (on
        // its own clock), plus time for everyone to read it.
        let start_us = rows.iter().map(|r| r.at_us).max().unwrap_or_else(unix_us) + START_LEAD_US;
        loop {
            let left = start_us - unix_us();
            if left <= 0 {
                break;
            }
            if stop.requested() {
                return Err(SyncError::Stopped);
            }
            std::thread::sleep(Duration::from_micros(left.min(50_000) as u64));
        }
        Ok(Meeting {
            start: Instant::now(),
            window: SegmentWindow {
                count: self.id.segment.count,
                index: Some(self.id.segment.index),
                start_unix: start_us as f64 / 1e6,
                clock_offsets_ms: rows
                    .iter()
                    .map(|r| (r.segment, r.offset_us as f64 / 1000.0))
                    .collect(),
                missing,
                ..SegmentWindow::default()
            },
        })
    }

    fn after(
        &self,
        what: &str,
        carry: u64,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<(u64, Vec<u32>), SyncError> {
        let what = format!("end of {what}");
        let mut state = self.lock();
        let (point, _) = self.arrive(&mut state, &what, "done", &carry.to_string())?;
        let (rows, gone) = self.gather(&mut state, point, &what, None, stop, progress)?;
        let most = rows
            .iter()
            .filter_map(|r| r.value.parse::<u64>().ok())
            .fold(carry, u64::max);
        Ok((most, gone))
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        self.beating.store(false, Ordering::SeqCst);
        if let Some(h) = self.heart.take() {
            let _ = h.join();
        }
    }
}

fn store_err(e: EngineError) -> SyncError {
    SyncError::Barrier(Box::new(e))
}

/// `2, 3`.
fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// A random number telling this process's rows from an earlier process's of the same
/// segment.
fn session_number() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::process::id() as u128 ^ unix_us() as u128);
    (h.finish() >> 1) as i64
}
