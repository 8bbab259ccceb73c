//! The lifecycle of a managed server (PostgreSQL, MySQL/MariaDB, ClickHouse): a free
//! loopback port, an unprivileged service user when dbdelta runs as root and the check that
//! it can reach the scratch directory, the start guard that stops the server on drop, on
//! error and on panic — and, through `PR_SET_PDEATHSIG`, even when dbdelta itself is killed
//! (no orphan server) — the ready probe, and the tail of a server log for error messages.

use dbdelta_engine::EngineError;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Name of the unprivileged user managed servers run as when dbdelta runs as root.
pub const SERVICE_USER: &str = "dbdelta";

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_loopback_port() -> Result<u16, EngineError> {
    let l = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| EngineError::config(format!("cannot find a free loopback port: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| EngineError::config(format!("cannot find a free loopback port: {e}")))
}

/// How many ports [`start_on_free_port`] tries.
pub const PORT_TRIES: u32 = 3;

/// Starts a server on a loopback port: `requested`, or a free one. A free port can be taken
/// by another process between the check and the server's bind; when `start` says its
/// failure was that (`Err((error, true))`), another free port is tried, [`PORT_TRIES`] in
/// all. A requested port is tried once.
pub fn start_on_free_port<T>(
    requested: Option<u16>,
    mut start: impl FnMut(u16) -> Result<T, (EngineError, bool)>,
) -> Result<T, EngineError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let port = match requested {
            Some(p) => p,
            None => free_loopback_port()?,
        };
        match start(port) {
            Ok(server) => return Ok(server),
            Err((_, true)) if requested.is_none() && tries < PORT_TRIES => continue,
            Err((e, _)) => return Err(e),
        }
    }
}

/// True when `port` on 127.0.0.1 is already taken.
pub fn port_in_use(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_err()
}

/// The last `lines` lines of a log file (empty when it cannot be read).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(64 * 1024);
    let _ = f.seek(SeekFrom::Start(start));
    let mut buf = String::new();
    let _ = f.read_to_string(&mut buf);
    let all: Vec<&str> = buf.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The uid/gid to run servers as: `None` when not root (run as ourselves); when root, the
