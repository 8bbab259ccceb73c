//! The run directory: `run.json`, `targets/<name>/`, `results/<name>/<NNN>-<label>.dop<N>.json`,
//! reports, and a scratch area for database files. Every file is written atomically
//! (temporary file + rename), so a killed run leaves only complete files.

use crate::error::{input, LabError};
use dbdelta_model::{RunManifest, StepKind, StepResult};
use serde::Serialize;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An open run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)
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
    pub fn create_unique(parent: &Path, name: &str) -> Result<RunDir, LabError> {
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

    /// Creates the run directory `root` (which may exist if it is empty).
    pub fn create(root: PathBuf) -> Result<RunDir, LabError> {
        if root.exists()
            && fs::read_dir(&root)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            return Err(input!(
                "--run-dir {}: the directory exists and is not empty; choose a new directory",
                root.display()
            ));
        }
        fs::create_dir_all(root.join("results")).map_err(|e| {
            LabError::io(
                format!(
                    "cannot create the run directory {}: choose a writable place with --out DIR",
                    root.display()
                ),
                e,
            )
        })?;
        let probe = root.join(".write-test");
        fs::write(&probe, b"").map_err(|e| {
            LabError::io(
                format!(
                    "the run directory {} is not writable: choose another with --out DIR",
                    root.display()
                ),
                e,
            )
        })?;
        let _ = fs::remove_file(probe);
        Ok(RunDir { root })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Writes `run.json`.
    pub fn write_manifest(&self, m: &RunManifest) -> Result<(), LabError> {
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
        let rd = RunDir::create(fresh.clone()).unwrap();
        assert!(rd.path().join("results").is_dir());
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
