//! Suites as data: an ordered list of steps read from TOML (embedded in the binary, or a
//! file given by the user), validated once.

use dbdelta_engine::Family;
use dbdelta_model::Group;
use serde::Deserialize;
use std::path::Path;

/// The suites shipped inside the binary: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("sysbench", include_str!("../../../suites/sysbench.toml")),
    ("ycsb", include_str!("../../../suites/ycsb.toml")),
    ("kv", include_str!("../../../suites/kv.toml")),
    ("tpcb", include_str!("../../../suites/tpcb.toml")),
    ("tpcc", include_str!("../../../suites/tpcc.toml")),
];

/// Why a suite could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// No built-in suite and no file of that name.
    #[error(
        "unknown suite '{0}': built-in suites are {1}; or pass the path of a suite .toml file"
    )]
    Unknown(String, String),
    /// The file could not be read.
    #[error("cannot read suite file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("suite {origin} is invalid: {message}")]
    Parse {
        /// Suite name or file.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A step is inconsistent.
    #[error("suite {origin}, step {index} ({name}): {message}")]
    Step {
        /// Suite name or file.
        origin: String,
        /// 1-based position of the step.
        index: usize,
        /// The step's name, if any.
        name: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// A non-measured action in a suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Create and load the tables, then build the secondary index (sysbench prepare).
    Load,
    /// Post-write maintenance: analyze / vacuum / checkpoint / flush (the engine's `settle`).
    Settle,
}

/// Which duration flag a step runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DurationClass {
    /// `--read-secs`.
    Read,
    /// `--write-secs`.
    Write,
    /// `--insert-secs`.
    Insert,
}

/// The statement logic of a step (one native implementation per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// `SELECT c FROM sbtest WHERE id=?` (oltp_point_select).
    PointSelect,
    /// `SELECT c … WHERE id IN (…points…)`, random or hot ids (oltp_inlist_select).
    InlistSelect,
    /// `SELECT id|k[, c] … WHERE id|k IN (…points…)` (oltp_points_covered).
    PointsCovered,
    /// `SELECT id|k[, c] … WHERE id|k BETWEEN x AND x+points` (oltp_range_covered).
    RangeCovered,
    /// BEGIN; point selects; ranges; COMMIT (oltp_read_only).
    ReadOnly,
    /// `SELECT * FROM sbtest WHERE LENGTH(c) < 0`, plain text (oltp_scan).
    Scan,
    /// `UPDATE … SET c=? WHERE id IN (…points…)` (oltp_inlist_update).
    UpdateInlist,
    /// `UPDATE … SET k=k+1 WHERE id=?` (oltp_update_index).
    UpdateIndex,
    /// `UPDATE … SET c=? WHERE id=?` (oltp_update_non_index).
    UpdateNonindex,
    /// BEGIN; index update; non-index update; delete; insert; COMMIT (oltp_write_only).
    WriteOnly,
    /// BEGIN; points; ranges; updates; delete; insert; COMMIT (oltp_read_write).
    ReadWrite,
    /// `DELETE … WHERE id=?` (oltp_delete).
    Delete,
    /// `INSERT … (k, c, pad) VALUES (…)`, plain text (oltp_insert).
    Insert,
    /// YCSB workload A: 50 % read, 50 % update, zipfian.
    YcsbA,
    /// YCSB workload B: 95 % read, 5 % update, zipfian.
    YcsbB,
    /// YCSB workload C: read only, zipfian.
    YcsbC,
    /// YCSB workload D: 95 % read, 5 % insert, latest.
    YcsbD,
    /// YCSB workload E: 95 % scan, 5 % insert, zipfian.
    YcsbE,
    /// YCSB workload F: 50 % read, 50 % read-modify-write, zipfian.
    YcsbF,
    /// db_bench `fillseq` with the WAL disabled (one thread, num keys in order).
    Fillseq,
    /// db_bench `readrandom`.
    Readrandom,
    /// db_bench `seekrandom` with 10 nexts.
    Fwdrange,
    /// db_bench `seekrandom` with 10 prevs.
    Revrange,
    /// db_bench `multireadrandom` with batches of 10.
    Multireadrandom,
    /// db_bench `overwrite`.
    Overwrite,
    /// db_bench `overwrite` of a tenth of the keys per thread.
    Overwritesome,
    /// db_bench `readwhilewriting` (writer at 2 MB/s).
    Readwhilewriting,
    /// db_bench `fwdrangewhilewriting`.
    Fwdrangewhilewriting,
    /// db_bench `revrangewhilewriting`.
    Revrangewhilewriting,
    /// pgbench's default script `tpcb-like`.
    TpcbLike,
    /// pgbench's `simple-update` (`-N`).
    SimpleUpdate,
    /// pgbench's `select-only` (`-S`).
    SelectOnly,
    /// TPC-C's five transactions from a card deck (45/43/4/4/4).
    Tpcc,
}

