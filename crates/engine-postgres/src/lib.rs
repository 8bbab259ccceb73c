//! dbdelta's PostgreSQL engine.
//!
//! * A blocking, low-overhead client of the frontend/backend protocol (no async runtime):
//!   statements are parsed once per connection as named prepared statements; each execute
//!   is Bind+Execute+Sync in one `write` from a reused buffer, and the response is consumed
//!   up to ReadyForQuery counting DataRows without decoding them. `--no-prepared` sends
//!   Simple Query messages with literals interpolated, like sysbench's `--db-ps-mode=disable`.
//! * Managed targets (`postgres:/usr/lib/postgresql/15/bin?shared_buffers=1GB`): initdb in
//!   the scratch directory, the server started as our child on a free 127.0.0.1 port, and
//!   stopped on shutdown, drop, panic, or (through `PR_SET_PDEATHSIG`) when dbdelta dies.
//!   Call [`open`] from a long-lived thread (the main thread): the death signal is tied to
//!   the thread that spawned the server.
//! * External targets (`postgres://user@host:port/db`): the password comes from the URL,
//!   `PGPASSWORD` or `~/.pgpass` and never appears in messages.
//!
//! Layers, each naming only those below it: [`proto`] (message bytes, no I/O) and `addr`;
//! `pgerror` (errors as the runner sees them) and `wire` (sockets, buffers); `auth`,
//! `copy` and `cancel`; `session` (the sans-IO query phase); `tls`; `conn` (the blocking
//! connection); `counters`, `external`, `managed`, `pgbouncer`, `fuzzing` and this file.
#![deny(missing_docs)]

pub mod auth;
mod cancel;
mod conn;
mod copy;
mod counters;
mod external;
#[doc(hidden)]
pub mod fuzzing;
mod managed;
mod pgbouncer;
mod pgerror;
pub mod proto;
mod session;
#[cfg(feature = "tls")]
mod tls;
mod wire;

pub use conn::PgConnection;
pub use session::PgSession;

use conn::{connect, connect_with, ConnParams, TlsOpt};
use dbdelta_engine::{
    check_server, server_data_parent, ConnectOptions, Connection, Dialect, Engine, EngineConfig,
    EngineCounters, EngineError, EngineInfo, EngineKind, ErrorKind, OpenOptions, SettleReport,
    SettleWait, SpecError, StatsConnection,
};
use dbdelta_kit::tls::{TlsMode, PG_MODES};
use dbdelta_model::{Location, TargetSpec};
use managed::Managed;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A provisioned PostgreSQL target: a managed server we started, or an external one.
#[derive(Debug)]
pub struct PostgresEngine {
    name: String,
    params: ConnParams,
    /// A managed pgbouncer in front of the server; declared before `managed` so that it
    /// stops first when the engine drops.
    bouncer: Option<pgbouncer::Bouncer>,
    /// Where benchmark connections go (through pgbouncer); admin work uses `params`.
    bench: Option<ConnParams>,
    managed: Option<Managed>,
    data_dir: Option<PathBuf>,
    /// The side connection the server's counters are read over (straight to the server,
    /// never through pgbouncer).
    stats: StatsConnection<PgConnection>,
}

/// The `postgres` engine kind: a PostgreSQL server, managed (started from its bin
/// directory) or external (a URL).
#[derive(Debug, Clone, Copy, Default)]
pub struct PostgresKind;

impl EngineKind for PostgresKind {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(PostgresConfig::from_spec(spec)?))
    }

    /// Connections split into a socket and a sans-IO session, many per thread.
    fn thread_per_connection(&self) -> bool {
        false
    }
}

/// A validated `postgres` target. The server settings are the server's to check (a managed
/// server refuses unknown ones when it starts); the client's own parameters, the emulated
/// link and the location are checked here.
#[derive(Debug, Clone)]
pub struct PostgresConfig {
    /// The target as given: the managed and external setups (`managed.rs`, `external.rs`)
    /// read their settings from it when the server starts or is reached.
    pub spec: TargetSpec,
}

