//! Builds from source: `dbdelta build postgres --source 15 --recipe cflags=-O3` and the
//! `NAME=postgres-build:SOURCE?RECIPE&SETTINGS` target, which becomes an ordinary managed
//! `postgres:<build>/bin` target once built (or found in the cache).

use crate::error::{input, LabError};
use crate::plan::Target;
use crate::progress::{BuildEvent, LabProgress};
use dbdelta_engine::{
    Engine, EngineConfig, EngineError, EngineKind, ErrorKind, OpenOptions, SpecError,
};
use dbdelta_model::{Location, TargetSpec};
use dbdelta_source_build::driver::Event;
use dbdelta_source_build::{
    recipe, BuildRequest, Built, Cache, Cause, Recipe, SourceSpec, TrainError,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The engine name of a target built from source.
pub const BUILD_ENGINE: &str = "postgres-build";

/// A `postgres-build:` target split into its build and its server.
struct BuildTarget {
    source: SourceSpec,
    recipe: Recipe,
    /// The parameters that are not recipe keys: server settings, as for `postgres:`.
    server_params: Vec<(String, String)>,
}

/// The source a built target names (its location), for a `*-build:` target: `examples` are
/// what a missing source should be, `kinds` what a source can be.
pub(crate) fn source_text(t: &TargetSpec, examples: &str, kinds: &str) -> Result<String, LabError> {
    match &t.location {
        Location::Path { path } => Ok(path.display().to_string()),
        Location::Default => Err(input!(
            "--target {}: {} needs a source: {examples}",
            t.name,
            t.engine
        )),
        Location::Url { .. } => Err(input!(
            "--target {}: {} takes a source ({kinds}), not a URL",
            t.name,
            t.engine
        )),
    }
}

fn split(t: &TargetSpec) -> Result<BuildTarget, LabError> {
    let source_text = source_text(
        t,
        "postgres-build:15 (Debian's postgresql-15 source package) or postgres-build:/path/to/postgresql-15.x",
        "a major version such as 15 or a source tree path",
    )?;
    let source = SourceSpec::parse(&source_text).map_err(|e| input!("--target {}: {e}", t.name))?;
    let (recipe, server_params) = recipe_and_rest(t, "server settings")?;
    Ok(BuildTarget {
        source,
        recipe,
        server_params,
    })
}

/// A built target's parameters split into its recipe and the rest (`rest`: what the other
/// parameters are, for the message refusing a misspelt recipe key).
pub(crate) fn recipe_and_rest(
    t: &TargetSpec,
    rest: &str,
) -> Result<(Recipe, Vec<(String, String)>), LabError> {
    let mut recipe_pairs = Vec::new();
    let mut others = Vec::new();
    for (k, v) in &t.params {
        if recipe::is_key(k) {
            recipe_pairs.push((k.clone(), v.clone()));
        } else if let Some(near) = recipe::near_key(k) {
            return Err(input!(
                "--target {}: '{k}' is not a build recipe key (did you mean {near}?): the recipe keys are {}; other parameters are {rest}",
                t.name,
                recipe::KEYS.join(", ")
            ));
        } else {
            others.push((k.clone(), v.clone()));
        }
    }
    let recipe =
        Recipe::from_pairs(&recipe_pairs).map_err(|e| input!("--target {}: {e}", t.name))?;
    Ok((recipe, others))
}

/// Validates a recipe's PGO suite: a suite dbdelta knows (`flag` names where the recipe
/// came from in the message).
pub fn check_pgo(recipe: &Recipe, flag: &str) -> Result<(), LabError> {
    if let Some(suite) = &recipe.pgo {
        dbdelta_workload::Suite::load(suite).map_err(|e| input!("{flag}: pgo={suite}: {e}"))?;
    }
    Ok(())
}

/// The `postgres-build` engine kind: PostgreSQL built from source. The lab builds it (or
/// finds it in the cache) before the run starts ([`materialize`]), and it becomes an
/// ordinary `postgres:` target.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostgresBuildKind;

impl EngineKind for PostgresBuildKind {
    fn name(&self) -> &'static str {
        BUILD_ENGINE
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        check(spec).map_err(|e| match e {
            LabError::Target(e) => SpecError::Engine(e),
            other => SpecError::Shape(other.to_string()),
        })?;
        Ok(Box::new(PostgresBuildConfig { spec: spec.clone() }))
    }

    /// It is a postgres target once built.
    fn thread_per_connection(&self) -> bool {
        false
    }
}

/// A validated `postgres-build:` target: its build and server settings, split again when
/// built (the split is cheap; the build is cached).
#[derive(Debug, Clone)]
struct PostgresBuildConfig {
    spec: TargetSpec,
}

impl EngineConfig for PostgresBuildConfig {
    /// Builds (a cache hit once [`materialize`] ran) and opens the server it becomes.
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        let failed = |e: LabError| {
            let message = format!("target '{}': {e}", self.spec.name);
            EngineError::with_source(ErrorKind::Config, message, e)
        };
        let b = split(&self.spec).map_err(failed)?;
        let built = build(&b.source, &b.recipe, None, None, &mut |_| {}).map_err(failed)?;
        dbdelta_engine_postgres::PostgresConfig::from_spec(&server_spec(&self.spec, built.bin, &b))
            .map_err(|e| match e {
                SpecError::Engine(e) => e,
                shape => EngineError::config(shape.to_string()),
            })?
            .open(scratch, opts)
    }
}

