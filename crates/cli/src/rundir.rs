//! The run directory: `run.json`, `targets/<name>/`, `results/<name>/<NNN>-<label>.dop<N>.json`,
//! reports, and a scratch area for database files. Every file is written atomically
//! (temporary file + rename), so a killed run leaves only complete files.

use anyhow::{Context, Result};
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

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(value).context("serializing JSON")?;
    text.push(b'\n');
    write_atomic(path, &text).with_context(|| format!("writing {}", path.display()))
}

/// A file name from a label: keeps letters, digits, '.', '-', '_' and '='.
fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl RunDir {
    /// Creates the directory (it must not exist yet, or be empty).
    /// Creates `<parent>/<name>`, or `<name>-2`, `<name>-3`, … when runs started in the same
    /// second already took it: the name is claimed atomically (`mkdir`), so parallel runs
    /// never collide and never fail for it.
    pub fn create_unique(parent: &Path, name: &str) -> Result<RunDir> {
        fs::create_dir_all(parent).with_context(|| {
            format!(
                "cannot create the run directory under {}: choose a writable place with --out DIR",
                parent.display()
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
                    return Err(e).with_context(|| {
                        format!(
                            "cannot create the run directory {}: choose a writable place with --out DIR",
                            root.display()
                        )
                    })
                }
            }
        }
        anyhow::bail!(
            "--out {}: 10000 run directories named {name}* exist already; choose another --out DIR",
            parent.display()
        )
    }

    /// Creates the run directory `root` (which may exist if it is empty).
    pub fn create(root: PathBuf) -> Result<RunDir> {
        if root.exists()
            && fs::read_dir(&root)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            anyhow::bail!(
                "--run-dir {}: the directory exists and is not empty; choose a new directory",
                root.display()
            );
        }
        fs::create_dir_all(root.join("results")).with_context(|| {
            format!(
                "cannot create the run directory {}: choose a writable place with --out DIR",
                root.display()
            )
        })?;
        let probe = root.join(".write-test");
        fs::write(&probe, b"").with_context(|| {
            format!(
                "the run directory {} is not writable: choose another with --out DIR",
                root.display()
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
    pub fn write_manifest(&self, m: &RunManifest) -> Result<()> {
        write_json(&self.root.join("run.json"), m)
    }

    /// `targets/<name>/`, created on first use.
    pub fn target_dir(&self, name: &str) -> Result<PathBuf> {
        let d = self.root.join("targets").join(name);
        fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        Ok(d)
    }

    /// Scratch space for a target's database files.
    pub fn scratch_dir(&self, name: &str) -> Result<PathBuf> {
        let d = self.root.join("data").join(name);
        fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        Ok(d)
    }

    /// Writes one result as `results/<target>/<NNN>-<label>[.dop<N>][.r<K>].json`.
    pub fn write_result(&self, r: &StepResult) -> Result<PathBuf> {
        let dir = self.root.join("results").join(&r.target);
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let name = match r.kind {
            StepKind::Load | StepKind::Settle => {
                format!("{:03}-{}.json", r.order, file_safe(&r.label))
            }
            StepKind::Measured | StepKind::Warm => format!(
                "{:03}-{}.dop{}.json",
                r.order,
                file_safe(&r.label),
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
    pub fn write_report(&self, file: &str, text: &str) -> Result<()> {
        let p = self.root.join(file);
        write_atomic(&p, text.as_bytes()).with_context(|| format!("writing {}", p.display()))
    }
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
