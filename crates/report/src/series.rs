//! Version series: when the targets are versions of one server, oldest first (detected from
//! the versions in the manifest, or named with `--series`), the write-ups' numbers — per
//! group the geometric mean of relative QPS against the oldest version with its interval,
//! every change between adjacent versions with its verdict, and the server settings whose
//! values differ between versions although no target set them (a default changed).
//!
//! The layouts of these numbers are in [`crate::series_out`].

use crate::data::{Column, ReportData};
use crate::verdict::{self, VerdictCell};
use dbdelta_inference::{benjamini_hochberg, Comparison, Verdict};
use dbdelta_model::Group;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Whether a report shows the series section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesMode {
    /// When at least three targets of one engine have versions that increase in column order.
    #[default]
    Detect,
    /// Always (with at least two targets), the columns in the order given (`--series`).
    On,
    /// Never (`--no-series`).
    Off,
}

/// The targets of a series in column order, the oldest (the base) first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Target names.
    pub names: Vec<String>,
    /// The version of each target as printed (`13.23`), when its manifest has one.
    pub versions: Vec<Option<String>>,
    /// True when named by `--series`, false when detected from the versions.
    pub named: bool,
}

impl Series {
    /// `pg13 (13.23)`, or the name alone without a version or when the name holds it.
    pub fn heading(&self, i: usize) -> String {
        match self.versions.get(i).and_then(Option::as_ref) {
            Some(v) if !self.names[i].contains(v.as_str()) => format!("{} ({v})", self.names[i]),
            _ => self.names[i].clone(),
        }
    }

    /// The x position of target `i` in the chart: its major version when every target has a
    /// distinct one, else its position (1, 2, …).
    pub fn x(&self, i: usize) -> f64 {
        let majors: Vec<Option<u64>> = self
            .versions
            .iter()
            .map(|v| {
                v.as_deref()
                    .and_then(|v| parse_version(v)?.first().copied())
            })
            .collect();
        let distinct: BTreeSet<u64> = majors.iter().flatten().copied().collect();
        if distinct.len() == majors.len() {
            majors[i].map_or(i as f64 + 1.0, |m| m as f64)
        } else {
            i as f64 + 1.0
        }
    }
}

/// The numeric components of the first version-like word of `text` (`PostgreSQL 13.23 on …`
/// → 13, 23; `8.0.36-0ubuntu` → 8, 0, 36); `None` without one.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(')
        .map(|w| w.trim_start_matches(['v', 'V']))
        .find_map(|w| {
            let lead: String = w
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let parts: Vec<u64> = lead.split('.').map_while(|p| p.parse().ok()).collect();
            (!parts.is_empty() && lead.starts_with(|c: char| c.is_ascii_digit())).then_some(parts)
        })
}

fn printed(parts: &[u64]) -> String {
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The report's series, if any.
pub fn detect(data: &ReportData, mode: SeriesMode) -> Option<Series> {
    let cols = &data.columns;
    let parsed: Vec<Option<Vec<u64>>> = cols
        .iter()
        .map(|c| c.target.version.as_deref().and_then(parse_version))
        .collect();
    let named = match mode {
        SeriesMode::Off => return None,
        SeriesMode::On => {
            if cols.len() < 2 {
                return None;
            }
            true
        }
        SeriesMode::Detect => {
            let one_engine = cols
                .iter()
                .all(|c| c.target.engine == cols[0].target.engine);
            let all: Option<Vec<&Vec<u64>>> = parsed.iter().map(Option::as_ref).collect();
            let increasing = all.is_some_and(|v| v.windows(2).all(|w| w[0] < w[1]));
            if cols.len() < 3 || !one_engine || !increasing {
                return None;
            }
            false
        }
    };
    Some(Series {
        names: cols.iter().map(|c| c.name().to_string()).collect(),
        versions: parsed.iter().map(|p| p.as_deref().map(printed)).collect(),
        named,
    })
}

/// The geometric mean of one target's relative QPS over the steps of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupMean {
    /// The group; `None` = every step.
    pub group: Option<Group>,
    /// Index of the target in the series (never 0, the oldest).
    pub target: usize,
    /// Steps with an interval that entered the mean.
    pub steps: usize,
    /// Geometric mean of target/oldest.
    pub mean: f64,
    /// Its 95 % interval (low, high); `None` when no step of the group has an interval and
    /// the mean is of the steps' bare ratios (one window per target, as the Insert Benchmark
    /// runs).
    pub interval: Option<(f64, f64)>,
}

