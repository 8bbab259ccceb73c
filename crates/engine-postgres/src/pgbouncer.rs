//! A managed pgbouncer in front of a managed PostgreSQL:
//! `postgres:/usr/lib/postgresql/15/bin?pgbouncer=transaction&pgbouncer.default_pool_size=20`.
//!
//! Benchmark connections (the connect phase of every step) go through pgbouncer; load,
//! settle and the manifest's queries go to the server directly. pgbouncer runs as our child
//! under the same start, stop and orphan rules as the server, listens on 127.0.0.1 only, and
//! inherits dbdelta's raised open-file limit, so it can hold tens of thousands of clients.
//!
//! `pgbouncer.processes=N` starts a fleet: N pgbouncer processes on one port with
//! `so_reuseport = 1` (pgbouncer's documented way to use several cores or, here, to hold more
//! clients than one process's open-file limit allows); the kernel spreads new connections
//! over them. Every process of the fleet is started, checked and stopped like a single one.

use dbdelta_engine::EngineError;
use dbdelta_kit::listen;
use dbdelta_kit::server::{
    free_loopback_port, log_tail, prepare_command, wait_ready, NotReady, Probe, ServerProcess,
};
use dbdelta_model::TargetSpec;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where Debian's package installs it; `pgbouncer.bin=…` overrides.
const DEFAULT_BIN: &str = "/usr/sbin/pgbouncer";
const START_TIMEOUT: Duration = Duration::from_secs(20);
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Most processes of one fleet: far more than cores on any host this runs on.
const MAX_PROCESSES: u32 = 64;
/// Settings dbdelta writes itself: a target may not change where pgbouncer listens or logs.
const RESERVED: &[&str] = &[
    "listen_addr",
    "listen_port",
    "unix_socket_dir",
    "unix_socket_mode",
    "unix_socket_group",
    "auth_hba_file",
    "logfile",
    "pidfile",
    "auth_type",
    "auth_file",
    "pool_mode",
];

/// How a pgbouncer pool hands server connections to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolMode {
    Session,
    Transaction,
    Statement,
}

impl PoolMode {
    fn name(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
            PoolMode::Statement => "statement",
        }
    }

    /// Named prepared statements survive only in session mode: pgbouncer 1.18 hands the
    /// next transaction to any server connection, where the name does not exist.
    pub(crate) fn keeps_prepared_statements(self) -> bool {
        self == PoolMode::Session
    }
}

/// The pgbouncer part of a target's parameters.
#[derive(Debug, Clone)]
pub(crate) struct BouncerSpec {
    pub mode: PoolMode,
    bin: PathBuf,
    /// Processes sharing the port (`pgbouncer.processes`, default 1).
    processes: u32,
    settings: Vec<(String, String)>,
}

/// True for target parameters that configure pgbouncer, not the server.
pub(crate) fn is_bouncer_param(key: &str) -> bool {
    key == "pgbouncer" || key.starts_with("pgbouncer.")
}