impl PostgresConfig {
    /// Checks a target before anything runs: `net=` (valid, on a managed target, and
    /// buildable here: root, ip, tc, netem), then [`check_server`] with [`check_spec`].
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, SpecError> {
        dbdelta_kit::netns::check_spec(spec)?;
        check_server(spec, check_spec)?;
        Ok(PostgresConfig { spec: spec.clone() })
    }
}

impl EngineConfig for PostgresConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(open(&self.spec, scratch, opts)?))
    }

    fn data_parent(&self, runs: &Path) -> Option<std::path::PathBuf> {
        server_data_parent(&self.spec, runs)
    }
}

/// Checks a postgres target's client parameters before anything starts: `sslmode` and
/// `channel_binding` must be one of their values (the error names the parameter and lists
/// them).
pub fn check_spec(spec: &TargetSpec) -> Result<(), EngineError> {
    auth::channel_binding(spec)?;
    external::connect_timeout(spec)?;
    if let Some(v) = spec.param("sslmode") {
        TlsMode::parse(&spec.name, "sslmode", v, PG_MODES)?;
    }
    Ok(())
}

/// Opens a postgres target. A path location is a managed server started from that bin
/// directory in `scratch` (data in `<scratch>/pgdata`, log in `<scratch>/server.log`); a URL
/// is an external server. Errors of kind `Config` name the problem and its fix.
pub fn open(
    spec: &TargetSpec,
    scratch: &Path,
    opts: &OpenOptions,
) -> Result<PostgresEngine, EngineError> {
    if !matches!(spec.engine.as_str(), "postgres" | "postgresql" | "pg") {
        return Err(EngineError::config(format!(
            "target '{}': engine '{}' is not postgres",
            spec.name, spec.engine
        )));
    }
    let tls = tls_setup(spec, opts)?;
    match &spec.location {
        Location::Path { path } => {
            let bouncer_spec = pgbouncer::parse(spec)?;
            let (managed, params) = managed::start(spec, path, scratch, opts, tls)?;
            let (bouncer, bench) = match &bouncer_spec {
                Some(b) => {
                    let conn::Addr::Tcp { port, .. } = &params.addr else {
                        return Err(EngineError::config(format!(
                            "target '{}': pgbouncer needs the server on TCP",
                            spec.name
                        )));
                    };
                    let owner = dbdelta_kit::server::service_user()?;
                    let bouncer =
                        pgbouncer::start(spec, b, scratch, *port, managed::SUPERUSER, owner)?;
                    let mut bench = params.clone();
                    bench.addr = conn::Addr::Tcp {
                        host: "127.0.0.1".into(),
                        port: bouncer.port,
                    };
                    // Named prepared statements do not survive transaction pooling in
                    // pgbouncer 1.18: statements go as text with literals then.
                    bench.prepared = params.prepared && b.mode.keeps_prepared_statements();
                    (Some(bouncer), Some(bench))
                }
                None => (None, None),
            };
            Ok(PostgresEngine {
                name: spec.name.clone(),
                params,
                bouncer,
                bench,
                data_dir: Some(managed.data_dir.clone()),
                managed: Some(managed),
                stats: StatsConnection::default(),
            })
        }
        Location::Url { .. } => {
            if spec
                .params
                .iter()
                .any(|(k, _)| pgbouncer::is_bouncer_param(k))
            {
                return Err(EngineError::config(format!(
                    "target '{}': pgbouncer=… starts a pgbouncer in front of a managed server; \
                     for an external one, point the URL at your pgbouncer instead",
                    spec.name
                )));
            }
            let params = external::params(spec, opts, tls)?;
            let mut conn = connect(&params).map_err(|e| {
                if e.kind == ErrorKind::Connection {
                    EngineError::config(format!(
                        "target '{}': {e}; is the server running and the URL right?",
                        spec.name
                    ))
                } else {
                    e
                }
            })?;
            // The data directory tells OS metrics which disk to watch; only meaningful (and
            // only readable by privileged roles) on this machine.
            let data_dir = if params.addr.is_local() {
                conn.query_scalar("SHOW data_directory")
                    .ok()
                    .flatten()
                    .map(PathBuf::from)
            } else {
                None
            };
            Ok(PostgresEngine {
                name: spec.name.clone(),
                params,
                bouncer: None,
                bench: None,
                managed: None,
                data_dir,
                stats: StatsConnection::default(),
            })
        }
        Location::Default => Err(EngineError::config(format!(
            "target '{}': postgres needs the bin directory of a PostgreSQL install (managed, e.g. \
             {}=postgres:/usr/lib/postgresql/15/bin) or a server URL (external, e.g. \
             {}=postgres://user@host:5432/db)",
            spec.name, spec.name, spec.name
        ))),
    }
}

