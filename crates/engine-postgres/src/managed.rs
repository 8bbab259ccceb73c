//! Managed servers: `initdb` into `<scratch>/pgdata`, settings into an included
//! `dbdelta.conf`, `postgres -D` started directly as our child (not `pg_ctl`, so we own the
//! PID and `PR_SET_PDEATHSIG` applies), a readiness wait, and the target's database.
//!
//! The server is spawned from the calling thread: `PR_SET_PDEATHSIG` fires when *that
//! thread* exits, so callers must open managed targets from a long-lived thread (the CLI's
//! main thread).

use crate::conn::{connect, Addr, ConnParams, TlsOpt};
use dbdelta_engine::{Connection, EngineError, ErrorKind, OpenOptions};
use dbdelta_kit::listen;
use dbdelta_kit::netns::{self, Link};
use dbdelta_kit::params::config_err;
use dbdelta_kit::quote;
use dbdelta_kit::server::{
    self, chown_tree, log_tail, port_in_use, prepare_command, service_user, start_on_free_port,
    Launch, NotReady, Probe, ServerProcess,
};
use dbdelta_model::{Dialect, TargetSpec};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a starting server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a fast shutdown (SIGINT) may take before SIGKILL; it includes a checkpoint.
const STOP_GRACE: Duration = Duration::from_secs(120);
/// Lines of the server log quoted in errors.
const TAIL_LINES: usize = 25;
/// The superuser initdb creates; managed servers trust loopback connections.
pub(crate) const SUPERUSER: &str = "dbdelta";
/// Target parameters that configure the client, not the server.
pub(crate) const CLIENT_PARAMS: &[&str] = &[
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "channel_binding",
];

/// A running managed server.
#[derive(Debug)]
pub(crate) struct Managed {
    server: ServerProcess,
    pub data_dir: PathBuf,
    pub log_path: PathBuf,
    /// The emulated link (`net=`) the server sits behind; after `server`, so the namespace
    /// is deleted once the server has stopped.
    link: Option<Link>,
}

impl Managed {
    /// The postmaster PID and its children.
    pub(crate) fn pids(&self) -> Vec<u32> {
        let Some(pid) = self.server.pid() else {
            return Vec::new();
        };
        let mut pids = vec![pid];
        pids.extend(children_of(pid));
        pids
    }

    /// Fast shutdown (SIGINT), SIGKILL after the grace period. Idempotent.
    pub(crate) fn stop(&mut self) -> Result<(), EngineError> {
        self.server.stop()
    }

    /// The emulated link's settings (`net.*`) for the manifest; empty without `net=`.
    pub(crate) fn link_settings(&self) -> Vec<(String, String)> {
        self.link.as_ref().map(Link::settings).unwrap_or_default()
    }
}

/// PIDs whose parent is `pid` (from `/proc/*/stat`).
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(child) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // Fields after the ")" closing the command name: state, ppid, ...
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out.sort_unstable();
    out
}

fn port_busy(spec: &TargetSpec, p: u16) -> EngineError {
    config_err(
        spec,
        format!("port={p}: 127.0.0.1:{p} is already in use; free it or drop port= to let dbdelta choose a free port"),
    )
}

/// Checks the bin directory: it must hold `initdb` and `postgres`.
pub(crate) fn check_bin_dir(spec: &TargetSpec, bin: &Path) -> Result<(), EngineError> {
    let fix = "install PostgreSQL (e.g. apt-get install postgresql-15) or point the target at the \
               bin directory that holds initdb and postgres (postgres:/usr/lib/postgresql/15/bin)";
    if !bin.is_dir() {
        return Err(config_err(
            spec,
            format!(
                "PostgreSQL bin directory {} does not exist; {fix}",
                bin.display()
            ),
        ));
    }
    for exe in ["initdb", "postgres"] {
        if !bin.join(exe).is_file() {
            return Err(config_err(
                spec,
                format!("{} has no '{exe}' program; {fix}", bin.display()),
            ));
        }
    }
    Ok(())
}