impl WorkloadKind {
    /// Whether a step of this kind writes the data the later steps read, with no load
    /// before it (db_bench's fillseq): a selection of later steps needs it.
    pub fn fills(self) -> bool {
        matches!(self, WorkloadKind::Fillseq)
    }

    /// The data set the kind works on (the benchmark it belongs to).
    pub fn dataset(self) -> Dataset {
        use WorkloadKind::*;
        match self {
            PointSelect | InlistSelect | PointsCovered | RangeCovered | ReadOnly | Scan
            | UpdateInlist | UpdateIndex | UpdateNonindex | WriteOnly | ReadWrite | Delete
            | Insert => Dataset::Sbtest,
            YcsbA | YcsbB | YcsbC | YcsbD | YcsbE | YcsbF => Dataset::Usertable,
            Fillseq | Readrandom | Fwdrange | Revrange | Multireadrandom | Overwrite
            | Overwritesome | Readwhilewriting | Fwdrangewhilewriting | Revrangewhilewriting => {
                Dataset::Keys
            }
            TpcbLike | SimpleUpdate | SelectOnly => Dataset::Pgbench,
            Tpcc => Dataset::Tpcc,
        }
    }

    /// True for kinds that change data (any statement of the event writes).
    pub fn writes(self) -> bool {
        use WorkloadKind::*;
        match self {
            PointSelect | InlistSelect | PointsCovered | RangeCovered | ReadOnly | Scan | YcsbC
            | Readrandom | Fwdrange | Revrange | Multireadrandom | SelectOnly => false,
            UpdateInlist | UpdateIndex | UpdateNonindex | WriteOnly | ReadWrite | Delete
            | Insert | YcsbA | YcsbB | YcsbD | YcsbE | YcsbF | Fillseq | Overwrite
            | Overwritesome | Readwhilewriting | Fwdrangewhilewriting | Revrangewhilewriting
            | TpcbLike | SimpleUpdate | Tpcc => true,
        }
    }

    /// True for kinds whose unit is a transaction of several statements measured as
    /// pgbench does (TPC-B, TPC-C): transactions per second is the headline.
    pub fn counts_transactions(self) -> bool {
        matches!(self.dataset(), Dataset::Pgbench | Dataset::Tpcc)
    }
}

/// The tables a suite loads and works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// sysbench's `sbtest1…N` (`--tables` × `--table-size`).
    #[default]
    Sbtest,
    /// YCSB's `usertable` (`--table-size` records), or a native key-value store.
    Usertable,
    /// db_bench's binary keys in a native ordered store (`--table-size` keys), written by
    /// the suite's fillseq step: `action = "load"` does not apply.
    Keys,
    /// pgbench's four `pgbench_*` tables at `--scale-factor`.
    Pgbench,
    /// TPC-C's nine tables at `--warehouses`.
    Tpcc,
}

/// How many threads a step uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadsRule {
    /// One thread per table (sysbench's warm step).
    Tables,
    /// One thread whatever `--threads` says (db_bench's fillseq).
    One,
    /// TPC-C's terminals (`--terminals`, 10 per warehouse by default).
    Terminals,
}

