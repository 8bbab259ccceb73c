//! Finding the run directories of the history's runs (the history keeps a run's directory
//! name, not where it is), and relative links to files in them.

use std::path::{Component, Path, PathBuf};

/// Where run directories are looked for: each root is a run directory itself or a
/// directory holding run directories (such as `dbdelta-runs/`).
#[derive(Debug, Clone, Default)]
pub struct RunDirs {
    roots: Vec<PathBuf>,
}

impl RunDirs {
    /// Looks in these roots, in order.
    pub fn new(roots: Vec<PathBuf>) -> Self {
        RunDirs { roots }
    }

    /// The directory of run `run_id` (one with a `run.json`), if a root has it.
    pub fn find(&self, run_id: &str) -> Option<PathBuf> {
        self.roots.iter().find_map(|root| {
            let named = root.file_name().is_some_and(|n| n == run_id);
            if named && root.join("run.json").is_file() {
                return Some(root.clone());
            }
            let d = root.join(run_id);
            d.join("run.json").is_file().then_some(d)
        })
    }
}

/// A relative URL from directory `from` to `to` (both made absolute), so links keep
/// working when the site and the run directories move together; an absolute path when they
/// share nothing but the root.
pub fn link(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return dbdelta_report::profiles::href(&to.display().to_string());
    }
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    dbdelta_report::profiles::href(&parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_climb_to_the_common_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("site/evidence");
        let run = tmp.path().join("runs/r 1");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("run.json"), "{}").unwrap();
        assert_eq!(
            link(&site, &run.join("report.html")),
            "../../runs/r%201/report.html"
        );
        let dirs = RunDirs::new(vec![tmp.path().join("runs")]);
        assert_eq!(dirs.find("r 1"), Some(run.clone()));
        assert_eq!(dirs.find("r 2"), None);
        assert_eq!(RunDirs::new(vec![run.clone()]).find("r 1"), Some(run));
    }
}
