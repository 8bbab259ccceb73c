//! The engine of a managed FerretDB: the MongoDB engine's client, connected to the FerretDB
//! dbdelta started, plus what only the managed side knows — the server's processes
//! (FerretDB and a managed PostgreSQL backend, both counted as server cost), its log, where
//! the data lives, and its name in the manifest: what it is ("FerretDB v1.24.2 on SQLite
//! 3.46.0"), never "MongoDB".

use crate::binary::FerretBuild;
use crate::managed::{Running, RunningBackend};
use crate::spec::{Auth, Backend};
use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, Engine, EngineCounters, EngineError, EngineInfo, Family,
    SettleReport, SettleWait,
};
use std::path::PathBuf;

/// A managed FerretDB with its client.
pub struct FerretEngine {
    /// The MongoDB engine connected to it; declared first so its connections close before
    /// the server stops.
    client: Box<dyn Engine>,
    server: Running,
    build: FerretBuild,
    /// `backend=postgresql`'s server version, read once at start.
    backend_version: String,
    /// FerretDB v1's limits that bear on the numbers ([`limits_note`]), for the manifest.
    limits: String,
}

impl std::fmt::Debug for FerretEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerretEngine")
            .field("server", &self.server)
            .field("build", &self.build.dir)
            .finish_non_exhaustive()
    }
}

impl FerretEngine {
    /// Wraps the client `client` of the running `server` built as `build`; `limits` is the
    /// note on FerretDB's limits the manifest carries.
    pub fn new(
        client: Box<dyn Engine>,
        server: Running,
        build: FerretBuild,
        limits: String,
    ) -> FerretEngine {
        let backend_version = match &server.backend {
            RunningBackend::ManagedPostgres(pg) => pg
                .info()
                .map(|i| postgres_short_version(&i.version))
                .unwrap_or_default(),
            _ => String::new(),
        };
        FerretEngine {
            client,
            server,
            build,
            backend_version,
            limits,
        }
    }

    /// The loopback port FerretDB listens on.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// FerretDB's process id.
    pub fn ferretdb_pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// What the server is: `FerretDB v1.24.2 on SQLite 3.46.0`, `… on PostgreSQL 15.14`.
    pub fn server_name(&self) -> String {
        let v = &self.build.info.version;
        match &self.server.backend {
            RunningBackend::Sqlite { .. } => {
                let sqlite = &self.build.info.sqlite_version;
                if sqlite.is_empty() {
                    format!("FerretDB {v} on SQLite")
                } else {
                    format!("FerretDB {v} on SQLite {sqlite}")
                }
            }
            RunningBackend::ManagedPostgres(_) if !self.backend_version.is_empty() => {
                format!("FerretDB {v} on {}", self.backend_version)
            }
            _ => format!("FerretDB {v} on PostgreSQL"),
        }
    }
}

/// `PostgreSQL 15.14` from `SELECT version()`'s `PostgreSQL 15.14 (Debian 15.14-0+deb12u1)
/// on x86_64-pc-linux-gnu, …`.
fn postgres_short_version(full: &str) -> String {
    full.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The notes a report needs about FerretDB v1, read from its source: what the numbers do
/// and do not include.
pub fn limits_note(auth: Auth, backend: &Backend) -> String {
    let mut s = String::from(
        "FerretDB v1 ignores writeConcern on insert/update/delete (w=/j= are sent, not \
         enforced); $gte filters and sorts are not pushed down to the backend, so YCSB E's \
         scans read and sort the collection in FerretDB",
    );
    match auth {
        Auth::None => s.push_str("; no authentication (FerretDB v1's default is PLAIN)"),
        Auth::Scram => {
            s.push_str("; SCRAM-SHA-256 through FerretDB's experimental --test-enable-new-auth")
        }
    }
    if matches!(backend, Backend::Sqlite) {
        s.push_str("; SQLite backend: one database file per MongoDB database");
    }
    s
}

impl Engine for FerretEngine {
    fn dialect(&self) -> Dialect {
        self.client.dialect()
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        self.client.connect()
    }

    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        self.client.connect_with(opts)
    }

    fn connection_limit(&self) -> Option<u64> {
        self.client.connection_limit()
    }

    fn families(&self) -> &'static [Family] {
        self.client.families()
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut info = self.client.info()?;
        // The client reports what the server claims (a MongoDB compatibility version);
        // keep it as a setting and name the server for what it is.
        let claimed = std::mem::replace(&mut info.version, self.server_name());
        if !claimed.is_empty() {
            info.settings
                .insert("ferretdb.reported_version".into(), claimed);
        }
        let s = &mut info.settings;
        s.insert("ferretdb.version".into(), self.build.info.version.clone());
        s.insert("ferretdb.go".into(), self.build.info.go.clone());
        s.insert(
            "ferretdb.binary".into(),
            self.build.binary.display().to_string(),
        );
        s.insert(
            "ferretdb.address".into(),
            format!("127.0.0.1:{}", self.server.port),
        );
        let backend = match &self.server.backend {
            RunningBackend::Sqlite { .. } => "sqlite",
            RunningBackend::ManagedPostgres(_) => "postgresql (managed)",
            RunningBackend::ExternalPostgres => "postgresql (external)",
        };
        s.insert("ferretdb.backend".into(), backend.into());
        if !self.backend_version.is_empty() {
            s.insert(
                "ferretdb.backend_version".into(),
                self.backend_version.clone(),
            );
        }
        s.insert("ferretdb.limits".into(), self.limits.clone());
        s.insert("dbdelta.managed".into(), "yes".into());
        Ok(info)
    }

    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        self.client.settle(tables, wait)
    }

    fn server_pids(&self) -> Vec<u32> {
        self.server.server_pids()
    }

    fn data_dir(&self) -> Option<PathBuf> {
        match &self.server.backend {
            RunningBackend::Sqlite { dir } => Some(dir.clone()),
            RunningBackend::ManagedPostgres(pg) => pg.data_dir(),
            RunningBackend::ExternalPostgres => None,
        }
    }

    fn server_log(&self) -> Option<PathBuf> {
        Some(self.server.log.clone())
    }

    fn shutdown(&mut self) -> Result<(), EngineError> {
        let client = self.client.shutdown();
        let server = self.server.stop();
        client.and(server)
    }

    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        self.client.counters()
    }

    fn background_work(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_version_is_shortened() {
        assert_eq!(
            postgres_short_version("PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64"),
            "PostgreSQL 15.14"
        );
        assert!(limits_note(Auth::None, &Backend::Sqlite).contains("writeConcern"));
    }
}
