//! RocksDB built from source: `dbdelta build rocksdb --source 9.9 --recipe lto=on` and the
//! `NAME=rocksdb-build:SOURCE?RECIPE&OPTIONS` target, which becomes an ordinary
//! `rocksdb:` target whose `lib=` is the built `librocksdb.so` once built (or found in the
//! cache). The same build holds that version's `db_bench`.

use crate::error::{input, LabError};
use crate::plan::Target;
use crate::progress::{BuildEvent, LabProgress};
use dbdelta_engine::{
    Engine, EngineConfig, EngineError, EngineKind, ErrorKind, OpenOptions, SpecError,
};
use dbdelta_model::{Location, TargetSpec};
use dbdelta_source_build::rocksdb::crates_io::Index;
use dbdelta_source_build::rocksdb::{self, RocksBuildRequest, RocksBuilt, RocksSourceSpec};
use dbdelta_source_build::Recipe;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The engine name of a RocksDB target built from source.
pub const ROCKS_BUILD_ENGINE: &str = "rocksdb-build";

/// A `rocksdb-build:` target split into its build and its database options.
struct RocksBuildTarget {
    source: RocksSourceSpec,
    recipe: Recipe,
    /// The parameters that are not recipe keys: RocksDB options, as for `rocksdb:`.
    options: Vec<(String, String)>,
}

fn split(t: &TargetSpec) -> Result<RocksBuildTarget, LabError> {
    let source_text = crate::build::source_text(
        t,
        "rocksdb-build:9.9 (a RocksDB release packaged in crates.io's librocksdb-sys), rocksdb-build:crate:librocksdb-sys@0.17.1+9.9.3 or rocksdb-build:/path/to/rocksdb",
        "a release such as 9.9, crate:NAME@VERSION or a tree path",
    )?;
    let source =
        RocksSourceSpec::parse(&source_text).map_err(|e| input!("--target {}: {e}", t.name))?;
    if t.params.iter().any(|(k, _)| k == "lib") {
        return Err(input!(
            "--target {}: a rocksdb-build target loads the library it builds: drop lib= (or use a rocksdb: target with lib=)",
            t.name
        ));
    }
    let (recipe, options) = crate::build::recipe_and_rest(t, "RocksDB options")?;
    rocksdb::driver::make_vars(&recipe).map_err(|e| input!("--target {}: {e}", t.name))?;
    Ok(RocksBuildTarget {
        source,
        recipe,
        options,
    })
}

fn rocks_spec(t: &TargetSpec, lib: &Path, b: &RocksBuildTarget) -> TargetSpec {
    let mut params = b.options.clone();
    params.push(("lib".into(), lib.display().to_string()));
    TargetSpec {
        name: t.name.clone(),
        engine: "rocksdb".into(),
        location: Location::Default,
        params,
    }
}

/// Cheap validation of a `rocksdb-build:` target before anything runs (exit 2 on error).
pub fn check(t: &TargetSpec) -> Result<(), LabError> {
    let b = split(t)?;
    if let RocksSourceSpec::Tree(p) = &b.source {
        if !p.is_dir() {
            return Err(input!(
                "--target {}: source tree {} is not a directory: give an unpacked RocksDB source, or a release such as 9.9",
                t.name,
                p.display()
            ));
        }
    }
    dbdelta_engine_rocksdb::RocksdbConfig::from_spec(&rocks_spec(t, Path::new("/"), &b))
        .map(|_| ())
        .map_err(LabError::Target)
}

/// The `rocksdb-build` engine kind: RocksDB built from source. The lab builds it (or finds
/// it in the cache) before the run starts ([`materialize`]), and it becomes an ordinary
/// `rocksdb:` target.
#[derive(Debug, Clone, Copy, Default)]
pub struct RocksdbBuildKind;

impl EngineKind for RocksdbBuildKind {
    fn name(&self) -> &'static str {
        ROCKS_BUILD_ENGINE
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        check(spec).map_err(|e| match e {
            LabError::Target(e) => SpecError::Engine(e),
            other => SpecError::Shape(other.to_string()),
        })?;
        Ok(Box::new(RocksdbBuildConfig { spec: spec.clone() }))
    }

    /// It is a rocksdb target once built: operations run on the caller's thread.
    fn thread_per_connection(&self) -> bool {
        true
    }

    /// A key-value store.
    fn serves_sql(&self) -> bool {
        false
    }
}

