//! The mock engine: executes nothing, waits a configurable service time and fails at a
//! configurable rate. It exists to test the runner and the reports deterministically.
//!
//! Parameters: `latency` (`0`, `250us`, `1ms`, `2s`), `dist` (`fixed`, `uniform` over
//! [0, 2·latency], `exp` with mean latency), `error_rate` (0..1, retryable errors),
//! `fail_rate` (0..1, statement errors that are not retried), `fail_on` (statements
//! containing this text fail hard), `seed`, `families` (`sql`, `kv`
//! or `sql,kv`: the operation families it serves; key-value operations take the same
//! service time, reads return one row and scans `count`), `stall_once` (a duration: the
//! first SELECT the target serves takes that long, once — a one-off stall).
//!
//! Its own crate, outside the seam: the mock is an engine like the others (it implements
//! the seam's traits and nothing more), and the seam holds no engine.
#![deny(missing_docs)]

use dbdelta_engine::{
    Connection, Dialect, Engine, EngineConfig, EngineError, EngineInfo, EngineKind, ErrorKind,
    Family, KvKind, KvOp, OpenOptions, Outcome, SettleReport, SettleWait, SpecError,
    StatementTexts, StmtId, Value,
};
use dbdelta_model::TargetSpec;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Latency distribution of the mock service time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LatencyDist {
    /// Always exactly the latency.
    Fixed,
    /// Uniform over [0, 2 × latency].
    Uniform,
    /// Exponential with the latency as mean.
    Exp,
}

/// Configuration of a mock target.
#[derive(Debug, Clone, PartialEq)]
pub struct MockConfig {
    /// Mean service time of one statement.
    pub latency: Duration,
    /// Shape of the service time.
    pub dist: LatencyDist,
    /// Probability that a statement fails with a retryable error.
    pub error_rate: f64,
    /// Probability that a statement fails with a statement error (not retried).
    pub fail_rate: f64,
    /// Statements containing this text fail with a statement error.
    pub fail_on: Option<String>,
    /// Seed of the mock's random draws.
    pub seed: u64,
    /// The first SELECT the target serves takes this long instead (once per target).
    pub stall_once: Option<Duration>,
    /// The operation families served.
    pub families: &'static [Family],
}

/// Parses `0`, `750ns`, `250us`, `1.5ms`, `2s` into a duration.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if t == "0" {
        ("0", 1.0)
    } else {
        return None;
    };
    let v: f64 = num.trim().parse().ok()?;
    // At most a day: beyond it a typo, and a duration the runner's clock arithmetic (and
    // `Duration::from_secs_f64`) would overflow.
    let secs = v * mult;
    (v.is_finite() && (0.0..=86_400.0).contains(&secs)).then(|| Duration::from_secs_f64(secs))
}

impl MockConfig {
    /// Reads the mock knobs from a target's parameters.
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        let bad = |k: &str, v: &str, fix: &str| {
            EngineError::config(format!("target '{}': {k}={v} is invalid: {fix}", spec.name))
        };
        let mut cfg = MockConfig {
            latency: Duration::ZERO,
            dist: LatencyDist::Fixed,
            error_rate: 0.0,
            fail_rate: 0.0,
            fail_on: None,
            seed: 1,
            families: &[Family::Sql],
            stall_once: None,
        };
        for (k, v) in &spec.params {
            match k.as_str() {
                "latency" => {
                    cfg.latency = parse_duration(v)
                        .ok_or_else(|| bad(k, v, "write a duration up to a day, such as 250us, 1ms or 0"))?
                }
                "dist" => {
                    cfg.dist = match v.as_str() {
                        "fixed" => LatencyDist::Fixed,
                        "uniform" => LatencyDist::Uniform,
                        "exp" => LatencyDist::Exp,
                        _ => return Err(bad(k, v, "use fixed, uniform or exp")),
                    }
                }
                "error_rate" => {
                    cfg.error_rate = v
                        .parse::<f64>()
                        .ok()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| bad(k, v, "use a probability between 0 and 1"))?
                }
                "fail_rate" => {
                    cfg.fail_rate = v
                        .parse::<f64>()
                        .ok()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| bad(k, v, "use a probability between 0 and 1"))?
                }
                "fail_on" => cfg.fail_on = Some(v.clone()),
                "stall_once" => {
                    cfg.stall_once = Some(parse_duration(v).ok_or_else(|| {
                        bad(k, v, "write a duration up to a day, such as 2500ms")
                    })?)
                }
                "families" => {
                    cfg.families = match v.as_str() {
                        "sql" => &[Family::Sql],
                        "kv" => &[Family::KeyValue],
                        "sql,kv" | "kv,sql" => &[Family::Sql, Family::KeyValue],
                        _ => return Err(bad(k, v, "use sql, kv or sql,kv")),
                    }
                }
                "seed" => {
                    cfg.seed = v
                        .parse()
                        .map_err(|_| bad(k, v, "use a non-negative integer"))?
                }
                _ => {
                    return Err(EngineError::config(format!(
                        "target '{}': unknown mock parameter '{k}': known are latency, dist, error_rate, fail_rate, fail_on, seed, families, stall_once",
                        spec.name
                    )))
                }
            }
        }
        Ok(cfg)
    }
}