/// Reads `pgbouncer=MODE` and `pgbouncer.SETTING=VALUE`; `None` without `pgbouncer`.
pub(crate) fn parse(spec: &TargetSpec) -> Result<Option<BouncerSpec>, EngineError> {
    let bad = |msg: String| EngineError::config(format!("target '{}': {msg}", spec.name));
    let mut mode = None;
    let mut bin = PathBuf::from(DEFAULT_BIN);
    let mut processes = 1;
    let mut settings = Vec::new();
    for (k, v) in &spec.params {
        let key = k.to_ascii_lowercase();
        if key == "pgbouncer" {
            mode = Some(match v.as_str() {
                "session" => PoolMode::Session,
                "transaction" => PoolMode::Transaction,
                "statement" => PoolMode::Statement,
                _ => {
                    return Err(bad(format!(
                        "pgbouncer={v} is not a pool mode: use session, transaction or statement"
                    )))
                }
            });
        } else if let Some(name) = key.strip_prefix("pgbouncer.") {
            if name == "bin" {
                bin = PathBuf::from(v);
            } else if name == "processes" {
                processes = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_PROCESSES).contains(n))
                    .ok_or_else(|| {
                        bad(format!(
                            "pgbouncer.processes={v} is not a process count: use 1 to \
                             {MAX_PROCESSES} (processes sharing one port)"
                        ))
                    })?;
            } else if name == "so_reuseport" {
                return Err(bad(
                    "pgbouncer.so_reuseport cannot be set: dbdelta sets it with \
                     pgbouncer.processes=N"
                        .to_string(),
                ));
            } else if RESERVED.contains(&name) {
                return Err(bad(format!(
                    "pgbouncer.{name} cannot be set: dbdelta sets it (pool mode: pgbouncer=MODE)"
                )));
            } else if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || v.chars().any(|c| c == '\n' || c == '\r')
            {
                return Err(bad(format!(
                    "pgbouncer.{name}={v} is not a pgbouncer setting"
                )));
            } else {
                settings.push((name.to_string(), v.clone()));
            }
        }
    }
    match mode {
        Some(mode) => {
            if !bin.is_file() {
                return Err(bad(format!(
                    "pgbouncer=… needs the pgbouncer binary, but {} does not exist: install it \
                     (apt-get install pgbouncer) or name it with pgbouncer.bin=PATH",
                    bin.display()
                )));
            }
            Ok(Some(BouncerSpec {
                mode,
                bin,
                processes,
                settings,
            }))
        }
        None if !settings.is_empty() => Err(bad(
            "pgbouncer.* settings need pgbouncer=session|transaction|statement".to_string(),
        )),
        None => Ok(None),
    }
}

/// A running pgbouncer, or a fleet of them on one port.
#[derive(Debug)]
pub(crate) struct Bouncer {
    processes: Vec<ServerProcess>,
    pub port: u16,
    pub mode: PoolMode,
    /// Clients one process accepts.
    pub max_client_conn: u64,
    pub log_path: PathBuf,
    pub version: String,
    settings: Vec<(String, String)>,
}

impl Bouncer {
    /// The pids of the running pgbouncer processes.
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.processes
            .iter()
            .filter_map(ServerProcess::pid)
            .collect()
    }

    /// Clients the whole fleet accepts.
    pub(crate) fn client_capacity(&self) -> u64 {
        self.max_client_conn * self.processes.len() as u64
    }

    /// Stops every pgbouncer process (SIGINT: safe shutdown), all of them even when one
    /// fails; the first failure is returned. Idempotent.
    pub(crate) fn stop(&mut self) -> Result<(), EngineError> {
        let mut first = Ok(());
        for p in &mut self.processes {
            let stopped = p.stop();
            if first.is_ok() {
                first = stopped;
            }
        }
        first
    }

    /// Settings for the manifest, `pgbouncer.`-prefixed.
    pub(crate) fn manifest(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("pgbouncer.version".to_string(), self.version.clone()),
            (
                "pgbouncer.pool_mode".to_string(),
                self.mode.name().to_string(),
            ),
            (
                "pgbouncer.max_client_conn".to_string(),
                self.max_client_conn.to_string(),
            ),
            (
                "pgbouncer.logfile".to_string(),
                self.log_path.display().to_string(),
            ),
        ];
        if self.processes.len() > 1 {
            out.push((
                "pgbouncer.processes".to_string(),
                self.processes.len().to_string(),
            ));
        }
        out.extend(
            self.settings
                .iter()
                .filter(|(k, _)| k != "max_client_conn")
                .map(|(k, v)| (format!("pgbouncer.{k}"), v.clone())),
        );
        out
    }
}

