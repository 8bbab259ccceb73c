//! How long a thread was ready to run but waited for a CPU (the kernel's per-thread
//! scheduler statistics, `/proc/self/task/TID/schedstat`), and what of a turn that leaves
//! to its owner: the time taken away by other processes on a busy host is not charged.
//!
//! `schedstat` holds three numbers (Linux's Documentation/scheduler/sched-stats.rst): time
//! spent on the CPU, time spent waiting on a run queue (runnable, not running), both in
//! nanoseconds, and the number of time slices run. Only the wait counts here: time a
//! worker sleeps (on a lock, on the server's answer, on an fsync) is the target's own time.

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
        let file = File::open(format!("/proc/self/task/{tid}/schedstat")).ok()?;
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

/// What of a turn of length `turn` its owner could not run: the mean over its workers of
/// the time each waited for a CPU during the turn (`waits`, ns; each at most the turn), of
/// which the share inside the measured window (`counted` of the turn) is returned. A
/// target with four workers of which one waited the whole turn lost a quarter of it.
pub(crate) fn lost_in_turn(turn: Duration, counted: Duration, waits: &[u64]) -> Duration {
    if waits.is_empty() || turn.is_zero() {
        return Duration::ZERO;
    }
    let turn_ns = turn.as_nanos() as f64;
    let mean = waits.iter().map(|&w| (w as f64).min(turn_ns)).sum::<f64>() / waits.len() as f64;
    let share = (counted.as_secs_f64() / turn.as_secs_f64()).clamp(0.0, 1.0);
    Duration::from_nanos((mean * share) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
