//! What a query-set run measured (`queryset.json` in the run directory): per target, the
//! setup scripts' times, the catalog size of each table, and per query the time of every
//! run (run 0 is the cold run), the rows returned and a checksum of the result.
//!
//! Runs are measured in rounds: round k of every target ran before round k + 1 of any, in
//! alternating target order, so `runs_secs[k]` of two targets form a pair.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// File name of a query-set result in the run directory.
pub const QUERYSET_FILE: &str = "queryset.json";
/// Version of the file's layout.
pub const QUERYSET_SCHEMA: u32 = 1;

/// How a query's result is reduced to a checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ChecksumMode {
    /// The multiset of rows (row order ignored): for queries without a total ORDER BY.
    #[default]
    Unordered,
    /// The rows in order: for queries whose ORDER BY fixes every row's place.
    Ordered,
    /// No checksum: results legitimately differ between engines (rankings, floating sums).
    None,
}

/// One query-set run: the suite, the runs per query and every target's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySetResult {
    /// Layout version ([`QUERYSET_SCHEMA`]).
    pub schema: u32,
    /// The suite's name.
    pub suite: String,
    /// The suite's description.
    #[serde(default)]
    pub description: String,
    /// Where the suite was read from.
    pub origin: String,
    /// Runs of each query per target, the cold one included.
    pub repeat_query: u32,
    /// The suite's parameters after the scale was applied (substituted into the SQL).
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// The queries in report order, with their checksum rule.
    pub queries: Vec<QueryDef>,
    /// Tables whose size is reported.
    #[serde(default)]
    pub tables: Vec<String>,
    /// Targets in column order, base first.
    pub targets: Vec<QsTarget>,
    /// True when the run was interrupted before every query ran.
    #[serde(default)]
    pub interrupted: bool,
}

/// A query of the suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryDef {
    /// Short name (the file stem).
    pub name: String,
    /// How its result is checksummed.
    pub checksum: ChecksumMode,
    /// Why results may differ between engines, from the suite (shown in the report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One target's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QsTarget {
    /// Target name.
    pub name: String,
    /// Engine name (`sqlite`, `postgres`, …).
    pub engine: String,
    /// Setup scripts and the loader, in the order they ran.
    pub setup: Vec<SetupStep>,
    /// Catalog size of each of the suite's tables (absent when the engine cannot tell).
    #[serde(default)]
    pub tables: Vec<TableSizeRow>,
    /// Queries in suite order (each appears once it has run on this target).
    pub queries: Vec<QueryRuns>,
    /// Why the target could not run at all (it failed to start, or its setup failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A setup script (or the loader) and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupStep {
    /// File name (`02-index.sql`) or `loader:<table>`.
    pub name: String,
    /// Wall time in seconds; `None` when it failed.
    pub secs: Option<f64>,
    /// The error, naming the file and statement line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The size of one table on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TableBytes {
    /// Data bytes as stored.
    pub data: u64,
    /// Secondary-index bytes, where the engine splits them out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// Bytes before compression, where the engine keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncompressed: Option<u64>,
}

/// A table's size row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSizeRow {
    /// Table name.
    pub table: String,
    /// Its size, or `None` when the catalog did not know the table.
    pub bytes: Option<TableBytes>,
    /// Why the size is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every run of one query on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRuns {
    /// Query name.
    pub name: String,
    /// The file that ran (`q3.postgres.sql` when a dialect variant exists).
    pub file: String,
    /// Seconds of each run, round order; run 0 is the cold run.
    pub runs_secs: Vec<f64>,
    /// Rows returned (by the last run).
    pub rows: Option<u64>,
    /// Checksum of the result (hex), per the query's [`ChecksumMode`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// The error that ended the query's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the query did not run here (no file for this engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl QueryRuns {
    /// The warm runs (every run after the cold one).
    pub fn warm(&self) -> &[f64] {
        self.runs_secs.get(1..).unwrap_or(&[])
    }
}
