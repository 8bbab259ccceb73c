//! Runs Linux perf: `perf record` on given processes or threads for the measured window,
//! then `perf script` for the stacks.

use crate::ProfileError;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How perf walks the user-space stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Callgraph {
    /// Frame pointers: cheap; right for binaries built with frame pointers.
    Fp,
    /// DWARF unwinding of a 16 KiB stack copy per sample: works without frame pointers,
    /// costs more CPU and disk.
    Dwarf,
}

impl Callgraph {
    /// The `--call-graph` argument.
    pub fn perf_arg(self) -> &'static str {
        match self {
            Callgraph::Fp => "fp",
            Callgraph::Dwarf => "dwarf,16384",
        }
    }
}

/// What to sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileTargets {
    /// Processes and all their threads (`perf record -p`), e.g. every PostgreSQL backend.
    Pids(Vec<u32>),
    /// Single threads (`perf record -t`), e.g. the worker threads of an embedded engine.
    Tids(Vec<u32>),
}

impl ProfileTargets {
    fn is_empty(&self) -> bool {
        match self {
            ProfileTargets::Pids(v) | ProfileTargets::Tids(v) => v.is_empty(),
        }
    }
}

/// Finds `perf` on PATH.
pub fn find_perf() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("perf"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Checks that perf is installed and may sample other processes; returns its path.
pub fn check_perf() -> Result<PathBuf, ProfileError> {
    let perf = find_perf().ok_or(ProfileError::PerfMissing)?;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok());
        if let Some(level) = paranoid.filter(|l| *l > 1) {
            return Err(ProfileError::NotPermitted {
                detail: format!("kernel.perf_event_paranoid is {level} and dbdelta is not root"),
            });
        }
    }
    Ok(perf)
}

/// A running `perf record`.
#[derive(Debug)]
pub struct Recording {
    perf: PathBuf,
    child: Child,
    data: PathBuf,
    log: PathBuf,
    started: Instant,
    /// The control FIFO of a recording started disabled (`--control`), and both FIFO paths.
    control: Option<Control>,
}

/// The control and acknowledgement FIFOs of a recording started disabled (both ends are
/// held open so perf's writes never fail) and their paths, removed when it stops.
#[derive(Debug)]
struct Control {
    ctl: std::fs::File,
    _ack: std::fs::File,
    paths: Vec<PathBuf>,
}

impl Recording {
    /// Starts `perf record -e cpu-clock -F freq --call-graph … -p|-t …` writing to `data`.
    pub fn start(
        perf: &Path,
        targets: &ProfileTargets,
        freq: u32,
        callgraph: Callgraph,
        data: &Path,
    ) -> Result<Recording, ProfileError> {
        Self::spawn(perf, targets, freq, callgraph, data, None)
    }

    /// Starts perf with its events disabled (`-D -1 --control fifo:…`) so that its start-up
    /// (a second or more on a loaded machine) is over before the measured window; call
    /// [`Recording::enable`] when the window begins. Falls back to [`Recording::start`]
    /// (recording at once) when this perf has no `--control`.
    pub fn start_disabled(
        perf: &Path,
        targets: &ProfileTargets,
        freq: u32,
        callgraph: Callgraph,
        data: &Path,
    ) -> Result<Recording, ProfileError> {
        let ctl = data.with_extension("ctl.fifo");
        let ack = data.with_extension("ack.fifo");
        let fifos = [ctl.clone(), ack.clone()];
        let made = fifos.iter().all(|p| {
            let _ = std::fs::remove_file(p);
            std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                // SAFETY: a valid NUL-terminated path.
                .is_ok_and(|c| unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0)
        });
        // Opened read-write, a FIFO never blocks; holding both ends open keeps perf's
        // writes of acknowledgements from failing.
        let open = |p: &Path| std::fs::OpenOptions::new().read(true).write(true).open(p);
        let files = match (made, open(&ctl), open(&ack)) {
            (true, Ok(c), Ok(a)) => Some((c, a)),
            _ => None,
        };
        let Some((ctl_file, ack_file)) = files else {
            for p in &fifos {
                let _ = std::fs::remove_file(p);
            }
            return Self::start(perf, targets, freq, callgraph, data);
        };
        let control = format!("fifo:{},{}", ctl.display(), ack.display());
        match Self::spawn(
            perf,
            targets,
            freq,
            callgraph,
            data,
            Some((
                control,
                Control {
                    ctl: ctl_file,
                    _ack: ack_file,
                    paths: fifos.to_vec(),
                },
            )),
        ) {
            Ok(r) => Ok(r),
            Err(_) => {
                for p in &fifos {
                    let _ = std::fs::remove_file(p);
                }
                Self::start(perf, targets, freq, callgraph, data)
            }
        }
    }

