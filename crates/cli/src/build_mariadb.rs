//! `dbdelta build mariadb --source 10.11|PATH --recipe …`: MariaDB with the MyRocks plugin
//! from Debian's source package (unpacked in the cache's `src/`) or a tree, built with the
//! recipe into the build cache; prints the basedir for `mysql:DIR?engine=rocksdb`, or with
//! `--plugin-only` the MyRocks plugin's directory for `plugin_dir=`.

use crate::flags::BuildArgs;
use anyhow::{anyhow, bail, Result};
use dbdelta_source_build::mariadb::{self, MariadbSourceSpec, Scope};
use dbdelta_source_build::{Cache, Recipe};
use std::path::PathBuf;

/// True for the engine names this command builds.
pub fn is_mariadb(engine: &str) -> bool {
    matches!(engine, "mariadb" | "myrocks")
}

/// Builds (or finds) the MariaDB build and returns its basedir (the plugin's directory with
/// `--plugin-only`).
pub fn build_cmd(args: &BuildArgs) -> Result<PathBuf> {
    let scope = if args.plugin_only {
        Scope::Plugin
    } else {
        Scope::Server
    };
    let spec = MariadbSourceSpec::parse(&args.source).map_err(|e| anyhow!("--source: {e}"))?;
    let recipe = Recipe::parse(&args.recipe.join("&")).map_err(|e| anyhow!("--recipe: {e}"))?;
    mariadb::check_recipe(&recipe).map_err(|e| anyhow!("--recipe: {e}"))?;
    if args.jobs == Some(0) {
        bail!("--jobs 0 is invalid: give 1 or more parallel build jobs");
    }
    let root = args
        .cache_dir
        .clone()
        .or_else(Cache::default_root)
        .ok_or_else(|| {
            anyhow!("no build cache: give --cache-dir DIR or set DBDELTA_BUILD_CACHE")
        })?;
    let cache = Cache::new(root);
    let source = mariadb::resolve(&spec, &cache.src_dir()).map_err(|e| anyhow!("--source: {e}"))?;
    if args.cached_only {
        let cc = dbdelta_source_build::driver::compiler_version("gcc")?;
        return mariadb::lookup(scope, &source, &recipe, &cc, &cache.builds_dir()).ok_or_else(|| {
            anyhow!(
                "{} {} with recipe {} is not in the build cache {}: build it without --cached-only (an hour or more on 2 cores; the plugin alone, about a third of that)",
                if args.plugin_only { "The MyRocks plugin of MariaDB" } else { "MariaDB" },
                source.version,
                recipe.canonical(),
                cache.builds_dir().display()
            )
        });
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut note = |s: &str| eprintln!("build: {s}");
    Ok(mariadb::build(
        scope,
        &source,
        &recipe,
        &cache.builds_dir(),
        jobs,
        &mut note,
    )?)
}
