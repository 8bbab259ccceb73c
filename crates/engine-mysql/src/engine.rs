//! [`MysqlEngine`]: one MySQL/MariaDB target, managed (started from a basedir) or external.

use crate::auth;
use crate::binlog;
use crate::client::{Addr, ConnectParams};
use crate::connection::MysqlConnection;
use crate::counters::{self, StatsSession};
use crate::endpoint::Endpoint;
use crate::managed::{self, ManagedServer};
use crate::myrocks;
use crate::settle;
use crate::tls;
use crate::Flavor;
use dbdelta_engine::EngineKind;
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, Engine, EngineCounters, EngineError, EngineInfo,
    ErrorKind, OpenOptions, SettleReport, SettleWait, StatsConnection,
};
use dbdelta_model::{Location, Secret, TargetSpec};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Settings always read back into [`EngineInfo::settings`], besides the target's own.
const REPORTED: [&str; 14] = [
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_max_dirty_pages_pct",
    "performance_schema",
    "max_connections",
    "log_bin",
    "sync_binlog",
    "table_open_cache",
    "max_allowed_packet",
    "version_comment",
];

/// The managed server's setting naming the CA file that signs its certificate (the client
/// trusts it).
const SSL_CA: &str = "ssl_ca";

/// A provisioned MySQL or MariaDB target.
#[derive(Debug)]
pub struct MysqlEngine {
    endpoint: Arc<Endpoint>,
    prepared: bool,
    flavor: Flavor,
    version: String,
    /// The target's server settings (dbdelta's own options such as `binlog_reset` removed).
    params: Vec<(String, String)>,
    /// Reset the binary log before write steps and settles (`binlog_reset=true`).
    binlog_reset: bool,
    server: Option<ManagedServer>,
    data_dir: Option<PathBuf>,
    /// The side connection the server's status counters are read over.
    stats: StatsConnection<StatsSession>,
}

impl MysqlEngine {
    /// Opens `spec`: a basedir path starts a managed server in `scratch`; a URL connects to
    /// an external server. Spawn managed targets from a long-lived thread (see crate docs).
    pub fn open(
        spec: &TargetSpec,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        let target = spec.name.as_str();
        // dbdelta's own options are checked before a server starts.
        binlog::wanted(spec)?;
        myrocks::wanted(spec)?;
        match &spec.location {
            Location::Default => Err(EngineError::config(format!(
                "target '{target}': mysql needs a basedir (e.g. {target}=mysql:/usr for a managed server) or a URL (e.g. {target}=mysql://root@127.0.0.1:3306/dbdelta)"
            ))),
            Location::Path { path } => Self::open_managed(spec, path, scratch, opts),
            Location::Url {
                user,
                password,
                host,
                port,
                database,
            } => {
                for (k, _) in &spec.params {
                    if binlog::is_param(k)
                        || myrocks::is_param(k)
                        || auth::is_param(k)
                        || tls::is_external_param(k)
                    {
                        continue;
                    }
                    return Err(EngineError::config(format!(
                        "target '{target}': '{k}' cannot be applied to an external server; settings are for managed targets (mysql:/basedir?{k}=...); external targets take only {}, {}=FILE, {}=FILE, {}=FILE, {}=true, {}=rocksdb, {}=true and {}=FILE",
                        tls::SSL_MODE,
                        tls::SSL_CA,
                        tls::SSL_CERT,
                        tls::SSL_KEY,
                        binlog::PARAM,
                        myrocks::PARAM,
                        auth::GET_SERVER_PUBLIC_KEY,
                        auth::SERVER_PUBLIC_KEY
                    )));
                }
                let tls = tls::external(spec, host, opts.tls)?.map(Arc::new);
                let password = password
                    .clone()
                    .or_else(|| std::env::var("MYSQL_PWD").ok().map(Secret::new));
                let params = ConnectParams {
                    addr: Addr::Tcp { host: host.clone(), port: port.unwrap_or(3306) },
                    user: user.clone().unwrap_or_else(|| "root".into()),
                    password,
                    database: Some(database.clone().unwrap_or_else(|| opts.database.clone())),
                    tls,
                    compress: opts.compress,
                    key_exchange: auth::key_exchange(spec)?,
                };
                Self::finish(spec, params, opts, None)
            }
        }
    }

