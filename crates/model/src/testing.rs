//! Fixtures for tests (feature `test-support`): the run options of a small sysbench run,
//! changed field by field, instead of the twenty-field literal each test file repeated.

use crate::{RunOptions, Scale};
use std::path::Path;

/// Builds [`RunOptions`] for tests: sysbench at quick scale, 2 tables of 2,000 rows, one
/// thread, 1 s windows after a 0.2 s warm-up, seed 3, prepared statements, OS metrics on.
#[derive(Debug, Clone)]
pub struct OptionsBuilder {
    options: RunOptions,
}

impl Default for OptionsBuilder {
    fn default() -> Self {
        OptionsBuilder {
            options: RunOptions {
                suite: "sysbench".into(),
                scale: Scale::Quick,
                tables: 2,
                table_size: 2000,
                threads: vec![1],
                read_secs: 1.0,
                write_secs: 1.0,
                insert_secs: 1.0,
                warmup_secs: 0.2,
                round_warmup_secs: None,
                turn_ms: None,
                settle: Scale::Quick.defaults().settle,
                steps: Vec::new(),
                seed: 3,
                prepared: true,
                os_metrics: true,
                device: None,
                rate: None,
                i_own_this_database: false,
                client: Default::default(),
                tpc: Default::default(),
            },
        }
    }
}

impl OptionsBuilder {
    /// The defaults above.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs only the steps matching these globs.
    pub fn steps(mut self, steps: &[&str]) -> Self {
        self.options.steps = steps.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Read, write and insert windows of `secs` seconds.
    pub fn secs(mut self, secs: f64) -> Self {
        self.options.read_secs = secs;
        self.options.write_secs = secs;
        self.options.insert_secs = secs;
        self
    }

    /// `tables` tables of `rows` rows.
    pub fn tables(mut self, tables: u32, rows: u64) -> Self {
        self.options.tables = tables;
        self.options.table_size = rows;
        self
    }

    /// Thread counts, one level each.
    pub fn threads(mut self, threads: &[u32]) -> Self {
        self.options.threads = threads.to_vec();
        self
    }

    /// The run's seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// Warm-up seconds before each window.
    pub fn warmup(mut self, secs: f64) -> Self {
        self.options.warmup_secs = secs;
        self
    }

    /// Sample OS metrics during steps, or not.
    pub fn os_metrics(mut self, on: bool) -> Self {
        self.options.os_metrics = on;
        self
    }

    /// Any other change.
    pub fn with(mut self, change: impl FnOnce(&mut RunOptions)) -> Self {
        change(&mut self.options);
        self
    }

    /// The options.
    pub fn build(self) -> RunOptions {
        self.options
    }
}

/// True when every file in `needed` exists; otherwise the test is skipped with a message,
/// except under CI, where a missing server fails the test (it must never pass unrun).
pub fn require(needed: &[&str], install: &str) -> bool {
    let missing: Vec<&&str> = needed.iter().filter(|p| !Path::new(p).exists()).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{missing:?} missing under CI ({install}; scripts/test.sh installs it)"
    );
    eprintln!("SKIPPED: {missing:?} missing ({install})");
    false
}