/// One `[[step]]` table as written in a suite file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepDef {
    /// A non-measured action (exclusive with `workload`).
    pub action: Option<Action>,
    /// Step name, e.g. `point-query.pre`.
    #[serde(default)]
    pub name: String,
    /// The statement logic.
    pub workload: Option<WorkloadKind>,
    /// The `range` of the label; the range width for read-only and read-write.
    pub range: Option<u32>,
    /// IN-list length / range span for in-list, points and range workloads.
    pub points: Option<u32>,
    /// Hot-points: always the ids table_size/2+1 … +points.
    #[serde(default)]
    pub hot: bool,
    /// Covered (index-only) projection; false adds column c.
    #[serde(default = "yes")]
    pub covered: bool,
    /// Search the primary key (true) or the secondary index on k (false).
    #[serde(default = "yes")]
    pub on_id: bool,
    /// Key distribution: `uniform` (default) or `zipfian` (exponent 0.8).
    pub rand: Option<String>,
    /// Overrides the table size for key choice (update-one uses 1).
    pub table_size: Option<u64>,
    /// Point selects per read-only/read-write transaction (default 10).
    pub point_selects: Option<u32>,
    /// Simple ranges per transaction (default 1).
    pub simple_ranges: Option<u32>,
    /// SUM ranges per transaction (default 1).
    pub sum_ranges: Option<u32>,
    /// ORDER BY ranges per transaction (default 1).
    pub order_ranges: Option<u32>,
    /// DISTINCT ranges per transaction (default 1).
    pub distinct_ranges: Option<u32>,
    /// Which duration flag applies.
    pub duration: Option<DurationClass>,
    /// Measured but never reported.
    #[serde(default)]
    pub warm: bool,
    /// Measured in one round only, however many rounds the run has: the step builds the
    /// state later steps read (db_bench's fillseq), so a second round would measure
    /// something else. Its ratio has no interval and the reports say so.
    #[serde(default)]
    pub once: bool,
    /// Whether rounds after the first may share one window in turns (`--turn-ms`); `false`
    /// keeps a window per target in every round: TPC-C's terminals hold locks across
    /// statements, and a terminal paused at the end of its turn holds them while the others
    /// of its target wait, so a turn can pass with no transaction completed.
    #[serde(default = "yes")]
    pub turns: bool,
    /// Thread count rule; default: every `--threads` value.
    pub threads: Option<ThreadsRule>,
    /// Report group; default derived from the name as the published scripts do.
    pub group: Option<Group>,
    /// Paced load for this step: events per second (overrides `--rate`).
    pub rate: Option<f64>,
}

fn yes() -> bool {
    true
}

/// A validated measured step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Position in the suite (1-based), used to order result files.
    pub order: u32,
    /// The step name, e.g. `random-points.pre`.
    pub name: String,
    /// The report label, e.g. `random-points.pre_range=100`.
    pub label: String,
    /// Report group.
    pub group: Group,
    /// Which duration flag applies.
    pub duration: DurationClass,
    /// Measured but never reported.
    pub warm: bool,
    /// Measured in one round only (see [`StepDef::once`]).
    pub once: bool,
    /// Rounds may share a window in turns (see [`StepDef::turns`]).
    pub turns: bool,
    /// Thread count rule.
    pub threads: Option<ThreadsRule>,
    /// Paced load: events per second (all workers), if the suite sets one.
    pub rate: Option<f64>,
    /// Workload parameters.
    pub params: WorkloadParams,
}

/// Resolved workload parameters of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadParams {
    /// The statement logic.
    pub kind: WorkloadKind,
    /// Range width (read-only, read-write) or label range.
    pub range: u32,
    /// IN-list length or range span.
    pub points: u32,
    /// Hot ids instead of random ones.
    pub hot: bool,
    /// Covered projection.
    pub covered: bool,
    /// Primary key (true) or k (false).
    pub on_id: bool,
    /// Zipfian instead of uniform keys.
    pub zipfian: bool,
    /// Table size override for key choice.
    pub table_size: Option<u64>,
    /// Point selects per transaction.
    pub point_selects: u32,
    /// Simple ranges per transaction.
    pub simple_ranges: u32,
    /// SUM ranges per transaction.
    pub sum_ranges: u32,
    /// ORDER BY ranges per transaction.
    pub order_ranges: u32,
    /// DISTINCT ranges per transaction.
    pub distinct_ranges: u32,
}

