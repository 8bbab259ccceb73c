//! Merging one or more runs into the columns and tables of one report.

use crate::error::ReportError;
use crate::load::RunData;
use crate::table::{build_tables, Table};
use dbdelta_model::{StepKind, StepResult, TargetManifest};

/// One target column of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The target as recorded in its run's manifest.
    pub target: TargetManifest,
    /// Index into [`ReportData::runs`] of the run that measured it.
    pub run: usize,
    /// Its load (prepare) result, if any.
    pub load: Option<StepResult>,
}

impl Column {
    /// The target name (column heading).
    pub fn name(&self) -> &str {
        &self.target.name
    }

    /// The name with the target's emulated link when it has one (`net.*` settings), e.g.
    /// `maria (net 10mbit: measured 9.6 Mbit/s, RTT 0.052 ms)`.
    pub fn described(&self) -> String {
        let s = &self.target.settings;
        let Some(link) = s.get("net.link") else {
            return self.name().to_string();
        };
        match (s.get("net.measured_mbit"), s.get("net.rtt_ms")) {
            (Some(mbit), Some(rtt)) => format!(
                "{} (net {link}: measured {mbit} Mbit/s, RTT {rtt} ms)",
                self.name()
            ),
            _ => format!("{} (net {link})", self.name()),
        }
    }
}

/// Everything a report prints: columns (base first), tables per thread count, the runs and
/// their warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportData {
    /// Targets in column order: the base, then the others in run and manifest order.
    pub columns: Vec<Column>,
    /// One table per measured thread count, ascending.
    pub tables: Vec<Table>,
    /// The runs, in the order given.
    pub runs: Vec<RunData>,
    /// Every warning of loading and merging, each naming its file or step.
    pub warnings: Vec<String>,
}

impl ReportData {
    /// Merges runs: targets are concatenated in run order; `base` (default: the first
    /// target) becomes the first column. Target names must be unique across runs.
    pub fn from_runs(runs: Vec<RunData>, base: Option<&str>) -> Result<ReportData, ReportError> {
        if runs.is_empty() {
            return Err(ReportError::NoRuns);
        }
        let mut columns = columns_of(&runs)?;
        if let Some(name) = base {
            let Some(pos) = columns.iter().position(|c| c.name() == name) else {
                return Err(ReportError::UnknownBase {
                    name: name.to_string(),
                    known: columns.iter().map(|c| c.name().to_string()).collect(),
                });
            };
            let base_col = columns.remove(pos);
            columns.insert(0, base_col);
        }
        let mut warnings: Vec<String> = runs.iter().flat_map(|r| r.warnings.clone()).collect();
        warnings.extend(crate::merge::cross_run_warnings(&runs));
        let names: Vec<&str> = columns.iter().map(Column::name).collect();
        let tables = build_tables(&names, runs.iter().flat_map(|r| &r.results), &mut warnings);
        let mut data = ReportData {
            columns,
            tables,
            runs,
            warnings,
        };
        data.warnings
            .extend(crate::contention::warning(data.results()));
        Ok(data)
    }

    /// Every stored result of every run, in run order.
    pub fn results(&self) -> impl Iterator<Item = &StepResult> {
        self.runs.iter().flat_map(|r| &r.results)
    }

    /// The base target's name (every relative value is target/base).
    pub fn base(&self) -> &str {
        self.columns.first().map_or("", Column::name)
    }

    /// True when `target`'s server runs on another host (an external target whose URL names
    /// a host other than this one's loopback): its server cost cannot be measured here and
    /// "host" metrics are the client machine's.
    pub fn is_remote(&self, target: &str) -> bool {
        self.runs
            .iter()
            .flat_map(|r| &r.manifest.targets)
            .filter(|t| t.name == target)
            .any(|t| remote_spec(&t.spec))
    }

    /// The measured thread counts, ascending.
    pub fn thread_counts(&self) -> Vec<u32> {
        self.tables.iter().map(|t| t.threads).collect()
    }
}

fn columns_of(runs: &[RunData]) -> Result<Vec<Column>, ReportError> {
    let mut columns: Vec<Column> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for target in &run.manifest.targets {
            if let Some(seen) = columns.iter().find(|c| c.name() == target.name) {
                return Err(ReportError::DuplicateTarget {
                    name: target.name.clone(),
                    first: runs[seen.run].dir.clone(),
                    second: run.dir.clone(),
                });
            }
            // The last load result wins, like any re-measured step.
            let load = run
                .results
                .iter()
                .rev()
                .find(|r| r.target == target.name && r.kind == StepKind::Load)
                .cloned();
            columns.push(Column {
                target: target.clone(),
                run: i,
                load,
            });
        }
    }
    Ok(columns)
}

/// Rows loaded by a load result: the rows it inserted, or throughput × seconds when the
/// runner did not count them.
pub(crate) fn load_rows(load: &StepResult) -> u64 {
    if load.rows_affected > 0 {
        load.rows_affected
    } else {
        (load.throughput.value * load.seconds).round() as u64
    }
}

/// `name=engine://[user@]host[:port]/…` with a host other than loopback or a socket path.
fn remote_spec(spec: &str) -> bool {
    let Some((_, rest)) = spec.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    !(host.is_empty() || dbdelta_model::net::is_loopback_host(host) || host.starts_with('/'))
}

#[cfg(test)]
mod remote_tests {
    use super::remote_spec;

    #[test]
    fn only_other_hosts_are_remote() {
        assert!(remote_spec("pg=postgres://bench@db1.example:5432/dbdelta"));
        assert!(remote_spec("my=mysql://root@[2001:db8::1]:3306/x"));
        assert!(!remote_spec("pg=postgres://dbdelta@127.0.0.1:5432/dbdelta"));
        assert!(!remote_spec("pg=postgres://localhost/dbdelta"));
        assert!(!remote_spec("my=mysql://root@[::1]:3306/x"));
        assert!(!remote_spec("pg=postgres:/usr/lib/postgresql/15/bin"));
        assert!(!remote_spec("lite=sqlite:/tmp/x.db"));
    }
}

#[cfg(test)]
mod link_tests {
    use super::Column;
    use dbdelta_model::TargetManifest;

    fn column(settings: &[(&str, &str)]) -> Column {
        Column {
            target: TargetManifest {
                name: "g1".into(),
                engine: "mysql".into(),
                spec: "g1=mysql:/usr?net=1gbit".into(),
                version: None,
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                error: None,
            },
            run: 0,
            load: None,
        }
    }

    #[test]
    fn a_target_is_described_with_its_measured_link() {
        assert_eq!(column(&[("port", "3306")]).described(), "g1");
        assert_eq!(
            column(&[("net.link", "1gbit")]).described(),
            "g1 (net 1gbit)"
        );
        assert_eq!(
            column(&[
                ("net.link", "1gbit"),
                ("net.measured_mbit", "956.4"),
                ("net.rtt_ms", "0.007")
            ])
            .described(),
            "g1 (net 1gbit: measured 956.4 Mbit/s, RTT 0.007 ms)"
        );
    }
}
