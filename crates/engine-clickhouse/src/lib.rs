//! ClickHouse engines.
//!
//! ```text
//! ch=clickhouse://[user[:password]@]host[:8123][/db][?setting=value&…]   EXTERNAL server, HTTP
//! ch=clickhouse:/usr/sbin[?setting=value&…]    MANAGED: dbdelta starts clickhouse-server from
//!                                              that directory on a free 127.0.0.1 port
//! ch=chdb[:/path/dir][?lib=…&libpython=…&setting=value&…]   EMBEDDED chDB in the dbdelta process
//! ```
//!
//! Servers are spoken to over the HTTP interface (one `POST` per statement, a keep-alive
//! connection per worker, results as `TabSeparated`). Settings given as target parameters
//! travel with every request (external) or sit in the `default` profile (managed), so they
//! show in `system.settings WHERE changed` and in the run's manifest. `SET` statements of a
//! script last for the rest of the connection.
//!
//! ClickHouse is analytic: the OLTP suites (sysbench, TPC-C, …) do not run on it; query-set
//! suites do.
#![deny(missing_docs)]

pub mod chdb;
mod conn;
mod http;
mod managed;
mod sql;
mod tsv;

pub use chdb::{ChdbConfig, ChdbConnection, ChdbEngine, ChdbKind, ChdbOptions};
pub use conn::HttpConnection;

use conn::Endpoint;
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, Engine, EngineConfig, EngineError, EngineInfo, EngineKind,
    Op, OpenOptions, Rows, SettleReport, SettleWait, SpecError,
};
use dbdelta_kit::params::config_err;
use dbdelta_kit::quote;
use dbdelta_model::{Location, TargetSpec};
use http::HttpTarget;
use managed::ManagedServer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The HTTP port when a URL gives none.
pub const DEFAULT_PORT: u16 = 8123;

/// Parameters of a server target that configure dbdelta's client, not ClickHouse.
const CLIENT_PARAMS: &[&str] = &["connect_timeout"];

/// The 18.x setting without which `LowCardinality` columns cannot be created.
const LOW_CARDINALITY_GATE: &str = "allow_experimental_low_cardinality_type";

/// The ClickHouse settings of a server target (its parameters but dbdelta's own).
fn settings_of(spec: &TargetSpec) -> Vec<(String, String)> {
    spec.params
        .iter()
        .filter(|(k, _)| !CLIENT_PARAMS.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// The `clickhouse` engine kind: a ClickHouse server over HTTP, managed or external.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClickhouseKind;

impl EngineKind for ClickhouseKind {
    fn name(&self) -> &'static str {
        "clickhouse"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(ClickhouseConfig::from_spec(spec)?))
    }

    /// HTTP connections are blocking request/response pairs, with no session form.
    fn thread_per_connection(&self) -> bool {
        true
    }

    /// ClickHouse has no single-row updates, transactions or auto-increment keys.
    fn analytic_only(&self) -> bool {
        true
    }
}

/// A validated `clickhouse` target: the spec, the server settings and the client's
/// connect timeout read from it.
#[derive(Debug, Clone)]
pub struct ClickhouseConfig {
    /// The target as given (its name and location are used when opening).
    pub spec: TargetSpec,
    /// The ClickHouse settings: the parameters but dbdelta's own client ones.
    pub settings: Vec<(String, String)>,
    /// The limit on connecting to an external server.
    pub connect_timeout: Duration,
}

impl ClickhouseConfig {
    /// Validates a `clickhouse` target without connecting or starting anything.
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        let settings = settings_of(spec);
        managed::check_settings(spec, &settings)?;
        let connect_timeout = match &spec.location {
            Location::Default => {
                return Err(config_err(
                    spec,
                    "clickhouse needs a server: a URL (external, clickhouse://127.0.0.1:8123) or the directory of \
                     clickhouse-server (managed, clickhouse:/usr/sbin); for embedded ClickHouse use chdb",
                ))
            }
            Location::Path { path } if !path.is_dir() => {
                return Err(config_err(
                    spec,
                    format!(
                        "{} is not a directory: point at the directory holding clickhouse-server (clickhouse:/usr/sbin)",
                        path.display()
                    ),
                ))
            }
            Location::Path { path } => {
                managed::server_binary(spec, path)?;
                Duration::from_secs(10)
            }
            Location::Url { .. } => connect_timeout(spec)?,
        };
        Ok(ClickhouseConfig {
            spec: spec.clone(),
            settings,
            connect_timeout,
        })
    }
}

impl EngineConfig for ClickhouseConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(ClickhouseEngine::open_config(
            self, scratch, opts,
        )?))
    }
}

/// Validates a `clickhouse` target without connecting or starting anything.
pub fn check_spec(spec: &TargetSpec) -> Result<(), EngineError> {
    ClickhouseConfig::from_spec(spec).map(|_| ())
}

