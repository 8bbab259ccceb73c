//! A running FerretDB: started from the cached binary on a free loopback port, its SQLite
//! files in the target's scratch directory or its backend a PostgreSQL server (managed
//! beside it, or external), stopped by the kit's start guard — on drop, on error, when
//! dbdelta dies (death signal) and on an exit that does not unwind (the running registry).
//!
//! Spawn from the long-lived thread that opens targets: the death signal is tied to it.

use crate::spec::{Auth, Backend, FerretSpec};
use dbdelta_engine::{Engine, EngineError, OpenOptions};
use dbdelta_kit::listen;
use dbdelta_kit::params::target_config_err;
use dbdelta_kit::server::{
    self, chown_tree, log_tail, port_in_use, service_user, start_on_free_port, Launch, NotReady,
    Probe, ServerProcess,
};
use dbdelta_model::{Location, TargetSpec};
use std::fs;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long a starting FerretDB may take to accept connections (it opens or creates its
/// backend's metadata first).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long FerretDB may take to stop on SIGTERM (it closes its client connections and its
/// backend pool) before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(15);
/// Lines of FerretDB's log quoted in errors.
const TAIL_LINES: usize = 25;
/// The user FerretDB creates at start with `auth=scram` (`--setup-username`).
pub const SCRAM_USER: &str = "dbdelta";
/// The PostgreSQL database FerretDB keeps its collections in, on a managed backend.
const PG_DATABASE: &str = "ferretdb";
/// The superuser a managed PostgreSQL trusts on loopback (dbdelta's managed servers run
/// `initdb -U dbdelta --auth=trust`).
const PG_SUPERUSER: &str = "dbdelta";

/// The backend a running FerretDB stores in.
#[derive(Debug)]
pub enum RunningBackend {
    /// SQLite files in the scratch directory.
    Sqlite {
        /// The directory `--sqlite-url` names.
        dir: PathBuf,
    },
    /// A PostgreSQL server dbdelta started for this target.
    ManagedPostgres(Box<dbdelta_engine_postgres::PostgresEngine>),
    /// A PostgreSQL server that was already running.
    ExternalPostgres,
}

/// A running FerretDB and the backend behind it. Dropping it stops FerretDB first, then a
/// managed backend.
#[derive(Debug)]
pub struct Running {
    /// FerretDB itself; declared before `backend` so it stops first.
    process: ServerProcess,
    /// The loopback port FerretDB listens on.
    pub port: u16,
    /// FerretDB's log.
    pub log: PathBuf,
    /// Where it stores.
    pub backend: RunningBackend,
    /// The password of [`SCRAM_USER`] with `auth=scram` (made up for this start).
    pub password: Option<String>,
}

impl Running {
    /// FerretDB's process id.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// FerretDB's process and, for a managed backend, the PostgreSQL server's processes:
    /// the server side whose CPU a step's cost counts.
    pub fn server_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .process
            .pid()
            .map(dbdelta_kit::running::process_tree)
            .unwrap_or_default();
        if let RunningBackend::ManagedPostgres(pg) = &self.backend {
            pids.extend(pg.server_pids());
        }
        pids
    }

    /// Stops FerretDB (SIGTERM, SIGKILL after the grace period), then a managed backend.
    /// Idempotent.
    pub fn stop(&mut self) -> Result<(), EngineError> {
        let ferret = self.process.stop();
        let backend = match &mut self.backend {
            RunningBackend::ManagedPostgres(pg) => pg.shutdown(),
            _ => Ok(()),
        };
        ferret.and(backend)
    }
}