/// Per thread count, group (point, range, write, then every step) and target: the geometric
/// mean of the steps' ratios against the oldest version and its 95 % interval. The interval
/// treats the steps as fixed and each step's ratio as uncertain, as the console's bottom line
/// does: on the log scale each step's standard error is its interval's half-width over the
/// normal quantile, and the mean of n logs has the root of the summed squares over n. Steps
/// without an interval are left out, unless no step of the group has one: then the mean is of
/// the bare ratios, without an interval.
pub fn group_means(
    data: &ReportData,
    series: &Series,
    cells: &[VerdictCell],
) -> BTreeMap<u32, Vec<GroupMean>> {
    let groups = group_of(data);
    let z = dbdelta_inference::dist::t_quantile(0.5 + verdict::LEVEL / 2.0, 1e6);
    let mut out: BTreeMap<u32, Vec<GroupMean>> = BTreeMap::new();
    for threads in data.thread_counts() {
        let mut means = Vec::new();
        for group in [
            Some(Group::Point),
            Some(Group::Range),
            Some(Group::Write),
            None,
        ] {
            for (target, name) in series.names.iter().enumerate().skip(1) {
                let comparisons: Vec<Comparison> = cells
                    .iter()
                    .filter(|c| c.threads == threads && &c.target == name)
                    .filter(|c| {
                        group.is_none() || groups.get(&(threads, c.label.clone())).copied() == group
                    })
                    .filter_map(|c| c.comparison)
                    .filter(|x| x.ratio > 0.0 && x.low > 0.0 && x.high.is_finite())
                    .collect();
                if let Some((mean, low, high)) = geometric_mean(&comparisons, z) {
                    means.push(GroupMean {
                        group,
                        target,
                        steps: comparisons.len(),
                        mean,
                        interval: Some((low, high)),
                    });
                    continue;
                }
                let bare: Vec<f64> = cells
                    .iter()
                    .filter(|c| c.threads == threads && &c.target == name)
                    .filter(|c| {
                        group.is_none() || groups.get(&(threads, c.label.clone())).copied() == group
                    })
                    .filter_map(|c| c.bare_ratio)
                    .filter(|r| *r > 0.0 && r.is_finite())
                    .collect();
                if !bare.is_empty() {
                    let logs = bare.iter().map(|r| r.ln()).sum::<f64>() / bare.len() as f64;
                    means.push(GroupMean {
                        group,
                        target,
                        steps: bare.len(),
                        mean: logs.exp(),
                        interval: None,
                    });
                }
            }
        }
        if !means.is_empty() {
            out.insert(threads, means);
        }
    }
    out
}

fn geometric_mean(xs: &[Comparison], z: f64) -> Option<(f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().map(|x| x.ratio.ln()).sum::<f64>() / n;
    let se = xs
        .iter()
        .map(|x| ((x.high.ln() - x.low.ln()) / (2.0 * z)).powi(2))
        .sum::<f64>()
        .sqrt()
        / n;
    Some((mean.exp(), (mean - z * se).exp(), (mean + z * se).exp()))
}

/// (thread count, step label) → its group, from the report's tables.
fn group_of(data: &ReportData) -> HashMap<(u32, String), Group> {
    data.tables
        .iter()
        .flat_map(|t| {
            t.rows
                .iter()
                .map(move |r| ((t.threads, r.label.clone()), r.group))
        })
        .collect()
}

/// One step of one version against the version before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Adjacent {
    /// Step label.
    pub label: String,
    /// Run order of the step.
    pub order: u32,
    /// Thread count.
    pub threads: u32,
    /// The step's group, when the tables have the step.
    pub group: Option<Group>,
    /// Index of the newer target in the series (≥ 1); the older is the one before it.
    pub after: usize,
    /// Newer/older with its interval; its verdict is the one after false discovery rate
    /// control over every adjacent pair of the report.
    pub comparison: Option<Comparison>,
    /// Newer/older of the means when there is no interval.
    pub bare_ratio: Option<f64>,
    /// The interval excludes 1.0, but the cell did not survive that control.
    pub withheld: bool,
}

impl Adjacent {
    /// Newer/older, with or without an interval.
    pub fn ratio(&self) -> Option<f64> {
        self.comparison.map(|c| c.ratio).or(self.bare_ratio)
    }

    /// True when the change is significant after false discovery rate control.
    pub fn significant(&self) -> bool {
        self.comparison
            .is_some_and(|c| c.verdict != Verdict::NoChange)
    }
}

/// Every step of every version against the version before it, compared as the report
/// compares targets with its base (paired rounds when both ran in one run), with
/// Benjamini–Hochberg control of the false discovery rate at [`verdict::FDR`] over all of
/// these cells together; in run order, then by newer version.
pub fn adjacent(data: &ReportData, series: &Series) -> Vec<Adjacent> {
    let groups = group_of(data);
    let column = |name: &str| -> Option<&Column> { data.columns.iter().find(|c| c.name() == name) };
    let mut out = Vec::new();
    for after in 1..series.names.len() {
        let (Some(older), Some(newer)) = (
            column(&series.names[after - 1]),
            column(&series.names[after]),
        ) else {
            continue;
        };
        // The pair as a report of its own: the older version is its base.
        let pair = ReportData {
            columns: vec![older.clone(), newer.clone()],
            tables: Vec::new(),
            runs: data.runs.clone(),
            warnings: Vec::new(),
        };
        for cell in verdict::verdicts(&pair) {
            // Undo the pair's own false discovery control: it is done over every pair below.
            let comparison = cell.comparison.map(|mut c| {
                c.verdict = raw_verdict(&c);
                c
            });
            out.push(Adjacent {
                group: groups.get(&(cell.threads, cell.label.clone())).copied(),
                label: cell.label,
                order: cell.order,
                threads: cell.threads,
                after,
                comparison,
                bare_ratio: cell.bare_ratio,
                withheld: false,
            });
        }
    }
    let tested: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].comparison.is_some())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .filter_map(|&i| out[i].comparison.map(|c| c.p))
        .collect();
    for (&i, discovered) in tested.iter().zip(benjamini_hochberg(&p, verdict::FDR)) {
        if let Some(c) = out[i].comparison.as_mut() {
            if !discovered && c.verdict != Verdict::NoChange {
                c.verdict = Verdict::NoChange;
                out[i].withheld = true;
            }
        }
    }
    out.sort_by_key(|a| (a.threads, a.order, a.after));
    out
}

