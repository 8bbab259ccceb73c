//! Segments of one run (`dbdelta run --segment K/N`): which part of the run a process
//! measured, how its windows met the other segments' windows, and, after `dbdelta merge`,
//! what each segment contributed to the merged result.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Segment `index` of `count` (1-based, as on the command line: `--segment 2/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// This segment, 1..=count.
    pub index: u32,
    /// Segments of the run.
    pub count: u32,
}

impl Segment {
    /// The segment, or why `index`/`count` is not one (`0/4`, `5/4`).
    pub fn new(index: u32, count: u32) -> Result<Segment, String> {
        if count == 0 {
            return Err(format!(
                "{index}/{count}: a run has at least one segment (write K/N with N ≥ 1)"
            ));
        }
        if index == 0 || index > count {
            return Err(format!(
                "{index}/{count}: the segment number counts from 1 to {count} (write K/N with 1 ≤ K ≤ N)"
            ));
        }
        Ok(Segment { index, count })
    }

    /// Parses `K/N`.
    pub fn parse(text: &str) -> Result<Segment, String> {
        let (k, n) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("{text}: write K/N, such as 2/4 (segment 2 of 4)"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("{text}: write K/N with whole numbers, such as 2/4"))
        };
        Segment::new(num(k)?, num(n)?)
    }

    /// The first segment loads the shared data and runs the settle points.
    pub fn leads(&self) -> bool {
        self.index == 1
    }

    /// How many of `total` workers this segment runs: workers are striped over the segments
    /// (worker `w` belongs to segment `w mod N + 1`), so every segment runs ⌊total/N⌋ or
    /// one more, as k6 divides virtual users over execution segments.
    pub fn share(&self, total: u32) -> u32 {
        if total < self.index {
            0
        } else {
            (total - self.index) / self.count + 1
        }
    }

    /// The run-wide index of this segment's `local`-th worker (its random stream, its
    /// TPC-C home warehouse): the stripe `index - 1, index - 1 + N, …`. With N dividing the
    /// warehouses, each warehouse's terminals are all in one segment.
    pub fn global_worker(&self, local: u32) -> u32 {
        self.index - 1 + local * self.count
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How a run's segments were run: in a segment's `run.json` its own number, in a merged
/// run's the hosts that measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSegments {
    /// Segments of the run.
    pub count: u32,
    /// This segment (a segment's run directory); `None` in a merged run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// The barrier's run name: segments with the same name meet.
    pub run: String,
    /// Host of each segment, in segment order (a merged run; one entry in a segment's).
    #[serde(default)]
    pub hosts: Vec<String>,
}

impl RunSegments {
    /// Distinct hosts that measured the run.
    pub fn distinct_hosts(&self) -> usize {
        let mut h: Vec<&String> = self.hosts.iter().collect();
        h.sort();
        h.dedup();
        h.len()
    }
}

/// How one step's window was shared by the segments of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SegmentWindow {
    /// Segments of the run.
    pub count: u32,
    /// The segment that measured this result; `None` in a merged result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// The connections this segment opened (its share of the result's `threads`, which
    /// counts every segment's).
    #[serde(default)]
    pub threads: u32,
    /// The wall-clock time every segment started the step (warm-up included), seconds
    /// since the Unix epoch, chosen at the barrier once every segment was there.
    pub start_unix: f64,
    /// Each segment's clock minus the target database's clock, ms, as measured at the
    /// barrier (a query's midpoint, as NTP estimates an offset).
    #[serde(default)]
    pub clock_offsets_ms: BTreeMap<u32, f64>,
    /// Segments that did not reach the barrier (they died or were stopped): the step is
    /// incomplete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u32>,
    /// A merged result: what each segment measured, in segment order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<SegmentPart>,
}

impl SegmentWindow {
    /// The spread of the segments' clock offsets (largest − smallest), ms: how far apart
    /// their windows may be.
    pub fn clock_spread_ms(&self) -> f64 {
        let mut v = self.clock_offsets_ms.values().copied();
        let Some(first) = v.next() else {
            return 0.0;
        };
        let (lo, hi) = v.fold((first, first), |(lo, hi), x| (lo.min(x), hi.max(x)));
        hi - lo
    }
}

/// What one segment measured of a merged step: its client's own figures stay apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentPart {
    /// The segment.
    pub segment: u32,
    /// The host it ran on.
    pub host: String,
    /// Its connections.
    pub threads: u32,
    /// Its events.
    pub events: u64,
    /// Its statements per second over its window.
    pub qps: f64,
    /// Its window's length, s.
    pub seconds: f64,
    /// Its client CPU per operation, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_op: Option<f64>,
    /// The OS costs per operation on its host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<crate::os::OpCosts>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_parse_and_refuse_out_of_range_numbers() {
        assert_eq!(Segment::parse("2/4"), Ok(Segment { index: 2, count: 4 }));
        assert!(Segment::parse("0/4").unwrap_err().contains("from 1 to 4"));
        assert!(Segment::parse("5/4").unwrap_err().contains("from 1 to 4"));
        assert!(Segment::parse("1/0").is_err());
        assert!(Segment::parse("2").is_err());
        assert!(Segment::parse("a/4").is_err());
    }

    #[test]
    fn shares_add_up_and_stripes_cover_every_worker_once() {
        for total in [0u32, 1, 3, 4, 10, 10_000, 10_001] {
            for count in [1u32, 2, 3, 4, 6] {
                let mut seen = vec![false; total as usize];
                let mut sum = 0;
                for index in 1..=count {
                    let s = Segment { index, count };
                    let n = s.share(total);
                    sum += n;
                    for local in 0..n {
                        let g = s.global_worker(local) as usize;
                        assert!(!seen[g], "worker {g} twice");
                        seen[g] = true;
                    }
                }
                assert_eq!(sum, total);
                assert!(seen.iter().all(|s| *s));
            }
        }
    }

    #[test]
    fn the_clock_spread_is_largest_minus_smallest() {
        let w = SegmentWindow {
            clock_offsets_ms: [(1, -2.0), (2, 3.0), (3, 0.5)].into_iter().collect(),
            ..SegmentWindow::default()
        };
        assert_eq!(w.clock_spread_ms(), 5.0);
        assert_eq!(SegmentWindow::default().clock_spread_ms(), 0.0);
    }
}
