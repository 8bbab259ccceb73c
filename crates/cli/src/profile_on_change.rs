//! `dbdelta detect --profile-on-change` (and `--rerun`): for each series that regressed at
//! its newest run, the command that profiles both sides (built by the lab's `rerun`), printed
//! and, with `--rerun`, run.

use crate::flags::DetectArgs;
use crate::output::print_out;
use anyhow::{bail, Result};
use dbdelta_lab::rerun::{self, Change};
use std::fmt::Write;

/// `detect --profile-on-change` (and `--rerun`): the command that profiles each regression
/// at a newest run, printed, and run with `--rerun`.
pub fn profile_on_change(args: &DetectArgs, regressed: &[Change]) -> Result<()> {
    if regressed.is_empty() {
        return Ok(());
    }
    let roots = if args.runs_dir.is_empty() {
        vec![std::path::PathBuf::from(rerun::DEFAULT_RUNS_DIR)]
    } else {
        args.runs_dir.clone()
    };
    // One change per (target, step, dop, runs), whichever metrics flagged it.
    let mut changes = regressed.to_vec();
    changes.sort_by(|a, b| {
        (&a.before_run, &a.after_run, &a.target, &a.label, a.threads).cmp(&(
            &b.before_run,
            &b.after_run,
            &b.target,
            &b.label,
            b.threads,
        ))
    });
    changes.dedup();
    let plans = rerun::plan(&roots, &changes)?;
    let mut o = String::new();
    for p in &plans {
        for c in &p.already_profiled {
            let _ = writeln!(
                o,
                "{} {} dop={} is profiled in {}: dbdelta explain {} --step '{}'",
                c.target,
                c.label,
                c.threads,
                p.after_dir.display(),
                p.after_dir.display(),
                c.label
            );
        }
        if !p.args.is_empty() {
            let _ = writeln!(
                o,
                "profile the change ({} before, {} after):\n  {}",
                p.before_dir.display(),
                p.after_dir.display(),
                p.shell()
            );
        }
    }
    print_out(&o)?;
    if args.rerun {
        for p in plans.iter().filter(|p| !p.args.is_empty()) {
            let code = rerun::run(&p.args)?;
            if code != 0 {
                bail!(
                    "--rerun: `{}` exited with {code}; see its output above",
                    p.shell()
                );
            }
        }
    }
    Ok(())
}