    fn open_managed(
        spec: &TargetSpec,
        basedir: &Path,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        let target = spec.name.as_str();
        // Checked (and the key file read) before a server starts.
        let key_exchange = auth::key_exchange(spec)?;
        // Every parameter but dbdelta's own options is a my.cnf line; a MyRocks target's
        // plugin lines come first, so the target's own settings win.
        let mut settings = server_settings(spec);
        if myrocks::wanted(spec)?.is_some() {
            myrocks::check_plugin(target, basedir, &settings)?;
            settings.splice(0..0, myrocks::managed_settings());
        }
        let mode = tls::mode(spec, opts.tls)?;
        let tls = if mode.wants_tls() {
            let ca = if setting(spec, "ssl_cert").is_some() || setting(spec, "ssl_key").is_some() {
                // The target brings its own certificate: it must name the CA that signed it.
                PathBuf::from(setting(spec, SSL_CA).ok_or_else(|| {
                    EngineError::config(format!(
                        "target '{target}': with its own ssl_cert/ssl_key the target must give {SSL_CA}=FILE, the CA the client trusts"
                    ))
                })?)
            } else {
                if setting(spec, SSL_CA).is_some() {
                    return Err(EngineError::config(format!(
                        "target '{target}': '{SSL_CA}' on a managed target goes with ssl_cert and ssl_key; with TLS on and none of them dbdelta makes the server's CA and certificate itself"
                    )));
                }
                fs::create_dir_all(scratch).map_err(|e| {
                    EngineError::config(format!(
                        "target '{target}': cannot prepare {}: {e}",
                        scratch.display()
                    ))
                })?;
                let dir = scratch
                    .canonicalize()
                    .map(|s| s.join("tls"))
                    .unwrap_or_else(|_| scratch.join("tls"));
                let certs = tls::generate(target, &dir)?;
                for (k, p) in [
                    ("ssl_ca", &certs.ca),
                    ("ssl_cert", &certs.cert),
                    ("ssl_key", &certs.key),
                ] {
                    settings.push((k.to_string(), p.display().to_string()));
                }
                certs.ca
            };
            Some(Arc::new(tls::client(
                target,
                "127.0.0.1",
                mode,
                &tls::managed_files(&ca),
            )?))
        } else {
            None
        };
        // net=…: the server runs behind an emulated link (TLS still names 127.0.0.1, which
        // its certificate is for).
        let link = dbdelta_kit::netns::Link::for_spec(spec)?;
        let (server, _) =
            managed::start(target, basedir, &settings, scratch, &opts.database, link)?;
        let params = ConnectParams {
            addr: Addr::Tcp {
                host: server.host(),
                port: server.port,
            },
            user: "root".into(),
            password: None,
            database: Some(opts.database.clone()),
            tls,
            compress: opts.compress,
            key_exchange,
        };
        Self::finish(spec, params, opts, Some(server))
    }

    /// Connects once to learn the flavor and version.
    fn finish(
        spec: &TargetSpec,
        params: ConnectParams,
        opts: &OpenOptions,
        server: Option<ManagedServer>,
    ) -> Result<Self, EngineError> {
        let table_engine = myrocks::wanted(spec)?;
        let endpoint = Arc::new(Endpoint {
            target: spec.name.clone(),
            params,
            table_engine,
        });
        let mut conn = MysqlConnection::open(
            Arc::clone(&endpoint),
            opts.prepared,
            &ConnectOptions::default(),
        )?;
        let version = conn.query_scalar("SELECT VERSION()")?.unwrap_or_default();
        if table_engine.is_some() {
            myrocks::check_server(&spec.name, &mut conn)?;
        }
        let flavor = if version.contains("MariaDB") {
            Flavor::MariaDb
        } else {
            Flavor::MySql
        };
        let data_dir = match &server {
            Some(s) => Some(s.data_dir.clone()),
            None if endpoint.params.addr.is_local() => conn
                .query_scalar("SELECT @@datadir")
                .ok()
                .flatten()
                .map(PathBuf::from)
                .filter(|p| p.is_dir()),
            None => None,
        };
        Ok(MysqlEngine {
            endpoint,
            prepared: opts.prepared,
            flavor,
            version,
            params: server_settings(spec),
            binlog_reset: binlog::wanted(spec)?,
            server,
            data_dir,
            stats: StatsConnection::default(),
        })
    }

    /// MariaDB or MySQL, from the server's version string.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The server's version string (`SELECT VERSION()`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The managed server's error log, for the CLI to keep with the run.
    pub fn log_path(&self) -> Option<&Path> {
        self.server.as_ref().map(|s| s.log_path.as_path())
    }

    /// The managed server's TCP port on 127.0.0.1.
    pub fn port(&self) -> Option<u16> {
        self.server.as_ref().map(|s| s.port)
    }

    /// Opens a concrete connection (the [`Engine::connect`] result, unboxed).
    pub fn connect_mysql(&self) -> Result<MysqlConnection, EngineError> {
        MysqlConnection::open(
            Arc::clone(&self.endpoint),
            self.prepared,
            &ConnectOptions::default(),
        )
    }
}

/// The target's parameters that are server settings: all but dbdelta's own options.
fn server_settings(spec: &TargetSpec) -> Vec<(String, String)> {
    spec.params
        .iter()
        .filter(|(k, _)| {
            !binlog::is_param(k)
                && !myrocks::is_param(k)
                && !auth::is_param(k)
                && !tls::is_client_param(k)
                && !dbdelta_kit::netns::is_param(k)
        })
        .cloned()
        .collect()
}

