//! Managed MySQL/MariaDB servers: find the binaries in a basedir, initialize a data directory
//! in the scratch area, write `my.cnf` from the target's settings, start `mariadbd`/`mysqld`
//! as a direct child on a free loopback port and stop it again.
//!
//! The server is spawned from the calling thread with `PR_SET_PDEATHSIG`, which Linux ties to
//! the spawning *thread*: open managed targets from a thread that lives as long as the run.

use crate::client::{Addr, ConnectParams, RawConn};
use crate::endpoint::CONNECT_TIMEOUT;
use crate::errors::statement_error;
use crate::Flavor;
use dbdelta_engine::EngineError;
use dbdelta_kit::listen;
use dbdelta_kit::netns::Link;
use dbdelta_kit::quote;
use dbdelta_kit::server::{self, NotReady, Probe, ServerProcess};
use dbdelta_model::Dialect;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to shut down cleanly before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(120);
/// Lines of the error log quoted in startup errors.
const LOG_LINES: usize = 25;
/// Unix socket paths are limited to 108 bytes; keep a margin.
const MAX_SOCKET_PATH: usize = 100;

/// Numbers the sockets made outside a scratch directory whose path is too long (servers
/// behind links all use port 3306).
static SOCKETS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A started server and the files it uses.
#[derive(Debug)]
pub(crate) struct ManagedServer {
    process: ServerProcess,
    /// The data directory.
    pub data_dir: PathBuf,
    /// The error log.
    pub log_path: PathBuf,
    /// The Unix socket (used for the bootstrap only).
    socket: PathBuf,
    /// The TCP port on 127.0.0.1 (on the namespace's address behind a `net=` link).
    pub port: u16,
    /// The basedir the binaries came from.
    pub basedir: PathBuf,
    /// The emulated link (`net=`) the server sits behind; after `process`, so the
    /// namespace is deleted once the server has stopped.
    pub link: Option<Link>,
}

impl ManagedServer {
    /// The address clients connect to: 127.0.0.1, or the namespace's behind a link.
    pub(crate) fn host(&self) -> String {
        self.link
            .as_ref()
            .map_or("127.0.0.1".to_string(), |l| l.server_addr().to_string())
    }