/// Starts pgbouncer (or the fleet) for the server at `server_port`, as `owner` when given.
pub(crate) fn start(
    spec: &TargetSpec,
    b: &BouncerSpec,
    scratch: &Path,
    server_port: u16,
    user: &str,
    owner: Option<(u32, u32)>,
) -> Result<Bouncer, EngineError> {
    let err =
        |msg: String| EngineError::config(format!("target '{}': pgbouncer: {msg}", spec.name));
    let dir = scratch.join("pgbouncer");
    fs::create_dir_all(&dir).map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
    // pgbouncer resolves its file settings from its own working directory.
    let dir = dir
        .canonicalize()
        .map_err(|e| err(format!("cannot resolve {}: {e}", dir.display())))?;
    let port = free_loopback_port()?;
    let max_client_conn: u64 = match b.settings.iter().find(|(k, _)| k == "max_client_conn") {
        Some((_, v)) => v
            .parse()
            .map_err(|_| err(format!("pgbouncer.max_client_conn={v} is not a number")))?,
        None => 10_000,
    };
    fs::write(dir.join("userlist.txt"), format!("\"{user}\" \"\"\n"))
        .map_err(|e| err(format!("cannot write the userlist: {e}")))?;
    let fleet = b.processes > 1;
    // One file set per process: pgbouncer refuses to start on another live one's pidfile.
    let files = |k: u32, ext: &str| {
        if fleet {
            dir.join(format!("pgbouncer-{k}.{ext}"))
        } else {
            dir.join(format!("pgbouncer.{ext}"))
        }
    };
    for k in 0..b.processes {
        let mut ini = String::new();
        let _ = writeln!(ini, "[databases]\n* = host=127.0.0.1 port={server_port}\n");
        let _ = writeln!(ini, "[pgbouncer]");
        let _ = writeln!(ini, "listen_addr = 127.0.0.1\nlisten_port = {port}");
        let _ = writeln!(ini, "unix_socket_dir =");
        let _ = writeln!(ini, "logfile = {}", files(k, "log").display());
        let _ = writeln!(ini, "pidfile = {}", files(k, "pid").display());
        if fleet {
            let _ = writeln!(ini, "so_reuseport = 1");
        }
        // The server trusts loopback; pgbouncer then needs no password either.
        let _ = writeln!(ini, "auth_type = trust");
        let _ = writeln!(ini, "auth_file = {}", dir.join("userlist.txt").display());
        let _ = writeln!(ini, "admin_users = {user}");
        let _ = writeln!(ini, "pool_mode = {}", b.mode.name());
        let _ = writeln!(ini, "max_client_conn = {max_client_conn}");
        let _ = writeln!(ini, "ignore_startup_parameters = extra_float_digits");
        for (k, v) in b.settings.iter().filter(|(k, _)| k != "max_client_conn") {
            let _ = writeln!(ini, "{k} = {v}");
        }
        let conf = files(k, "ini");
        fs::write(&conf, ini).map_err(|e| err(format!("cannot write {}: {e}", conf.display())))?;
    }
    dbdelta_kit::server::chown_tree(&dir, owner)?;
    // As the service user, like pgbouncer itself: pgbouncer.bin= names code dbdelta runs.
    let mut version_cmd = Command::new(&b.bin);
    version_cmd.arg("--version").stdin(Stdio::null());
    prepare_command(&mut version_cmd, owner);
    let version = version_cmd
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(|l| l.trim().to_string()))
        .unwrap_or_default();
    let mut processes = Vec::with_capacity(b.processes as usize);
    for k in 0..b.processes {
        // A failure drops the processes started so far, which stops them.
        processes.push(start_one(
            spec,
            b,
            &files(k, "ini"),
            &files(k, "log"),
            port,
            owner,
        )?);
    }
    Ok(Bouncer {
        processes,
        port,
        mode: b.mode,
        max_client_conn,
        log_path: files(0, "log"),
        version,
        settings: b.settings.clone(),
    })
}