/// A validated `rocksdb-build:` target.
#[derive(Debug, Clone)]
struct RocksdbBuildConfig {
    spec: TargetSpec,
}

impl EngineConfig for RocksdbBuildConfig {
    /// Builds (a cache hit once [`materialize`] ran) and opens the database it becomes.
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        let failed = |e: LabError| {
            let message = format!("target '{}': {e}", self.spec.name);
            EngineError::with_source(ErrorKind::Config, message, e)
        };
        let b = split(&self.spec).map_err(failed)?;
        let built = build(&b.source, &b.recipe, None, None, &mut |_| {}).map_err(failed)?;
        dbdelta_engine_rocksdb::RocksdbConfig::from_spec(&rocks_spec(&self.spec, &built.lib, &b))?
            .open(scratch, opts)
    }
}

/// Builds every `rocksdb-build:` target (a cache hit is instant) and turns it into the
/// `rocksdb:` target with the same name and options, loading the built library.
pub fn materialize(targets: &mut [Target], progress: &dyn LabProgress) -> Result<(), LabError> {
    for t in targets
        .iter_mut()
        .filter(|t| t.engine == ROCKS_BUILD_ENGINE)
    {
        let b = split(t)?;
        let built =
            build(&b.source, &b.recipe, None, None, &mut |e| progress.build(e)).map_err(|e| {
                LabError::BuildTarget {
                    target: t.name.clone(),
                    source: Box::new(e),
                }
            })?;
        progress.note(&format!(
            "[{}] RocksDB built from source: {} (its db_bench: {})",
            t.name,
            built.lib.display(),
            built.db_bench.display()
        ));
        *t = Target::configure(
            &dbdelta_engine_rocksdb::RocksdbKind,
            &rocks_spec(t, &built.lib, &b),
        )?;
    }
    Ok(())
}

/// The `build.*` settings of a `rocksdb:` target whose `lib=` is a library dbdelta built
/// (`<build>/lib/librocksdb.so` with `<build>/dbdelta-build.json`); empty otherwise.
pub fn build_settings(t: &TargetSpec) -> BTreeMap<String, String> {
    if t.engine != "rocksdb" {
        return BTreeMap::new();
    }
    let Some((_, lib)) = t.params.iter().find(|(k, _)| k == "lib") else {
        return BTreeMap::new();
    };
    let Some(dir) = Path::new(lib).parent().and_then(Path::parent) else {
        return BTreeMap::new();
    };
    dbdelta_source_build::read_info(dir)
        .map(|info| {
            let mut s = info.settings(dir);
            // make's variables, not configure's arguments.
            if let Some(c) = s.remove("build.configure") {
                s.insert("build.make".into(), c);
            }
            s.insert(
                "build.db_bench".into(),
                dir.join("bin/db_bench").display().to_string(),
            );
            s
        })
        .unwrap_or_default()
}

fn compiler() -> String {
    std::env::var("CXX")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "g++".to_string())
}

/// `--cached-only`: a complete cached build, or an error saying how to make it (and where
/// it would be built).
pub fn cached(
    source: &RocksSourceSpec,
    recipe: &Recipe,
    cache_dir: Option<PathBuf>,
) -> Result<RocksBuilt, LabError> {
    let cache = crate::build::cache_at(cache_dir)?;
    let src =
        rocksdb::spec::resolve_cached(source, &cache).map_err(|e| input!("--cached-only: {e}"))?;
    let req = RocksBuildRequest {
        source: &src,
        recipe,
        cache: &cache,
        jobs: 1,
        cxx: compiler(),
    };
    match rocksdb::lookup(&req)? {
        Ok(b) => Ok(b),
        Err(dir) => Err(input!(
            "--cached-only: {} with recipe {} is not in the build cache (it would be {}): build it first (dbdelta build rocksdb without --cached-only; many minutes)",
            src.description,
            recipe.canonical(),
            dir.display()
        )),
    }
}

