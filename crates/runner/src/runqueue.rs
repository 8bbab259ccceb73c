//! How long a thread was ready to run but waited for a CPU (the kernel's per-thread
//! scheduler statistics, `/proc/self/task/TID/schedstat`), and what of a turn that leaves
//! to its owner: the time taken away by other processes on a busy host is not charged.
//!
//! `schedstat` holds three numbers (Linux's Documentation/scheduler/sched-stats.rst): time
//! spent on the CPU, time spent waiting on a run queue (runnable, not running), both in
//! nanoseconds, and the number of time slices run. Only the wait counts here: time a
//! worker sleeps (on a lock, on the server's answer, on an fsync) is the target's own time.
//!
//! A server target's work runs in two places, the client's threads and the server's
//! threads that serve its connections (read here too when the engine names them,
//! `dbdelta_engine::Connection::server_thread`); [`lost_in_chain`] says why their waits add.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

/// One thread's scheduler statistics, kept open so a reading is one `pread`.
#[derive(Debug)]
pub(crate) struct ThreadClock {
    file: File,
}

impl ThreadClock {
    /// The statistics of thread `tid` of this process; `None` when the kernel keeps none.
    pub(crate) fn open(tid: u32) -> Option<Self> {
        Self::open_path(&format!("/proc/self/task/{tid}/schedstat"))
    }

    /// The statistics of thread `tid` of another process `pid` on this host (a server's
    /// backend): readable by the same user, or by anyone where the kernel allows it.
    pub(crate) fn open_other(pid: u32, tid: u32) -> Option<Self> {
        Self::open_path(&format!("/proc/{pid}/task/{tid}/schedstat"))
    }

    fn open_path(path: &str) -> Option<Self> {
        let file = File::open(path).ok()?;
        let clock = ThreadClock { file };
        clock.wait_ns().map(|_| clock)
    }

    /// Nanoseconds the thread has waited on a run queue so far.
    pub(crate) fn wait_ns(&self) -> Option<u64> {
        let mut buf = [0u8; 96];
        let n = self.file.read_at(&mut buf, 0).ok()?;
        parse(std::str::from_utf8(&buf[..n]).ok()?).map(|(_, wait)| wait)
    }
}

/// The run time and run-queue wait (ns) of a `schedstat` line.
pub(crate) fn parse(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    let run = it.next()?.parse().ok()?;
    let wait = it.next()?.parse().ok()?;
    Some((run, wait))
}

