//! A synthetic results history for the dashboard's tests and `bench/dashboard.sh`: runs of
//! one target over a list of steps with seeded noise, an optional planted change, version
//! changes, and optionally the run directories themselves (`run.json`, result files with
//! per-second intervals, folded-stack profiles) as `dbdelta run --profile` writes them.
#![allow(dead_code)]

use dbdelta_history::{points_of_run, Point};
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{
    Group, HostInfo, Interval, RunManifest, RunStatus, StepKind, StepResult, TargetManifest,
    ToolInfo,
};
use dbdelta_profile::store::ProfileInfo;
use dbdelta_profile::Callgraph;
use std::collections::BTreeMap;
use std::path::Path;

/// A change planted in one step from one run on.
#[derive(Debug, Clone)]
pub struct Plant {
    /// Step label.
    pub label: String,
    /// First run (0-based) with the change.
    pub at: usize,
    /// QPS factor from then on (0.9 = a 10 % drop).
    pub factor: f64,
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Synthetic {
    pub runs: usize,
    pub labels: Vec<String>,
    pub target: String,
    pub threads: u32,
    pub repeats: u32,
    pub seed: u64,
    /// Relative SD of the run-to-run noise.
    pub noise: f64,
    pub plant: Option<Plant>,
    /// (first run, version): the version from that run on.
    pub versions: Vec<(usize, String)>,
    /// Runs that were profiled (every step).
    pub profiled: Vec<usize>,
    /// Hours between runs.
    pub every_hours: f64,
}

impl Synthetic {
    pub fn new(runs: usize, labels: &[&str]) -> Self {
        Synthetic {
            runs,
            labels: labels.iter().map(|l| l.to_string()).collect(),
            target: "pg".into(),
            threads: 4,
            repeats: 1,
            seed: 7,
            noise: 0.01,
            plant: None,
            versions: vec![(0, "15.4".into())],
            profiled: Vec::new(),
            every_hours: 24.0,
        }
    }

    pub fn run_id(i: usize) -> String {
        format!("run-{i:05}")
    }

    fn version(&self, i: usize) -> String {
        self.versions
            .iter()
            .rfind(|(from, _)| *from <= i)
            .map_or(String::new(), |(_, v)| v.clone())
    }

