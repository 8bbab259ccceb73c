//! `dbdelta prepare`: the run flags resolved as for `run`, then every target loaded once
//! and its record written (the lab's `prepared` module), for later `run --use-existing`.

use crate::flags::RunArgs;
use crate::progress::Bars;
use crate::spec::{resolve, DEFAULT_DATA_DIR};
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::process::ExitCode;

/// Loads every target and records what it loaded; prints where the data is.
pub fn prepare(args: &RunArgs) -> Result<ExitCode> {
    if args.use_existing {
        bail!("--use-existing belongs to `dbdelta run`: `dbdelta prepare` always loads; drop --use-existing");
    }
    // The data directory is given to the lab directly; resolve the rest as `run` does.
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
    let plan = {
        let mut run_args = args.clone();
        run_args.data_dir = None;
        resolve(&run_args)?
    };
    let progress = Bars::new(args.quiet, args.verbose);
    // postgres-build: targets are built (or found in the cache) first, as in a run.
    let mut plan = plan;
    dbdelta_lab::build::materialize(&mut plan.targets, &progress)?;
    let done = dbdelta_lab::prepared::prepare(&plan, &data_dir, &progress)?;
    for p in &done {
        let place = match &p.data {
            Some(d) => format!(" in {}", d.display()),
            None => String::new(),
        };
        println!(
            "{}: {} rows loaded in {:.1} s{place}",
            p.target, p.rows, p.secs
        );
    }
    println!(
        "next: dbdelta run --use-existing{} with the same --target, --suite and scale flags",
        match &args.data_dir {
            Some(d) => format!(" --data-dir {}", d.display()),
            None => String::new(),
        }
    );
    Ok(ExitCode::SUCCESS)
}