/// `dbdelta` system user, created with `useradd` if missing (servers refuse to run as root).
pub fn service_user() -> Result<Option<(u32, u32)>, EngineError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    if lookup_user(SERVICE_USER).is_none() {
        let out = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(SERVICE_USER)
            .output()
            .map_err(|e| {
                EngineError::config(format!(
                    "running as root, servers need an unprivileged user; useradd failed: {e}"
                ))
            })?;
        if !out.status.success() && lookup_user(SERVICE_USER).is_none() {
            return Err(EngineError::config(format!(
                "running as root, servers need an unprivileged user; 'useradd {SERVICE_USER}' failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    lookup_user(SERVICE_USER)
        .map(Some)
        .ok_or_else(|| EngineError::config(format!("user {SERVICE_USER} not found after useradd")))
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == name).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

/// Gives `path` and everything below it to `owner` (no-op when `owner` is `None`).
pub fn chown_tree(path: &Path, owner: Option<(u32, u32)>) -> Result<(), EngineError> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    fn walk(p: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
        std::os::unix::fs::lchown(p, Some(uid), Some(gid))?;
        if p.is_dir() && !p.is_symlink() {
            for e in fs::read_dir(p)? {
                walk(&e?.path(), uid, gid)?;
            }
        }
        Ok(())
    }
    walk(path, uid, gid)
        .map_err(|e| EngineError::config(format!("cannot chown {}: {e}", path.display())))
}

/// A directory the service user cannot reach: an ancestor is neither its own nor
/// searchable by others (a 0700 `/root`, a private home directory).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "running as root, the server runs as user '{SERVICE_USER}', which cannot reach {}: {} is not searchable by others",
    dir.display(),
    ancestor.display()
)]
pub struct Unreachable {
    /// The directory the server needs.
    pub dir: PathBuf,
    /// The first ancestor that stops the service user.
    pub ancestor: PathBuf,
    /// The ancestor's permission bits.
    pub mode: u32,
}

impl Unreachable {
    /// The message with the engine's fix: `…; {fix} or chmod o+x <ancestor>`.
    pub fn advice(&self, fix: &str) -> String {
        format!("{self}; {fix} or chmod o+x {}", self.ancestor.display())
    }
}

/// The permission walk: when servers run as the service user (`owner`, from
/// [`service_user`]), every ancestor of `dir` must be searchable by it, or the server fails
/// to start with a message that names no path. Nothing to check when `owner` is `None`.
pub fn check_reachable(dir: &Path, owner: Option<(u32, u32)>) -> Result<(), Unreachable> {
    use std::os::unix::fs::MetadataExt;
    let Some((uid, _)) = owner else {
        return Ok(());
    };
    for a in dir.ancestors().skip(1) {
        let Ok(m) = fs::metadata(a) else { continue };
        if m.uid() != uid && m.mode() & 0o001 == 0 {
            return Err(Unreachable {
                dir: dir.to_path_buf(),
                ancestor: a.to_path_buf(),
                mode: m.mode() & 0o7777,
            });
        }
    }
    Ok(())
}

/// What one look at a starting server found, for [`wait_ready`].
#[derive(Debug)]
pub enum Probe<E> {
    /// Not answering yet (connection refused, "the database system is starting up"):
    /// look again until the deadline.
    NotYet(Option<E>),
    /// Answering, but wrongly (authentication refused, a protocol error): stop waiting.
    Failed(E),
}

/// Why a server did not become ready.
#[derive(Debug)]
pub enum NotReady<E> {
    /// The server process exited during startup.
    Exited(ExitStatus),
    /// The probe failed in a way waiting does not mend.
    Failed(E),
    /// The deadline passed; the last probe's error if it had one.
    TimedOut(Option<E>),
}

/// The ready probe: until `timeout` has passed, checks that the server still runs, then
/// calls `probe` (a connection and a trivial query), sleeping `poll` between looks. Engines
/// turn a [`NotReady`] into their message with the log's tail.
pub fn wait_ready<T, E>(
    process: &mut ServerProcess,
    timeout: Duration,
    poll: Duration,
    mut probe: impl FnMut() -> Result<T, Probe<E>>,
) -> Result<T, NotReady<E>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = process.exited() {
            return Err(NotReady::Exited(status));
        }
        match probe() {
            Ok(ready) => return Ok(ready),
            Err(Probe::Failed(e)) => return Err(NotReady::Failed(e)),
            Err(Probe::NotYet(e)) if Instant::now() >= deadline => {
                return Err(NotReady::TimedOut(e))
            }
            Err(Probe::NotYet(_)) => std::thread::sleep(poll),
        }
    }
}

/// [`prepare_command`], and the child enters the network namespace `netns` (a handle from
/// [`crate::netns::Link::ns_fd`], open in this process until the spawn) before it drops
/// privileges: `setns`, then the service user, then the death signal (which a change of
/// user would clear).
pub fn prepare_command_in(cmd: &mut Command, owner: Option<(u32, u32)>, netns: Option<i32>) {
    prepare(cmd, owner, netns, libc::SIGTERM);
}

/// Makes `cmd` run as `owner` (when given), in a process group of its own (so a stop can
/// reach its whole tree and a terminal's Ctrl-C reaches dbdelta alone), and die with
/// SIGTERM when the spawning thread of dbdelta dies, so a killed dbdelta leaves no orphan
/// server. Spawn from the main thread.
pub fn prepare_command(cmd: &mut Command, owner: Option<(u32, u32)>) {
    prepare(cmd, owner, None, libc::SIGTERM);
}

/// The child side of [`prepare_command_in`], with `death` as the signal it gets when
/// dbdelta dies: a server's own fast-shutdown signal, so that PostgreSQL (SIGINT) ends its
/// sessions, a long query included, instead of waiting for them as SIGTERM's smart
/// shutdown does.
fn prepare(cmd: &mut Command, owner: Option<(u32, u32)>, netns: Option<i32>, death: i32) {
    if owner.is_some() {
        cmd.env("HOME", "/tmp");
    }
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: setpgid, setns, setgroups, setgid, setuid, prctl, getppid and raise are plain
    // system calls, safe between fork and exec; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = netns {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some((uid, gid)) = owner {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, death);
            // The parent may have died before the death signal was armed.
            if libc::getppid() != parent {
                libc::raise(death);
            }
            Ok(())
        });
    }
}