fn connect_timeout(spec: &TargetSpec) -> Result<Duration, EngineError> {
    match spec.param("connect_timeout") {
        None => Ok(Duration::from_secs(10)),
        Some(v) => v
            .parse::<u64>()
            .ok()
            // At most a day: `Instant + Duration` past the clock's range panics.
            .filter(|s| (1..=86_400).contains(s))
            .map(Duration::from_secs)
            .ok_or_else(|| {
                config_err(
                    spec,
                    format!("connect_timeout={v} must be a whole number of seconds from 1 to 86400 (a day)"),
                )
            }),
    }
}

/// Refuses an answer to `SELECT version()` that is not a ClickHouse version (`18.16.1`,
/// `23.8.2.7`): a server that only looks like ClickHouse's HTTP interface.
fn check_version(spec: &TargetSpec, version: &str) -> Result<(), EngineError> {
    let parts: Vec<&str> = version.split('.').collect();
    let ok = parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        return Ok(());
    }
    let shown: String = version.chars().take(80).collect();
    Err(config_err(
        spec,
        format!(
            "the server answered HTTP but is not ClickHouse: SELECT version() returned '{}' \
             instead of a version number; check the host and port",
            shown.escape_debug()
        ),
    ))
}

/// A ClickHouse server target reached over HTTP (external or managed).
#[derive(Debug)]
pub struct ClickhouseEngine {
    endpoint: Endpoint,
    version: String,
    server: Option<ManagedServer>,
}

impl ClickhouseEngine {
    /// Opens a target from its spec ([`ClickhouseConfig::from_spec`], then
    /// [`ClickhouseEngine::open_config`]).
    pub fn open(
        spec: &TargetSpec,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        Self::open_config(&ClickhouseConfig::from_spec(spec)?, scratch, opts)
    }

    /// Connects to an external server, or starts a managed one in `scratch`, and makes sure
    /// dbdelta's database exists.
    pub fn open_config(
        cfg: &ClickhouseConfig,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        let spec = &cfg.spec;
        let settings = cfg.settings.clone();
        let (mut endpoint, server) = match &spec.location {
            Location::Url {
                user,
                password,
                host,
                port,
                database,
            } => (
                Endpoint {
                    http: HttpTarget {
                        target: spec.name.clone(),
                        host: host
                            .trim_start_matches('[')
                            .trim_end_matches(']')
                            .to_string(),
                        port: port.unwrap_or(DEFAULT_PORT),
                        user: user.clone(),
                        password: password.clone(),
                    },
                    database: database.clone().unwrap_or_else(|| opts.database.clone()),
                    settings: settings.clone(),
                    connect_timeout: cfg.connect_timeout,
                },
                None,
            ),
            Location::Path { path } => {
                let server = managed::start(
                    spec,
                    path,
                    &scratch.join(format!("{}.clickhouse", spec.name)),
                    &settings,
                )?;
                (
                    managed::endpoint(spec, server.port, &opts.database),
                    Some(server),
                )
            }
            Location::Default => {
                return Err(config_err(spec, "clickhouse needs a URL or a directory"))
            }
        };
        let mut admin = HttpConnection::open_without_database(&endpoint)?;
        let version = admin.query_scalar("SELECT version()")?.unwrap_or_default();
        check_version(spec, &version)?;
        if endpoint.database == opts.database {
            admin.query(&format!(
                "CREATE DATABASE IF NOT EXISTS {}",
                quote::ident(&endpoint.database, Dialect::Clickhouse)
            ))?;
        } else {
            let exists = admin.query_scalar(&format!(
                "SELECT count() FROM system.databases WHERE name = {}",
                sql::literal(&endpoint.database)
            ))?;
            if exists.as_deref() != Some("1") {
                return Err(config_err(
                    spec,
                    format!(
                        "database '{}' does not exist on the server; create it, or leave the database out of \
                         the URL and dbdelta uses (and creates) its own '{}'",
                        endpoint.database, opts.database
                    ),
                ));
            }
        }
        // ClickHouse 18.x gates LowCardinality behind a setting; turn it on (it shows in
        // the manifest's settings) unless the target says otherwise.
        let gated = admin.query_scalar(&format!(
            "SELECT value FROM system.settings WHERE name = '{LOW_CARDINALITY_GATE}'"
        ))?;
        if gated.as_deref() == Some("0") && spec.param(LOW_CARDINALITY_GATE).is_none() {
            endpoint
                .settings
                .push((LOW_CARDINALITY_GATE.to_string(), "1".to_string()));
        }
        Ok(ClickhouseEngine {
            endpoint,
            version,
            server,
        })
    }

    /// The server's version (`SELECT version()`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The HTTP port on 127.0.0.1 of a managed server.
    pub fn port(&self) -> Option<u16> {
        self.server.as_ref().map(|s| s.port)
    }

