//! Interrupting a run: SIGINT (Ctrl-C) and SIGTERM end it within about a second, in any
//! phase, with the report of what finished. The binary installs the signal handler and
//! hands each signal to [`on_signal`].
//!
//! The first signal sets the stop flag, which the runner checks between events, and starts a
//! deadline. Most phases wind down well inside it. Those that cannot — a bulk load or index
//! build inside one server statement, a settle, a server that stopped answering — are cut when
//! the deadline passes: the registered closer marks the run directory interrupted and writes
//! the reports, then the process exits with 130 (SIGINT) or 143 (SIGTERM). Managed servers
//! still up are stopped first ([`dbdelta_kit::running::stop_all`]: their fast shutdown, then
//! SIGKILL to their process groups), and would die with dbdelta anyway (`PR_SET_PDEATHSIG`
//! with their fast-shutdown signal); one frozen with SIGSTOP is sent SIGCONT so it can.
//! The network namespaces of emulated links (`net=`) are deleted before the exit.
//! A second signal closes at once.

use dbdelta_runner::StopFlag;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How long the run may wind down by itself after the first signal.
const GRACE: Duration = Duration::from_millis(600);
/// How long managed servers may take for their fast shutdown when the deadline cuts the
/// run (while the reports are written), before their process groups are killed: short, so
/// the run still ends within about a second of the deadline. A server killed here (one
/// still writing its shutdown checkpoint) only held the run's scratch data.
const SERVER_GRACE: Duration = Duration::from_millis(500);
/// How long an orderly close that already began (reports being written) may still take.
const CLOSING_GRACE: Duration = Duration::from_secs(5);

/// The first signal received (0 = none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set when the main thread began its own orderly close, so the deadline waits for it.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// Set when the deadline's close of the run directory began: from then on the main thread
/// (which may wake up when its server is stopped) must not write the manifest over it.
static CUT: AtomicBool = AtomicBool::new(false);
/// Closes the run directory as interrupted; registered once the directory exists.
type Closer = Box<dyn FnOnce() + Send>;
static CLOSER: Mutex<Option<Closer>> = Mutex::new(None);
/// Held by whoever writes the run directory's final state: the main thread's orderly close
/// or the deadline's closer, never both at once (under load the two raced, and the main
/// thread's failed write ended an interrupted run with exit 2).
static CLOSE: Mutex<()> = Mutex::new(());

/// What an interrupt is doing, for the binary to tell the person who pressed Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The first signal: the run stops and keeps what it measured (`sigterm`: SIGTERM, else
    /// Ctrl-C).
    Stopping {
        /// The signal was SIGTERM.
        sigterm: bool,
    },
    /// A second signal: the run is closed at once.
    Again,
    /// The current phase did not wind down within the grace: the run is closed now.
    DeadlinePassed,
}

/// Handles SIGINT or SIGTERM `sig` (the binary installs the handler and calls this from its
/// signal thread): the first sets `stop` and starts the deadline, a second closes the run
/// at once. `tell` shows each [`Interruption`].
pub fn on_signal(sig: i32, stop: &StopFlag, tell: fn(Interruption)) {
    if SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        tell(Interruption::Again);
        close_and_exit();
    }
    tell(Interruption::Stopping {
        sigterm: sig == libc::SIGTERM,
    });
    stop.request();
    let _ = std::thread::Builder::new()
        .name("stop-deadline".into())
        .spawn(move || {
            std::thread::sleep(GRACE);
            if CLOSING.load(Ordering::SeqCst) {
                std::thread::sleep(CLOSING_GRACE);
            }
            tell(Interruption::DeadlinePassed);
            close_and_exit();
        });
}

/// True once the interrupt deadline is closing the run directory itself; the main thread's
/// manifest writes are then skipped (the close marks it interrupted).
pub(crate) fn cut() -> bool {
    CUT.load(Ordering::SeqCst)
}

/// The exit code for the signal received, if any: 130 for SIGINT, 143 for SIGTERM.
pub fn exit_code() -> Option<u8> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(128 + s as u8),
    }
}

/// Registers what closes the run directory when the deadline cuts the run.
pub(crate) fn set_closer(close: impl FnOnce() + Send + 'static) {
    if let Ok(mut slot) = CLOSER.lock() {
        *slot = Some(Box::new(close));
    }
}

/// The main thread is closing the run itself: the deadline gives it [`CLOSING_GRACE`] and
/// will not close it a second time. Hold the guard until the close is done. Waits while the
/// deadline's closer runs (which then ends the process).
pub(crate) fn closing() -> MutexGuard<'static, ()> {
    CLOSING.store(true, Ordering::SeqCst);
    let guard = CLOSE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Ok(mut slot) = CLOSER.lock() {
        slot.take();
    }
    guard
}

/// After an error of the main thread: when a signal came, the exit code it asks for, once
/// the run directory is closed as interrupted — by a closer under way (which ends the
/// process itself), or here when none ran yet (the signal made a phase fail before the
/// deadline); `None` without a signal.
pub fn exit_code_after_error() -> Option<u8> {
    let code = exit_code()?;
    let _held = CLOSE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let closer = CLOSER.lock().ok().and_then(|mut slot| slot.take());
    if let Some(close) = closer {
        close();
    }
    Some(code)
}

fn close_and_exit() -> ! {
    wake_children();
    // Wait for an orderly close of the main thread, but not past the grace: a close that
    // hangs ends with the exit alone.
    let until = Instant::now() + CLOSING_GRACE;
    let guard = loop {
        match CLOSE.try_lock() {
            Ok(g) => break Some(g),
            Err(TryLockError::Poisoned(p)) => break Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(TryLockError::WouldBlock) => break None,
        }
    };
    CUT.store(true, Ordering::SeqCst);
    // The engines are not dropped on this path: stop every managed server still up (its
    // fast shutdown, then SIGKILL to its process group) while the run directory is closed.
    // Only now, with the close held: a main thread whose server went away ends with an
    // error, and waits for this close (`exit_code_after_error`) instead of racing it.
    let servers = std::thread::Builder::new()
        .name("stop-servers".into())
        .spawn(|| dbdelta_kit::running::stop_all(SERVER_GRACE))
        .ok();
    if guard.is_some() {
        let closer = CLOSER.lock().ok().and_then(|mut slot| slot.take());
        if let Some(close) = closer {
            close();
        }
    }
    match servers {
        Some(stopping) => drop(stopping.join()),
        None => drop(dbdelta_kit::running::stop_all(SERVER_GRACE)),
    }
    // Delete the emulated links' namespaces (the veth pairs go with them).
    dbdelta_kit::netns::remove_all();
    std::process::exit(i32::from(exit_code().unwrap_or(130)));
}

/// A managed server frozen with SIGSTOP would keep its pending death signal until woken.
fn wake_children() {
    let me = std::process::id();
    for p in dbdelta_kit::running::process_tree(me) {
        if p != me {
            // SAFETY: kill(2) with SIGCONT on a descendant's pid has no memory effects.
            unsafe {
                libc::kill(p as i32, libc::SIGCONT);
            }
        }
    }
}
