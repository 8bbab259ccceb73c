//! Runs Linux perf: `perf record` on given processes or threads for the measured window,
//! then `perf script` for the stacks.

use crate::ProfileError;
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
        let child = Command::new(perf)
            .args(["record", "-q", "-e", "cpu-clock", "-F"])
            .arg(freq.to_string())
            .args(["--call-graph", callgraph.perf_arg(), "-o"])
            .arg(data)
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