    /// The server's pid while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Stops the server (SIGTERM: clean InnoDB shutdown; SIGKILL after the grace period).
    pub(crate) fn stop(&mut self) -> Result<(), EngineError> {
        let r = self.process.stop();
        if !self.socket.starts_with(&self.data_dir) {
            let _ = fs::remove_file(&self.socket);
        }
        r
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The server binary in `basedir` and its flavor.
fn find_server(
    target: &str,
    basedir: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(PathBuf, Flavor, String), EngineError> {
    let candidates = [
        "sbin/mariadbd",
        "bin/mariadbd",
        "sbin/mysqld",
        "bin/mysqld",
        "libexec/mysqld",
    ];
    let bin = candidates
        .iter()
        .map(|c| basedir.join(c))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            EngineError::config(format!(
                "target '{target}': no MariaDB/MySQL server in basedir {} (looked for {}); apt-get install mariadb-server, or point at the basedir that holds sbin/mariadbd or bin/mysqld (e.g. mysql:/usr)",
                basedir.display(),
                candidates.join(", ")
            ))
        })?;
    // As the service user, like the server itself: the basedir names code dbdelta runs.
    let mut cmd = Command::new(&bin);
    cmd.arg("--version").stdin(Stdio::null());
    server::prepare_command(&mut cmd, owner);
    let out = cmd.output().map_err(|e| {
        EngineError::config(format!(
            "target '{target}': cannot run {}: {e}",
            bin.display()
        ))
    })?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(EngineError::config(format!(
            "target '{target}': {} --version failed: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let flavor = if version.contains("MariaDB") {
        Flavor::MariaDb
    } else {
        Flavor::MySql
    };
    Ok((bin, flavor, version))
}

/// Checks a target's settings before they become `my.cnf` lines.
fn check_params(target: &str, params: &[(String, String)]) -> Result<(), EngineError> {
    for (k, v) in params {
        let name_ok = !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !name_ok || v.chars().any(char::is_control) {
            return Err(EngineError::config(format!(
                "target '{target}': '{k}={v}' is not a valid server setting (write name=value, e.g. innodb_buffer_pool_size=1G)"
            )));
        }
        if let Some(option) = crate::options::reserved_option(k) {
            return Err(EngineError::config(format!(
                "target '{target}': '{k}' would set the server option '{option}' (the server reads '-' and '_' alike, 'loose-'/'skip-'/'enable-' prefixes and any unique prefix of an option name), and dbdelta sets where a managed server listens and which files it uses (loopback port, scratch directory); remove '{k}' from the target"
            )));
        }
    }
    Ok(())
}

/// The text of `my.cnf`.
#[allow(clippy::too_many_arguments)]
fn my_cnf(
    flavor: Flavor,
    params: &[(String, String)],
    data_dir: &Path,
    socket: &Path,
    bind: &str,
    port: u16,
    log: &Path,
    pid: &Path,
) -> String {
    let mut s = String::from("# Written by dbdelta for a managed server.\n[mysqld]\n");
    let _ = writeln!(s, "datadir={}", data_dir.display());
    let _ = writeln!(s, "socket={}", socket.display());
    let _ = writeln!(s, "port={port}");
    let _ = writeln!(s, "bind-address={bind}");
    let _ = writeln!(s, "log-error={}", log.display());
    let _ = writeln!(s, "pid-file={}", pid.display());
    if let Some(dir) = data_dir.parent() {
        let _ = writeln!(s, "tmpdir={}", dir.join("tmp").display());
    }
    s.push_str("skip-name-resolve\n");
    if flavor == Flavor::MySql {
        // The X plugin listens on 33060 by default; two servers would collide.
        s.push_str("mysqlx=OFF\n");
    }
    for (k, v) in params {
        let _ = writeln!(s, "{k}={v}");
    }
    s
}

/// Fails when the service user cannot reach `dir` (a parent without o+x, e.g. a 0700 /root).
fn check_traversable(dir: &Path, owner: Option<(u32, u32)>) -> Result<(), EngineError> {
    server::check_reachable(dir, owner).map_err(|u| {
        EngineError::config(format!(
            "the managed server runs as user '{}' and cannot enter {} (mode {:o}); use a run directory outside it or chmod o+x it",
            server::SERVICE_USER,
            u.ancestor.display(),
            u.mode
        ))
    })
}

/// Runs `cmd` to completion; on failure, an error with its output and the log tail.
fn run_init(
    target: &str,
    mut cmd: Command,
    what: &str,
    owner: Option<(u32, u32)>,
    log: &Path,
) -> Result<(), EngineError> {
    server::prepare_command(&mut cmd, owner);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| EngineError::config(format!("target '{target}': cannot run {what}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The install script wraps the server's errors in a page of advice; keep the errors.
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("ERROR") || l.to_ascii_lowercase().contains("error:"))
        .collect();
    let shown = if errors.is_empty() {
        &lines[lines.len().saturating_sub(10)..]
    } else {
        &errors[errors.len().saturating_sub(LOG_LINES)..]
    };
    let mut msg = format!(
        "target '{target}': {what} failed ({}); check the target's settings:\n{}",
        out.status,
        shown.join("\n")
    );
    let log_tail = server::log_tail(log, LOG_LINES);
    if !log_tail.is_empty() {
        msg.push_str(&format!("\nLast lines of {}:\n{log_tail}", log.display()));
    }
    Err(EngineError::config(msg))
}

/// Creates the system tables in the data directory.
fn initialize(
    target: &str,
    bin: &Path,
    flavor: Flavor,
    basedir: &Path,
    cnf: &Path,
    owner: Option<(u32, u32)>,
    log: &Path,
) -> Result<(), EngineError> {
    let defaults = format!("--defaults-file={}", cnf.display());
    let base = format!("--basedir={}", basedir.display());
    if flavor == Flavor::MariaDb {
        let scripts = [
            "bin/mariadb-install-db",
            "scripts/mariadb-install-db",
            "bin/mysql_install_db",
            "scripts/mysql_install_db",
        ];
        let script = scripts
            .iter()
            .map(|s| basedir.join(s))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                EngineError::config(format!(
                    "target '{target}': MariaDB basedir {} has no install script (looked for {}); install mariadb-server or point at a complete basedir",
                    basedir.display(),
                    scripts.join(", ")
                ))
            })?;
        let mut cmd = Command::new(&script);
        cmd.arg(&defaults)
            .arg(&base)
            // Root without password over TCP: no unix_socket auth to reason about.
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg("--skip-name-resolve");
        run_init(target, cmd, &script.display().to_string(), owner, log)
    } else {
        let mut cmd = Command::new(bin);
        cmd.arg(&defaults).arg(&base).arg("--initialize-insecure");
        run_init(
            target,
            cmd,
            &format!("{} --initialize-insecure", bin.display()),
            owner,
            log,
        )
    }
}

/// Starts a managed server for `target` from `basedir` in `scratch` and creates `database`;
/// behind `link` (`net=`) the server runs in the link's namespace.
pub(crate) fn start(
    target: &str,
    basedir: &Path,
    params: &[(String, String)],
    scratch: &Path,
    database: &str,
    link: Option<Link>,
) -> Result<(ManagedServer, Flavor), EngineError> {
    let owner = server::service_user()?;
    let (bin, flavor, _) = find_server(target, basedir, owner)?;
    check_params(target, params)?;
    let io_err = |what: &Path, e: std::io::Error| {
        EngineError::config(format!(
            "target '{target}': cannot prepare {}: {e}",
            what.display()
        ))
    };
    fs::create_dir_all(scratch).map_err(|e| io_err(scratch, e))?;
    let scratch = scratch.canonicalize().map_err(|e| io_err(scratch, e))?;
    let data_dir = scratch.join("mysqldata");
    if data_dir.exists() {
        // Our own subdirectory from an earlier attempt: start from a clean data directory.
        fs::remove_dir_all(&data_dir).map_err(|e| io_err(&data_dir, e))?;
    }
    fs::create_dir_all(&data_dir).map_err(|e| io_err(&data_dir, e))?;
    // A private tmpdir: concurrent install-db/bootstrap runs sharing /tmp trip over each
    // other's temporary tables.
    let tmp = scratch.join("tmp");
    fs::create_dir_all(&tmp).map_err(|e| io_err(&tmp, e))?;
    let log = scratch.join("server.log");
    let _ = fs::remove_file(&log);
    // Inside a link's namespace every port is free.
    let port = match &link {
        Some(_) => 3306,
        None => server::free_loopback_port()?,
    };
    let bind = link
        .as_ref()
        .map_or("127.0.0.1".to_string(), |l| l.server_addr().to_string());
    let mut socket = scratch.join("mysqld.sock");
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        socket = std::env::temp_dir().join(format!(
            "dbdelta-mysql-{}-{port}-{}.sock",
            std::process::id(),
            SOCKETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
    }
    let cnf = scratch.join("my.cnf");
    let text = my_cnf(
        flavor,
        params,
        &data_dir,
        &socket,
        &bind,
        port,
        &log,
        &scratch.join("mysqld.pid"),
    );
    fs::write(&cnf, text).map_err(|e| io_err(&cnf, e))?;

    server::chown_tree(&scratch, owner)?;
    check_traversable(&scratch, owner)?;
    initialize(target, &bin, flavor, basedir, &cnf, owner, &log)?;

    let mut command = Command::new(&bin);
    // --defaults-file must come first.
    command
        .arg(format!("--defaults-file={}", cnf.display()))
        .arg(format!("--basedir={}", basedir.display()));
    let process = server::launch(server::Launch {
        command,
        log: &scratch.join("server.stdout"),
        append: false,
        owner,
        netns: link.as_ref().and_then(Link::ns_fd),
        stop_signal: libc::SIGTERM,
        grace: STOP_GRACE,
    })
    .map_err(|e| match e {
        server::LaunchError::Log { source, .. } => io_err(&scratch, source),
        server::LaunchError::Spawn { source, .. } => EngineError::config(format!(
            "target '{target}': cannot start {}: {source}",
            bin.display()
        )),
    })?;
    let mut srv = ManagedServer {
        process,
        data_dir,
        log_path: log,
        socket,
        port,
        basedir: basedir.to_path_buf(),
        link,
    };
    let mut root = wait_ready(target, &mut srv, &bin, &scratch)?;
    // Whatever the settings said, the server must listen where dbdelta put it (dropping
    // `srv` on error stops it).
    let allowed: Vec<std::net::IpAddr> = srv.link.iter().map(|l| l.server_addr().into()).collect();
    listen::require_loopback_only(target, "the managed server", srv.pid(), &allowed)?;
    let client = srv.link.as_ref().map(|l| l.client_addr().to_string());
    bootstrap(&mut root, database, client.as_deref())?;
    Ok((srv, flavor))
}

/// Polls the Unix socket until the server answers; fails fast when the server exits.
fn wait_ready(
    target: &str,
    srv: &mut ManagedServer,
    bin: &Path,
    scratch: &Path,
) -> Result<RawConn, EngineError> {
    let params = ConnectParams {
        addr: Addr::Unix {
            path: srv.socket.clone(),
        },
        user: "root".into(),
        password: None,
        database: None,
        tls: None,
        compress: false,
        key_exchange: crate::auth::KeyExchange::default(),
    };
    let failure = |why: String, srv: &ManagedServer| {
        let mut tail = server::log_tail(&srv.log_path, LOG_LINES);
        let stderr = server::log_tail(&scratch.join("server.stdout"), 10);
        if !stderr.is_empty() {
            tail.push('\n');
            tail.push_str(&stderr);
        }
        EngineError::config(format!(
            "target '{target}': {} {why}; check the target's settings. Last lines of {}:\n{tail}",
            bin.display(),
            srv.log_path.display()
        ))
    };
    let socket = &srv.socket;
    // Not yet while the socket is missing or refuses; the server's exit ends the wait.
    let probe = || {
        if !socket.exists() {
            return Err(Probe::NotYet(None));
        }
        RawConn::connect(&params, CONNECT_TIMEOUT, None, None)
            .map_err(|_| Probe::<()>::NotYet(None))
    };
    let waited = server::wait_ready(
        &mut srv.process,
        START_TIMEOUT,
        Duration::from_millis(100),
        probe,
    );
    match waited {
        Ok(c) => Ok(c),
        Err(NotReady::Exited(status)) => {
            let log = std::fs::read_to_string(&srv.log_path).unwrap_or_default();
            let why = match crate::myrocks::refused_plugin(&log) {
                Some(cause) => format!("exited during startup ({status}): {cause}"),
                None => format!("exited during startup ({status})"),
            };
            Err(failure(why, srv))
        }
        Err(NotReady::Failed(()) | NotReady::TimedOut(_)) => {
            let e = failure(
                format!("did not accept connections within {START_TIMEOUT:?}"),
                srv,
            );
            let _ = srv.stop();
            Err(e)
        }
    }
}

/// Lets root connect over TCP from loopback without password and creates the database.
/// All of 127.0.0.0/8 is loopback: many connections come from 127.0.0.2, .3, … so that
/// ephemeral ports never run out (the server still listens on 127.0.0.1 only). Behind a
/// `net=` link, root may also connect from `client`, the host's end of the link.
fn bootstrap(root: &mut RawConn, database: &str, client: Option<&str>) -> Result<(), EngineError> {
    let db = quote_ident(database)?;
    let mut stmts = vec![
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'".to_string(),
        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION".to_string(),
        "CREATE USER IF NOT EXISTS 'root'@'127.%'".to_string(),
        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.%' WITH GRANT OPTION".to_string(),
    ];
    if let Some(ip) = client {
        // An IPv4 address from our own link: no quoting to worry about.
        stmts.push(format!("CREATE USER IF NOT EXISTS 'root'@'{ip}'"));
        stmts.push(format!(
            "GRANT ALL PRIVILEGES ON *.* TO 'root'@'{ip}' WITH GRANT OPTION"
        ));
    }
    stmts.push(format!("CREATE DATABASE IF NOT EXISTS {db}"));
    for sql in stmts {
        root.query(sql.as_bytes()).map_err(|e| {
            let e = statement_error(e, &sql);
            EngineError::config(format!(
                "setting up the managed server failed: {}",
                e.message
            ))
        })?;
    }
    Ok(())
}

/// Quotes an identifier with backticks; refuses names that are not plain words.
pub(crate) fn quote_ident(name: &str) -> Result<String, EngineError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if !ok {
        return Err(EngineError::config(format!(
            "'{name}' is not a usable database/table name (letters, digits, '_' and '$', at most 64)"
        )));
    }
    Ok(quote::ident(name, Dialect::Mysql))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_checked() {
        assert!(check_params("t", &[("innodb_buffer_pool_size".into(), "1G".into())]).is_ok());
        assert!(check_params("t", &[("port".into(), "1".into())]).is_err());
        assert!(check_params("t", &[("bind_address".into(), "0.0.0.0".into())]).is_err());
        for key in [
            "loose-bind-address",
            "bind",
            "loose-port",
            "loose-skip-networking",
        ] {
            let e = check_params("t", &[(key.into(), "0.0.0.0".into())]).unwrap_err();
            assert!(
                e.message.contains("target 't'") && e.message.contains(key),
                "{e:?}"
            );
        }
        assert!(check_params("t", &[("port-open-timeout".into(), "5".into())]).is_ok());
        assert!(check_params("t", &[("a b".into(), "1".into())]).is_err());
        assert!(check_params("t", &[("x".into(), "1\n[client]".into())]).is_err());
    }

    #[test]
    fn cnf_has_loopback_and_settings() {
        let s = my_cnf(
            Flavor::MariaDb,
            &[("innodb_buffer_pool_size".into(), "1G".into())],
            Path::new("/s/mysqldata"),
            Path::new("/s/mysqld.sock"),
            "127.0.0.1",
            3333,
            Path::new("/s/server.log"),
            Path::new("/s/mysqld.pid"),
        );
        assert!(s.starts_with("# Written by dbdelta"));
        assert!(s.contains("[mysqld]\n"));
        assert!(s.contains("bind-address=127.0.0.1\n"));
        assert!(s.contains("port=3333\n"));
        assert!(s.contains("innodb_buffer_pool_size=1G\n"));
        assert!(!s.contains("mysqlx"));
    }

    #[test]
    fn identifiers() {
        assert_eq!(quote_ident("dbdelta").unwrap(), "`dbdelta`");
        assert!(quote_ident("a`b").is_err());
        assert!(quote_ident("").is_err());
    }
}