/// The `mock` engine kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct MockKind;

impl EngineKind for MockKind {
    fn name(&self) -> &'static str {
        "mock"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(MockConfig::from_spec(spec)?))
    }

    /// Statements run (sleep) on the caller's thread.
    fn thread_per_connection(&self) -> bool {
        true
    }
}

impl EngineConfig for MockConfig {
    fn open(&self, _scratch: &Path, _opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(MockEngine::new(self.clone())))
    }
}

/// The mock target.
#[derive(Debug)]
pub struct MockEngine {
    cfg: MockConfig,
    connections: Arc<AtomicU64>,
    /// Set once `stall_once` has been served.
    stalled: Arc<AtomicBool>,
}

impl MockEngine {
    /// A mock target with the given knobs.
    pub fn new(cfg: MockConfig) -> Self {
        MockEngine {
            cfg,
            connections: Arc::new(AtomicU64::new(0)),
            stalled: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Engine for MockEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Mock
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        let n = self.connections.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(MockConnection {
            cfg: self.cfg.clone(),
            sqls: StatementTexts::default(),
            rng: splitmix(self.cfg.seed ^ (n + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            stalled: self.stalled.clone(),
        }))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut settings = BTreeMap::new();
        settings.insert("latency".into(), format!("{:?}", self.cfg.latency));
        settings.insert("dist".into(), format!("{:?}", self.cfg.dist).to_lowercase());
        settings.insert("error_rate".into(), self.cfg.error_rate.to_string());
        Ok(EngineInfo {
            version: format!("mock {}", env!("CARGO_PKG_VERSION")),
            settings,
        })
    }

    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        Ok(SettleReport {
            actions: tables
                .iter()
                .map(|t| format!("mock settle {t}"))
                .chain(wait.skipped())
                .collect(),
        })
    }

    fn embedded(&self) -> bool {
        true
    }

    // The mock only sleeps in its statements.
    fn background_work(&self) -> bool {
        false
    }

    fn families(&self) -> &'static [Family] {
        self.cfg.families
    }
}