/// The TLS setup of `spec`: `sslmode=` when given, else verify-full with `--tls`, else none.
#[cfg(feature = "tls")]
fn tls_setup(spec: &TargetSpec, opts: &OpenOptions) -> Result<TlsOpt, EngineError> {
    let mode = tls::mode(spec, opts.tls)?;
    Ok(if mode.wants_tls() {
        Some(std::sync::Arc::new(tls::setup(spec, mode)?))
    } else {
        None
    })
}

/// Without TLS support only `sslmode=disable` and `prefer` (which then stays plain) work.
#[cfg(not(feature = "tls"))]
fn tls_setup(spec: &TargetSpec, opts: &OpenOptions) -> Result<TlsOpt, EngineError> {
    let mode = match spec.param("sslmode") {
        Some(v) => TlsMode::parse(&spec.name, "sslmode", v, PG_MODES)?,
        None if opts.tls => TlsMode::VerifyFull,
        None => TlsMode::Disable,
    };
    if !matches!(mode, TlsMode::Disable | TlsMode::Prefer) {
        return Err(EngineError::config(format!(
            "target '{}': TLS is not supported by this build (the 'tls' feature of dbdelta-engine-postgres is off); use sslmode=disable",
            spec.name
        )));
    }
    Ok(None)
}

impl PostgresEngine {
    /// The managed server's log file (`<scratch>/server.log`); `None` for external targets.
    pub fn log_path(&self) -> Option<&Path> {
        self.managed.as_ref().map(|m| m.log_path.as_path())
    }

    /// True when dbdelta started this server.
    pub fn is_managed(&self) -> bool {
        self.managed.is_some()
    }

    /// Where connections go (`127.0.0.1:PORT`, `host:port` or a socket path).
    pub fn address(&self) -> String {
        self.params.addr.to_string()
    }

    /// Where benchmark connections go: the managed pgbouncer's address when one runs in
    /// front of the server, else [`Self::address`] (tests reach the pooler as a URL).
    pub fn bench_address(&self) -> String {
        self.bench.as_ref().unwrap_or(&self.params).addr.to_string()
    }

    /// The database connections use.
    pub fn database(&self) -> &str {
        &self.params.database
    }

    /// Opens a connection with its concrete type (tests, tools).
    pub fn connect_pg(&self) -> Result<PgConnection, EngineError> {
        connect(&self.params)
    }
}

/// A table name as dbdelta writes them (`sbtest1`, `public.pi1`), safe to splice into SQL.
fn plain_table(t: &str) -> Result<&str, EngineError> {
    if !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        Ok(t)
    } else {
        Err(EngineError::statement(format!(
            "settle: '{t}' is not a plain table name"
        )))
    }
}