/// One entry of a suite's sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum SuiteItem {
    /// A non-measured action.
    Action {
        /// Position in the suite (1-based).
        order: u32,
        /// Which action.
        action: Action,
    },
    /// A measured step.
    Step(Step),
}

/// A validated suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// The sequence.
    pub items: Vec<SuiteItem>,
    /// The operation families its steps need (`families = ["sql"]`, the default); a target
    /// whose engine serves none of them natively or by translation reports every step as
    /// not supported.
    pub families: Vec<Family>,
    /// What `action = "load"` creates.
    pub dataset: Dataset,
    /// The suite's own default for `--table-size` (db_bench's 1M keys), used unless the
    /// user gives a table size or a scale.
    pub table_size: Option<u64>,
    /// The suite's own `--scale quick` rounds and windows (`[quick]`).
    pub quick: Option<dbdelta_model::QuickPreset>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "step")]
    steps: Vec<StepDef>,
    #[serde(default)]
    families: Vec<String>,
    #[serde(default)]
    dataset: Dataset,
    table_size: Option<u64>,
    quick: Option<dbdelta_model::QuickPreset>,
}

/// The published sysbench comparison scripts' group rule: `point` unless `warm`; else
/// write words; else range.
pub fn group_of(name: &str) -> Group {
    if name.contains("point") {
        Group::Point
    } else if ["delete", "insert", "update", "write"]
        .iter()
        .any(|w| name.contains(w))
    {
        Group::Write
    } else {
        Group::Range
    }
}

impl Suite {
    /// A built-in suite by name, or a suite file when `name_or_path` is a path to a file.
    pub fn load(name_or_path: &str) -> Result<Suite, SuiteError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Suite::parse(text, name_or_path);
        }
        let path = Path::new(name_or_path);
        if path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
                path: name_or_path.to_string(),
                source,
            })?;
            return Suite::parse(&text, name_or_path);
        }
        Err(SuiteError::Unknown(
            name_or_path.to_string(),
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        ))
    }

    /// Parses and validates suite TOML; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Suite, SuiteError> {
        let file: SuiteFile = toml::from_str(text).map_err(|e| SuiteError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        let mut items = Vec::with_capacity(file.steps.len());
        let mut labels = std::collections::HashSet::new();
        for (i, def) in file.steps.into_iter().enumerate() {
            let order = i as u32 + 1;
            let err = |message: &str| SuiteError::Step {
                origin: origin.to_string(),
                index: i + 1,
                name: def.name.clone(),
                message: message.to_string(),
            };
            match (def.action, def.workload) {
                (Some(_), Some(_)) => return Err(err("give either action or workload, not both")),
                (None, None) => return Err(err("give action = \"load\"|\"settle\" or a workload")),
                (Some(Action::Load), None) if file.dataset == Dataset::Keys => {
                    return Err(err(
                        "dataset = \"keys\" is written by a fillseq step: remove action = \"load\"",
                    ))
                }
                (Some(action), None) => items.push(SuiteItem::Action { order, action }),
                (None, Some(kind)) => {
                    if kind.dataset() != file.dataset {
                        return Err(err(
                            "ycsb-* workloads run on dataset = \"usertable\", db_bench's (fillseq, readrandom, …) on dataset = \"keys\", pgbench's (tpcb-like, simple-update, select-only) on dataset = \"pgbench\", tpcc on dataset = \"tpcc\", sysbench's on the default sbtest tables",
                        ));
                    }
                    let step = resolve(&def, kind, order).map_err(|e| err(&e.to_string()))?;
                    if !labels.insert(step.label.clone()) {
                        return Err(err("duplicate step label; give it another name or range"));
                    }
                    items.push(SuiteItem::Step(step));
                }
            }
        }
        if let Some(q) = &file.quick {
            let secs = [
                q.read_secs,
                q.write_secs,
                q.insert_secs,
                q.warmup_secs,
                q.round_warmup_secs,
            ];
            if q.rounds == Some(0) || secs.iter().flatten().any(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(SuiteError::Parse {
                    origin: origin.to_string(),
                    message: "[quick]: rounds must be at least 1 and seconds a number ≥ 0".into(),
                });
            }
        }
        let mut families = Vec::new();
        for f in &file.families {
            families.push(match f.as_str() {
                "sql" => Family::Sql,
                "kv" | "key-value" => Family::KeyValue,
                "raw-kv" => Family::RawKeyValue,
                other => {
                    return Err(SuiteError::Parse {
                        origin: origin.to_string(),
                        message: format!(
                            "families: unknown operation family '{other}': use \"sql\", \"kv\" or \"raw-kv\""
                        ),
                    })
                }
            });
        }
        if families.is_empty() {
            families.push(Family::Sql);
        }
        Ok(Suite {
            name: file.name,
            description: file.description,
            items,
            families,
            dataset: file.dataset,
            table_size: file.table_size,
            quick: file.quick,
        })
    }

    /// The measured steps in order.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.items.iter().filter_map(|i| match i {
            SuiteItem::Step(s) => Some(s),
            SuiteItem::Action { .. } => None,
        })
    }
}