/// Resolves the source (fetching the crate from crates.io's index, or
/// `$DBDELTA_CRATES_INDEX`) and builds in the cache at `cache_dir` (else the default one)
/// with `jobs` parallel make jobs (default: the number of CPUs), telling `on` each phase.
pub fn build(
    source: &RocksSourceSpec,
    recipe: &Recipe,
    jobs: Option<usize>,
    cache_dir: Option<PathBuf>,
    on: &mut dyn FnMut(BuildEvent<'_>),
) -> Result<RocksBuilt, LabError> {
    let cache = crate::build::cache_at(cache_dir)?;
    let src = rocksdb::spec::resolve(source, &cache, &Index::from_env(), &mut |s: &str| {
        on(BuildEvent::Note(s))
    })?;
    let req = RocksBuildRequest {
        source: &src,
        recipe,
        cache: &cache,
        jobs: crate::build::jobs_or_cpus(jobs),
        cxx: compiler(),
    };
    let built = crate::build::with_phases(on, |progress| rocksdb::build(&req, progress))?;
    if !built.cached {
        on(BuildEvent::Built {
            dir: &built.dir,
            seconds: built.info.seconds,
        });
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_target_splits_into_recipe_and_rocksdb_options() {
        let t = TargetSpec::parse(
            "r9=rocksdb-build:9.9?cache_size=64M&cflags=-O3&lto=on&compression=zstd",
        )
        .unwrap();
        let b = split(&t).unwrap();
        assert_eq!(b.source, RocksSourceSpec::Release(vec![9, 9]));
        assert_eq!(b.recipe.canonical(), "cflags=-O3&lto=on");
        let s = rocks_spec(
            &t,
            Path::new("/c/builds/rocksdb-9.9.3-x/lib/librocksdb.so"),
            &b,
        );
        assert_eq!(s.engine, "rocksdb");
        assert_eq!(s.name, "r9");
        assert_eq!(
            s.params,
            vec![
                ("cache_size".to_string(), "64M".to_string()),
                ("compression".to_string(), "zstd".to_string()),
                (
                    "lib".to_string(),
                    "/c/builds/rocksdb-9.9.3-x/lib/librocksdb.so".to_string()
                )
            ]
        );
        assert!(check(&t).is_ok());
        for (text, needle) in [
            (
                "x=rocksdb-build:9.9?frame_pointer=on",
                "did you mean frame_pointers",
            ),
            ("x=rocksdb-build:9.9?lib=/l.so", "drop lib="),
            ("x=rocksdb-build:9.9?pgo=sysbench", "PostgreSQL builds only"),
            ("x=rocksdb-build:9.9?cache_size=lots", "cache_size=lots"),
            ("x=rocksdb-build:nine", "not a RocksDB release"),
            ("x=rocksdb-build:", "needs a source"),
        ] {
            let e = TargetSpec::parse(text)
                .map_err(|e| e.to_string())
                .and_then(|t| check(&t).map_err(|e| crate::error::chain(&e)))
                .unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn a_library_built_by_dbdelta_carries_its_build_settings() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("lib")).unwrap();
        let info = dbdelta_source_build::BuildInfo {
            source: "crates.io librocksdb-sys 0.17.1+9.9.3 (RocksDB 9.9.3)".into(),
            source_version: "9.9.3".into(),
            source_dir: "/c/src/librocksdb-sys-0.17.1+9.9.3/rocksdb".into(),
            recipe: "default".into(),
            cflags: "-O2".into(),
            ldflags: String::new(),
            configure: vec!["DEBUG_LEVEL=0".into(), "shared_lib".into()],
            cc: "g++ (Debian 12.2.0-14+deb12u1) 12.2.0".into(),
            pgo_training: None,
            jobs: 2,
            phases: Vec::new(),
            seconds: 1.0,
            finished_unix: 0,
        };
        std::fs::write(
            d.path().join(dbdelta_source_build::INFO_FILE),
            serde_json::to_vec(&info).unwrap(),
        )
        .unwrap();
        let t = TargetSpec::parse(&format!(
            "r=rocksdb:?lib={}/lib/librocksdb.so",
            d.path().display()
        ))
        .unwrap();
        let s = build_settings(&t);
        assert!(s["build.source"].contains("9.9.3"), "{s:?}");
        assert_eq!(s["build.make"], "DEBUG_LEVEL=0 shared_lib");
        assert!(s["build.db_bench"].ends_with("bin/db_bench"));
        let deb = TargetSpec::parse("r=rocksdb:?lib=/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8")
            .unwrap();
        assert!(build_settings(&deb).is_empty());
    }
}
