//! `dbdelta fetch ENGINE VERSION`: released server binaries fetched into the cache (the
//! lab's `dist`), one line of progress per step on stderr, the bin directory on stdout.

use crate::flags::FetchArgs;
use anyhow::{bail, Result};
use dbdelta_source_build::dist::Request;

/// `dbdelta fetch`: the bin directory (or, with `--list`, the releases), as printed.
pub fn fetch_cmd(args: &FetchArgs) -> Result<String> {
    if !matches!(args.engine.as_str(), "postgres" | "postgresql" | "pg") {
        bail!(
            "dbdelta fetch: no released binaries of '{}' are known: give postgres",
            args.engine
        );
    }
    if args.list {
        let releases = dbdelta_lab::dist::available()?;
        return Ok(releases.join("\n") + "\n");
    }
    let Some(version) = &args.version else {
        bail!("dbdelta fetch postgres: give a VERSION (13, 13.22) or --list");
    };
    let request = Request::parse(version).map_err(|e| anyhow::anyhow!("VERSION: {e}"))?;
    let fetched = dbdelta_lab::dist::fetch(&request, args.cache_dir.clone(), &mut |s| {
        eprintln!("fetch: {s}")
    })?;
    if fetched.cached {
        eprintln!(
            "fetch: {} ({} {}) is cached",
            fetched.info.postgres_version, fetched.info.package, fetched.info.package_version
        );
    }
    Ok(format!("{}\n", fetched.bin.display()))
}
