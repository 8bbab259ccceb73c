//! From stored points to the dashboard's series: one series per (host, suite, target, step
//! label, threads) as `dbdelta history` groups them, each run with the mean of its repeats
//! and, where it had two or more, the 95 % interval of that mean.

use crate::time::unix_seconds;
use dbdelta_history::{Filter, Metric, Point, SeriesKey};
use dbdelta_inference::dist::t_quantile;
use dbdelta_inference::ChangePoint;
use dbdelta_model::result::file_safe;
use std::collections::BTreeMap;

/// What a chart of a series plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    /// Statements per second.
    Qps,
    /// 95th-percentile latency, µs.
    P95,
    /// 99th-percentile latency, µs.
    P99,
    /// Host CPU µs per operation.
    Cpu,
}

impl Measure {
    /// Every measure, in page order.
    pub const ALL: [Measure; 4] = [Measure::Qps, Measure::P95, Measure::P99, Measure::Cpu];

    /// Name as `dbdelta detect --metric` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Qps => Metric::Qps.name(),
            Measure::P95 => Metric::P95Us.name(),
            Measure::P99 => "p99_us",
            Measure::Cpu => Metric::CpuUsPerOp.name(),
        }
    }

    /// Chart title.
    pub fn title(self) -> &'static str {
        match self {
            Measure::Qps => "QPS",
            Measure::P95 => "p95 latency, µs",
            Measure::P99 => "p99 latency, µs",
            Measure::Cpu => "host CPU µs per operation",
        }
    }

    /// True for throughput: a drop is a regression.
    pub fn higher_is_better(self) -> bool {
        self == Measure::Qps
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The measure in one stored point (positive and finite, else absent).
    fn of(self, p: &Point) -> Option<f64> {
        match self {
            Measure::Qps => Metric::Qps.value(p),
            Measure::P95 => Metric::P95Us.value(p),
            Measure::P99 => p.p99_us.filter(|v| v.is_finite() && *v > 0.0),
            Measure::Cpu => Metric::CpuUsPerOp.value(p),
        }
    }
}

/// The mean of a run's repeats, with the 95 % interval of the mean when there were two or
/// more (Student's t over the repeats).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Mean over the repeats.
    pub mean: f64,
    /// (low, high) of the 95 % interval of the mean.
    pub interval: Option<(f64, f64)>,
}

impl Stat {
    fn of(values: &[f64]) -> Stat {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let interval = (values.len() >= 2).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let half = t_quantile(0.975, n - 1.0) * (var / n).sqrt();
            (mean - half, mean + half)
        });
        Stat { mean, interval }
    }
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run id (its directory's name).
    pub run_id: String,
    /// Start, as stored.
    pub started: String,
    /// Start, seconds since the epoch (`None` when the stored text is not RFC 3339).
    pub unix: Option<f64>,
    /// The target's version in the run.
    pub version: String,
    /// The target's build (its spec without settings).
    pub build: String,
    /// Repeats measured.
    pub repeats: usize,
    stats: [Option<Stat>; 4],
}

impl Run {
    /// The run's value of a measure, if every repeat measured it.
    pub fn stat(&self, m: Measure) -> Option<Stat> {
        self.stats[m.index()]
    }
}

/// A change point of one measure of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// The measure.
    pub measure: Measure,
    /// Index (in [`SeriesData::runs`]) of the first run after the change.
    pub at: usize,
    /// Index of the last run before it that has the measure.
    pub before: usize,
    /// E-Divisive's statistics of the change.
    pub cp: ChangePoint,
}

impl Change {
    /// True when the change is for the worse.
    pub fn worse(&self) -> bool {
        (self.cp.forward_change() < 0.0) == self.measure.higher_is_better()
    }

    /// The evidence page's file stem, unique within the site: one page per series and run
    /// where any measure changed (the two runs' evidence is the same for every measure).
    pub fn stem(&self, series: &SeriesData) -> String {
        format!("{}.{}", series.id, series.runs[self.at].run_id)
    }

    /// `−10.0 %`-style text of the change.
    pub fn percent(&self) -> String {
        let pct = self.cp.forward_change() * 100.0;
        format!("{}{:.1} %", if pct < 0.0 { "−" } else { "+" }, pct.abs())
    }
}

