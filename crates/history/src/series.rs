//! Grouping stored points into per-run series for history listings and detection.

use crate::point::{Metric, Point};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which points a listing or detection looks at; every field is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Substring of the target name, engine, version or build (case-insensitive).
    pub target_like: Option<String>,
    /// Step name or label, exact, or a glob with `*`.
    pub step: Option<String>,
    /// Suite name.
    pub suite: Option<String>,
    /// Thread count.
    pub threads: Option<u32>,
    /// Host name.
    pub host: Option<String>,
}

fn glob(pattern: &str, text: &str) -> bool {
    // `*` matches any run of characters; everything else literally.
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

impl Filter {
    /// True when `p` passes every given condition.
    pub fn matches(&self, p: &Point) -> bool {
        if let Some(like) = &self.target_like {
            let like = like.to_lowercase();
            if ![&p.target, &p.engine, &p.version, &p.build]
                .iter()
                .any(|f| f.to_lowercase().contains(&like))
            {
                return false;
            }
        }
        if let Some(step) = &self.step {
            if !(glob(step, &p.step) || glob(step, &p.label)) {
                return false;
            }
        }
        self.suite.as_ref().is_none_or(|s| *s == p.suite)
            && self.threads.is_none_or(|t| t == p.threads)
            && self.host.as_ref().is_none_or(|h| *h == p.host)
    }
}

/// What one series is: the same target name and step measured over time on one host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    /// Host name.
    pub host: String,
    /// Suite.
    pub suite: String,
    /// Target name.
    pub target: String,
    /// Step label.
    pub label: String,
    /// Thread count.
    pub threads: u32,
}

impl SeriesKey {
    /// The series a point belongs to.
    pub fn of(p: &Point) -> SeriesKey {
        SeriesKey {
            host: p.host.clone(),
            suite: p.suite.clone(),
            target: p.target.clone(),
            label: p.label.clone(),
            threads: p.threads,
        }
    }
}

/// One run in a series: the mean of its repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesPoint {
    /// The run.
    pub run_id: String,
    /// When it started.
    pub run_started: String,
    /// The target's version in that run.
    pub version: String,
    /// The target's build in that run.
    pub build: String,
    /// Its settings hash.
    pub settings_hash: String,
    /// Repeats averaged.
    pub repeats: usize,
    /// Mean QPS.
    pub qps: f64,
    /// Mean p95 latency, µs.
    pub p95_us: f64,
    /// Mean host CPU µs per operation, if every repeat measured it.
    pub cpu_us_per_op: Option<f64>,
}

impl SeriesPoint {
    /// The value of a metric.
    pub fn value(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::Qps => Some(self.qps),
            Metric::P95Us => Some(self.p95_us),
            Metric::CpuUsPerOp => self.cpu_us_per_op,
        }
        .filter(|v| v.is_finite() && *v > 0.0)
    }
}

/// One series, oldest run first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// What it is.
    pub key: SeriesKey,
    /// Its runs in start order.
    pub points: Vec<SeriesPoint>,
}

/// Groups the matching points into series (ordered by key), each ordered by run start time
/// then run id; the repeats of a run are averaged into one point.
pub fn series(points: &[Point], filter: &Filter) -> Vec<Series> {
    let mut by_key: BTreeMap<SeriesKey, BTreeMap<(String, String), Vec<&Point>>> = BTreeMap::new();
    for p in points.iter().filter(|p| filter.matches(p)) {
        let key = SeriesKey::of(p);
        by_key
            .entry(key)
            .or_default()
            .entry((p.run_started.clone(), p.run_id.clone()))
            .or_default()
            .push(p);
    }
    by_key
        .into_iter()
        .map(|(key, runs)| Series {
            key,
            points: runs
                .into_iter()
                .map(|((started, run), ps)| {
                    let n = ps.len() as f64;
                    let mean = |f: &dyn Fn(&Point) -> f64| ps.iter().map(|p| f(p)).sum::<f64>() / n;
                    let cpu: Option<Vec<f64>> = ps.iter().map(|p| p.cpu_us_per_op).collect();
                    SeriesPoint {
                        run_id: run,
                        run_started: started,
                        version: ps[0].version.clone(),
                        build: ps[0].build.clone(),
                        settings_hash: ps[0].settings_hash.clone(),
                        repeats: ps.len(),
                        qps: mean(&|p| p.qps),
                        p95_us: mean(&|p| p.p95_us),
                        cpu_us_per_op: cpu.map(|c| c.iter().sum::<f64>() / n),
                    }
                })
                .collect(),
        })
        .collect()
}