    /// A concrete connection (the [`Engine::connect`] result, unboxed).
    pub fn connect_http(&self) -> Result<HttpConnection, EngineError> {
        HttpConnection::open(&self.endpoint, &ConnectOptions::default())
    }
}

impl Engine for ClickhouseEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Clickhouse
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(self.connect_http()?))
    }

    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(HttpConnection::open(&self.endpoint, opts)?))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut c = self.connect_http()?;
        let mut rows = Rows::new();
        c.run_rows(&Op::Query(sql::CHANGED_SETTINGS), &mut rows)?;
        let settings: BTreeMap<String, String> = (0..rows.len())
            .filter_map(|i| Some((rows.get(i, 0)?.to_string(), rows.get(i, 1)?.to_string())))
            .collect();
        Ok(EngineInfo {
            version: format!("ClickHouse {}", self.version),
            settings,
        })
    }

    /// Merges each table's parts (`OPTIMIZE TABLE … FINAL`), then waits out the rest of
    /// `wait`.
    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let started = Instant::now();
        let mut c = self.connect_http()?;
        let mut actions = merge_parts(&mut c, &self.endpoint.database, tables)?;
        actions.push(wait.wait_out(started));
        Ok(SettleReport { actions })
    }

    fn server_pids(&self) -> Vec<u32> {
        self.server
            .as_ref()
            .and_then(|s| s.process.pid())
            .into_iter()
            .collect()
    }

    fn data_dir(&self) -> Option<PathBuf> {
        self.server.as_ref().map(|s| s.data_dir.clone())
    }

    fn server_log(&self) -> Option<PathBuf> {
        self.server.as_ref().map(|s| s.log_path.clone())
    }

    fn shutdown(&mut self) -> Result<(), EngineError> {
        match self.server.as_mut() {
            Some(s) => s.process.stop(),
            None => Ok(()),
        }
    }
}

/// Merges the parts of each MergeTree table of `tables` (`OPTIMIZE TABLE … FINAL`, the
/// settle of ClickHouse); other engines have no parts and are named as skipped.
pub(crate) fn merge_parts(
    c: &mut dyn Connection,
    database: &str,
    tables: &[String],
) -> Result<Vec<String>, EngineError> {
    let mut actions = Vec::new();
    for t in tables {
        let (db, name) = sql::qualified(t, database);
        let engine = c.query_scalar(&sql::engine_query(db, name))?;
        match engine {
            Some(e) if e.contains("MergeTree") => {
                let stmt = format!("OPTIMIZE TABLE {t} FINAL");
                c.query(&stmt)?;
                actions.push(stmt);
            }
            Some(e) => actions.push(format!("{t}: no parts to merge ({e} table)")),
            None => {
                return Err(EngineError::statement(format!(
                    "settle: no table {name} in database {db}"
                )))
            }
        }
    }
    Ok(actions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_checked() {
        let spec = TargetSpec::parse("ch=clickhouse://127.0.0.1:1").unwrap();
        for v in ["18.16.1", "23.8.2.7", "24.3"] {
            check_version(&spec, v).unwrap();
        }
        for v in ["", "<html>", "1", "18.x.1", "1..2", "OK", "1.2.3\n<b>"] {
            let e = check_version(&spec, v).unwrap_err();
            assert!(e.message.contains("is not ClickHouse"), "{v}: {e}");
            assert!(e.message.contains("target 'ch'"), "{v}: {e}");
        }
    }

    #[test]
    fn specs_are_checked() {
        let t = TargetSpec::parse("c=clickhouse").unwrap();
        let e = check_spec(&t).unwrap_err();
        assert!(e.message.contains("chdb"), "{e}");
        let t = TargetSpec::parse("c=clickhouse:/nonexistent/dir").unwrap();
        assert!(check_spec(&t)
            .unwrap_err()
            .message
            .contains("not a directory"));
        let t = TargetSpec::parse("c=clickhouse://127.0.0.1:8123?connect_timeout=x").unwrap();
        assert!(check_spec(&t)
            .unwrap_err()
            .message
            .contains("connect_timeout=x"));
        let t = TargetSpec::parse("c=clickhouse://u:pw@127.0.0.1?max_threads=2").unwrap();
        check_spec(&t).unwrap();
        assert_eq!(settings_of(&t), vec![("max_threads".into(), "2".into())]);
        let t = TargetSpec::parse("c=clickhouse://127.0.0.1?bad%20name=1").unwrap();
        assert!(check_spec(&t).is_err());
    }

    #[test]
    fn unreachable_server_is_a_connection_error() {
        let port = dbdelta_kit::server::free_loopback_port().unwrap();
        let t = TargetSpec::parse(&format!(
            "c=clickhouse://127.0.0.1:{port}?connect_timeout=2"
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = ClickhouseEngine::open(&t, dir.path(), &OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, dbdelta_engine::ErrorKind::Connection);
        assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
    }
}
