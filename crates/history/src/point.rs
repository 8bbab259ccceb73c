//! One measured step of one run: what the history stores.

use dbdelta_inference::Direction;
use dbdelta_model::{RunManifest, StepKind, StepResult};
use serde::{Deserialize, Serialize};

/// One measured step of one target in one run (one repeat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The run: its directory name (unique per run).
    pub run_id: String,
    /// When the run started, RFC 3339 UTC (orders the series).
    pub run_started: String,
    /// Host name.
    pub host: String,
    /// Suite name.
    pub suite: String,
    /// Target name in the run (report column).
    pub target: String,
    /// Engine of the target.
    pub engine: String,
    /// Server or library version string.
    pub version: String,
    /// Build: where the binaries or server came from (the spec without its settings).
    pub build: String,
    /// Hash of the target's settings (spec parameters and effective server settings).
    pub settings_hash: String,
    /// Step name.
    pub step: String,
    /// Report label of the step.
    pub label: String,
    /// Client threads.
    pub threads: u32,
    /// Repeat number (1-based).
    pub repeat: u32,
    /// Statements per second (higher is better).
    pub qps: f64,
    /// 95th-percentile latency, µs (lower is better).
    pub p95_us: f64,
    /// CPU µs per operation of the whole host, when measured (lower is better).
    #[serde(default)]
    pub cpu_us_per_op: Option<f64>,
    /// 99th-percentile latency, µs (lower is better); absent in points stored before it was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
}

impl Point {
    /// The unique key of the point in a store.
    pub fn id(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.run_id, self.target, self.label, self.threads, self.repeat
        )
    }
}

/// A metric of a point, with its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Statements per second.
    Qps,
    /// 95th-percentile latency.
    P95Us,
    /// Host CPU µs per operation.
    CpuUsPerOp,
}

impl Metric {
    /// Every metric.
    pub const ALL: [Metric; 3] = [Metric::Qps, Metric::P95Us, Metric::CpuUsPerOp];

    /// Name as printed and accepted by `--metric`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Qps => "qps",
            Metric::P95Us => "p95_us",
            Metric::CpuUsPerOp => "cpu_us_per_op",
        }
    }

    /// Parses a metric name.
    pub fn parse(text: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == text)
    }

    /// Which way is better.
    pub fn direction(self) -> Direction {
        match self {
            Metric::Qps => Direction::HigherIsBetter,
            Metric::P95Us | Metric::CpuUsPerOp => Direction::LowerIsBetter,
        }
    }

    /// The metric's value in a point.
    pub fn value(self, p: &Point) -> Option<f64> {
        let v = match self {
            Metric::Qps => Some(p.qps),
            Metric::P95Us => Some(p.p95_us),
            Metric::CpuUsPerOp => p.cpu_us_per_op,
        };
        v.filter(|v| v.is_finite() && *v > 0.0)
    }
}

/// FNV-1a, 64 bits: a stable hash of settings text (not for security).
fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The points of a run: one per measured step result of every target that ran its whole
/// window (failed, interrupted and not-supported steps are left out). `run_id`
/// is usually the run directory's name.
pub fn points_of_run(run_id: &str, manifest: &RunManifest, results: &[StepResult]) -> Vec<Point> {
    let mut out = Vec::new();
    for r in results {
        if r.kind != StepKind::Measured || !r.is_complete() {
            continue;
        }
        let Some(t) = manifest.targets.iter().find(|t| t.name == r.target) else {
            continue;
        };
        // `name=engine:location?params`: the build is the location, the settings the rest.
        let spec = t.spec.split_once('=').map_or(t.spec.as_str(), |(_, s)| s);
        let (build, params) = spec.split_once('?').unwrap_or((spec, ""));
        let settings = serde_json::to_string(&t.settings).unwrap_or_default();
        out.push(Point {
            run_id: run_id.to_string(),
            run_started: manifest.started.clone(),
            host: manifest.host.hostname.clone(),
            suite: manifest.options.suite.clone(),
            target: r.target.clone(),
            engine: t.engine.clone(),
            version: t.version.clone().unwrap_or_default(),
            build: build.to_string(),
            settings_hash: fnv1a(&format!("{params}\n{settings}")),
            step: r.step.clone(),
            label: r.label.clone(),
            threads: r.threads,
            repeat: r.repeat_no(),
            qps: r.qps,
            p95_us: r.latency.p95_us,
            cpu_us_per_op: r.costs.as_ref().and_then(host_cpu_us),
            p99_us: Some(r.latency.p99_us).filter(|v| v.is_finite() && *v > 0.0),
        });
    }
    out
}

fn host_cpu_us(c: &dbdelta_model::os::OpCosts) -> Option<f64> {
    Some(c.host_cpu_us_op).filter(|v| v.is_finite() && *v > 0.0)
}
