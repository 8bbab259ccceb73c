//! The connect phase of a step: opens every connection before the clock starts, at a paced
//! rate, from a few connector threads, spreading source addresses over 127.0.0.0/8 when
//! there are more connections than one address has ephemeral ports.

use crate::control::StopFlag;
use dbdelta_engine::{ConnectOptions, Connection, Engine, EngineError, ErrorKind};
use dbdelta_model::LatencySummary;
use dbdelta_stats::{new_histogram, record_ns, summarize};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connections per source address before the next 127.0.0.x is used: well under the
/// default ephemeral port range (32768–60999) of one (source, destination) pair.
pub const PER_SOURCE_ADDRESS: usize = 16_000;
/// Connector threads at most: connects are mostly waiting on the server.
const CONNECTORS: usize = 8;

/// How the connect phase runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectPlan {
    /// Connections to open.
    pub count: u32,
    /// New connections per second, over all connector threads.
    pub rate: f64,
    /// Limit for one connect (TCP, startup and authentication).
    pub timeout: Duration,
    /// Limit for every blocking read and write after the handshake (statement preparation,
    /// blocking TLS connections): the step's statement timeout.
    pub io_timeout: Option<Duration>,
}

/// What the connect phase measured.
#[derive(Debug)]
pub(crate) struct Opened<T> {
    /// One entry per connection, in index order.
    pub items: Vec<T>,
    /// Connect latency (TCP + startup + authentication + preparation).
    pub latency: LatencySummary,
    /// Wall time of the whole phase.
    pub elapsed: Duration,
}

/// The source address of connection `i`: the engine's default for the first block, then
/// 127.0.0.2, 127.0.0.3, … (all loopback, so traffic stays on this machine).
pub fn source_address(i: usize) -> Option<Ipv4Addr> {
    let block = i / PER_SOURCE_ADDRESS;
    if block == 0 {
        return None;
    }
    let n = (block as u32 + 1).min(0x00ff_fffe);
    Some(Ipv4Addr::from(0x7f00_0000 | n))
}

/// Opens `plan.count` connections and turns each into `T` with `setup` (prepare statements,
/// split into a session…). Fails with the first error; a stop request ends it early with an
/// `Interrupted`-style error. `run_wide(i)` is connection `i`'s number in the whole run (a
/// segment's connections are a stripe of it): its source address follows that number, so
/// segments on one host do not all crowd the first addresses' ephemeral ports.
pub(crate) fn open_all<T: Send>(
    engine: &dyn Engine,
    plan: &ConnectPlan,
    stop: &StopFlag,
    run_wide: &(dyn Fn(usize) -> usize + Sync),
    setup: &(dyn Fn(usize, Box<dyn Connection>) -> Result<T, EngineError> + Sync),
) -> Result<Opened<T>, EngineError> {
    let n = plan.count as usize;
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<EngineError>> = Mutex::new(None);
    let latency = Mutex::new(new_histogram());
    let every = if plan.rate > 0.0 {
        1.0 / plan.rate
    } else {
        0.0
    };
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..CONNECTORS.min(n) {
            s.spawn(|| {
                let mut hist = new_histogram();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let at = t0 + Duration::from_secs_f64(i as f64 * every);
                    if !sleep_until(at, stop) {
                        failed.store(true, Ordering::Relaxed);
                        break;
                    }
                    let started = Instant::now();
                    let opts = ConnectOptions {
                        source: source_address(run_wide(i)),
                        timeout: Some(plan.timeout),
                        io_timeout: plan.io_timeout,
                    };
                    let made = engine
                        .connect_with(&opts)
                        .map_err(|e| with_index(e, i, n))
                        .and_then(|c| setup(i, c));
                    match made {
                        Ok(item) => {
                            record_ns(&mut hist, started.elapsed().as_nanos() as u64);
                            if let Ok(mut slot) = slots[i].lock() {
                                *slot = Some(item);
                            }
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            if let Ok(mut first) = first_error.lock() {
                                first.get_or_insert(e);
                            }
                            break;
                        }
                    }
                }
                if let Ok(mut all) = latency.lock() {
                    let _ = all.add(&hist);
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    if stop.requested() {
        return Err(EngineError::new(
            ErrorKind::Connection,
            "interrupted while opening connections",
        ));
    }
    let items: Vec<T> = slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect();
    if items.len() != n {
        return Err(EngineError::connection(format!(
            "opened {} of {n} connections",
            items.len()
        )));
    }
    let latency = latency
        .into_inner()
        .map(|h| summarize(&h))
        .unwrap_or_default();
    Ok(Opened {
        items,
        latency,
        elapsed: t0.elapsed(),
    })
}

fn with_index(e: EngineError, i: usize, n: usize) -> EngineError {
    if n == 1 {
        return e;
    }
    EngineError::new(
        e.kind,
        format!("connection {} of {n}: {}", i + 1, e.message),
    )
}

/// Sleeps until `at` in short slices so a stop request is seen; false when stopped.
pub(crate) fn sleep_until(at: Instant, stop: &StopFlag) -> bool {
    loop {
        if stop.requested() {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_addresses_stay_on_loopback_and_change_per_block() {
        assert_eq!(source_address(0), None);
        assert_eq!(source_address(PER_SOURCE_ADDRESS - 1), None);
        assert_eq!(
            source_address(PER_SOURCE_ADDRESS),
            Some(Ipv4Addr::new(127, 0, 0, 2))
        );
        assert_eq!(
            source_address(6 * PER_SOURCE_ADDRESS + 5),
            Some(Ipv4Addr::new(127, 0, 0, 7))
        );
        assert!(source_address(usize::MAX / 2).is_some_and(|a| a.is_loopback()));
    }
}