/// How a managed server is started: its command (program, arguments, working directory),
/// where its output goes, whom it runs as, the namespace it runs in, and how it stops.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The command; its standard input is closed and its output redirected to `log`.
    pub command: Command,
    /// The file standard output and standard error go to (created, or appended to).
    pub log: &'a Path,
    /// Append to `log` instead of truncating it (a log shared with the server's own).
    pub append: bool,
    /// The service user (from [`service_user`]), or `None` to run as ourselves.
    pub owner: Option<(u32, u32)>,
    /// A network namespace to enter ([`crate::netns::Link::ns_fd`]).
    pub netns: Option<i32>,
    /// The server's fast-shutdown signal.
    pub stop_signal: i32,
    /// How long the server may take to stop before it is killed.
    pub grace: Duration,
}

/// Why a managed server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The output file could not be opened.
    #[error("cannot open {}: {source}", .path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("cannot start {}: {source}", .program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Starts a managed server: output to the log, the service user, the namespace, its own
/// process group and its stop signal as the death signal set up ([`prepare_command_in`]),
/// the guard that stops it on drop, and its entry in [`crate::running`] for an exit that
/// does not unwind.
pub fn launch(l: Launch<'_>) -> Result<ServerProcess, LaunchError> {
    let Launch {
        mut command,
        log,
        append,
        owner,
        netns,
        stop_signal,
        grace,
    } = l;
    let log_err = |source| LaunchError::Log {
        path: log.to_path_buf(),
        source,
    };
    let out = fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(log)
        .map_err(log_err)?;
    let err = out.try_clone().map_err(log_err)?;
    command
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    prepare(&mut command, owner, netns, stop_signal);
    let child = command.spawn().map_err(|source| LaunchError::Spawn {
        program: PathBuf::from(command.get_program()),
        source,
    })?;
    Ok(ServerProcess::new(child, stop_signal, grace))
}

/// A running server process that is stopped when this guard drops.
#[derive(Debug)]
pub struct ServerProcess {
    child: Option<Child>,
    stop_signal: i32,
    grace: Duration,
}

