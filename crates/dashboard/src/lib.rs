//! The static dashboard of the results history (`dbdelta history --html DIR`): a site that
//! opens from `file://` or any CI artifact store (inline CSS, SVG and a few lines of inline
//! script; nothing loaded from elsewhere).
//!
//! - `index.html` ([`index`]): every series with a QPS sparkline and its newest change point,
//!   filterable;
//! - `series/<id>.html` ([`series_page`]): QPS, p95, p99 and CPU per operation over runs, each
//!   run's 95 % interval where it had repeats, the change points (E-Divisive means, as
//!   `dbdelta detect`: [`changes`]) and the series by version;
//! - `evidence/<id>.<run>.html` ([`evidence`]): the runs on either side of a change
//!   point, their verdict as `dbdelta report` gives it, and where both were profiled the
//!   differential flamegraph and drill-down of the step.
//!
//! Pages depend only on the history and the run directories: no build time is printed, so
//! the same inputs give the same files.
#![deny(missing_docs)]

pub mod changes;
pub mod chart;
pub mod collect;
pub mod evidence;
pub mod index;
pub mod page;
pub mod runs;
pub mod series_page;
pub mod time;

pub use collect::{Change, Measure, SeriesData};
pub use runs::RunDirs;

use dbdelta_history::{Filter, Point};
use dbdelta_inference::DetectOptions;
use std::path::{Path, PathBuf};

/// Why the dashboard could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// No stored point passed the filter.
    #[error("no results in the history match the filter")]
    Empty,
    /// A page or directory could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which series.
    pub filter: Filter,
    /// Change-point detection (as `dbdelta detect`).
    pub detect: DetectOptions,
    /// Where the runs' directories are, for the evidence pages.
    pub runs: RunDirs,
}

/// What was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Series (one page each).
    pub series: usize,
    /// Change points (of every measure).
    pub changes: usize,
    /// Evidence pages: one per series and run where any measure changed.
    pub evidence: usize,
    /// Evidence pages with a verdict of the two runs.
    pub verdicts: usize,
    /// Evidence pages with a differential flamegraph.
    pub flamegraphs: usize,
    /// Size of `index.html`, bytes.
    pub index_bytes: usize,
}

fn write_file(path: &Path, text: &str) -> Result<(), DashboardError> {
    std::fs::write(path, text).map_err(|source| DashboardError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes the site into `out` (created if needed; pages already there are replaced).
pub fn build(points: &[Point], out: &Path, opts: &Options) -> Result<Summary, DashboardError> {
    let mut series = collect::collect(points, &opts.filter);
    if series.is_empty() {
        return Err(DashboardError::Empty);
    }
    changes::find(&mut series, &opts.detect);
    let (series_dir, evidence_dir) = (out.join("series"), out.join("evidence"));
    for d in [&series_dir, &evidence_dir] {
        std::fs::create_dir_all(d).map_err(|source| DashboardError::Write {
            path: d.clone(),
            source,
        })?;
    }
    let mut summary = Summary {
        series: series.len(),
        changes: 0,
        evidence: 0,
        verdicts: 0,
        flamegraphs: 0,
        index_bytes: 0,
    };
    for s in &series {
        let mut found = Vec::new();
        summary.changes += s.changes.len();
        for group in s.change_groups() {
            let f = evidence::write(&evidence_dir, s, &group, &opts.runs).map_err(|source| {
                DashboardError::Write {
                    path: evidence_dir.join(format!("{}.html", group[0].stem(s))),
                    source,
                }
            })?;
            summary.evidence += 1;
            summary.verdicts += usize::from(f.verdict);
            summary.flamegraphs += usize::from(f.flamegraph.is_some());
            found.push((group[0].at, f));
        }
        let page = series_page::render(s, &found, &opts.detect);
        write_file(&series_dir.join(format!("{}.html", s.id)), &page)?;
    }
    let index = index::render(&series);
    summary.index_bytes = index.len();
    write_file(&out.join("index.html"), &index)?;
    Ok(summary)
}