/// `name = value` settings for dbdelta.conf.
type Settings = Vec<(String, String)>;

/// Validated server settings from the target's parameters, and a requested port if any.
fn server_settings(spec: &TargetSpec) -> Result<(Settings, Option<u16>), EngineError> {
    let mut out = Vec::new();
    let mut port = None;
    for (k, v) in &spec.params {
        let key = k.to_ascii_lowercase();
        if CLIENT_PARAMS.contains(&key.as_str())
            || crate::pgbouncer::is_bouncer_param(&key)
            || netns::is_param(&key)
        {
            continue;
        }
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(config_err(
                spec,
                format!("'{k}' is not a PostgreSQL setting name"),
            ));
        }
        if v.chars().any(|c| c == '\n' || c == '\r' || c == '\0') {
            return Err(config_err(
                spec,
                format!("the value of '{k}' contains a line break"),
            ));
        }
        if let Some(why) = reserved_setting(&key) {
            return Err(config_err(
                spec,
                format!("'{k}' cannot be set: {why}; remove it from the target"),
            ));
        }
        match key.as_str() {
            "port" => {
                port = Some(v.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    config_err(spec, format!("port={v} is not a TCP port number (1-65535)"))
                })?);
            }
            _ => out.push((key, v.clone())),
        }
    }
    Ok((out, port))
}

/// Why a managed server's setting `key` (lower case: PostgreSQL's setting names are
/// case-insensitive, and its configuration-file syntax has no other spelling of a name) is
/// dbdelta's, or `None` for the target's own. `port` is the target's: dbdelta still binds it
/// to 127.0.0.1.
fn reserved_setting(key: &str) -> Option<&'static str> {
    Some(match key {
        "listen_addresses"
        | "unix_socket_directories"
        | "unix_socket_group"
        | "unix_socket_permissions" => {
            "managed servers listen on 127.0.0.1 and a socket in their scratch directory only"
        }
        // Bonjour advertises the server on the local network.
        "bonjour" | "bonjour_name" => "managed servers are not advertised on the network",
        // Configuration-file directives and locations: an included file or another
        // configuration file could set the listen address. (`hba_file` and `ident_file`
        // stay the target's: they decide who may connect, not where the server listens.)
        "include" | "include_if_exists" | "include_dir" | "config_file" | "data_directory"
        | "external_pid_file" => {
            "dbdelta writes the managed server's configuration and keeps its files in the \
             scratch directory (settings go in the target, not in an included file)"
        }
        _ => return None,
    })
}

/// `'value'` with quotes doubled, as postgresql.conf wants (its own syntax, not SQL's, though
/// for the values dbdelta writes the bytes equal a PostgreSQL string literal's).
fn conf_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// When servers run as the service user, every ancestor of `dir` must be searchable by it.
fn check_reachable(
    spec: &TargetSpec,
    dir: &Path,
    owner: Option<(u32, u32)>,
    fix: &str,
) -> Result<(), EngineError> {
    server::check_reachable(dir, owner).map_err(|u| config_err(spec, u.advice(fix)))
}

