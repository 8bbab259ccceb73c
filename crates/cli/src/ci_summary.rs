//! `dbdelta report … --format github`: the CI summary, with its links resolved from
//! `--link-base` and `--dashboard`.

use crate::flags::ReportArgs;
use crate::output::{print_out, write_output};
use anyhow::Result;
use dbdelta_report::github::{render, Links};
use dbdelta_report::ReportData;
use std::process::ExitCode;

/// The link to the HTML report: `--link-base` + `/report.html`, else `report.html` in the
/// (first) run directory as given.
fn report_link(args: &ReportArgs) -> Option<String> {
    match &args.link_base {
        Some(base) => Some(format!("{}/report.html", base.trim_end_matches('/'))),
        None => args
            .runs
            .first()
            .map(|d| d.join("report.html").to_string_lossy().into_owned()),
    }
}

/// Renders the summary and writes it (standard output or `-o`).
pub fn write(args: &ReportArgs, data: &ReportData) -> Result<ExitCode> {
    let links = Links {
        report: report_link(args),
        dashboard: args.dashboard.clone(),
    };
    let text = render(data, &links);
    match &args.output {
        Some(path) => write_output(path, &text)?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
