//! `dbdelta build rocksdb --source 9.9 --recipe lto=on`: librocksdb.so and the same
//! version's db_bench from one tree (building is the lab's, `dbdelta_lab::rocks_build`).
//! Prints the library's path (what a `rocksdb:` target's `lib=` takes); db_bench's path
//! goes to stderr.

use crate::flags::BuildArgs;
use anyhow::{bail, Result};
use dbdelta_lab::BuildEvent;
use dbdelta_source_build::rocksdb::RocksSourceSpec;
use dbdelta_source_build::Recipe;
use std::path::PathBuf;

/// Builds (or looks up, with `--cached-only`) a RocksDB build, telling `show` each phase;
/// returns its library.
pub fn build_rocksdb(args: &BuildArgs, show: &mut dyn FnMut(BuildEvent<'_>)) -> Result<PathBuf> {
    let source =
        RocksSourceSpec::parse(&args.source).map_err(|e| anyhow::anyhow!("--source: {e}"))?;
    let recipe =
        Recipe::parse(&args.recipe.join("&")).map_err(|e| anyhow::anyhow!("--recipe: {e}"))?;
    dbdelta_source_build::rocksdb::driver::make_vars(&recipe)
        .map_err(|e| anyhow::anyhow!("--recipe: {e}"))?;
    if args.jobs == Some(0) {
        bail!("--jobs 0 is invalid: give 1 or more parallel make jobs");
    }
    let built = if args.cached_only {
        dbdelta_lab::rocks_build::cached(&source, &recipe, args.cache_dir.clone())?
    } else {
        dbdelta_lab::rocks_build::build(&source, &recipe, args.jobs, args.cache_dir.clone(), show)?
    };
    eprintln!(
        "build: db_bench of the same tree: {}",
        built.db_bench.display()
    );
    Ok(built.lib)
}
