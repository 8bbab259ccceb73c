//! The run directory: `run.json`, `targets/<name>/`, `results/<name>/<NNN>-<label>.dop<N>.json`,
//! reports, and a scratch area for database files. Every file is written atomically
//! (temporary file + rename), so a killed run leaves only complete files.

use crate::error::{input, LabError};
use dbdelta_model::{RunManifest, StepKind, StepResult};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// An open run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

/// The lock file that claims a run directory for one run; it holds the run's process id.
pub const LOCK_FILE: &str = ".dbdelta-run.lock";

/// A run directory claimed by this process: its lock file, removed when the claim drops
/// (a run killed outright leaves it, naming a process that no longer runs).
#[derive(Debug)]
pub struct Claim {
    lock: PathBuf,
}

impl Claim {
    /// Creates the lock file of `root` exclusively, or says which run holds it.
    fn take(root: &Path) -> Result<Claim, LabError> {
        let lock = root.join(LOCK_FILE);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(mut f) => {
                use std::io::Write;
                // The pid is only for the message of a run that finds the directory taken.
                let _ = writeln!(f, "{}", std::process::id());
                Ok(Claim { lock })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let pid = fs::read_to_string(&lock)
                    .ok()
                    .and_then(|t| t.trim().parse::<u32>().ok());
                match pid {
                    Some(pid) if Path::new(&format!("/proc/{pid}")).exists() => Err(input!(
                        "--run-dir {}: the directory is in use by another run (pid {pid}); choose a new directory",
                        root.display()
                    )),
                    // Written a moment ago by a run that has not put its pid in yet.
                    None => Err(input!(
                        "--run-dir {}: the directory is in use by another run; choose a new directory",
                        root.display()
                    )),
                    Some(pid) => Err(input!(
                        "--run-dir {}: the directory exists and is not empty (a run, pid {pid}, that no longer runs, used it); choose a new directory",
                        root.display()
                    )),
                }
            }
            Err(e) => Err(LabError::io(
                format!(
                    "the run directory {} is not writable: choose another with --out DIR",
                    root.display()
                ),
                e,
            )),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.lock);
    }
}

/// Writes `bytes` to `path` by the one rule for files dbdelta writes
/// ([`dbdelta_kit::outfile::write_file`]): atomically for a regular or new file, through a
/// link to one, and never over a device, FIFO, socket or directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use dbdelta_kit::outfile::OutFileError;
    dbdelta_kit::outfile::write_file(path, bytes).map_err(|e| match e {
        OutFileError::Io { source, .. } => source,
        refused @ OutFileError::NotAFile { .. } => {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, refused.to_string())
        }
    })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), LabError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(LabError::Json)?;
    text.push(b'\n');
    write_atomic(path, &text).map_err(|e| LabError::io(format!("writing {}", path.display()), e))
}