impl ServerProcess {
    /// Guards `child`; `stop_signal` is the server's fast-shutdown signal (SIGINT for
    /// PostgreSQL, SIGTERM for mysqld); after `grace` it is killed.
    pub fn new(child: Child, stop_signal: i32, grace: Duration) -> Self {
        crate::running::register(child.id(), stop_signal);
        ServerProcess {
            child: Some(child),
            stop_signal,
            grace,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `Some(status)` when the server has already exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Stops the server: the stop signal, then SIGKILL to its process group after the grace
    /// period. Idempotent.
    pub fn stop(&mut self) -> Result<(), EngineError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let stopped = self.stop_child(&mut child);
        crate::running::forget(child.id());
        stopped
    }

    fn stop_child(&self, child: &mut Child) -> Result<(), EngineError> {
        if child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        // A frozen server (SIGSTOP, a debugger) cannot act on the stop signal: resume its
        // whole process tree first, so a stall never turns into a slow shutdown.
        continue_tree(child.id());
        // SAFETY: kill on our own child's pid.
        unsafe {
            libc::kill(child.id() as i32, self.stop_signal);
        }
        let deadline = Instant::now() + self.grace;
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The whole group (PostgreSQL's backends with their postmaster), then the child.
        // SAFETY: killpg on the process group our own child leads (`prepare_command`).
        unsafe {
            libc::killpg(child.id() as i32, libc::SIGKILL);
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(EngineError::connection(format!(
            "server pid {} did not stop within {:?}; killed",
            child.id(),
            self.grace
        )))
    }
}

/// Sends SIGCONT to `pid` and all its descendants (harmless to running processes).
fn continue_tree(pid: u32) {
    for p in crate::running::process_tree(pid) {
        // SAFETY: SIGCONT to a process of our own server's tree.
        unsafe {
            libc::kill(p as i32, libc::SIGCONT);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_of_log() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        fs::write(&p, "a\nb\nc\nd\n").unwrap();
        assert_eq!(log_tail(&p, 2), "c\nd");
        assert_eq!(log_tail(&dir.path().join("missing"), 2), "");
    }

    #[test]
    fn guard_stops_child() {
        let child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        {
            let _g = ServerProcess::new(child, libc::SIGTERM, Duration::from_secs(5));
        }
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists() || {
                let s = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                s.contains(") Z")
            }
        );
    }

    #[test]
    fn ready_probe() {
        let spawn = || Command::new("sleep").arg("30").spawn().unwrap();
        let mut p = ServerProcess::new(spawn(), libc::SIGTERM, Duration::from_secs(5));
        let mut looks = 0;
        let r: Result<u32, NotReady<&str>> = wait_ready(
            &mut p,
            Duration::from_secs(5),
            Duration::from_millis(1),
            || {
                looks += 1;
                if looks < 3 {
                    Err(Probe::NotYet(Some("refused")))
                } else {
                    Ok(looks)
                }
            },
        );
        assert_eq!(r.unwrap(), 3);
        let r: Result<(), _> = wait_ready(&mut p, Duration::ZERO, Duration::ZERO, || {
            Err(Probe::NotYet(Some("refused")))
        });
        assert!(matches!(r, Err(NotReady::TimedOut(Some("refused")))));
        let r: Result<(), _> = wait_ready(&mut p, Duration::from_secs(5), Duration::ZERO, || {
            Err(Probe::Failed("auth"))
        });
        assert!(matches!(r, Err(NotReady::Failed("auth"))));
        p.stop().unwrap();
        let mut gone = ServerProcess::new(
            Command::new("true").spawn().unwrap(),
            libc::SIGTERM,
            Duration::from_secs(5),
        );
        std::thread::sleep(Duration::from_millis(200));
        let r: Result<(), NotReady<&str>> = wait_ready(
            &mut gone,
            Duration::from_secs(5),
            Duration::from_millis(10),
            || Err(Probe::NotYet(None)),
        );
        assert!(matches!(r, Err(NotReady::Exited(_))));
    }

    #[test]
    fn launch_logs_and_guards() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("out.log");
        let mut command = Command::new("sh");
        command.args(["-c", "echo started; echo oops >&2; exec sleep 30"]);
        let mut p = launch(Launch {
            command,
            log: &log,
            append: false,
            owner: None,
            netns: None,
            stop_signal: libc::SIGTERM,
            grace: Duration::from_secs(5),
        })
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while log_tail(&log, 5).lines().count() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(log_tail(&log, 5), "started\noops");
        assert!(p.exited().is_none());
        p.stop().unwrap();
        let e = launch(Launch {
            command: Command::new(dir.path().join("missing")),
            log: &log,
            append: true,
            owner: None,
            netns: None,
            stop_signal: libc::SIGTERM,
            grace: Duration::from_secs(1),
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("cannot start "), "{e}");
        assert_eq!(
            log_tail(&log, 5),
            "started\noops",
            "appended, not truncated"
        );
    }

    #[test]
    fn port_clashes_are_retried() {
        let mut seen = Vec::new();
        let r = start_on_free_port(None, |port| {
            seen.push(port);
            Err::<(), _>((EngineError::config("taken"), true))
        });
        assert_eq!(r.unwrap_err().message, "taken");
        assert_eq!(seen.len(), PORT_TRIES as usize);
        let mut n = 0;
        let r = start_on_free_port(Some(5555), |port| {
            n += 1;
            assert_eq!(port, 5555);
            Err::<(), _>((EngineError::config("taken"), true))
        });
        assert!(r.is_err());
        assert_eq!(n, 1, "a requested port is tried once");
        let mut n = 0;
        let r = start_on_free_port(None, |port| {
            n += 1;
            if n == 2 {
                Ok(port)
            } else {
                Err((EngineError::config("taken"), true))
            }
        });
        assert!(r.unwrap() > 0);
        let r = start_on_free_port(None, |_| Err::<(), _>((EngineError::config("bad"), false)));
        assert_eq!(r.unwrap_err().message, "bad");
    }

    #[test]
    fn permission_walk() {
        assert_eq!(check_reachable(Path::new("/nonexistent/x"), None), Ok(()));
        // Owned by nobody we are: a directory without o+x stops the walk.
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("locked");
        fs::create_dir(&inner).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&inner, fs::Permissions::from_mode(0o700)).unwrap();
        let e = check_reachable(&inner.join("run"), Some((u32::MAX - 1, 0))).unwrap_err();
        assert_eq!(e.ancestor, inner);
        assert_eq!(e.mode, 0o700);
        assert!(e
            .advice("move it")
            .ends_with(&format!("; move it or chmod o+x {}", inner.display())));
    }

    #[test]
    fn free_port_is_free() {
        // Hold a listener so no other process can take the port between the two checks.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        assert!(port_in_use(p));
        drop(l);
        assert!(free_loopback_port().unwrap() > 0);
    }
}