impl Engine for PostgresEngine {
    fn server_log(&self) -> Option<std::path::PathBuf> {
        self.log_path().map(Path::to_path_buf)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(connect(&self.params)?))
    }

    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        let params = self.bench.as_ref().unwrap_or(&self.params);
        Ok(Box::new(connect_with(params, opts)?))
    }

    fn connection_limit(&self) -> Option<u64> {
        if let Some(b) = &self.bouncer {
            return Some(b.client_capacity());
        }
        let mut conn = connect(&self.params).ok()?;
        let max: u64 = conn
            .query_scalar("SHOW max_connections")
            .ok()??
            .parse()
            .ok()?;
        let reserved: u64 = conn
            .query_scalar("SHOW superuser_reserved_connections")
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        // This admin connection is open while the step's connect, one more for settle, and
        // the side connection the counters are read over.
        Some(max.saturating_sub(reserved + 3))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut conn = connect(&self.params)?;
        let version = conn.query_scalar("SELECT version()")?.unwrap_or_default();
        let mut settings = BTreeMap::new();
        // current_setting() shows values with units as SHOW does (1GB, not 131072).
        for row in conn.query_rows(
            "SELECT name, current_setting(name) FROM pg_settings \
             WHERE source NOT IN ('default', 'override', 'client', 'session') OR name IN ('server_version_num', 'block_size') \
             ORDER BY name",
        )? {
            if let [Some(k), v] = &row[..] {
                settings.insert(k.clone(), v.clone().unwrap_or_default());
            }
        }
        settings.insert("dbdelta.address".into(), self.address());
        settings.extend(self.managed.iter().flat_map(Managed::link_settings));
        settings.insert(
            "dbdelta.managed".into(),
            if self.is_managed() { "yes" } else { "no" }.into(),
        );
        // Whether connections really run over TLS (sslmode=prefer may have gone plain).
        let ssl = conn
            .query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .ok()
            .flatten();
        let tls = match ssl.as_deref() {
            Some("t") => "on",
            Some("f") => "off",
            _ => "unknown",
        };
        settings.insert("dbdelta.tls".into(), tls.into());
        if let (Some(b), Some(bench)) = (&self.bouncer, &self.bench) {
            settings.extend(b.manifest());
            settings.insert(
                "dbdelta.statements".into(),
                if bench.prepared {
                    "prepared (named, through pgbouncer in session mode)".into()
                } else {
                    format!(
                        "text with literals: pgbouncer {} pooling cannot keep named prepared statements",
                        settings.get("pgbouncer.pool_mode").cloned().unwrap_or_default()
                    )
                },
            );
        }
        Ok(EngineInfo { version, settings })
    }

    /// Settles the loaded tables before measuring: VACUUM (ANALYZE, INDEX_CLEANUP ON) of
    /// every table in parallel, CHECKPOINT, then sleep for whatever remains of the wait.
    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let started = Instant::now();
        let tables = tables
            .iter()
            .map(|t| plain_table(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut conn = connect(&self.params)?;
        let num: u32 = conn
            .query_scalar("SHOW server_version_num")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let opts = if num >= 120_000 {
            "ANALYZE, INDEX_CLEANUP ON"
        } else {
            "ANALYZE"
        };
        let stmts: Vec<String> = tables
            .iter()
            .map(|t| format!("VACUUM ({opts}) {t}"))
            .collect();
        // One connection per table, in parallel, as the reference scripts do.
        let results: Vec<Result<(), EngineError>> = std::thread::scope(|s| {
            let handles: Vec<_> = stmts
                .iter()
                .map(|sql| {
                    s.spawn(move || -> Result<(), EngineError> {
                        connect(&self.params)?.query(sql).map(|_| ())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EngineError::statement("settle: VACUUM thread panicked"))
                    })
                })
                .collect()
        });
        for r in results {
            r?;
        }
        let mut actions = stmts;
        match conn.query("CHECKPOINT") {
            Ok(_) => actions.push("CHECKPOINT".into()),
            // External targets may not grant pg_checkpoint; settle still did its vacuums.
            Err(e) if e.message.contains("42501") => {
                actions.push(format!("CHECKPOINT skipped: {}", e.message))
            }
            Err(e) => return Err(e),
        }
        actions.push(wait.wait_out(started));
        Ok(SettleReport { actions })
    }

    fn server_pids(&self) -> Vec<u32> {
        self.managed.as_ref().map(Managed::pids).unwrap_or_default()
    }

    fn proxy_pids(&self) -> Vec<u32> {
        self.bouncer.iter().flat_map(|b| b.pids()).collect()
    }

    fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir.clone()
    }

    /// The server's statistics (see the `counters` module for what and how fresh).
    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        counters::sample(&self.stats, &self.params).map(Some)
    }

    fn shutdown(&mut self) -> Result<(), EngineError> {
        self.stats.close();
        if let Some(b) = &mut self.bouncer {
            // The proxy goes first: it holds server connections.
            let _ = b.stop();
        }
        match &mut self.managed {
            Some(m) => m.stop().map_err(|e| {
                EngineError::new(
                    e.kind,
                    format!("target '{}': stopping postgres: {e}", self.name),
                )
            }),
            None => Ok(()),
        }
    }
}