/// A mock connection: counts placeholders as rows for SELECTs.
pub struct MockConnection {
    cfg: MockConfig,
    sqls: StatementTexts,
    rng: u64,
    stalled: Arc<AtomicBool>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl MockConnection {
    fn unit(&mut self) -> f64 {
        self.rng = splitmix(self.rng);
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    fn serve(&mut self, sql: &str, nparams: usize) -> Result<Outcome, EngineError> {
        let base = self.cfg.latency.as_secs_f64();
        let wait = match self.cfg.dist {
            LatencyDist::Fixed => base,
            LatencyDist::Uniform => 2.0 * base * self.unit(),
            LatencyDist::Exp => -base * (1.0 - self.unit()).ln(),
        };
        if wait > 0.0 {
            spin_sleep(Duration::from_secs_f64(wait));
        }
        if let Some(f) = &self.cfg.fail_on {
            if sql.contains(f.as_str()) {
                return Err(EngineError::statement(format!("mock failure on '{f}'")));
            }
        }
        if self.cfg.fail_rate > 0.0 && self.unit() < self.cfg.fail_rate {
            return Err(EngineError::statement("mock statement error").with_code("MOCK 1"));
        }
        if self.cfg.error_rate > 0.0 && self.unit() < self.cfg.error_rate {
            return Err(EngineError::new(
                ErrorKind::Retryable,
                "mock retryable error",
            ));
        }
        let head = sql.trim_start().as_bytes();
        let is = |w: &[u8]| head.len() >= w.len() && head[..w.len()].eq_ignore_ascii_case(w);
        if let Some(stall) = self.cfg.stall_once {
            if is(b"SELECT") && !self.stalled.swap(true, Ordering::SeqCst) {
                std::thread::sleep(stall);
            }
        }
        Ok(if is(b"SELECT") {
            Outcome {
                rows: nparams.max(1) as u64,
                affected: 0,
                has_result: true,
            }
        } else if is(b"BEGIN") || is(b"COMMIT") || is(b"ROLLBACK") || is(b"CREATE") || is(b"DROP") {
            Outcome::default()
        } else {
            Outcome {
                rows: 0,
                affected: 1,
                has_result: false,
            }
        })
    }
}

/// Sleeps precisely: the OS sleep for the bulk, a spin for the last 100 µs.
fn spin_sleep(d: Duration) {
    let end = Instant::now() + d;
    if d > Duration::from_micros(200) {
        std::thread::sleep(d - Duration::from_micros(100));
    }
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

impl Connection for MockConnection {
    fn into_session(
        self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        Err(self)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mock
    }

    fn families(&self) -> &'static [Family] {
        self.cfg.families
    }

    fn kv(&mut self, op: &KvOp<'_>) -> Result<Outcome, EngineError> {
        if !self.cfg.families.contains(&Family::KeyValue) {
            return Err(EngineError::unsupported(Family::KeyValue, op.kind.name()));
        }
        let mut out = self.serve("KV", 0)?;
        out.affected = 0;
        match op.kind {
            KvKind::Read | KvKind::ReadModifyWrite => {
                out.rows = 1;
                out.has_result = true;
            }
            KvKind::Scan => {
                out.rows = u64::from(op.count);
                out.has_result = true;
            }
            KvKind::Insert | KvKind::Update | KvKind::Delete => out.affected = 1,
            // db_bench's raw operations are served by native ordered stores only.
            kind => return Err(EngineError::unsupported(Family::RawKeyValue, kind.name())),
        }
        if op.kind == KvKind::ReadModifyWrite {
            out.affected = 1;
        }
        Ok(out)
    }

    fn kv_clear(&mut self) -> Result<(), EngineError> {
        if !self.cfg.families.contains(&Family::KeyValue) {
            return Err(EngineError::unsupported(Family::KeyValue, "clear"));
        }
        Ok(())
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        if !self.cfg.families.contains(&Family::Sql) {
            return Err(EngineError::unsupported(Family::Sql, "prepare"));
        }
        Ok(self.sqls.add(sql))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        // Take the texts out for the call so `serve` can borrow self mutably.
        let texts = std::mem::take(&mut self.sqls);
        let out = texts
            .get(stmt)
            .and_then(|sql| self.serve(sql, params.len()));
        self.sqls = texts;
        out
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        self.serve(sql, 0)
    }

    fn query_scalar(&mut self, _sql: &str) -> Result<Option<String>, EngineError> {
        Ok(Some("0".into()))
    }

    fn bulk_insert(
        &mut self,
        _table: &str,
        rows: &mut dyn dbdelta_engine::RowSource,
    ) -> Result<u64, EngineError> {
        let mut n = 0;
        let mut row = Vec::new();
        while {
            row.clear();
            rows.next_row(&mut row)
        } {
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1ms"), Some(Duration::from_millis(1)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("fast"), None);
        assert_eq!(parse_duration("-1ms"), None);
    }

    #[test]
    fn knobs_are_validated() {
        let spec = TargetSpec::parse("m=mock?latency=1ms&error_rate=2").unwrap();
        assert!(MockConfig::from_spec(&spec).is_err());
        let spec = TargetSpec::parse("m=mock?bogus=1").unwrap();
        assert!(MockConfig::from_spec(&spec)
            .unwrap_err()
            .to_string()
            .contains("bogus"));
    }
}