/// What of a turn its owner could not run when its work passes through several stages in
/// series (`stages`: each stage's threads' waits, ns): a server target's client threads,
/// then the server threads that serve its connections. Each connection's work is a chain —
/// the client encodes and sends, the backend runs the statement, the client reads the
/// answer — and only one link of it runs at a time: while the backend works the client
/// sleeps on the socket (not runnable, so not waiting on a run queue) and the other way
/// round. A CPU wait in either link therefore delays the chain by its length, and the two
/// add up: what the target lost is the client side's mean wait plus the server side's,
/// clamped to the turn. The mean over all threads of both sides would halve it (a chain
/// of two links each waiting a quarter of the turn lost half of it, not a quarter). A
/// stage without readings adds nothing; an embedded engine has one stage (its workers).
/// An event loop serving several connections delays all of them while it waits, so its
/// wait counts once per chain, as a backend's does for its own connection: the mean over
/// the chains is the loops' mean plus the backends' mean. The kernel does not say who held
/// the CPU: with more runnable threads of the target itself than CPUs (many connections)
/// their waits for each other count too, as they do for an embedded engine's workers
/// (crate::measure caps what is taken off at three quarters of the turn).
///
/// With one stage (an embedded engine's workers) it is the mean over the workers of the
/// time each waited for a CPU during the turn (each at most the turn): a target with four
/// workers of which one waited the whole turn lost a quarter of it. Of it, the share inside
/// the measured window (`counted` of the turn) is returned.
pub(crate) fn lost_in_chain(turn: Duration, counted: Duration, stages: &[&[u64]]) -> Duration {
    if turn.is_zero() {
        return Duration::ZERO;
    }
    let turn_ns = turn.as_nanos() as f64;
    let lost: f64 = stages
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| w.iter().map(|&w| (w as f64).min(turn_ns)).sum::<f64>() / w.len() as f64)
        .sum();
    let share = (counted.as_secs_f64() / turn.as_secs_f64()).clamp(0.0, 1.0);
    Duration::from_nanos((lost.min(turn_ns) * share) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost_in_turn(turn: Duration, counted: Duration, waits: &[u64]) -> Duration {
        lost_in_chain(turn, counted, &[waits])
    }

    #[test]
    fn parses_the_kernel_line() {
        assert_eq!(
            parse("126076662 431069417 51\n"),
            Some((126076662, 431069417))
        );
        assert_eq!(parse("12"), None);
        assert_eq!(parse("a b c"), None);
    }

    #[test]
    fn a_turn_loses_the_mean_wait_of_its_workers_inside_the_window() {
        let ms = Duration::from_millis;
        // One worker that waited 3 ms of a 10 ms turn: 3 ms lost.
        assert_eq!(lost_in_turn(ms(10), ms(10), &[3_000_000]), ms(3));
        // Two workers, one waited 4 ms, one not at all: 2 ms.
        assert_eq!(lost_in_turn(ms(10), ms(10), &[4_000_000, 0]), ms(2));
        // A wait longer than the turn (it began before it) counts the turn at most.
        assert_eq!(lost_in_turn(ms(10), ms(10), &[25_000_000]), ms(10));
        // Half the turn inside the window: half of what was lost.
        assert_eq!(lost_in_turn(ms(10), ms(5), &[4_000_000]), ms(2));
        assert_eq!(lost_in_turn(ms(10), ms(10), &[]), Duration::ZERO);
        assert_eq!(lost_in_turn(Duration::ZERO, ms(1), &[5]), Duration::ZERO);
    }

    #[test]
    fn a_server_target_loses_the_client_mean_plus_the_server_mean() {
        let ms = Duration::from_millis;
        let ns = |m: u64| m * 1_000_000;
        // One loop that waited 2 ms, two backends that waited 4 and 0 ms: a chain delayed
        // 2 ms on the client and 2 ms (mean) on the server lost 4 ms.
        assert_eq!(
            lost_in_chain(ms(10), ms(10), &[&[ns(2)], &[ns(4), 0]]),
            ms(4)
        );
        // Not the mean over all three threads (2 ms).
        assert_ne!(
            lost_in_chain(ms(10), ms(10), &[&[ns(2)], &[ns(4), 0]]),
            ms(2)
        );
        // Both sides waiting most of the turn: at most the turn.
        assert_eq!(lost_in_chain(ms(10), ms(10), &[&[ns(8)], &[ns(7)]]), ms(10));
        // Half the turn inside the window: half of it.
        assert_eq!(lost_in_chain(ms(10), ms(5), &[&[ns(2)], &[ns(2)]]), ms(2));
        // A side without readings adds nothing; one stage is the embedded arithmetic.
        assert_eq!(lost_in_chain(ms(10), ms(10), &[&[ns(3)], &[]]), ms(3));
        assert_eq!(
            lost_in_chain(ms(10), ms(10), &[&[ns(4), 0]]),
            lost_in_turn(ms(10), ms(10), &[ns(4), 0])
        );
    }

    #[test]
    fn another_process_thread_is_read_like_ones_own() {
        let pid = std::process::id();
        let tid = crate::cpu::gettid();
        let (Some(own), Some(other)) = (ThreadClock::open(tid), ThreadClock::open_other(pid, tid))
        else {
            // No schedstat on this kernel: nothing to compare.
            return;
        };
        let (a, b) = (own.wait_ns(), other.wait_ns());
        assert!(a.is_some() && b >= a, "{a:?} then {b:?}");
        assert!(ThreadClock::open_other(pid, u32::MAX - 1).is_none());
    }

    #[test]
    fn a_busy_thread_beside_a_competitor_on_its_cpu_waits() {
        // Two threads spinning on one CPU: each waits for the other about as long as it
        // runs. The bound is wide: other processes share the CPU too.
        let _cpu = crate::turns::ONE_CPU
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let spin = || {
            crate::turns::pin_worker(0);
            let clock = ThreadClock::open(crate::cpu::gettid());
            let t = std::time::Instant::now();
            let w0 = clock.as_ref().and_then(ThreadClock::wait_ns);
            while t.elapsed() < Duration::from_millis(300) {}
            let w1 = clock.as_ref().and_then(ThreadClock::wait_ns);
            w0.zip(w1).map(|(a, b)| b.saturating_sub(a))
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(spin);
            let b = s.spawn(spin);
            (a.join().ok().flatten(), b.join().ok().flatten())
        });
        let (Some(a), Some(b)) = (a, b) else {
            // No schedstat on this kernel: nothing to check.
            return;
        };
        let waited = Duration::from_nanos(a.max(b));
        assert!(
            waited >= Duration::from_millis(60),
            "two spinners on one CPU: the longer wait was only {waited:?}"
        );
    }
}
