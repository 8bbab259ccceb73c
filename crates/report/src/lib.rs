//! Reports of dbdelta runs: QPS of every target relative to a base target, the way the
//! published sysbench write-ups show them.
//!
//! ```no_run
//! use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions};
//! # fn main() -> Result<(), dbdelta_report::ReportError> {
//! let run = load_run(std::path::Path::new("dbdelta-runs/2025-01-01T00:00:00Z-sysbench"))?;
//! let data = ReportData::from_runs(vec![run], None)?;
//! for w in &data.warnings {
//!     eprintln!("warning: {w}");
//! }
//! print!("{}", render(&data, Format::Text, &ReportOptions::default())?);
//! # Ok(()) }
//! ```
//!
//! [`load_run`] reads one run directory (tolerating a run still being written or killed),
//! [`ReportData::from_runs`] merges runs into one table model ([`table`]) with the base
//! first, and each format is one module with a `render(data, opts) -> String` function.
//! Sections build their tables once ([`markup::Grid`], or the lines of the detail sections);
//! the writers of [`markup`] lay them out as text, Markdown or HTML.
#![deny(missing_docs)]

mod across;
pub mod console;
pub mod contention;
pub mod cpu_verdict;
pub mod csv;
mod data;
pub mod dbbench;
pub mod dbcounters;
pub mod detail;
mod digits;
mod error;
pub mod github;
pub mod html;
pub mod ibench;
pub mod json;
mod load;
pub mod markdown;
pub mod markup;
pub mod merge;
mod myrocks;
mod order;
pub mod profiles;
pub mod queryset;
pub mod resolved;
mod sections;
pub mod segments;
pub mod series;
pub mod series_out;
pub mod summary;
pub mod svg;
pub mod table;
pub mod text;
mod timeline;
pub mod tpc;
pub mod verdict;
pub mod ycsb;

pub use data::{Column, ReportData};
pub use error::ReportError;
pub use load::{load_run, RunData};
pub use merge::{apply_renames, parse_cost, parse_rename, Rename};
pub use table::{Cell, Row, Table};

use std::str::FromStr;

/// Which numbers a single-table format (CSV) prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Values {
    /// Target / base (needs at least two targets; otherwise absolute values are printed).
    #[default]
    Relative,
    /// The measured throughput.
    Absolute,
}

/// Presentation choices shared by all formats.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Relative costs at or below this are marked ▼ (Markdown) and green (HTML), and the HTML
    /// bars draw a dashed line here; relative QPS follows significance instead.
    pub low: f64,
    /// Relative costs at or above this are marked ▲ (Markdown) and red (HTML), and the HTML
    /// bars draw a dashed line here; relative QPS follows significance instead.
    pub high: f64,
    /// The thread count of single-table formats (CSV); `None` = the lowest measured.
    pub threads: Option<u32>,
    /// Relative or absolute values in single-table formats (CSV).
    pub values: Values,
    /// Text and markdown: add latency tables, cost-per-operation tables, the server's own
    /// counters per operation and (text) `sb.met` blocks.
    pub details: bool,
    /// Steps (globs on name or label) that get `sb.met` blocks; empty = every step.
    pub metrics: Vec<String>,
    /// `--cost NAME=DOLLARS_PER_HOUR`: the price of each priced target, for operations per
    /// hour per dollar. Empty = no cost-per-dollar tables.
    pub costs: Vec<(String, f64)>,
    /// HTML: the step (glob on name or label) whose QPS over time is charted; `None` = the
    /// first step that has per-second intervals.
    pub timeline: Option<String>,
    /// HTML: the directory the report file is written to, for links to profile files;
    /// `None` = the report is written into the run directory (links are `profiles/…`).
    pub link_dir: Option<std::path::PathBuf>,
    /// Text, Markdown, HTML and JSON: the version-series section (detected from the versions
    /// by default; `--series`, `--no-series`).
    pub series: series::SeriesMode,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            low: 0.95,
            high: 1.05,
            threads: None,
            values: Values::Relative,
            details: true,
            metrics: Vec::new(),
            costs: Vec::new(),
            timeline: None,
            link_dir: None,
            series: series::SeriesMode::Detect,
        }
    }
}

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The published tab-separated layout ([`text`]).
    Text,
    /// GitHub markdown tables ([`markdown`]).
    Markdown,
    /// A header row, then `label,v1,…` for one thread count ([`csv`]).
    Csv,
    /// Everything, as JSON ([`json`]).
    Json,
    /// One self-contained page with colored tables and SVG charts ([`html`]).
    Html,
    /// YCSB's `[OP], Measurement, value` export of steps with operation types ([`ycsb`]).
    Ycsb,
}

impl FromStr for Format {
    type Err = ReportError;