    fn started(&self, i: usize) -> String {
        // 2025-01-01T00:00:00Z plus whole hours.
        let t = 1_735_689_600 + (i as f64 * self.every_hours * 3600.0) as i64;
        let secs = t.rem_euclid(86_400);
        format!(
            "{}T{:02}:{:02}:{:02}Z",
            dbdelta_dashboard::time::date(t as f64),
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }

    fn factor(&self, i: usize, label: &str) -> f64 {
        match &self.plant {
            Some(p) if p.label == label && i >= p.at => p.factor,
            _ => 1.0,
        }
    }

    fn manifest(&self, i: usize) -> RunManifest {
        RunManifest {
            schema: 1,
            tool: ToolInfo {
                version: "0.1.0".into(),
                git_commit: "synthetic".into(),
            },
            host: HostInfo {
                hostname: "bench1".into(),
                cores: 2,
                ..HostInfo::default()
            },
            started: self.started(i),
            finished: None,
            status: RunStatus::Complete,
            options: OptionsBuilder::new().threads(&[self.threads]).build(),
            targets: vec![TargetManifest {
                name: self.target.clone(),
                engine: "postgres".into(),
                spec: format!(
                    "{}=postgres:/usr/lib/postgresql/{}/bin",
                    self.target,
                    self.version(i)
                ),
                version: Some(self.version(i)),
                settings: BTreeMap::new(),
                error: None,
            }],
            command: vec!["dbdelta".into(), "run".into()],
            segments: None,
        }
    }

    fn results(&self, i: usize, rng: &mut Rng) -> Vec<StepResult> {
        let mut out = Vec::new();
        for (s, label) in self.labels.iter().enumerate() {
            let step = label.split('_').next().unwrap_or(label);
            let base = 1000.0 * (s as f64 + 1.0) * self.factor(i, label);
            for rep in 1..=self.repeats {
                let qps = base * (1.0 + self.noise * rng.gauss());
                let mut r = StepResult::empty(
                    &self.target,
                    step,
                    label,
                    (s + 1) as u32,
                    Group::Point,
                    StepKind::Measured,
                    self.threads,
                );
                r.repeat = if self.repeats > 1 { rep } else { 0 };
                r.seconds = 5.0;
                r.qps = qps;
                r.tps = qps;
                r.throughput.value = qps;
                r.queries = (qps * 5.0) as u64;
                r.events = r.queries;
                r.latency.p95_us = 1e6 / qps * f64::from(self.threads) * 2.0;
                r.latency.p99_us = r.latency.p95_us * 1.8;
                r.latency.mean_us = r.latency.p95_us / 2.0;
                r.intervals = (1..=5)
                    .map(|t| {
                        let v = qps * (1.0 + self.noise * rng.gauss());
                        Interval {
                            t: f64::from(t),
                            qps: v,
                            tps: v,
                            p95_us: 0.0,
                            p99_us: 0.0,
                            p50_us: 0.0,
                            max_us: 0.0,
                            errors: 0,
                        }
                    })
                    .collect();
                let cpu = 50.0 / self.factor(i, label) * (1.0 + self.noise * rng.gauss());
                r.costs = Some(dbdelta_model::os::OpCosts {
                    cpu_o: cpu / 1e4,
                    cs_o: 2.0,
                    r_o: None,
                    rkb_o: None,
                    wkb_o: None,
                    o_s: qps,
                    host_cpu_us_op: cpu,
                    server_cpu_us_op: None,
                    client_cpu_us_op: 5.0,
                    proxy_cpu_us_op: None,
                    server_cs_op: None,
                    server_rkb_op: None,
                    server_wkb_op: None,
                });
                out.push(r);
            }
        }
        out
    }

    /// The history's points of every run (no files).
    pub fn points(&self) -> Vec<Point> {
        let mut rng = Rng(self.seed);
        let mut out = Vec::new();
        for i in 0..self.runs {
            let results = self.results(i, &mut rng);
            out.extend(points_of_run(&Self::run_id(i), &self.manifest(i), &results));
        }
        out
    }

    /// Writes every run directory under `dir` and returns the history's points.
    pub fn write_runs(&self, dir: &Path) -> Vec<Point> {
        let mut rng = Rng(self.seed);
        let mut out = Vec::new();
        for i in 0..self.runs {
            let results = self.results(i, &mut rng);
            let manifest = self.manifest(i);
            let run = dir.join(Self::run_id(i));
            let res = run.join("results").join(&self.target);
            std::fs::create_dir_all(&res).expect("mkdir results");
            std::fs::write(
                run.join("run.json"),
                serde_json::to_string_pretty(&manifest).expect("manifest json"),
            )
            .expect("write run.json");
            for r in &results {
                let mut name = format!("{:03}-{}.dop{}", r.order, r.label, r.threads);
                if r.repeat > 1 {
                    name = format!("{name}.r{}", r.repeat);
                }
                std::fs::write(
                    res.join(format!("{name}.json")),
                    serde_json::to_string(r).expect("result json"),
                )
                .expect("write result");
            }
            if self.profiled.contains(&i) {
                self.write_profiles(&run, i);
            }
            out.extend(points_of_run(&Self::run_id(i), &manifest, &results));
        }
        out
    }

    /// Folded stacks of every step: after a planted change its step spends three times as
    /// many samples waiting on a lock.
    fn write_profiles(&self, run: &Path, i: usize) {
        let dir = run.join("profiles").join(&self.target);
        std::fs::create_dir_all(&dir).expect("mkdir profiles");
        for (s, label) in self.labels.iter().enumerate() {
            let stem = format!("{:03}-{}.dop{}", s + 1, label, self.threads);
            let lock = if self.factor(i, label) < 1.0 {
                600
            } else {
                200
            };
            let folded = format!(
                "postgres;PostgresMain;exec_simple_query;ExecScan 800\npostgres;PostgresMain;exec_simple_query;LWLockAcquire;futex_wait_[k] {lock}\npostgres;PostgresMain;pq_getbyte 100\n"
            );
            std::fs::write(dir.join(format!("{stem}.folded")), folded).expect("write folded");
            let info = ProfileInfo {
                target: self.target.clone(),
                step: label.split('_').next().unwrap_or(label).to_string(),
                label: label.clone(),
                threads: self.threads,
                stem: stem.clone(),
                samples: 1100 + lock,
                freq: 99,
                callgraph: Callgraph::Fp,
                folded: Some(format!("{stem}.folded")),
                svg: None,
                speedscope: None,
                unresolved_pct: 0.0,
                note: None,
                queries: 5000,
            };
            std::fs::write(
                dir.join(format!("{stem}.json")),
                serde_json::to_string_pretty(&info).expect("profile json"),
            )
            .expect("write profile info");
        }
    }
}

/// xorshift64*, with a Box–Muller normal: seeded noise, the same on every machine.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> f64 {
        let mut x = self.0.max(1);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn gauss(&mut self) -> f64 {
        let u = self.next().max(1e-12);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}