/// Cheap validation of a `postgres-build:` target before anything runs (exit 2 on error).
pub fn check(t: &TargetSpec) -> Result<(), LabError> {
    let b = split(t)?;
    if let SourceSpec::Tree(p) = &b.source {
        if !p.is_dir() {
            return Err(input!(
                "--target {}: source tree {} is not a directory: give an unpacked PostgreSQL source, or a major version such as 15",
                t.name,
                p.display()
            ));
        }
    }
    check_pgo(&b.recipe, &format!("--target {}", t.name))?;
    dbdelta_engine_postgres::check_spec(&server_spec(t, PathBuf::from("/"), &b))
        .map_err(LabError::Target)
}

fn server_spec(t: &TargetSpec, bin: PathBuf, b: &BuildTarget) -> TargetSpec {
    TargetSpec {
        name: t.name.clone(),
        engine: "postgres".into(),
        location: Location::Path { path: bin },
        params: b.server_params.clone(),
    }
}

/// Builds every `postgres-build:` target (a cache hit is instant) and turns it into the
/// managed `postgres:<build>/bin` target with the same name and server settings.
pub fn materialize(targets: &mut [Target], progress: &dyn LabProgress) -> Result<(), LabError> {
    for t in targets.iter_mut().filter(|t| t.engine == BUILD_ENGINE) {
        let b = split(t)?;
        let built =
            build(&b.source, &b.recipe, None, None, &mut |e| progress.build(e)).map_err(|e| {
                LabError::BuildTarget {
                    target: t.name.clone(),
                    source: Box::new(e),
                }
            })?;
        progress.note(&format!(
            "[{}] server built from source: {}",
            t.name,
            built.bin.display()
        ));
        *t = Target::configure(
            &dbdelta_engine_postgres::PostgresKind,
            &server_spec(t, built.bin, &b),
        )?;
    }
    Ok(())
}

/// The `build.*` settings of a managed PostgreSQL target whose binaries dbdelta built
/// (any `postgres:DIR/bin` whose `DIR` holds `dbdelta-build.json`); empty otherwise.
pub fn build_settings(t: &TargetSpec) -> BTreeMap<String, String> {
    match (&t.engine[..], &t.location) {
        ("postgres" | "postgresql" | "pg", Location::Path { path }) => {
            let prefix = path.parent().unwrap_or(path);
            dbdelta_source_build::read_info(prefix)
                .map(|info| info.settings(prefix))
                .unwrap_or_default()
        }
        _ => BTreeMap::new(),
    }
}

pub(crate) fn cache_at(cache_dir: Option<PathBuf>) -> Result<Cache, LabError> {
    let root = match cache_dir {
        Some(d) => d,
        None => Cache::default_root().ok_or_else(|| {
            input!("no cache directory for builds: set $DBDELTA_BUILD_CACHE or $HOME, or give --cache-dir")
        })?,
    };
    Ok(Cache::new(root))
}

fn compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "gcc".to_string())
}

/// `--cached-only`: the bin directory of a complete cached build, or an error saying how
/// to make it.
pub fn cached(
    source: &SourceSpec,
    recipe: &Recipe,
    cache_dir: Option<PathBuf>,
) -> Result<PathBuf, LabError> {
    let cache = cache_at(cache_dir)?;
    let src = dbdelta_source_build::source::resolve_cached(source, &cache)
        .map_err(|e| input!("--cached-only: {e}"))?;
    let req = BuildRequest {
        source: &src,
        recipe,
        cache: &cache,
        jobs: 1,
        cc: compiler(),
    };
    match dbdelta_source_build::lookup(&req)? {
        Some(b) => Ok(b.bin),
        None => Err(input!(
            "--cached-only: {} with recipe {} is not in the build cache {}: build it first (dbdelta build without --cached-only; minutes)",
            src.description,
            recipe.canonical(),
            cache.root().display()
        )),
    }
}