/// Starts a managed server for `spec` (whose location is the bin dir `bin`) in `scratch`.
pub(crate) fn start(
    spec: &TargetSpec,
    bin: &Path,
    scratch: &Path,
    opts: &OpenOptions,
    tls: TlsOpt,
) -> Result<(Managed, ConnParams), EngineError> {
    check_bin_dir(spec, bin)?;
    let (settings, requested_port) = server_settings(spec)?;
    let channel_binding = crate::auth::channel_binding(spec)?;
    let behind_link = netns::link_spec(spec)?.is_some();
    if behind_link
        && spec
            .params
            .iter()
            .any(|(k, _)| crate::pgbouncer::is_bouncer_param(k))
    {
        return Err(config_err(
            spec,
            "net= and pgbouncer= do not go together: the emulated link is between dbdelta and \
             the server; drop one of them",
        ));
    }
    // Behind a link the port is the namespace's, free whatever this host's loopback holds.
    if let Some(p) = requested_port.filter(|p| !behind_link && port_in_use(*p)) {
        return Err(port_busy(spec, p));
    }
    let owner = service_user()?;
    fs::create_dir_all(scratch)
        .map_err(|e| config_err(spec, format!("cannot create {}: {e}", scratch.display())))?;
    let scratch = scratch
        .canonicalize()
        .map_err(|e| config_err(spec, format!("cannot resolve {}: {e}", scratch.display())))?;
    check_reachable(
        spec,
        bin,
        owner,
        "install the server binaries where that user can read them (e.g. under /opt)",
    )?;
    check_reachable(
        spec,
        &scratch,
        owner,
        "put the run directory elsewhere (e.g. under /var/tmp)",
    )?;
    let data_dir = scratch.join("pgdata");
    let log_path = scratch.join("server.log");
    chown_tree(&scratch, owner)?;

    if !data_dir.join("PG_VERSION").exists() {
        initdb(spec, bin, &data_dir, owner)?;
    }
    // net=…: the server runs in a namespace of its own behind a shaped link, listening on
    // the namespace's address, where every port is free.
    let mut link = Link::for_spec(spec)?;
    if let Some(l) = &link {
        allow_client(spec, &data_dir, l)?;
    }
    let listen = link
        .as_ref()
        .map_or("127.0.0.1".to_string(), |l| l.server_addr().to_string());
    let behind = link.is_some();
    // Behind a link every port of the namespace is free: the requested one or 5432.
    let port_choice = if behind {
        Some(requested_port.unwrap_or(5432))
    } else {
        requested_port
    };
    let (server, params) = start_on_free_port(port_choice, |port| {
        if !behind && requested_port.is_some() && port_in_use(port) {
            return Err((port_busy(spec, port), false));
        }
        write_conf(spec, &data_dir, &scratch, &listen, port, &settings, owner)
            .map_err(|e| (e, false))?;
        let netns_fd = link.as_ref().and_then(Link::ns_fd);
        let mut server =
            spawn(spec, bin, &data_dir, &log_path, owner, netns_fd).map_err(|e| (e, false))?;
        let params = ConnParams {
            addr: Addr::Tcp {
                host: listen.clone(),
                port,
            },
            user: SUPERUSER.into(),
            password: None,
            database: "postgres".into(),
            prepared: opts.prepared,
            connect_timeout: Duration::from_secs(5),
            tls: tls.clone(),
            channel_binding,
        };
        let allowed: Vec<std::net::IpAddr> = link.iter().map(|l| l.server_addr().into()).collect();
        let ready = wait_ready(spec, &mut server, &params, &log_path).and_then(|()| {
            // Whatever the settings said, the server must listen where dbdelta put it.
            listen::require_loopback_only(&spec.name, "the managed server", server.pid(), &allowed)
                .map_err(|e| (e, false))
        });
        match ready {
            Ok(()) => Ok((server, params)),
            Err(failed) => {
                let _ = server.stop();
                Err(failed)
            }
        }
    })?;
    let mut params = params;
    let managed = Managed {
        server,
        data_dir,
        log_path,
        link: link.take(),
    };
    create_database(&params, &opts.database)?;
    params.database = opts.database.clone();
    Ok((managed, params))
}

