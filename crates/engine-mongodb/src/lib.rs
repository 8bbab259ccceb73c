//! dbdelta's MongoDB engine: a client of the MongoDB wire protocol written for measuring.
//!
//! * `OP_MSG` only ([`msg`]): one body section, document sequences for the writes'
//!   `documents`, `updates` and `deletes`; the server's `maxBsonObjectSize`,
//!   `maxMessageSizeBytes` and `maxWriteBatchSize` from its `hello` reply respected, a
//!   reply's length checked before any buffer grows for it. BSON through the `bson` crate.
//! * Records in YCSB's MongoDB binding layout ([`cmd`]); the query phase is a sans-IO
//!   [`session::MongoSession`], so plain-TCP connections run many per thread on the
//!   runner's event loop; TLS connections keep a thread each.
//! * Authentication ([`auth`], [`scram`]): SCRAM-SHA-256 (SASLprep), SCRAM-SHA-1, PLAIN only
//!   over TLS or loopback; the server's SCRAM signature is verified.
//! * External targets `mongodb://user:pw@host:port/db?w=1&j=false` ([`spec`]); the password
//!   is never printed or stored. Errors keep the server's `code` and `codeName`.
//!
//! Layers, each naming only those below it: `msg`, `reply`, `spec`; `cmd`, `scram`;
//! `session`, `wire`; `auth`; `conn`; this file.
#![deny(missing_docs)]

pub mod auth;
pub mod cmd;
pub mod conn;
pub mod msg;
pub mod reply;
pub mod scram;
pub mod session;
pub mod spec;
pub mod wire;

pub use conn::MongoConnection;
pub use session::MongoSession;
pub use spec::MongoParams;

use bson::raw::{cstr, RawBsonRef, RawDocumentBuf};
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, Engine, EngineConfig, EngineError, EngineInfo, EngineKind,
    ErrorKind, Family, OpenOptions, SettleReport, SettleWait, SpecError,
};
use dbdelta_model::{Location, TargetSpec};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The `mongodb` engine kind: an external server speaking MongoDB's wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct MongodbKind;

impl EngineKind for MongodbKind {
    fn name(&self) -> &'static str {
        "mongodb"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(MongodbConfig::from_spec(spec)?))
    }

    /// Plain-TCP connections split into a socket and a sans-IO session, many per thread.
    fn thread_per_connection(&self) -> bool {
        false
    }

    /// Documents, not tables: the key-value suites (YCSB) only.
    fn serves_sql(&self) -> bool {
        false
    }
}

/// A validated `mongodb` target.
#[derive(Debug, Clone)]
pub struct MongodbConfig {
    spec: TargetSpec,
}

impl MongodbConfig {
    /// Checks the spec: a URL with a host, known options with valid values.
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, SpecError> {
        if !matches!(spec.location, Location::Url { .. }) {
            return Err(SpecError::Shape(format!(
                "--target {}: mongodb needs a URL with a host (external, e.g. {}=mongodb://user:password@host:27017/db); \
                 for a managed server use ferretdb:",
                spec.name, spec.name
            )));
        }
        spec::params(spec, false, "dbdelta")?;
        Ok(MongodbConfig { spec: spec.clone() })
    }
}

impl EngineConfig for MongodbConfig {
    fn open(&self, _scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        let params = spec::params(&self.spec, opts.tls, &opts.database)?;
        Ok(Box::new(MongoEngine::open(params)?))
    }
}

/// A reachable MongoDB-protocol server.
#[derive(Debug)]
pub struct MongoEngine {
    params: MongoParams,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl MongoEngine {
    /// Opens the target: checks that a connection shakes hands and authenticates, so a
    /// wrong address or password fails before any step.
    pub fn open(params: MongoParams) -> Result<Self, EngineError> {
        let tls = wire::tls_config(&params)?;
        let engine = MongoEngine { params, tls };
        engine
            .connect_mongo(&ConnectOptions::default())
            .map_err(|e| {
                if e.kind == ErrorKind::Connection {
                    EngineError::config(format!(
                        "target '{}': {e}; is the server running and the URL right?",
                        engine.params.name
                    ))
                } else {
                    e
                }
            })?;
        Ok(engine)
    }

    /// The connection parameters (the password stays hidden in `Debug`).
    pub fn params(&self) -> &MongoParams {
        &self.params
    }

    /// Opens a connection with its concrete type.
    pub fn connect_mongo(&self, opts: &ConnectOptions) -> Result<MongoConnection, EngineError> {
        conn::connect(&self.params, self.tls.as_ref(), opts)
    }

    /// `buildInfo`, and what the server says it is: FerretDB reports `ferretdbVersion`.
    fn build_info(&self, settings: &mut BTreeMap<String, String>) -> Result<String, EngineError> {
        let mut c = self.connect_mongo(&ConnectOptions::default())?;
        let mut cmd = RawDocumentBuf::new();
        cmd.append(cstr!("buildInfo"), 1i32);
        let r = c.command(cmd, Some("admin"))?;
        let version = reply::string(&r, "version")
            .unwrap_or("unknown")
            .to_string();
        settings.insert("mongodb.version".into(), version.clone());
        if let Some(m) = c.hello().mechanism {
            settings.insert("dbdelta.auth".into(), m.name().into());
        }
        settings.insert(
            "dbdelta.tls".into(),
            if c.is_tls() { "on" } else { "off" }.into(),
        );
        let h = c.hello();
        settings.insert(
            "mongodb.maxBsonObjectSize".into(),
            h.limits.max_bson.to_string(),
        );
        settings.insert(
            "mongodb.maxMessageSizeBytes".into(),
            h.limits.max_message.to_string(),
        );
        settings.insert(
            "mongodb.maxWriteBatchSize".into(),
            h.limits.max_batch.to_string(),
        );
        settings.insert(
            "mongodb.maxWireVersion".into(),
            h.max_wire_version.to_string(),
        );
        Ok(match r.get("ferretdbVersion").ok().flatten() {
            Some(RawBsonRef::String(f)) => {
                settings.insert("ferretdb.version".into(), f.to_string());
                format!("FerretDB {f} (MongoDB {version} compatible)")
            }
            _ => format!("MongoDB {version}"),
        })
    }
}

impl Engine for MongoEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Mongodb
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(self.connect_mongo(&ConnectOptions::default())?))
    }

    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(self.connect_mongo(opts)?))
    }

    fn families(&self) -> &'static [Family] {
        &[Family::KeyValue]
    }

    /// The server, the write concern every write carries, the read preference, the
    /// collection and the load's batch size, for the manifest.
    fn info(&self) -> Result<EngineInfo, EngineError> {
        let p = &self.params;
        let mut settings = BTreeMap::new();
        settings.insert("dbdelta.address".into(), format!("{}:{}", p.host, p.port));
        settings.insert("dbdelta.managed".into(), "no".into());
        settings.insert("mongodb.writeConcern".into(), p.write_concern.describe());
        settings.insert("mongodb.readPreference".into(), p.read_preference.clone());
        settings.insert(
            "mongodb.namespace".into(),
            format!("{}.{}", p.database, p.collection),
        );
        settings.insert("ycsb.batchsize".into(), p.batch_size.to_string());
        let version = self.build_info(&mut settings)?;
        Ok(EngineInfo { version, settings })
    }

    /// Nothing to vacuum or analyze: the settle is the wait alone.
    fn settle(
        &self,
        _tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let started = std::time::Instant::now();
        Ok(SettleReport {
            actions: vec![wait.wait_out(started)],
        })
    }
}