/// A random password for the start-up user (16 bytes of the kernel's randomness, hex).
fn made_up_password() -> Result<String, EngineError> {
    let mut buf = [0u8; 16];
    let mut f = fs::File::open("/dev/urandom")
        .map_err(|e| EngineError::config(format!("cannot open /dev/urandom: {e}")))?;
    std::io::Read::read_exact(&mut f, &mut buf)
        .map_err(|e| EngineError::config(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Starts FerretDB from `binary` for the target `spec` in `scratch`: a managed PostgreSQL
/// backend first (in `scratch/postgres`), then FerretDB on a free loopback port (or
/// `port=`), ready once it accepts a TCP connection and listens on loopback only.
pub fn start(
    target: &str,
    spec: &FerretSpec,
    binary: &Path,
    scratch: &Path,
    opts: &OpenOptions,
) -> Result<Running, EngineError> {
    let err = |msg: String| target_config_err(target, msg);
    if let Some(p) = spec.port.filter(|p| port_in_use(*p)) {
        return Err(err(format!(
            "port={p}: 127.0.0.1:{p} is already in use; free it or drop port= to let dbdelta choose a free port"
        )));
    }
    let owner = service_user()?;
    fs::create_dir_all(scratch)
        .map_err(|e| err(format!("cannot create {}: {e}", scratch.display())))?;
    let scratch = scratch
        .canonicalize()
        .map_err(|e| err(format!("cannot resolve {}: {e}", scratch.display())))?;
    for (dir, fix) in [
        (
            binary,
            "keep the build cache where that user can read it (DBDELTA_BUILD_CACHE=/var/cache/dbdelta)",
        ),
        (
            scratch.as_path(),
            "put the run directory elsewhere (e.g. under /var/tmp)",
        ),
    ] {
        server::check_reachable(dir, owner).map_err(|u| err(u.advice(fix)))?;
    }
    let (backend, handler_args) = match &spec.backend {
        Backend::Sqlite => {
            let dir = scratch.join("sqlite");
            fs::create_dir_all(&dir)
                .map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
            let arg = format!("--sqlite-url=file:{}/", dir.display());
            (
                RunningBackend::Sqlite { dir },
                vec!["--handler=sqlite".to_string(), arg],
            )
        }
        Backend::ManagedPostgres { bin } => {
            let pg = start_postgres(target, bin, &scratch.join("postgres"), opts)?;
            let url = format!(
                "postgres://{}@{}/{}",
                PG_SUPERUSER,
                pg.address(),
                pg.database()
            );
            (
                RunningBackend::ManagedPostgres(Box::new(pg)),
                vec![
                    "--handler=postgresql".to_string(),
                    format!("--postgresql-url={url}"),
                ],
            )
        }
        Backend::ExternalPostgres { url } => (
            RunningBackend::ExternalPostgres,
            vec![
                "--handler=postgresql".to_string(),
                format!("--postgresql-url={}", url.expose()),
            ],
        ),
    };
    let state = scratch.join("state");
    fs::create_dir_all(&state)
        .map_err(|e| err(format!("cannot create {}: {e}", state.display())))?;
    let log = scratch.join("ferretdb.log");
    chown_tree(&scratch, owner)?;
    let password = match spec.auth {
        Auth::None => None,
        Auth::Scram => Some(made_up_password()?),
    };
    let mut base = vec![
        // The debug HTTP listener (metrics, pprof) would take 127.0.0.1:8088 for every
        // target: off.
        "--debug-addr=-".to_string(),
        "--telemetry=disable".to_string(),
        "--log-level=warn".to_string(),
        format!("--state-dir={}", state.display()),
    ];
    base.extend(handler_args);
    if let Some(pw) = &password {
        // FerretDB v1 authenticates with SCRAM only under its experimental new
        // authentication, whose start-up user is the only way to create the first user.
        base.extend([
            "--test-enable-new-auth".to_string(),
            format!("--setup-database={}", opts.database),
            format!("--setup-username={SCRAM_USER}"),
            format!("--setup-password={pw}"),
        ]);
    }
    let (process, port) = start_on_free_port(spec.port, |port| {
        let mut command = Command::new(binary);
        command
            .args(&base)
            .arg(format!("--listen-addr=127.0.0.1:{port}"))
            .current_dir(&scratch);
        let mut process = server::launch(Launch {
            command,
            log: &log,
            append: true,
            owner,
            netns: None,
            stop_signal: libc::SIGTERM,
            grace: STOP_GRACE,
        })
        .map_err(|e| (err(e.to_string()), false))?;
        match wait_ready(target, &mut process, port, &log) {
            Ok(()) => Ok((process, port)),
            Err(failed) => {
                let _ = process.stop();
                Err(failed)
            }
        }
    })?;
    Ok(Running {
        process,
        port,
        log,
        backend,
        password,
    })
}

/// Starts the managed PostgreSQL backend from `bin` in `scratch`, with a database of
/// FerretDB's own.
fn start_postgres(
    target: &str,
    bin: &Path,
    scratch: &Path,
    opts: &OpenOptions,
) -> Result<dbdelta_engine_postgres::PostgresEngine, EngineError> {
    let spec = TargetSpec {
        name: target.to_string(),
        engine: "postgres".into(),
        location: Location::Path {
            path: bin.to_path_buf(),
        },
        params: Vec::new(),
    };
    let mut pg_opts = opts.clone();
    pg_opts.database = PG_DATABASE.into();
    // FerretDB speaks to its backend over plain loopback TCP.
    pg_opts.tls = false;
    dbdelta_engine_postgres::open(&spec, scratch, &pg_opts)
}

/// Waits until FerretDB accepts a connection on `port` and listens on loopback only.
fn wait_ready(
    target: &str,
    process: &mut ServerProcess,
    port: u16,
    log: &Path,
) -> Result<(), (EngineError, bool)> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let probe = || match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
        Ok(_) => Ok(()),
        Err(e) => Err(Probe::NotYet(Some(e))),
    };
    let ready = server::wait_ready(process, START_TIMEOUT, Duration::from_millis(50), probe);
    let tail = || log_tail(log, TAIL_LINES);
    match ready {
        Ok(()) => listen::require_loopback_only(target, "FerretDB", process.pid(), &[])
            .map_err(|e| (e, false)),
        Err(NotReady::Exited(status)) => {
            let text = tail();
            // Another process took the free port between the check and FerretDB's bind.
            let clash = text.contains("address already in use");
            Err((
                target_config_err(
                    target,
                    format!("FerretDB exited during startup ({status}); its log:\n{text}"),
                ),
                clash,
            ))
        }
        Err(NotReady::Failed(e)) | Err(NotReady::TimedOut(Some(e))) => Err((
            target_config_err(
                target,
                format!(
                    "FerretDB did not accept connections on 127.0.0.1:{port} within {}s ({e}); its log:\n{}",
                    START_TIMEOUT.as_secs(),
                    tail()
                ),
            ),
            false,
        )),
        Err(NotReady::TimedOut(None)) => Err((
            target_config_err(
                target,
                format!(
                    "FerretDB did not accept connections on 127.0.0.1:{port} within {}s; its log:\n{}",
                    START_TIMEOUT.as_secs(),
                    tail()
                ),
            ),
            false,
        )),
    }
}