impl RunDir {
    /// Creates the directory (it must not exist yet, or be empty).
    /// Creates `<parent>/<name>`, or `<name>-2`, `<name>-3`, … when runs started in the same
    /// second already took it: the name is claimed atomically (`mkdir`), so parallel runs
    /// never collide and never fail for it.
    pub fn create_unique(parent: &Path, name: &str) -> Result<(RunDir, Claim), LabError> {
        fs::create_dir_all(parent).map_err(|e| {
            LabError::io(
                format!(
                    "cannot create the run directory under {}: choose a writable place with --out DIR",
                    parent.display()
                ),
                e,
            )
        })?;
        for k in 1..=10_000u32 {
            let root = if k == 1 {
                parent.join(name)
            } else {
                parent.join(format!("{name}-{k}"))
            };
            match fs::create_dir(&root) {
                Ok(()) => return Self::create(root),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(LabError::io(
                        format!(
                            "cannot create the run directory {}: choose a writable place with --out DIR",
                            root.display()
                        ),
                        e,
                    ))
                }
            }
        }
        Err(input!(
            "--out {}: 10000 run directories named {name}* exist already; choose another --out DIR",
            parent.display()
        ))
    }

    /// Creates and claims the run directory `root` (which may exist if it is empty). The
    /// claim is the lock file [`LOCK_FILE`], created exclusively (`O_EXCL`) before the
    /// emptiness check: of two runs given the same `--run-dir`, exactly one gets it, the
    /// other is told which run holds it. Keep the returned [`Claim`] for the run.
    pub fn create(root: PathBuf) -> Result<(RunDir, Claim), LabError> {
        let cannot = |e| {
            LabError::io(
                format!(
                    "cannot create the run directory {}: choose a writable place with --out DIR",
                    root.display()
                ),
                e,
            )
        };
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(input!(
                    "--run-dir {}: this is a file, not a directory; give the path of a new (or empty) directory",
                    root.display()
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent).map_err(cannot)?;
                }
                match fs::create_dir(&root) {
                    Ok(()) => {}
                    // Another run created it this instant: the lock decides.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(cannot(e)),
                }
            }
            Err(e) => return Err(cannot(e)),
        }
        let claim = Claim::take(&root)?;
        let others = fs::read_dir(&root)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_str() != Some(LOCK_FILE))
            })
            .unwrap_or(true);
        if others {
            drop(claim);
            return Err(input!(
                "--run-dir {}: the directory exists and is not empty; choose a new directory",
                root.display()
            ));
        }
        fs::create_dir_all(root.join("results")).map_err(cannot)?;
        Ok((RunDir { root }, claim))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Writes `run.json` — unless the interrupt deadline is closing the run, whose manifest
    /// says interrupted and must stay so.
    pub fn write_manifest(&self, m: &RunManifest) -> Result<(), LabError> {
        if crate::interrupt::cut() {
            return Ok(());
        }
        write_json(&self.root.join("run.json"), m)
    }

    /// `targets/<name>/`, created on first use.
    pub fn target_dir(&self, name: &str) -> Result<PathBuf, LabError> {
        create(self.root.join("targets").join(name))
    }

    /// Scratch space for a target's database files.
    pub fn scratch_dir(&self, name: &str) -> Result<PathBuf, LabError> {
        create(self.root.join("data").join(name))
    }

    /// Writes one result as `results/<target>/<NNN>-<label>[.dop<N>][.r<K>].json`.
    pub fn write_result(&self, r: &StepResult) -> Result<PathBuf, LabError> {
        let dir = create(self.root.join("results").join(&r.target))?;
        let name = match r.kind {
            StepKind::Load | StepKind::Settle => {
                format!(
                    "{:03}-{}.json",
                    r.order,
                    dbdelta_model::result::file_safe(&r.label)
                )
            }
            StepKind::Measured | StepKind::Warm => format!(
                "{:03}-{}.dop{}.json",
                r.order,
                dbdelta_model::result::file_safe(&r.label),
                r.threads
            ),
        };
        // Repeats after the first: `….dopN.rK.json` (`….rK.json` for load/settle); the first
        // keeps the name of an unrepeated run, so old run directories stay readable.
        let name = match r.repeat {
            0 | 1 => name,
            k => format!("{}.r{k}.json", name.trim_end_matches(".json")),
        };
        let path = dir.join(name);
        write_json(&path, r)?;
        Ok(path)
    }

    /// Writes a report file at the top of the run directory.
    pub fn write_report(&self, file: &str, text: &str) -> Result<(), LabError> {
        let p = self.root.join(file);
        write_atomic(&p, text.as_bytes())
            .map_err(|e| LabError::io(format!("writing {}", p.display()), e))
    }
}

/// Creates directory `d` (and its parents) and returns it.
fn create(d: PathBuf) -> Result<PathBuf, LabError> {
    fs::create_dir_all(&d).map_err(|e| LabError::io(format!("creating {}", d.display()), e))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_non_empty_dir() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("x"), "y").unwrap();
        assert!(RunDir::create(d.path().to_path_buf()).is_err());
        let fresh = d.path().join("new");
        let (rd, claim) = RunDir::create(fresh.clone()).unwrap();
        assert!(rd.path().join("results").is_dir());
        assert!(fresh.join(LOCK_FILE).is_file());
        drop(claim);
        assert!(!fresh.join(LOCK_FILE).exists());
    }

    #[test]
    fn a_file_is_refused_naming_the_flag() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        fs::write(&f, "x").unwrap();
        let e = RunDir::create(f).unwrap_err().to_string();
        assert!(
            e.contains("--run-dir") && e.contains("a file, not a directory"),
            "{e}"
        );
    }

    #[test]
    fn of_concurrent_claims_exactly_one_wins() {
        for round in 0..20 {
            let d = tempfile::tempdir().unwrap();
            let root = d.path().join(format!("run{round}"));
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
            let results: Vec<Result<(RunDir, Claim), String>> = (0..4)
                .map(|_| {
                    let (root, barrier) = (root.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        RunDir::create(root).map_err(|e| e.to_string())
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect();
            let won = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(won, 1, "{results:?}");
            for e in results.iter().filter_map(|r| r.as_ref().err()) {
                assert!(e.contains("in use by another run"), "{e}");
            }
        }
    }

    #[test]
    fn atomic_write_leaves_no_tmp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"{}").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{}");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
