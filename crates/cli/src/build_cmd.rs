//! `dbdelta build ENGINE --source … --recipe …`: the flags, checked, and one line per build
//! phase on stderr; building is the lab's (`dbdelta_lab::build`).

use crate::flags::BuildArgs;
use anyhow::{bail, Result};
use dbdelta_lab::BuildEvent;
use dbdelta_source_build::{Recipe, SourceSpec};
use std::io::Write;
use std::path::PathBuf;

/// `dbdelta build`: builds and returns the bin directory (for rocksdb: the library that
/// `lib=` takes).
pub fn build_cmd(args: &BuildArgs) -> Result<PathBuf> {
    if args.plugin_only && !crate::build_mariadb::is_mariadb(&args.engine) {
        bail!(
            "--plugin-only builds MariaDB's MyRocks plugin: use it with dbdelta build mariadb, not {}",
            args.engine
        );
    }
    if args.engine == "rocksdb" {
        return crate::build_rocksdb::build_rocksdb(args, &mut show);
    }
    if crate::build_mariadb::is_mariadb(&args.engine) {
        return crate::build_mariadb::build_cmd(args);
    }
    if !matches!(args.engine.as_str(), "postgres" | "postgresql" | "pg") {
        bail!(
            "dbdelta build: engine '{}' cannot be built from source: give postgres, rocksdb or mariadb",
            args.engine
        );
    }
    let source = SourceSpec::parse(&args.source).map_err(|e| anyhow::anyhow!("--source: {e}"))?;
    let recipe =
        Recipe::parse(&args.recipe.join("&")).map_err(|e| anyhow::anyhow!("--recipe: {e}"))?;
    dbdelta_lab::build::check_pgo(&recipe, "--recipe")?;
    if args.jobs == Some(0) {
        bail!("--jobs 0 is invalid: give 1 or more parallel make jobs");
    }
    if args.cached_only {
        return Ok(dbdelta_lab::build::cached(
            &source,
            &recipe,
            args.cache_dir.clone(),
        )?);
    }
    let built = dbdelta_lab::build::build(
        &source,
        &recipe,
        args.jobs,
        args.cache_dir.clone(),
        &mut show,
    )?;
    Ok(built.bin)
}

/// Shows a build event on stderr: a line per note, a phase's name and then its time on the
/// same line.
pub fn show(e: BuildEvent<'_>) {
    {
        match e {
            BuildEvent::Note(s) => eprintln!("build: {s}"),
            BuildEvent::PhaseStarted(p) => {
                eprint!("build:   {p:<26} ");
                let _ = std::io::stderr().flush();
            }
            BuildEvent::PhaseDone(took) => eprintln!("{:>7.1} s", took.as_secs_f64()),
            BuildEvent::PhaseFailed => eprintln!("failed"),
            BuildEvent::Built { dir, seconds } => {
                eprintln!("build: {} built in {seconds:.1} s", dir.display())
            }
        }
    }
}