/// A server setting of `spec`, matched like the server does (`-` and `_` alike, any case).
fn setting<'a>(spec: &'a TargetSpec, name: &str) -> Option<&'a str> {
    spec.params
        .iter()
        .find(|(k, _)| k.replace('-', "_").eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

impl Engine for MysqlEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(self.connect_mysql()?))
    }

    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(MysqlConnection::open(
            Arc::clone(&self.endpoint),
            self.prepared,
            opts,
        )?))
    }

    fn connection_limit(&self) -> Option<u64> {
        let mut conn = self.connect_mysql().ok()?;
        let max: u64 = conn
            .query_scalar("SELECT @@max_connections")
            .ok()??
            .parse()
            .ok()?;
        // This admin connection is open while the step's connect, one more for settle, and
        // the side connection the counters are read over; MariaDB keeps one extra
        // connection for a SUPER user on its own.
        Some(max.saturating_sub(3))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut conn = self.connect_mysql()?;
        let mut names: Vec<String> = REPORTED.iter().map(|s| s.to_string()).collect();
        if self.endpoint.table_engine.is_some() {
            names.extend(myrocks::REPORTED.iter().map(|s| s.to_string()));
        }
        for (k, _) in &self.params {
            names.push(k.replace('-', "_").to_ascii_lowercase());
        }
        let mut settings = BTreeMap::new();
        for (k, v) in conn.globals(&names)? {
            settings.insert(k.to_ascii_lowercase(), v);
        }
        // A target setting the server does not show as a variable (a plugin option, a
        // startup flag) is still recorded as given.
        for (k, v) in &self.params {
            settings
                .entry(k.replace('-', "_").to_ascii_lowercase())
                .or_insert_with(|| v.clone());
        }
        settings.insert("flavor".into(), self.flavor.name().into());
        settings.insert(
            "table_engine".into(),
            self.endpoint.table_engine.unwrap_or("InnoDB").into(),
        );
        settings.insert(
            "protocol".into(),
            if self.prepared {
                "binary (server-side prepared)"
            } else {
                "text"
            }
            .into(),
        );
        let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
        settings.insert("tls".into(), on_off(self.endpoint.params.tls.is_some()));
        settings.insert("compression".into(), on_off(self.endpoint.params.compress));
        if let Some(s) = &self.server {
            settings.insert("basedir".into(), s.basedir.display().to_string());
            settings.insert("port".into(), s.port.to_string());
            if let Some(l) = &s.link {
                settings.extend(l.settings());
            }
        }
        if self.binlog_reset {
            let sql = binlog::reset_statement(self.flavor, &self.version);
            let what = if binlog::enabled(&mut conn)? {
                format!("{sql} before every write step and settle")
            } else {
                "asked for, but log_bin is off: no binary log to reset".to_string()
            };
            settings.insert(binlog::PARAM.into(), what);
        }
        let version = if self.version.contains(self.flavor.name()) {
            self.version.clone()
        } else {
            format!("{} {}", self.flavor.name(), self.version)
        };
        Ok(EngineInfo { version, settings })
    }

    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let started = Instant::now();
        let mut conn = self.connect_mysql()?;
        let mut actions = Vec::new();
        // The published scripts' post-write block begins with `reset master`.
        if self.binlog_reset {
            actions.extend(binlog::reset(&mut conn, self.flavor, &self.version)?);
        }
        let myrocks = self.endpoint.table_engine.is_some();
        settle::settle(&mut conn, tables, myrocks, wait, started, &mut actions)?;
        Ok(SettleReport { actions })
    }

    fn before_write_step(&self) -> Result<Option<String>, EngineError> {
        if !self.binlog_reset {
            return Ok(None);
        }
        let mut conn = self.connect_mysql()?;
        binlog::reset(&mut conn, self.flavor, &self.version)
    }

    /// The kind's answer ([`crate::MysqlKind`]: not fit, as measured).
    fn fit_for_turns(&self) -> bool {
        crate::MysqlKind.fit_for_turns()
    }

    fn server_pids(&self) -> Vec<u32> {
        self.server
            .as_ref()
            .and_then(ManagedServer::pid)
            .into_iter()
            .collect()
    }

    fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir.clone()
    }

    fn server_log(&self) -> Option<PathBuf> {
        self.log_path().map(Path::to_path_buf)
    }

    /// The server's status counters (see the `counters` module).
    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        counters::sample(&self.stats, &self.endpoint).map(Some)
    }

    fn shutdown(&mut self) -> Result<(), EngineError> {
        self.stats.close();
        match self.server.as_mut() {
            Some(s) => s
                .stop()
                .map_err(|e| EngineError::new(ErrorKind::Connection, e.message)),
            None => Ok(()),
        }
    }
}
