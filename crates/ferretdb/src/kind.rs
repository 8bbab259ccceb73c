//! The `ferretdb` engine kind: a target spec checked once, then opened as a FerretDB dbdelta
//! builds (or finds in the build cache), starts and drives with the MongoDB engine's client.

use crate::binary;
use crate::engine::{limits_note, FerretEngine};
use crate::managed::{self, SCRAM_USER};
use crate::spec::{Auth, FerretSpec};
use dbdelta_engine::{
    Engine, EngineConfig, EngineError, EngineKind, ErrorKind, OpenOptions, SpecError,
};
use dbdelta_model::{Location, Secret, TargetSpec};
use dbdelta_source_build::{Cache, Event};
use std::path::{Path, PathBuf};

pub use crate::spec::ENGINE;

/// The `ferretdb` engine kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct FerretdbKind;

impl EngineKind for FerretdbKind {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        let ferret = FerretSpec::parse(spec)?;
        // The client's own parameters are the MongoDB engine's to check, now.
        dbdelta_engine_mongodb::MongodbKind
            .configure(&client_spec(spec, &ferret, 27017, None, "dbdelta"))?;
        Ok(Box::new(FerretdbConfig {
            spec: spec.clone(),
            ferret,
        }))
    }

    /// Its client is the MongoDB engine's: sans-IO sessions, many per thread.
    fn thread_per_connection(&self) -> bool {
        false
    }

    /// Documents: the key-value suites (YCSB) only.
    fn serves_sql(&self) -> bool {
        false
    }
}

/// A validated `ferretdb:` target.
#[derive(Debug, Clone)]
pub struct FerretdbConfig {
    spec: TargetSpec,
    ferret: FerretSpec,
}

impl FerretdbConfig {
    /// The parsed FerretDB parameters.
    pub fn ferret(&self) -> &FerretSpec {
        &self.ferret
    }
}

/// The MongoDB client's view of a running FerretDB: `mongodb://127.0.0.1:PORT/DB` with the
/// target's client parameters, and with `auth=scram` the start-up user and SCRAM-SHA-256.
fn client_spec(
    spec: &TargetSpec,
    ferret: &FerretSpec,
    port: u16,
    password: Option<&str>,
    database: &str,
) -> TargetSpec {
    let scram = ferret.auth == Auth::Scram;
    let mut params = ferret.client_params.clone();
    if scram && !params.iter().any(|(k, _)| k == "authMechanism") {
        params.push(("authMechanism".into(), "SCRAM-SHA-256".into()));
    }
    TargetSpec {
        name: spec.name.clone(),
        engine: "mongodb".into(),
        location: Location::Url {
            user: scram.then(|| SCRAM_USER.to_string()),
            password: scram.then(|| Secret::new(password.unwrap_or("x"))),
            host: "127.0.0.1".into(),
            port: Some(port),
            database: Some(database.to_string()),
        },
        params,
    }
}

/// The FerretDB binary of a target: `binary=`, else the build of `version=` in the build
/// cache at `cache` (default: [`Cache::default_root`]), built now when missing (`progress`
/// hears about it).
pub fn for_spec(
    ferret: &FerretSpec,
    cache: Option<&Path>,
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<binary::FerretBuild, binary::BuildError> {
    if let Some(b) = &ferret.binary {
        return binary::existing(b);
    }
    let root = cache
        .map(Path::to_path_buf)
        .or_else(Cache::default_root)
        .unwrap_or_else(|| PathBuf::from("/var/cache/dbdelta"));
    binary::ensure(&Cache::new(root), &ferret.version, progress)
}

impl EngineConfig for FerretdbConfig {
    /// Builds (a cache hit once the lab built it before the run), starts FerretDB (and a
    /// managed PostgreSQL backend) in `scratch`, and connects the MongoDB client to it.
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        let name = &self.spec.name;
        let build = for_spec(&self.ferret, None, &mut |_| {}).map_err(|e| {
            EngineError::with_source(ErrorKind::Config, format!("target '{name}': {e}"), e)
        })?;
        let mut server = managed::start(name, &self.ferret, &build.binary, scratch, opts)?;
        let client = client_spec(
            &self.spec,
            &self.ferret,
            server.port,
            server.password.as_deref(),
            &opts.database,
        );
        // FerretDB serves plain TCP on loopback; --tls is for external servers.
        let mut client_opts = opts.clone();
        client_opts.tls = false;
        let opened = dbdelta_engine_mongodb::MongodbKind
            .configure(&client)
            .map_err(|e| match e {
                SpecError::Engine(e) => e,
                shape => EngineError::config(shape.to_string()),
            })
            .and_then(|c| c.open(scratch, &client_opts));
        let client = match opened {
            Ok(c) => c,
            Err(e) => {
                let _ = server.stop();
                return Err(e);
            }
        };
        let note = limits_note(self.ferret.auth, &self.ferret.backend);
        Ok(Box::new(FerretEngine::new(client, server, build, note)))
    }

    fn data_parent(&self, runs: &Path) -> Option<PathBuf> {
        match self.ferret.backend {
            crate::spec::Backend::ExternalPostgres { .. } => None,
            _ => Some(runs.to_path_buf()),
        }
    }
}