/// Starts one pgbouncer process with `conf` and waits until it listens on `port` itself
/// (in a fleet a connect could reach another process, so the kernel's socket table of
/// this pid is what says it is ready).
fn start_one(
    spec: &TargetSpec,
    b: &BouncerSpec,
    conf: &Path,
    log_path: &Path,
    port: u16,
    owner: Option<(u32, u32)>,
) -> Result<ServerProcess, EngineError> {
    let err =
        |msg: String| EngineError::config(format!("target '{}': pgbouncer: {msg}", spec.name));
    let mut cmd = Command::new(&b.bin);
    cmd.arg(conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    prepare_command(&mut cmd, owner);
    let child = cmd
        .spawn()
        .map_err(|e| err(format!("cannot start {}: {e}", b.bin.display())))?;
    // SIGINT: pgbouncer's safe shutdown.
    let mut process = ServerProcess::new(child, libc::SIGINT, STOP_GRACE);
    let pid = process.pid();
    let listening = || match pid.map(listen::listening) {
        Some(Ok(addrs)) if addrs.iter().any(|a| a.port() == port) => Ok(()),
        _ => Err(Probe::<()>::NotYet(None)),
    };
    let waited = wait_ready(
        &mut process,
        START_TIMEOUT,
        Duration::from_millis(50),
        listening,
    );
    match waited {
        Ok(()) => {
            if let Err(e) = listen::require_loopback_only(&spec.name, "pgbouncer", pid, &[]) {
                let _ = process.stop();
                return Err(e);
            }
            Ok(process)
        }
        Err(NotReady::Exited(status)) => Err(err(format!(
            "exited ({status}) at start; a setting it rejects? {}:\n{}",
            log_path.display(),
            log_tail(log_path, 10)
        ))),
        Err(NotReady::Failed(()) | NotReady::TimedOut(_)) => {
            let _ = process.stop();
            Err(err(format!(
                "did not listen on port {port} within {START_TIMEOUT:?}:\n{}",
                log_tail(log_path, 10)
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(p: &str) -> TargetSpec {
        TargetSpec::parse(&format!("b=postgres:/usr/lib/postgresql/15/bin?{p}")).unwrap()
    }

    #[test]
    fn parameters_are_validated() {
        let e = parse(&spec("pgbouncer=sometimes")).unwrap_err();
        assert!(e.message.contains("pgbouncer=sometimes"), "{e}");
        let e = parse(&spec("pgbouncer=session&pgbouncer.listen_port=1")).unwrap_err();
        assert!(e.message.contains("pgbouncer.listen_port"), "{e}");
        for key in [
            "PGBOUNCER.LISTEN_ADDR",
            "pgbouncer.Listen_Port",
            "pgbouncer.unix_socket_dir",
            "pgbouncer.unix_socket_mode",
            "pgbouncer.unix_socket_group",
            "pgbouncer.auth_hba_file",
            "pgbouncer.auth_file",
            "pgbouncer.%25include",
        ] {
            let e = parse(&spec(&format!("pgbouncer=session&{key}=0.0.0.0"))).unwrap_err();
            assert!(
                e.message
                    .to_ascii_lowercase()
                    .contains(&key.to_ascii_lowercase().replace("%25", "%")),
                "{key}: {e}"
            );
        }
        let e = parse(&spec("pgbouncer.default_pool_size=3")).unwrap_err();
        assert!(
            e.message
                .contains("pgbouncer=session|transaction|statement"),
            "{e}"
        );
        for bad in ["0", "65", "two"] {
            let e = parse(&spec(&format!(
                "pgbouncer=session&pgbouncer.processes={bad}"
            )))
            .unwrap_err();
            assert!(e.message.contains("pgbouncer.processes"), "{bad}: {e}");
        }
        let e = parse(&spec("pgbouncer=session&pgbouncer.so_reuseport=0")).unwrap_err();
        assert!(e.message.contains("pgbouncer.processes=N"), "{e}");
        let e = parse(&spec("pgbouncer=session&pgbouncer.bin=/nonexistent/pgb")).unwrap_err();
        assert!(e.message.contains("/nonexistent/pgb"), "{e}");
        assert!(parse(&spec("shared_buffers=128MB")).unwrap().is_none());
        assert!(!PoolMode::Transaction.keeps_prepared_statements());
        assert!(PoolMode::Session.keeps_prepared_statements());
    }
}
