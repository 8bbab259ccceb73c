//! The `mysql` engine of dbdelta: MySQL and MariaDB through one engine.
//!
//! Targets:
//!
//! ```text
//! maria=mysql:/usr?innodb_buffer_pool_size=1G   MANAGED: initialize a data directory in the
//!                                               scratch area, start mariadbd/mysqld on a free
//!                                               127.0.0.1 port, stop it at the end
//! prod=mysql://bench@db1:3306/benchdb            EXTERNAL: password from the URL or MYSQL_PWD
//! my=mysql:/usr?log_bin=binlog&binlog_reset=true reset the binary log (RESET MASTER, or RESET
//!                                               BINARY LOGS AND GTIDS from MySQL 8.4) before
//!                                               every write step and settle, as the
//!                                               published sysbench scripts do
//! rocks=mysql:/usr?engine=rocksdb                MyRocks: the tables in MariaDB's RocksDB
//!                                               engine (plugin loaded on managed servers),
//!                                               MyRocks' counters in place of InnoDB's
//! ```
//!
//! The client is a small blocking implementation of the MySQL protocol in layers, each
//! naming only those below it: `proto` (messages and packets over buffers, no I/O), `auth`
//! (the authentication plugins), `session` (the sans-IO [`MysqlSession`]), `wire` (the
//! socket, TLS and compressed frames), `client` (one connection's conversation),
//! `endpoint`, `connection` ([`MysqlConnection`]) and `engine` ([`MysqlEngine`]):
//! server-side prepared statements by default, text protocol with interpolated literals when
//! [`OpenOptions::prepared`] is false. Result rows are counted, never decoded, on the
//! statement path, and buffers are reused, so the client's CPU per statement stays below
//! libmysqlclient's.
//!
//! `?ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY` (or
//! [`OpenOptions::tls`], VERIFY_IDENTITY) runs the protocol over TLS (rustls): external
//! targets name the CA with `?ssl-ca=FILE` (else the system roots are used) and may present
//! a client certificate (`ssl-cert`, `ssl-key`); managed servers get a throwaway CA and
//! certificate made with `openssl` in the scratch directory. [`OpenOptions::compress`]
//! turns on the zlib-compressed protocol.
//!
//! For event-loop drivers a plain TCP or Unix connection splits
//! ([`dbdelta_engine::Connection::into_session`]) into its socket and a [`MysqlSession`]:
//! COM_STMT_EXECUTE / COM_QUERY encoded into the driver's buffer, responses decoded by the
//! same state machine as the blocking client, sequence ids checked, packets of 16 MiB or
//! more refused; its canceller runs `KILL QUERY <connection id>` on a side connection.
//! Compressed and TLS connections stay blocking (they give themselves back).
//!
//! Managed servers are spawned from the calling thread with `PR_SET_PDEATHSIG`, which Linux
//! ties to the spawning *thread*: call [`open`] from a thread that outlives the target (the
//! main thread), or the server is stopped when that thread exits.
#![deny(missing_docs)]

mod auth;
mod binlog;
mod bulk;
mod client;
mod connection;
mod counters;
mod endpoint;
mod engine;
mod errors;
#[doc(hidden)]
pub mod fuzzing;
mod managed;
mod myrocks;
mod options;
mod proto;
mod session;
mod settle;
mod tls;
mod wire;

pub use connection::MysqlConnection;
pub use engine::MysqlEngine;
pub use session::MysqlSession;

use dbdelta_engine::{
    check_server, server_data_parent, Engine, EngineConfig, EngineError, EngineKind, OpenOptions,
    SpecError,
};
use dbdelta_model::TargetSpec;
use std::path::Path;

/// Which server the target turned out to be (both speak [`dbdelta_engine::Dialect::Mysql`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// MariaDB ("MariaDB" in the version string).
    MariaDb,
    /// Oracle MySQL (or a fork such as Percona Server).
    MySql,
}

impl Flavor {
    /// "MariaDB" or "MySQL".
    pub fn name(self) -> &'static str {
        match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::MySql => "MySQL",
        }
    }
}

/// The `mysql` engine kind: a MySQL or MariaDB server, managed (started from its base
/// directory) or external (a URL).
#[derive(Debug, Clone, Copy, Default)]
pub struct MysqlKind;

impl EngineKind for MysqlKind {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(MysqlConfig::from_spec(spec)?))
    }

    /// Connections split into a socket and a sans-IO session, many per thread.
    fn thread_per_connection(&self) -> bool {
        false
    }

    // Measured on this 2-core VM (quick scale, 10 rounds, read-only and point-query, A/A of
    // identical MariaDB 10.11.18 servers): in turns of 10 ms, two InnoDB servers ran at 0.81x
    // their own windows' rate with a noise floor of ±12 %, three at 0.57x with ±23-25 % (one
    // of four steps falsely flagged), three MyRocks ones at 0.60x with ±24-34 %; one window
    // per target gave ±5.2-6.5 % for the same three MyRocks servers.
    // bench/results-myrocks-flags-20261128.md.
    fn fit_for_turns(&self) -> bool {
        false
    }
}

/// A validated `mysql` target. The server settings are the server's to check (a managed
/// server refuses unknown ones when it starts); dbdelta's own options, the emulated link
/// and the location are checked here.
#[derive(Debug, Clone)]
pub struct MysqlConfig {
    /// The target as given: the managed and external setups read their settings from it
    /// when the server starts or is reached.
    pub spec: TargetSpec,
}

impl MysqlConfig {
    /// Checks a target before anything runs: `net=` (valid, on a managed target, and
    /// buildable here: root, ip, tc, netem), then [`check_server`] with [`check_spec`].
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, SpecError> {
        dbdelta_kit::netns::check_spec(spec)?;
        check_server(spec, check_spec)?;
        Ok(MysqlConfig { spec: spec.clone() })
    }
}

impl EngineConfig for MysqlConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(open(&self.spec, scratch, opts)?))
    }

    fn data_parent(&self, runs: &Path) -> Option<std::path::PathBuf> {
        server_data_parent(&self.spec, runs)
    }
}

/// Checks a `mysql` target's dbdelta options before anything starts (the server settings
/// are checked by the server): `binlog_reset` must be true or false, `ssl-mode` one of the
/// modes.
pub fn check_spec(spec: &TargetSpec) -> Result<(), EngineError> {
    binlog::wanted(spec)?;
    myrocks::wanted(spec)?;
    tls::mode(spec, false).map(|_| ())
}

/// Opens a `mysql` target: starts a managed server from a basedir in `scratch`, or connects
/// to an external server by URL. Call from a long-lived thread (see the crate docs).
pub fn open(
    spec: &TargetSpec,
    scratch: &Path,
    opts: &OpenOptions,
) -> Result<MysqlEngine, EngineError> {
    MysqlEngine::open(spec, scratch, opts)
}
