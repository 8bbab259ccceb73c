//! The Insert Benchmark (Mark Callaghan's iibench.py): its options and what one of its steps
//! measured beyond the common [`crate::StepResult`] fields.

use serde::{Deserialize, Serialize};

/// The background insert rates of the read+write steps, rows/s per client (iq.sh).
pub const RATES: [u32; 3] = [100, 500, 1000];

/// Options of an Insert Benchmark run (`dbdelta run --suite ibench`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IbenchOptions {
    /// Clients (iibench.py processes, `dop`); each has its own connections.
    pub clients: u32,
    /// Rows each client inserts in l.i0 (`mr1`, published: 20M).
    pub rows_load: u64,
    /// Rows each client inserts in l.i1 + l.i2 together (`mr2`; l.i1 gets 4/5, l.i2 1/5).
    pub rows_write: u64,
    /// Seconds per read+write step when the insert rate is met (published: 1800).
    pub query_secs: f64,
    /// All clients share table `pi1` (`only1t=yes`); otherwise client n uses `pi<n>`.
    #[serde(default)]
    pub one_table: bool,
    /// Background insert rates of the read+write steps, rows/s per client.
    #[serde(default = "default_rates")]
    pub rates: Vec<u32>,
    /// Seconds to sleep after the settle (vac) step; the scripts use min(1200, 60 + nr1/1e6).
    #[serde(default)]
    pub settle_sleep_secs: f64,
    /// Seed of the row and key generators.
    #[serde(default)]
    pub seed: u64,
}

fn default_rates() -> Vec<u32> {
    RATES.to_vec()
}

impl Default for IbenchOptions {
    fn default() -> Self {
        IbenchOptions::published(1)
    }
}

impl IbenchOptions {
    /// The published configuration: l.i0 20M rows per client, l.i1 40M, l.i2 10M, 1800 s per
    /// read+write step, settle sleep min(1200, 60 + nr1/1e6).
    pub fn published(clients: u32) -> Self {
        let rows_load = 20_000_000;
        IbenchOptions {
            clients,
            rows_load,
            rows_write: 50_000_000,
            query_secs: 1800.0,
            one_table: false,
            rates: default_rates(),
            settle_sleep_secs: crate::options::settle_bound_secs(rows_load * u64::from(clients))
                as f64,
            seed: 1,
        }
    }

    /// The quick preset: 200k rows load, 50k rows write, 10 s per read+write step.
    pub fn quick(clients: u32) -> Self {
        IbenchOptions {
            clients,
            rows_load: 200_000,
            rows_write: 50_000,
            query_secs: 10.0,
            one_table: false,
            rates: default_rates(),
            settle_sleep_secs: 1.0,
            seed: 1,
        }
    }

    /// Rows per client in l.i1 (4/5 of `rows_write`).
    pub fn rows_li1(&self) -> u64 {
        self.rows_write * 4 / 5
    }

    /// Rows per client in l.i2 (1/5 of `rows_write`).
    pub fn rows_li2(&self) -> u64 {
        self.rows_write - self.rows_li1()
    }

    /// Table names: `pi1..pi<clients>`, or only `pi1` when shared.
    pub fn tables(&self) -> Vec<String> {
        let n = if self.one_table { 1 } else { self.clients };
        (1..=n.max(1)).map(|i| format!("pi{i}")).collect()
    }
}

/// Latency of one kind of operation in an Insert Benchmark step, µs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KindLatency {
    /// Operations measured.
    pub count: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 95th percentile, µs.
    pub p95_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Maximum response time, µs.
    pub max_us: f64,
}

/// What an Insert Benchmark step measured (`StepResult::ibench`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IbenchStats {
    /// Clients (`dop`).
    #[serde(default)]
    pub clients: u32,
    /// Rows inserted by all clients.
    #[serde(default)]
    pub rows_inserted: u64,
    /// Rows deleted by all clients.
    #[serde(default)]
    pub rows_deleted: u64,
    /// Queries completed by all clients.
    #[serde(default)]
    pub queries: u64,
    /// Rows per insert statement (transaction).
    #[serde(default)]
    pub rows_per_commit: u64,
    /// Inserted rows per second over the step's wall clock (`ips`).
    #[serde(default)]
    pub inserts_per_s: f64,
    /// l.x only: (rows loaded by l.i0 + rows inserted) / step seconds.
    #[serde(default)]
    pub indexed_rows_per_s: Option<f64>,
    /// Queries per second over the step's wall clock (`qps`).
    #[serde(default)]
    pub queries_per_s: f64,
    /// Deleted rows per second.
    #[serde(default)]
    pub deletes_per_s: f64,
    /// Read+write steps: the background insert rate target, rows/s for all clients
    /// (`dop × rate`).
    #[serde(default)]
    pub target_insert_rate: Option<f64>,
    /// Read+write steps: the measured insert rate was below 95 % of the target (iibench's chart_all.sh).
    #[serde(default)]
    pub sla_failed: bool,
    /// Insert statement latency.
    #[serde(default)]
    pub insert_latency: KindLatency,
    /// Delete statement latency.
    #[serde(default)]
    pub delete_latency: KindLatency,
    /// Query latency.
    #[serde(default)]
    pub query_latency: KindLatency,
    /// Host CPU µs per inserted row (`cpupq` of load steps).
    #[serde(default)]
    pub cpu_us_per_insert: Option<f64>,
    /// Host CPU µs per query (`cpupq` of read+write steps).
    #[serde(default)]
    pub cpu_us_per_query: Option<f64>,
    /// KiB written to the device per inserted row (`wkbpi`).
    #[serde(default)]
    pub wkb_per_insert: Option<f64>,
    /// Host context switches per operation (per insert for load steps, per query for
    /// read+write steps).
    #[serde(default)]
    pub cs_per_op: Option<f64>,
    /// Database size on disk at the end of the step, bytes (`dbGB`).
    #[serde(default)]
    pub db_bytes: Option<u64>,
    /// Live rows at the end of the step, all tables (`count(*)`), when counted.
    #[serde(default)]
    pub rows_at_end: Option<u64>,
}

impl IbenchStats {
    /// The step's headline number (chart_all.sh's `tput.tab`): IPS for l.i0/l.i1/l.i2, indexed rows/s for l.x,
    /// QPS for the read+write steps.
    pub fn headline(&self) -> f64 {
        if let Some(x) = self.indexed_rows_per_s {
            x
        } else if self.target_insert_rate.is_some() {
            self.queries_per_s
        } else {
            self.inserts_per_s
        }
    }
}

/// True when a measured insert rate fails the SLA of `target` (iibench's chart_all.sh): below round(0.95 × target).
pub fn sla_failed(inserts_per_s: f64, target: f64) -> bool {
    inserts_per_s < (0.95 * target).round()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sla_rule_is_95_percent_rounded() {
        assert!(!sla_failed(95.0, 100.0));
        assert!(sla_failed(94.9, 100.0));
        assert!(!sla_failed(475.0, 500.0));
        assert!(sla_failed(474.0, 500.0));
    }

    #[test]
    fn write_rows_split_four_to_one() {
        let o = IbenchOptions::published(1);
        assert_eq!(o.rows_li1(), 40_000_000);
        assert_eq!(o.rows_li2(), 10_000_000);
        assert_eq!(o.settle_sleep_secs, 80.0);
    }
}
