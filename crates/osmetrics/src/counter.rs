//! Differencing cumulative kernel counters, and the notes that record when that went wrong.
//!
//! Rule (the same for every counter): a counter that grew gives its difference; a 32-bit
//! counter that wrapped gives the wrapped difference; any other counter that went **backwards**
//! is treated as a reset and the interval is *skipped for that counter* (its delta counts 0),
//! as sysstat does, and a note is recorded. Deltas are therefore never negative.

use std::collections::BTreeMap;

/// Width of a kernel counter as printed in its `/proc` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Printed with `%u` (e.g. the diskstats time fields): may wrap at 2^32.
    U32,
    /// Printed with `%llu`/`%lu` on a 64-bit kernel: does not wrap in practice.
    U64,
}

/// `cur − prev` for a cumulative counter; `None` when it went backwards (reset).
pub fn delta(prev: u64, cur: u64, width: Width) -> Option<u64> {
    if cur >= prev {
        return Some(cur - prev);
    }
    if width == Width::U32 && prev <= u64::from(u32::MAX) {
        let wrapped = (1u64 << 32) - prev + cur;
        // A plausible wrap moves less than half the range; anything else is a reset.
        if wrapped < (1u64 << 31) {
            return Some(wrapped);
        }
    }
    None
}

/// Caveats collected while sampling, de-duplicated with a count.
#[derive(Debug, Default, Clone)]
pub struct Notes {
    counts: BTreeMap<String, u32>,
}

impl Notes {
    /// Records one occurrence of `what`.
    pub fn add(&mut self, what: impl Into<String>) {
        *self.counts.entry(what.into()).or_insert(0) += 1;
    }

    /// `cur − prev`, recording a note named `name` (and counting 0) when it went backwards.
    pub fn delta(&mut self, name: &str, prev: u64, cur: u64, width: Width) -> u64 {
        match delta(prev, cur, width) {
            Some(d) => d,
            None => {
                self.add(format!(
                    "counter {name} went backwards (reset); that interval counts 0 for it"
                ));
                0
            }
        }
    }

    /// Merges another set of notes into this one.
    pub fn merge(&mut self, other: &Notes) {
        for (k, v) in &other.counts {
            *self.counts.entry(k.clone()).or_insert(0) += v;
        }
    }

    /// True when nothing was noted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The notes as text, with `(×N)` when something happened more than once.
    pub fn to_vec(&self) -> Vec<String> {
        self.counts
            .iter()
            .map(|(k, &n)| {
                if n > 1 {
                    format!("{k} (×{n})")
                } else {
                    k.clone()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_wraps_and_resets() {
        assert_eq!(delta(5, 9, Width::U64), Some(4));
        assert_eq!(delta(9, 9, Width::U64), Some(0));
        assert_eq!(delta(9, 5, Width::U64), None);
        // 32-bit wrap: 2^32-10 → 20 is 30 ticks.
        assert_eq!(delta(u64::from(u32::MAX) - 9, 20, Width::U32), Some(30));
        // A big drop of a small 32-bit counter is a reset, not a wrap.
        assert_eq!(delta(1000, 10, Width::U32), None);
        let mut n = Notes::default();
        assert_eq!(n.delta("x", 10, 3, Width::U64), 0);
        assert_eq!(n.delta("x", 10, 3, Width::U64), 0);
        assert_eq!(n.to_vec().len(), 1);
        assert!(n.to_vec()[0].contains("(×2)"));
    }
}