/// The verdict of an interval on its own (higher QPS is better).
fn raw_verdict(c: &Comparison) -> Verdict {
    if c.low > 1.0 {
        Verdict::Improvement
    } else if c.high < 1.0 {
        Verdict::Regression
    } else {
        Verdict::NoChange
    }
}

/// A server setting whose value differs between the versions although no target set it.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultChange {
    /// Setting name.
    pub name: String,
    /// Its value per target of the series; `None` where the manifest does not record it
    /// (the server's built-in default, or a setting the version does not have).
    pub values: Vec<Option<String>>,
}

/// Settings that describe the target rather than configure the server: never a default.
const NOT_SETTINGS: &[&str] = &[
    "server_version",
    "server_version_num",
    "port",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
    "external_pid_file",
    "unix_socket_directories",
    "version",
];

/// Prefixes of manifest entries dbdelta adds (where the binary came from, how it was built,
/// the address, the emulated link, pgbouncer).
const NOT_SETTING_PREFIXES: &[&str] = &["dbdelta.", "dist.", "build.", "net.", "pgbouncer."];

/// The recorded server settings whose values differ between the series' targets and that no
/// target's spec sets (`?name=value`): they differ because a default changed (the server's,
/// or the one its initdb writes). Paths and dbdelta's own entries are left out.
pub fn default_changes(data: &ReportData, series: &Series) -> Vec<DefaultChange> {
    let targets: Vec<&Column> = series
        .names
        .iter()
        .filter_map(|n| data.columns.iter().find(|c| c.name() == n))
        .collect();
    let set_by_spec: BTreeSet<String> = targets
        .iter()
        .flat_map(|c| spec_keys(&c.target.spec))
        .collect();
    let keys: BTreeSet<&String> = targets
        .iter()
        .flat_map(|c| c.target.settings.keys())
        .collect();
    let mut out = Vec::new();
    for key in keys {
        if set_by_spec.contains(key.as_str())
            || NOT_SETTINGS.contains(&key.as_str())
            || NOT_SETTING_PREFIXES.iter().any(|p| key.starts_with(p))
        {
            continue;
        }
        let values: Vec<Option<String>> = targets
            .iter()
            .map(|c| c.target.settings.get(key).cloned())
            .collect();
        if values.iter().flatten().any(|v| v.starts_with('/')) {
            continue;
        }
        if values.windows(2).any(|w| w[0] != w[1]) {
            out.push(DefaultChange {
                name: key.clone(),
                values,
            });
        }
    }
    out
}

/// The setting names of a target spec's query (`name=kind:where?a=1&b=2` → a, b).
fn spec_keys(spec: &str) -> Vec<String> {
    let Some((_, query)) = spec.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.trim().to_string()))
        .filter(|k| !k.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_version_strings() {
        assert_eq!(
            parse_version("PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by gcc"),
            Some(vec![13, 23])
        );
        assert_eq!(
            parse_version("8.0.36-0ubuntu0.22.04.1"),
            Some(vec![8, 0, 36])
        );
        assert_eq!(parse_version("v1.2"), Some(vec![1, 2]));
        assert_eq!(parse_version("3.46.0"), Some(vec![3, 46, 0]));
        assert_eq!(parse_version("unknown"), None);
        assert!(parse_version("PostgreSQL 9.6.24") < parse_version("PostgreSQL 10.1"));
    }

    #[test]
    fn spec_keys_are_the_query_names() {
        assert_eq!(
            spec_keys("pg13=postgres-dist:13?shared_buffers=256MB&max_wal_size=4GB"),
            ["shared_buffers", "max_wal_size"]
        );
        assert!(spec_keys("pg=postgres:/usr/lib/postgresql/15/bin").is_empty());
    }

    #[test]
    fn geometric_mean_of_one_step_is_its_interval() {
        let c = Comparison {
            ratio: 1.1,
            low: 1.0,
            high: 1.21,
            p: 0.05,
            level: 0.95,
            evidence: dbdelta_inference::Evidence::Paired { pairs: 10 },
            verdict: Verdict::NoChange,
        };
        let z = 1.96;
        let (m, lo, hi) = geometric_mean(&[c], z).expect("a mean");
        assert!((m - 1.1).abs() < 1e-12);
        assert!(
            (lo - 1.0).abs() < 1e-9 && (hi - 1.21).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert!(geometric_mean(&[], z).is_none());
    }
}