    /// Enables the events of a recording started with [`Recording::start_disabled`]
    /// (no-op otherwise). perf acts on it as soon as its start-up is done.
    pub fn enable(&mut self) {
        use std::io::Write as _;
        if let Some(c) = &mut self.control {
            let _ = c.ctl.write_all(b"enable\n");
            let _ = c.ctl.flush();
        }
    }

    fn spawn(
        perf: &Path,
        targets: &ProfileTargets,
        freq: u32,
        callgraph: Callgraph,
        data: &Path,
        control: Option<(String, Control)>,
    ) -> Result<Recording, ProfileError> {
        if targets.is_empty() {
            return Err(ProfileError::Perf(
                "no server process or thread to sample".into(),
            ));
        }
        let (flag, ids) = match targets {
            ProfileTargets::Pids(p) => ("-p", p),
            ProfileTargets::Tids(t) => ("-t", t),
        };
        let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
        let log = data.with_extension("perf.log");
        let log_file = std::fs::File::create(&log).map_err(|e| ProfileError::io(&log, e))?;
        let mut cmd = Command::new(perf);
        cmd.args(["record", "-q", "-e", "cpu-clock", "-F"])
            .arg(freq.to_string())
            .args(["--call-graph", callgraph.perf_arg(), "-o"])
            .arg(data);
        if let Some((arg, _)) = &control {
            cmd.args(["-D", "-1"]).arg(format!("--control={arg}"));
        }
        // perf must not outlive dbdelta: SIGINT (perf's own way to finish its file and exit)
        // when the thread that started it ends. That thread measures the step and stops the
        // recording itself before it returns.
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
                Ok(())
            });
        }
        let child = cmd
            .arg(flag)
            .arg(ids.join(","))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file))
            .spawn()
            .map_err(|e| ProfileError::Perf(format!("cannot start {}: {e}", perf.display())))?;
        let mut rec = Recording {
            perf: perf.to_path_buf(),
            child,
            data: data.to_path_buf(),
            log,
            started: Instant::now(),
            control: control.map(|(_, c)| c),
        };
        // perf exits at once when it cannot open the events.
        std::thread::sleep(Duration::from_millis(30));
        if let Ok(Some(status)) = rec.child.try_wait() {
            let msg = rec.log_text();
            let _ = std::fs::remove_file(&rec.log);
            return Err(classify(&format!("perf record exited ({status}): {msg}")));
        }
        Ok(rec)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// Seconds since the recording started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops perf (SIGINT, as Ctrl-C would) and waits for it to write its file.
    pub fn stop(mut self) -> Result<Stopped, ProfileError> {
        // SAFETY: kill with a pid of our own child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        let log = self.log_text();
        let _ = std::fs::remove_file(&self.log);
        if let Some(c) = self.control.take() {
            for p in c.paths {
                let _ = std::fs::remove_file(p);
            }
        }
        if !self.data.is_file() {
            return Err(classify(&format!("perf record wrote no data: {log}")));
        }
        Ok(Stopped {
            perf: self.perf,
            data: self.data,
        })
    }
}

/// A finished recording, before `perf script`.
#[derive(Debug)]
pub struct Stopped {
    perf: PathBuf,
    data: PathBuf,
}

impl Stopped {
    /// Runs `perf script` on the recording and deletes the perf.data file.
    pub fn script(self) -> Result<String, ProfileError> {
        let out = Command::new(&self.perf)
            .args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ProfileError::Perf(format!("cannot run perf script: {e}")));
        let _ = std::fs::remove_file(&self.data);
        let _ = std::fs::remove_file(self.data.with_extension("data.old"));
        let out = out?;
        if !out.status.success() && out.stdout.is_empty() {
            return Err(ProfileError::Perf(format!(
                "perf script failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

fn classify(msg: &str) -> ProfileError {
    let lower = msg.to_lowercase();
    if lower.contains("permission") || lower.contains("paranoid") || lower.contains("eacces") {
        ProfileError::NotPermitted {
            detail: msg.to_string(),
        }
    } else {
        ProfileError::Perf(msg.to_string())
    }
}