fn initdb(
    spec: &TargetSpec,
    bin: &Path,
    data_dir: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(), EngineError> {
    let mut cmd = Command::new(bin.join("initdb"));
    cmd.arg("-D")
        .arg(data_dir)
        .args(["-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C"])
        // A fresh benchmark cluster need not survive a crash of the machine during initdb.
        .arg("--no-sync")
        .stdin(Stdio::null())
        .env_remove("PGDATA");
    prepare_command(&mut cmd, owner);
    let out = cmd
        .output()
        .map_err(|e| config_err(spec, format!("cannot run {}/initdb: {e}", bin.display())))?;
    if !out.status.success() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.lines().collect();
        return Err(config_err(
            spec,
            format!(
                "initdb -D {} failed ({}):\n{}",
                data_dir.display(),
                out.status,
                lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
            ),
        ));
    }
    let conf = data_dir.join("postgresql.conf");
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(&conf)
        .map_err(|e| config_err(spec, format!("cannot open {}: {e}", conf.display())))?;
    writeln!(
        f,
        "\n# Added by dbdelta: the target's settings.\ninclude_if_exists = 'dbdelta.conf'"
    )
    .map_err(|e| config_err(spec, format!("cannot write {}: {e}", conf.display())))?;
    // Many connections come from 127.0.0.2, .3, … so that ephemeral ports never run out:
    // trust all of loopback (the server still listens on 127.0.0.1 only).
    let hba = data_dir.join("pg_hba.conf");
    fs::OpenOptions::new()
        .append(true)
        .open(&hba)
        .and_then(|mut f| writeln!(f, "host all all 127.0.0.0/8 trust"))
        .map_err(|e| config_err(spec, format!("cannot write {}: {e}", hba.display())))?;
    Ok(())
}

/// Lets the host's end of the link in (trust, as for loopback), once per data directory.
fn allow_client(spec: &TargetSpec, data_dir: &Path, link: &Link) -> Result<(), EngineError> {
    let hba = data_dir.join("pg_hba.conf");
    let line = format!("host all all {}/32 trust", link.client_addr());
    let text = fs::read_to_string(&hba)
        .map_err(|e| config_err(spec, format!("cannot read {}: {e}", hba.display())))?;
    if text.lines().any(|l| l == line) {
        return Ok(());
    }
    fs::OpenOptions::new()
        .append(true)
        .open(&hba)
        .and_then(|mut f| writeln!(f, "{line}"))
        .map_err(|e| config_err(spec, format!("cannot write {}: {e}", hba.display())))
}

fn write_conf(
    spec: &TargetSpec,
    data_dir: &Path,
    scratch: &Path,
    listen: &str,
    port: u16,
    settings: &[(String, String)],
    owner: Option<(u32, u32)>,
) -> Result<(), EngineError> {
    let mut text =
        String::from("# Written by dbdelta for this target; rewritten at every start.\n");
    for (k, v) in settings {
        text.push_str(&format!("{k} = {}\n", conf_quote(v)));
    }
    // The socket path must fit sockaddr_un (107 bytes); without it we use TCP only.
    let socket = scratch.join(format!(".s.PGSQL.{port}"));
    let socket_dir = if socket.as_os_str().len() < 100 {
        scratch.display().to_string()
    } else {
        String::new()
    };
    text.push_str(&format!(
        "listen_addresses = {}\nport = {port}\nunix_socket_directories = {}\n\
         log_destination = 'stderr'\nlogging_collector = off\n",
        conf_quote(listen),
        conf_quote(&socket_dir)
    ));
    let path = data_dir.join("dbdelta.conf");
    fs::write(&path, text)
        .map_err(|e| config_err(spec, format!("cannot write {}: {e}", path.display())))?;
    chown_tree(&path, owner)
}

fn spawn(
    spec: &TargetSpec,
    bin: &Path,
    data_dir: &Path,
    log_path: &Path,
    owner: Option<(u32, u32)>,
    netns_fd: Option<i32>,
) -> Result<ServerProcess, EngineError> {
    let mut command = Command::new(bin.join("postgres"));
    command.arg("-D").arg(data_dir).env_remove("PGDATA");
    server::launch(Launch {
        command,
        // Appended: initdb's output is already there.
        log: log_path,
        append: true,
        owner,
        netns: netns_fd,
        // SIGINT is PostgreSQL's fast shutdown: abort sessions, checkpoint, exit.
        stop_signal: libc::SIGINT,
        grace: STOP_GRACE,
    })
    .map_err(|e| config_err(spec, e.to_string()))
}