/// One series with its runs (oldest first) and change points.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesData {
    /// What it is.
    pub key: SeriesKey,
    /// The target's engine in its newest run.
    pub engine: String,
    /// File stem of its page: readable, and unique by a hash of the whole key.
    pub id: String,
    /// Runs in start order.
    pub runs: Vec<Run>,
    /// Change points, by run then measure.
    pub changes: Vec<Change>,
}

impl SeriesData {
    /// True when the x axis can be the run time (every start time parsed).
    pub fn timed(&self) -> bool {
        self.runs.iter().all(|r| r.unix.is_some())
    }

    /// The x value of run `i`: its start time, else its position.
    pub fn x(&self, i: usize) -> f64 {
        if self.timed() {
            self.runs[i].unix.unwrap_or(i as f64)
        } else {
            i as f64
        }
    }

    /// The change points grouped by the run they happened at (oldest first), each group in
    /// measure order: one evidence page each.
    pub fn change_groups(&self) -> Vec<Vec<&Change>> {
        let mut out: Vec<Vec<&Change>> = Vec::new();
        for c in &self.changes {
            match out.last_mut() {
                Some(g) if g[0].at == c.at => g.push(c),
                _ => out.push(vec![c]),
            }
        }
        out
    }

    /// The newest change point (of any measure).
    pub fn newest_change(&self) -> Option<&Change> {
        self.changes
            .iter()
            .max_by_key(|c| (c.at, std::cmp::Reverse(c.measure)))
    }
}

/// FNV-1a, 64 bits: a stable short hash for file names (not for security).
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn series_id(k: &SeriesKey) -> String {
    let readable: String = file_safe(&format!("{}-{}-dop{}", k.target, k.label, k.threads))
        .chars()
        .take(80)
        .collect();
    let whole = format!(
        "{}\n{}\n{}\n{}\n{}",
        k.host, k.suite, k.target, k.label, k.threads
    );
    format!("{readable}-{:08x}", fnv1a(&whole) as u32)
}

/// The series of the points that pass `filter`, ordered by key; runs by start time, then id.
/// No change points yet ([`crate::changes::find`] adds them).
pub fn collect(points: &[Point], filter: &Filter) -> Vec<SeriesData> {
    type Runs<'a> = BTreeMap<(&'a str, &'a str), Vec<&'a Point>>;
    let mut by_key: BTreeMap<SeriesKey, Runs> = BTreeMap::new();
    for p in points.iter().filter(|p| filter.matches(p)) {
        let key = SeriesKey::of(p);
        by_key
            .entry(key)
            .or_default()
            .entry((p.run_started.as_str(), p.run_id.as_str()))
            .or_default()
            .push(p);
    }
    by_key
        .into_iter()
        .map(|(key, runs)| {
            // The engine of the newest run (runs are in start order).
            let mut engine = String::new();
            let runs: Vec<Run> = runs
                .into_iter()
                .map(|((started, run_id), ps)| {
                    let stats = Measure::ALL.map(|m| {
                        let v: Option<Vec<f64>> = ps.iter().map(|p| m.of(p)).collect();
                        v.map(|v| Stat::of(&v))
                    });
                    engine.clone_from(&ps[0].engine);
                    Run {
                        run_id: run_id.to_string(),
                        started: started.to_string(),
                        unix: unix_seconds(started),
                        version: ps[0].version.clone(),
                        build: ps[0].build.clone(),
                        repeats: ps.len(),
                        stats,
                    }
                })
                .collect();
            SeriesData {
                engine,
                id: series_id(&key),
                key,
                runs,
                changes: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_give_an_interval_and_one_run_none() {
        let s = Stat::of(&[100.0, 110.0]);
        assert_eq!(s.mean, 105.0);
        let (lo, hi) = s.interval.unwrap();
        // t(0.975, 1) = 12.706, sd/√n = 5.
        assert!((hi - 105.0 - 12.706 * 5.0).abs() < 0.01, "{hi}");
        assert!((105.0 - lo - (hi - 105.0)).abs() < 1e-9);
        assert_eq!(Stat::of(&[7.0]).interval, None);
    }
}
