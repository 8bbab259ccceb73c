//! `dbdelta merge SEGMENT_DIR… --run-dir OUT`: the segments of one run merged into one run
//! directory by the lab; prints the brief report and exits 3 when a step misses a segment.

use crate::flags::MergeArgs;
use crate::progress::Bars;
use anyhow::Result;
use std::process::ExitCode;

/// Merges the segments' run directories.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let progress = Bars::new(true, false);
    let merged = if args.quiet {
        dbdelta_lab::merge::merge(&args.dirs, &args.run_dir, &Quiet(&progress))?
    } else {
        dbdelta_lab::merge::merge(&args.dirs, &args.run_dir, &progress)?
    };
    eprintln!(
        "run directory: {} (merged from {} segment(s) on {} host(s))",
        merged.dir.display(),
        merged.segments,
        merged.hosts
    );
    if merged.incomplete.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for e in &merged.incomplete {
        eprintln!("error: {e}");
    }
    Ok(ExitCode::from(3))
}

/// The lab's progress without the brief report on standard output.
struct Quiet<'a>(&'a Bars);

impl dbdelta_runner::Progress for Quiet<'_> {
    fn step_started(
        &self,
        _: &str,
        _: &str,
        _: u32,
        _: std::time::Duration,
        _: std::time::Duration,
    ) {
    }
    fn step_tick(&self, _: std::time::Duration, _: u64) {}
    fn step_finished(&self, _: &dbdelta_model::StepResult) {}
    fn message(&self, text: &str) {
        self.0.message(text);
    }
}

impl dbdelta_lab::LabProgress for Quiet<'_> {
    fn note(&self, text: &str) {
        self.0.note(text);
    }
    fn warning(&self, text: &str) {
        self.0.warning(text);
    }
    fn error(&self, text: &str) {
        self.0.error(text);
    }
    fn report(&self, _: &str) -> std::io::Result<()> {
        Ok(())
    }
    fn build(&self, event: dbdelta_lab::BuildEvent<'_>) {
        self.0.build(event);
    }
}