/// Resolves the source and builds (in the cache at `cache_dir`, else the default one) with
/// `jobs` parallel make jobs (default: the number of CPUs), telling `on` each phase.
pub fn build(
    source: &SourceSpec,
    recipe: &Recipe,
    jobs: Option<usize>,
    cache_dir: Option<PathBuf>,
    on: &mut dyn FnMut(BuildEvent<'_>),
) -> Result<Built, LabError> {
    let cache = cache_at(cache_dir)?;
    let src = dbdelta_source_build::source::resolve(source, &cache, &mut |s: &str| {
        on(BuildEvent::Note(s))
    })?;
    let req = BuildRequest {
        source: &src,
        recipe,
        cache: &cache,
        jobs: jobs_or_cpus(jobs),
        cc: compiler(),
    };
    let built = with_phases(on, |progress| {
        dbdelta_source_build::build(&req, progress, &mut train)
    })?;
    if !built.cached {
        on(BuildEvent::Built {
            dir: &built.dir,
            seconds: built.info.seconds,
        });
    }
    Ok(built)
}

/// Parallel make jobs: the given number, else the number of CPUs.
pub(crate) fn jobs_or_cpus(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Runs a build driver with its progress events turned into the lab's, telling `on` that
/// the phase that had begun failed when the driver returns an error in the middle of one.
pub(crate) fn with_phases<T, E>(
    on: &mut dyn FnMut(BuildEvent<'_>),
    build: impl FnOnce(&mut dyn FnMut(Event<'_>)) -> Result<T, E>,
) -> Result<T, E> {
    let mut open = false;
    let mut progress = |e: Event<'_>| match e {
        Event::Note(s) => on(BuildEvent::Note(s)),
        Event::PhaseStarted(p) => {
            on(BuildEvent::PhaseStarted(p));
            open = true;
        }
        Event::PhaseDone(_, took) => {
            on(BuildEvent::PhaseDone(took));
            open = false;
        }
    };
    let result = build(&mut progress);
    if open {
        on(BuildEvent::PhaseFailed);
    }
    result
}

/// PGO training: runs `suite` at quick scale (1 s per step, no warm-up) against the
/// instrumented build as a managed target, with this same dbdelta binary (the executable
/// the lab runs in).
fn train(bin: &Path, suite: &str, log: &Path) -> std::result::Result<(), Cause> {
    let exe = std::env::current_exe()
        .map_err(|e| TrainError::with_source(format!("cannot find dbdelta itself: {e}"), e))?;
    let prefix = bin.parent().unwrap_or(bin);
    let run_dir = prefix
        .parent()
        .unwrap_or(prefix)
        .join(format!("pgo-train-{suite}"));
    let _ = std::fs::remove_dir_all(&run_dir);
    let open_log = || {
        std::fs::OpenOptions::new()
            .append(true)
            .open(log)
            .map_err(|e| TrainError::with_source(format!("{}: {e}", log.display()), e))
    };
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--suite", suite, "--scale", "quick", "--quiet"])
        .args([
            "--read-secs",
            "1",
            "--write-secs",
            "1",
            "--insert-secs",
            "1",
        ])
        .args(["--warmup-secs", "0", "--no-os-metrics"])
        .arg("--target")
        .arg(format!("pgo-train=postgres:{}", bin.display()))
        .arg("--run-dir")
        .arg(&run_dir)
        .stdin(Stdio::null())
        .stdout(open_log()?)
        .stderr(open_log()?);
    let status = cmd
        .status()
        .map_err(|e| TrainError::with_source(format!("cannot run the training: {e}"), e))?;
    let _ = std::fs::remove_dir_all(&run_dir);
    // Exit 3: a step failed; the profile of the others still trains the build.
    match status.code() {
        Some(0 | 3) => Ok(()),
        _ => Err(TrainError::new(format!(
            "the training run (dbdelta run --suite {suite}) exited with {status}"
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_target_splits_into_recipe_and_server_settings() {
        let t = TargetSpec::parse(
            "o3=postgres-build:15?shared_buffers=1GB&cflags=-O3&lto=on&work_mem=64MB",
        )
        .unwrap();
        let b = split(&t).unwrap();
        assert_eq!(b.source, SourceSpec::Debian { major: 15 });
        assert_eq!(b.recipe.canonical(), "cflags=-O3&lto=on");
        let s = server_spec(&t, PathBuf::from("/b/bin"), &b);
        assert_eq!(s.engine, "postgres");
        assert_eq!(s.name, "o3");
        assert_eq!(
            s.params,
            vec![
                ("shared_buffers".to_string(), "1GB".to_string()),
                ("work_mem".to_string(), "64MB".to_string())
            ]
        );
        let e = split(&TargetSpec::parse("x=postgres-build:15?frame_pointer=on").unwrap())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("did you mean frame_pointers"), "{e}");
    }

    #[test]
    fn a_bin_dir_built_by_dbdelta_carries_its_build_settings() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("bin")).unwrap();
        let info = dbdelta_source_build::BuildInfo {
            source: "postgresql-15 15.18-0+deb12u1 (Debian source package)".into(),
            source_version: "15.18".into(),
            source_dir: "/c/src/postgresql-15.18".into(),
            recipe: "frame_pointers=on".into(),
            cflags: "-O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer".into(),
            ldflags: String::new(),
            configure: vec!["--prefix=/x".into()],
            cc: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0".into(),
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
        let t = TargetSpec::parse(&format!("p=postgres:{}/bin", d.path().display())).unwrap();
        let s = build_settings(&t);
        assert_eq!(s["build.recipe"], "frame_pointers=on");
        assert_eq!(s["build.cc"], "gcc (Debian 12.2.0-14+deb12u1) 12.2.0");
        assert!(s["build.cflags"].contains("-fno-omit-frame-pointer"));
        assert!(s["build.source"].contains("15.18"));
        // Debian's binaries: no build settings.
        let deb = TargetSpec::parse("p=postgres:/usr/lib/postgresql/15/bin").unwrap();
        assert!(build_settings(&deb).is_empty());
    }
}