/// What is wrong with a workload step as written (the message of [`SuiteError::Step`]).
#[derive(Debug, thiserror::Error)]
enum StepDefError {
    #[error("a workload step needs a name")]
    NoName,
    #[error("a workload step needs duration = \"read\"|\"write\"|\"insert\"")]
    NoDuration,
    #[error("rand = \"{0}\" is unknown: use uniform or zipfian")]
    UnknownRand(String),
    #[error("rate must be a positive number of events per second, at most 1e9")]
    BadRate,
    #[error("range, points and table_size must be at least 1")]
    ZeroSize,
    #[error("{key} = {value} is too large: give at most {max} ({why})")]
    TooLarge {
        /// The key.
        key: &'static str,
        /// Its value.
        value: u64,
        /// The largest accepted.
        max: u64,
        /// Why the limit.
        why: &'static str,
    },
}

/// Largest `points`: an IN-list or a batch of this many ids is one statement (sysbench's
/// published in-list steps use 10 to 100).
pub const MAX_POINTS: u32 = 100_000;
/// Largest statement count of one transaction kind (`point_selects`, `*_ranges`): one
/// event runs them all, so a step's window ends only after the last.
pub const MAX_PER_TRANSACTION: u32 = 10_000;
/// Largest `rate` of a step, as `--rate`.
pub const MAX_RATE: f64 = 1e9;

fn resolve(def: &StepDef, kind: WorkloadKind, order: u32) -> Result<Step, StepDefError> {
    if def.name.is_empty() {
        return Err(StepDefError::NoName);
    }
    let duration = def.duration.ok_or(StepDefError::NoDuration)?;
    let range = def.range.unwrap_or(100);
    let zipfian = match def.rand.as_deref() {
        None | Some("uniform") => false,
        Some("zipfian") => true,
        Some(other) => return Err(StepDefError::UnknownRand(other.to_string())),
    };
    if def
        .rate
        .is_some_and(|r| !(r.is_finite() && r > 0.0 && r <= MAX_RATE))
    {
        return Err(StepDefError::BadRate);
    }
    let too_large = |key: &'static str, v: Option<u32>, max: u32, why: &'static str| match v {
        Some(v) if v > max => Err(StepDefError::TooLarge {
            key,
            value: u64::from(v),
            max: u64::from(max),
            why,
        }),
        _ => Ok(()),
    };
    too_large("points", def.points, MAX_POINTS, "ids in one statement")?;
    for (key, v) in [
        ("point_selects", def.point_selects),
        ("simple_ranges", def.simple_ranges),
        ("sum_ranges", def.sum_ranges),
        ("order_ranges", def.order_ranges),
        ("distinct_ranges", def.distinct_ranges),
    ] {
        too_large(key, v, MAX_PER_TRANSACTION, "statements in one transaction")?;
    }
    if range == 0 || def.points == Some(0) || def.table_size == Some(0) {
        return Err(StepDefError::ZeroSize);
    }
    Ok(Step {
        order,
        name: def.name.clone(),
        // YCSB's and db_bench's steps have no range: their label is their name.
        label: if kind.dataset() != Dataset::Sbtest {
            def.name.clone()
        } else {
            format!("{}_range={range}", def.name)
        },
        group: def.group.unwrap_or_else(|| group_of(&def.name)),
        duration,
        warm: def.warm,
        once: def.once,
        turns: def.turns,
        threads: def.threads,
        rate: def.rate,
        params: WorkloadParams {
            kind,
            range,
            points: def.points.unwrap_or(10),
            hot: def.hot,
            covered: def.covered,
            on_id: def.on_id,
            zipfian,
            table_size: def.table_size,
            point_selects: def.point_selects.unwrap_or(10),
            simple_ranges: def.simple_ranges.unwrap_or(1),
            sum_ranges: def.sum_ranges.unwrap_or(1),
            order_ranges: def.order_ranges.unwrap_or(1),
            distinct_ranges: def.distinct_ranges.unwrap_or(1),
        },
    })
}

