//! `run --segment K/N`, `--segment-run`, `--segment-barrier`: which segment of a run this
//! process is, checked against the rest of the plan (what segments can share and what
//! they cannot).

use crate::flags::SegmentArgs;
use anyhow::{bail, Result};
use dbdelta_lab::segment::{SegmentPlan, DEFAULT_RUN};
use dbdelta_lab::RunPlan;
use dbdelta_model::{Location, Segment};

/// The segment plan of `args`, or `None` without `--segment`.
pub fn resolve(args: &SegmentArgs, plan: &RunPlan) -> Result<Option<SegmentPlan>> {
    let Some(text) = &args.segment else {
        return Ok(None);
    };
    let segment = Segment::parse(text).map_err(|e| anyhow::anyhow!("--segment {e}"))?;
    let flag = format!("--segment {segment}");
    if plan.ibench.is_some() {
        bail!("{flag}: the Insert Benchmark (--suite ibench) cannot be split into segments; run it from one process");
    }
    if plan.queryset.is_some() {
        bail!("{flag}: a query-set suite cannot be split into segments; run it from one process");
    }
    if plan.schedule.resolve.is_some() {
        bail!("{flag}: --resolve decides each step's rounds from its own numbers, which segments cannot share; give --repeat N instead");
    }
    if plan.existing.is_some() {
        bail!("{flag}: --use-existing checks the prepared data of one process; load with segment 1 instead (drop --use-existing)");
    }
    if let Some(active) = plan.options.client.active {
        if active < segment.count {
            bail!(
                "{flag}: --active {active} is fewer than the {} segments: every segment needs an active connection; give --active {} or more",
                segment.count,
                segment.count
            );
        }
    }
    for t in &plan.targets {
        let shared = matches!(
            (&t.location, t.engine.as_str()),
            (Location::Url { .. }, _) | (Location::Path { .. }, "sqlite") | (_, "mock")
        );
        if !shared {
            bail!(
                "{flag}: target {} ({}) would be this process's own: every segment must reach one \
                 database, so give an external server (postgres://…, mysql://…) or a shared \
                 SQLite file (sqlite:/path/file.db)",
                t.name,
                t.redacted()
            );
        }
    }
    if let Some(file) = &args.segment_barrier {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!(
                    "--segment-barrier {}: the directory {} does not exist; create it or give another file",
                    file.display(),
                    dir.display()
                );
            }
        }
    }
    let run = args
        .segment_run
        .clone()
        .unwrap_or_else(|| DEFAULT_RUN.into());
    if run.is_empty() || run.len() > 100 {
        bail!("--segment-run '{run}': give a name of 1 to 100 characters");
    }
    Ok(Some(SegmentPlan {
        segment,
        run,
        barrier_file: args.segment_barrier.clone(),
    }))
}
