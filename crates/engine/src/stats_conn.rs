//! The side connection a server engine reads its counters over ([`crate::Engine::counters`]):
//! never one of the benchmark's connections, opened on first use, and dropped after an error
//! so that the next read starts from a fresh connection.

use crate::EngineError;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Bound on opening the side connection and on each of its reads: the runner samples
/// counters on the thread that times the window, which a silent server must not hold up.
pub const STATS_TIMEOUT: Duration = Duration::from_secs(2);

/// A lazily opened connection of type `C`, shared by the threads that sample counters.
#[derive(Debug)]
pub struct StatsConnection<C> {
    conn: Mutex<Option<C>>,
}

impl<C> Default for StatsConnection<C> {
    fn default() -> Self {
        StatsConnection {
            conn: Mutex::new(None),
        }
    }
}

impl<C> StatsConnection<C> {
    /// Runs `read` on the connection, opening it with `open` first when there is none. An
    /// error of either closes the connection: a half-read response must not be read as the
    /// next sample's.
    pub fn read<T>(
        &self,
        open: impl FnOnce() -> Result<C, EngineError>,
        read: impl FnOnce(&mut C) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let mut slot = self.conn.lock().unwrap_or_else(|poisoned| {
            // A reader panicked, perhaps halfway through a response: start afresh.
            let mut slot = poisoned.into_inner();
            *slot = None;
            slot
        });
        let conn = match slot.take() {
            Some(c) => slot.insert(c),
            None => slot.insert(open()?),
        };
        let out = read(conn);
        if out.is_err() {
            *slot = None;
        }
        out
    }

    /// Closes the connection (before a managed server stops); the next read reopens it.
    pub fn close(&self) {
        *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Parses a counter the server sent as text (`12345`, `1.5e3`); `None` for anything else.
pub fn counter_value(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn opens_once_and_reopens_after_an_error() {
        let s: StatsConnection<u32> = StatsConnection::default();
        let opened = Cell::new(0);
        let open = || {
            opened.set(opened.get() + 1);
            Ok(opened.get())
        };
        assert_eq!(s.read(open, |c| Ok(*c)).ok(), Some(1));
        assert_eq!(s.read(open, |c| Ok(*c)).ok(), Some(1));
        assert!(s
            .read(open, |_| Err::<u32, _>(EngineError::statement("broken")))
            .is_err());
        assert_eq!(s.read(open, |c| Ok(*c)).ok(), Some(2));
        s.close();
        assert_eq!(s.read(open, |c| Ok(*c)).ok(), Some(3));
        s.close();
        assert!(s
            .read(|| Err(EngineError::connection("down")), |c| Ok(*c))
            .is_err());
        assert_eq!(s.read(open, |c| Ok(*c)).ok(), Some(4));
    }

    #[test]
    fn counters_parse_as_numbers_only() {
        assert_eq!(counter_value(" 42 "), Some(42.0));
        assert_eq!(counter_value("1.5e3"), Some(1500.0));
        assert_eq!(counter_value("OFF"), None);
        assert_eq!(counter_value("NaN"), None);
    }
}