/// Polls until the server accepts a connection. The error says whether the port was taken.
fn wait_ready(
    spec: &TargetSpec,
    server: &mut ServerProcess,
    params: &ConnParams,
    log_path: &Path,
) -> Result<(), (EngineError, bool)> {
    let probe = || match connect(params) {
        Ok(_) => Ok(()),
        // Refused (not listening yet) or 57P03 "the database system is starting up".
        Err(e) if e.kind == ErrorKind::Connection => Err(Probe::NotYet(Some(e))),
        Err(e) => Err(Probe::Failed(e)),
    };
    let tail = || log_tail(log_path, TAIL_LINES);
    let late = |e: Option<EngineError>| {
        let e = e.map_or_else(|| "no answer".to_string(), |e| e.to_string());
        config_err(
            spec,
            format!(
                "the PostgreSQL server did not accept connections within {START_TIMEOUT:?}: {e}. \
                 Last lines of {}:\n{}",
                log_path.display(),
                tail()
            ),
        )
    };
    server::wait_ready(server, START_TIMEOUT, Duration::from_millis(50), probe).map_err(
        |not| match not {
            NotReady::Exited(status) => {
                let t = tail();
                let clash = t.contains("could not bind") || t.contains("Address already in use");
                let e = config_err(
                    spec,
                    format!(
                        "the PostgreSQL server exited during startup ({status}); check the target's settings. \
                         Last lines of {}:\n{t}",
                        log_path.display()
                    ),
                );
                (e, clash)
            }
            NotReady::Failed(e) => (late(Some(e)), false),
            NotReady::TimedOut(e) => (late(e), false),
        },
    )
}

/// Creates `database` unless it exists.
fn create_database(params: &ConnParams, database: &str) -> Result<(), EngineError> {
    let mut conn = connect(params)?;
    let exists = conn.query_scalar(&format!(
        "SELECT 1 FROM pg_database WHERE datname = {}",
        quote::literal(database, Dialect::Postgres)
    ))?;
    if exists.is_none() {
        conn.query(&format!(
            "CREATE DATABASE {}",
            quote::ident(database, Dialect::Postgres)
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated() {
        let t =
            TargetSpec::parse("p=postgres:/x?shared_buffers=1GB&port=5555&sslrootcert=/c").unwrap();
        let (s, port) = server_settings(&t).unwrap();
        assert_eq!(s, vec![("shared_buffers".to_string(), "1GB".to_string())]);
        assert_eq!(port, Some(5555));
        for bad in [
            "p=postgres:/x?listen_addresses=*",
            "p=postgres:/x?port=0",
            "p=postgres:/x?a%20b=1",
        ] {
            let t = TargetSpec::parse(bad).unwrap();
            assert_eq!(
                server_settings(&t).unwrap_err().kind,
                ErrorKind::Config,
                "{bad}"
            );
        }
        assert_eq!(conf_quote("it's"), "'it''s'");
    }

    #[test]
    fn listen_and_configuration_settings_are_refused_in_any_case() {
        for key in [
            "listen_addresses",
            "LISTEN_ADDRESSES",
            "Listen_Addresses",
            "unix_socket_directories",
            "unix_socket_permissions",
            "unix_socket_group",
            "include",
            "INCLUDE",
            "include_if_exists",
            "include_dir",
            "config_file",
            "data_directory",
            "external_pid_file",
            "bonjour",
        ] {
            let t = TargetSpec::parse(&format!("p=postgres:/x?{key}=/tmp/x")).unwrap();
            let e = server_settings(&t).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Config, "{key}");
            assert!(e.message.contains(key) && e.message.contains("'p'"), "{e}");
        }
        // `-` is not part of a setting name in postgresql.conf.
        let t = TargetSpec::parse("p=postgres:/x?listen-addresses=*").unwrap();
        assert!(server_settings(&t).is_err());
        // Harmless neighbours stay allowed.
        let t = TargetSpec::parse("p=postgres:/x?max_connections=50&work_mem=8MB").unwrap();
        assert_eq!(server_settings(&t).unwrap().0.len(), 2);
    }

    #[test]
    fn children_of_self() {
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        assert!(children_of(std::process::id()).contains(&child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