pub use dbdelta_model::glob::glob_match;

impl Step {
    /// True when a `--steps` glob selects this step (by name or by label).
    pub fn matches(&self, pattern: &str) -> bool {
        glob_match(pattern, &self.name) || glob_match(pattern, &self.label)
    }
}

impl Suite {
    /// The steps a `--steps` selection (`globs`) leaves out but needs: the first step that
    /// fills the data ([`WorkloadKind::fills`]) when a selected step comes after it and no
    /// selected filling step does. Loads are actions and always run; they are not here.
    pub fn prerequisites(&self, globs: &[String]) -> Vec<&Step> {
        if globs.is_empty() {
            return Vec::new();
        }
        let mut filler: Option<&Step> = None;
        let mut filled = false;
        for s in self.steps() {
            let selected = globs.iter().any(|g| s.matches(g));
            if s.params.kind.fills() {
                filled |= selected;
                if !selected && filler.is_none() {
                    filler = Some(s);
                }
            } else if selected && !filled {
                if let Some(f) = filler {
                    return vec![f];
                }
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kv_selection_after_fillseq_needs_fillseq_and_others_need_nothing() {
        let kv = Suite::load("kv").unwrap();
        let names = |g: &[&str]| -> Vec<String> {
            let globs: Vec<String> = g.iter().map(|s| s.to_string()).collect();
            kv.prerequisites(&globs)
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        assert_eq!(names(&["readrandom"]), ["fillseq"]);
        assert_eq!(names(&["overwrite", "fwdrange"]), ["fillseq"]);
        assert!(names(&["fillseq", "readrandom"]).is_empty());
        assert!(names(&[]).is_empty());
        // The other built-in suites fill their data with a load action, which always runs.
        for suite in ["sysbench", "ycsb", "tpcb", "tpcc"] {
            let s = Suite::load(suite).unwrap();
            let every: Vec<String> = s.steps().map(|st| st.name.clone()).collect();
            for one in &every {
                assert!(
                    s.prerequisites(std::slice::from_ref(one)).is_empty(),
                    "{suite} {one}"
                );
            }
            assert!(
                s.items.iter().any(|i| matches!(
                    i,
                    SuiteItem::Action {
                        action: Action::Load,
                        ..
                    }
                )),
                "{suite} has a load action"
            );
        }
    }

    #[test]
    fn builtin_sysbench_has_42_reported_steps() {
        let s = Suite::load("sysbench").unwrap();
        let reported: Vec<&Step> = s.steps().filter(|s| !s.warm).collect();
        assert_eq!(reported.len(), 42);
        assert_eq!(
            reported.iter().filter(|s| s.name.ends_with(".pre")).count(),
            15
        );
        assert_eq!(s.steps().filter(|s| s.warm).count(), 1);
        let labels: Vec<&str> = reported.iter().map(|s| s.label.as_str()).collect();
        for l in [
            "point-query.pre_range=100",
            "random-points_range=1000",
            "hot-points_range=100",
            "read-only.pre_range=10000",
            "write-only_range=10000",
            "read-write_range=10",
            "update-one_range=100",
            "scan_range=100",
            "insert_range=100",
        ] {
            assert!(labels.contains(&l), "{l} missing");
        }
        let groups = |g| reported.iter().filter(|s| s.group == g).count();
        assert_eq!(groups(Group::Point), 17);
        assert_eq!(groups(Group::Range), 15);
        assert_eq!(groups(Group::Write), 10);
        let settles = s
            .items
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    SuiteItem::Action {
                        action: Action::Settle,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(settles, 2);
    }

    #[test]
    fn step_counts_past_their_limits_are_named() {
        for (key, value) in [
            ("points", "4294967295"),
            ("point_selects", "4294967295"),
            ("distinct_ranges", "10001"),
        ] {
            let text = format!(
                "name='x'\n[[step]]\nname='a'\nworkload='read-only'\nduration='read'\n{key}={value}\n"
            );
            let e = Suite::parse(&text, "t").unwrap_err().to_string();
            assert!(e.contains(&format!("{key} = {value} is too large")), "{e}");
        }
        let e = Suite::parse(
            "name='x'\n[[step]]\nname='a'\nworkload='read-only'\nduration='read'\nrate=1e300\n",
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rate"), "{e}");
    }

    #[test]
    fn bad_suites_are_rejected_with_reasons() {
        let e = Suite::parse("name='x'\n[[step]]\nname='a'\n", "t").unwrap_err();
        assert!(e.to_string().contains("action"), "{e}");
        let e = Suite::parse(
            "name='x'\n[[step]]\nname='a'\nworkload='point-select'\n",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("duration"), "{e}");
        let e = Suite::parse("name='x'\n[[step]]\nbogus=1\n", "t").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = Suite::parse(
            "name='x'\n[[step]]\nname='a'\nworkload='scan'\nduration='read'\n[[step]]\nname='a'\nworkload='scan'\nduration='read'\n",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("duplicate"), "{e}");
        assert!(matches!(Suite::load("nope"), Err(SuiteError::Unknown(..))));
    }

    #[test]
    fn every_builtin_suite_compares_in_rounds_at_the_quick_scale() {
        for (name, _) in BUILTIN {
            let s = Suite::load(name).unwrap();
            let rounds = s.quick.and_then(|q| q.rounds).unwrap_or(1);
            assert!(rounds >= 8, "{name}: [quick] rounds = {rounds}");
        }
        let kv = Suite::load("kv").unwrap();
        let once: Vec<&str> = kv
            .steps()
            .filter(|s| s.once)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(once, ["fillseq"]);
        let tpcc = Suite::load("tpcc").unwrap();
        assert!(tpcc.steps().all(|s| !s.turns));
        assert!(Suite::load("sysbench")
            .unwrap()
            .steps()
            .all(|s| s.turns && !s.once));
        let e = Suite::parse(
            "name='x'\n[[step]]\nname='a'\nworkload='scan'\nduration='read'\nonce='yes'\n",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("once"), "{e}");
    }

    #[test]
    fn globs() {
        assert!(glob_match("update-*", "update-index"));
        assert!(glob_match("*.pre", "point-query.pre"));
        assert!(glob_match(
            "random-points_range=1?",
            "random-points_range=10"
        ));
        assert!(!glob_match(
            "random-points_range=1?",
            "random-points_range=100"
        ));
        assert!(glob_match("*", ""));
        assert!(!glob_match("scan", "scan.warm"));
    }

    #[test]
    fn group_rule_matches_published_scripts() {
        assert_eq!(group_of("hot-points"), Group::Point);
        assert_eq!(group_of("read-write"), Group::Write);
        assert_eq!(group_of("scan"), Group::Range);
        assert_eq!(group_of("read-only.pre"), Group::Range);
        assert_eq!(group_of("update-one"), Group::Write);
    }
}