    /// Parses a `--format` value: `text`, `md` (or `markdown`), `csv` or `json`.
    fn from_str(s: &str) -> Result<Format, ReportError> {
        match s {
            "text" | "txt" => Ok(Format::Text),
            "md" | "markdown" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "html" => Ok(Format::Html),
            "ycsb" => Ok(Format::Ycsb),
            other => Err(ReportError::UnknownFormat(other.to_string())),
        }
    }
}

impl Format {
    /// The usual file extension, e.g. for `report.<ext>` in a run directory.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Markdown => "md",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
            Format::Ycsb => "ycsb.txt",
        }
    }
}

/// Renders `data` in `format`; fails only when `opts.threads` names an unmeasured thread count or
/// `opts.costs` prices a target that is not in the report.
pub fn render(
    data: &ReportData,
    format: Format,
    opts: &ReportOptions,
) -> Result<String, ReportError> {
    if let Some(threads) = opts.threads {
        if !data.tables.iter().any(|t| t.threads == threads) {
            return Err(ReportError::UnknownThreads {
                threads,
                known: data.thread_counts(),
            });
        }
    }
    for (name, _) in &opts.costs {
        if !data.columns.iter().any(|c| c.name() == name) {
            return Err(ReportError::UnknownCostTarget {
                name: name.clone(),
                known: data.columns.iter().map(|c| c.name().to_string()).collect(),
            });
        }
    }
    if format == Format::Ycsb {
        return Ok(ycsb::render(data));
    }
    if ibench::present(data) {
        let series = |f: fn(&ReportData, &ReportOptions, &[verdict::VerdictCell]) -> String| {
            f(data, opts, &verdict::verdicts(data))
        };
        // Rounds (the default with two targets) give the ratios intervals: the noise-floor
        // line first, the verdicts after the Insert Benchmark's own tables.
        let cells = verdict::verdicts(data);
        let floor =
            verdict::noise_floor(data, &cells).map_or(String::new(), |l| format!("{l}.\n\n"));
        return Ok(match format {
            Format::Text => {
                floor
                    + &ibench::text(data, opts.details)
                    + &verdict::render_text(data, &cells)
                    + &cpu_verdict::render_text(data, &cpu_verdict::cpu_verdicts(data))
                    + &series(series_out::text)
            }
            Format::Markdown => {
                ibench::markdown(data)
                    + &floor
                    + &verdict::render_markdown(data, &cells)
                    + &cpu_verdict::render_markdown(data, &cpu_verdict::cpu_verdicts(data))
                    + &series(series_out::markdown)
            }
            Format::Csv => ibench::csv(data),
            Format::Json => ibench::json(data),
            Format::Html => with_series(
                at_end(
                    ibench::html(data),
                    &cpu_verdict::render_html(data, &cpu_verdict::cpu_verdicts(data)),
                ),
                &series(series_out::html),
            ),
            Format::Ycsb => ycsb::render(data),
        });
    }
    Ok(match format {
        Format::Text => {
            let cells = verdict::verdicts(data);
            let floor =
                verdict::noise_floor(data, &cells).map_or(String::new(), |l| format!("{l}.\n\n"));
            let contention =
                contention::line(data.results()).map_or(String::new(), |l| format!("{l}.\n\n"));
            floor
                + &contention
                + &series_out::text(data, opts, &cells)
                + &text::render(data, opts)
                + &verdict::render_text(data, &cells)
                + &cpu_verdict::render_text(data, &cpu_verdict::cpu_verdicts(data))
                + &resolved::text(data)
        }
        Format::Markdown => {
            let cells = verdict::verdicts(data);
            series_out::markdown(data, opts, &cells)
                + &markdown::render(data, opts, &cells)
                + &verdict::render_markdown(data, &cells)
                + &cpu_verdict::render_markdown(data, &cpu_verdict::cpu_verdicts(data))
                + &resolved::markdown(data)
        }
        Format::Csv => csv::render(data, opts),
        Format::Json => json::render(data, opts),
        Format::Ycsb => ycsb::render(data),
        Format::Html => {
            let cells = verdict::verdicts(data);
            let cpu = cpu_verdict::cpu_verdicts(data);
            let page = with_series(
                html::render(data, opts, &cells, &cpu),
                &series_out::html(data, opts, &cells),
            );
            let section =
                verdict::render_html(data, &cells) + &cpu_verdict::render_html(data, &cpu);
            at_end(page, &section)
        }
    })
}

/// The page with `section` last, before `</body>`.
fn at_end(page: String, section: &str) -> String {
    match page.rfind("</body>") {
        Some(at) => format!("{}{section}{}", &page[..at], &page[at..]),
        None => page + section,
    }
}

/// The page with the series section before its first `<h2>` (after the title and the
/// introduction), or before `</body>` when it has none.
fn with_series(page: String, section: &str) -> String {
    if section.is_empty() {
        return page;
    }
    match page.find("<h2").or_else(|| page.rfind("</body>")) {
        Some(at) => format!("{}{section}{}", &page[..at], &page[at..]),
        None => page + section,
    }
}
