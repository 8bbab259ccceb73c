//! Where a build's source comes from: a Debian source package (`apt-get source
//! postgresql-15`, unpacked once into the cache) or an unpacked source tree given as a path.

use crate::{BuildError, Cache};
use sha2::{Digest, Sha256};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The source as written: `15` (Debian's `postgresql-15` source package) or a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// Debian's source package of this major version.
    Debian {
        /// The major version, e.g. 15.
        major: u32,
    },
    /// An unpacked PostgreSQL source tree (it has a `configure` script).
    Tree(PathBuf),
}

impl SourceSpec {
    /// `15` is a Debian source package; anything with a `/` (or `.`-relative) is a path.
    pub fn parse(text: &str) -> Result<SourceSpec, BuildError> {
        let t = text.trim();
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            let major = t.parse::<u32>().ok().filter(|m| (10..=99).contains(m));
            return match major {
                Some(major) => Ok(SourceSpec::Debian { major }),
                None => Err(BuildError::Source(format!(
                    "source '{t}' is not a PostgreSQL major version: give one such as 15 (Debian's postgresql-15 source package) or the path of a source tree"
                ))),
            };
        }
        if t.contains('/') || t.starts_with('.') {
            return Ok(SourceSpec::Tree(PathBuf::from(t)));
        }
        Err(BuildError::Source(format!(
            "source '{t}' is neither a major version nor a path: give 15 (Debian's postgresql-15 source package) or a source tree path such as ./postgresql-15.18"
        )))
    }
}

/// A source tree ready to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The unpacked tree (holds `configure`).
    pub dir: PathBuf,
    /// The upstream version, e.g. `15.18`.
    pub version: String,
    /// For people: `postgresql-15 15.18-0+deb12u1 (Debian source package)` or the path.
    pub description: String,
    /// What identifies the source's content in the cache key.
    pub id: String,
}

/// Resolves a source: finds or fetches and unpacks the Debian package, or checks the tree.
pub fn resolve(
    spec: &SourceSpec,
    cache: &Cache,
    note: &mut dyn FnMut(&str),
) -> Result<Source, BuildError> {
    match spec {
        SourceSpec::Tree(path) => tree(path),
        SourceSpec::Debian { major } => debian(*major, cache, Some(note)),
    }
}

/// Resolves a source without fetching anything: a Debian source must already be unpacked
/// in the cache.
pub fn resolve_cached(spec: &SourceSpec, cache: &Cache) -> Result<Source, BuildError> {
    match spec {
        SourceSpec::Tree(path) => tree(path),
        SourceSpec::Debian { major } => debian(*major, cache, None),
    }
}

/// The version in a PostgreSQL tree's `configure` (`PACKAGE_VERSION='15.18'`).
fn configure_version(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join("configure")).ok()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("PACKAGE_VERSION='")?.strip_suffix('\'')?;
        (!v.is_empty()).then(|| v.to_string())
    })
}

fn tree(path: &Path) -> Result<Source, BuildError> {
    let dir = path.canonicalize().map_err(|e| {
        BuildError::Source(format!(
            "source tree {}: {e}; give the directory of an unpacked PostgreSQL source (it holds configure)",
            path.display()
        ))
    })?;
    let version = configure_version(&dir).ok_or_else(|| {
        BuildError::Source(format!(
            "{} is not a PostgreSQL source tree: it has no configure script with PACKAGE_VERSION; give the top directory of an unpacked source",
            dir.display()
        ))
    })?;
    if dir.join("config.status").exists() {
        return Err(BuildError::Source(format!(
            "{} was configured in place (it has config.status): dbdelta builds outside the tree; run make distclean there first",
            dir.display()
        )));
    }
    let fingerprint = tree_fingerprint(&dir);
    Ok(Source {
        description: format!("{} (source tree, PostgreSQL {version})", dir.display()),
        id: format!("tree:{}:{fingerprint}", dir.display()),
        dir,
        version,
    })
}

/// A hash of every file's path, size and modification time under `dir` (not `.git`): an
/// edited tree gets a new cache entry.
pub(crate) fn tree_fingerprint(dir: &Path) -> String {
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                if e.file_name() != ".git" {
                    stack.push(p);
                }
            } else {
                let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                entries.push(format!(
                    "{rel}\t{}\t{}.{}",
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec()
                ));
            }
        }
    }
    entries.sort();
    let mut h = Sha256::new();
    for e in &entries {
        h.update(e.as_bytes());
        h.update(b"\n");
    }
    crate::hex(&h.finalize()[..8])
}

/// Debian version → upstream version: `1:15.18-0+deb12u1` → `15.18`.
fn upstream(debian_version: &str) -> &str {
    let v = debian_version
        .split_once(':')
        .map_or(debian_version, |(_, v)| v);
    v.rsplit_once('-').map_or(v, |(u, _)| u)
}

/// Versions of a source package apt knows (from deb-src lines), newest first.
fn apt_versions(package: &str) -> Vec<String> {
    let Ok(out) = Command::new("apt-cache")
        .args(["showsrc", "--only-source", package])
        .output()
    else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut versions: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Version: "))
        .map(|v| v.trim().to_string())
        .collect();
    versions.sort_by(|a, b| compare_versions(b, a));
    versions.dedup();
    versions
}

/// Orders Debian versions with `dpkg --compare-versions` (the one true comparison).
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let gt = |x: &str, y: &str| {
        Command::new("dpkg")
            .args(["--compare-versions", x, "gt", y])
            .status()
            .is_ok_and(|s| s.success())
    };
    if a == b {
        std::cmp::Ordering::Equal
    } else if gt(a, b) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Less
    }
}

/// The marker written into an unpacked Debian source once it is complete.
const MARKER: &str = ".dbdelta-source";

/// The Debian source of `major`: cached, else fetched with `apt-get source` (when `note` is
/// given; without it, an error).
fn debian(
    major: u32,
    cache: &Cache,
    note: Option<&mut dyn FnMut(&str)>,
) -> Result<Source, BuildError> {
    let package = format!("postgresql-{major}");
    let src_root = cache.src_dir();
    let versions = apt_versions(&package);
    let cached = |v: &str| {
        let dir = src_root.join(format!("postgresql-{}", upstream(v)));
        let marker = fs::read_to_string(dir.join(MARKER)).ok()?;
        (marker.trim() == v).then_some(dir)
    };
    let make = |dir: PathBuf, v: &str| Source {
        version: upstream(v).to_string(),
        description: format!("{package} {v} (Debian source package)"),
        id: format!("debian:{package}={v}"),
        dir,
    };
    let Some(version) = versions.first() else {
        // Offline or no deb-src line: a copy fetched earlier still serves.
        if let Some((dir, v)) = newest_cached(&src_root, major) {
            return Ok(make(dir, &v));
        }
        return Err(BuildError::Source(format!(
            "apt knows no source package {package}: add a deb-src line for your Debian mirror \
             (e.g. /etc/apt/sources.list.d/debian-src.sources with 'Types: deb-src', your mirror's URIs, \
             'Suites: bookworm bookworm-updates', 'Components: main') and run apt-get update; \
             or build from an unpacked tree: --source /path/to/postgresql-{major}.x"
        )));
    };
    if let Some(dir) = cached(version) {
        return Ok(make(dir, version));
    }
    let Some(note) = note else {
        return Err(BuildError::Source(format!(
            "{package} {version} is not unpacked in the build cache {}: build without --cached-only to fetch it",
            src_root.display()
        )));
    };
    mkdir(&src_root)?;
    let work = src_root.join(format!(".fetch-{package}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    mkdir(&work)?;
    note(&format!(
        "fetching Debian source package {package}={version} (apt-get source)"
    ));
    let out = Command::new("apt-get")
        .args(["source", "-q", &format!("{package}={version}")])
        .current_dir(&work)
        .output()
        .map_err(|e| BuildError::Source(format!("cannot run apt-get source: {e}; install apt")))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let _ = fs::remove_dir_all(&work);
        return Err(BuildError::Source(format!(
            "apt-get source {package}={version} failed ({}): {}; check the deb-src line and network, or give a source tree path",
            out.status,
            crate::tail(&text, 8)
        )));
    }
    let unpacked = work.join(format!("{package}-{}", upstream(version)));
    if !unpacked.join("configure").is_file() {
        let _ = fs::remove_dir_all(&work);
        return Err(BuildError::Source(format!(
            "apt-get source {package}={version} did not unpack {}: install dpkg-dev (dpkg-source unpacks the package)",
            unpacked.display()
        )));
    }
    let dest = src_root.join(format!("postgresql-{}", upstream(version)));
    let _ = fs::remove_dir_all(&dest);
    fs::rename(&unpacked, &dest).map_err(|e| io_err(&dest, e))?;
    let _ = fs::remove_dir_all(&work);
    fs::write(dest.join(MARKER), format!("{version}\n")).map_err(|e| io_err(&dest, e))?;
    Ok(make(dest, version))
}

/// The newest complete Debian source of `major` in the cache, with its Debian version.
fn newest_cached(src_root: &Path, major: u32) -> Option<(PathBuf, String)> {
    let prefix = format!("postgresql-{major}.");
    let mut found: Vec<(PathBuf, String)> = fs::read_dir(src_root)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| {
            let v = fs::read_to_string(e.path().join(MARKER)).ok()?;
            Some((e.path(), v.trim().to_string()))
        })
        .collect();
    found.sort_by(|a, b| compare_versions(&b.1, &a.1));
    found.into_iter().next()
}

fn mkdir(dir: &Path) -> Result<(), BuildError> {
    fs::create_dir_all(dir).map_err(|e| io_err(dir, e))
}

fn io_err(path: &Path, e: std::io::Error) -> BuildError {
    BuildError::Io(format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_specs() {
        assert_eq!(
            SourceSpec::parse("15").unwrap(),
            SourceSpec::Debian { major: 15 }
        );
        assert_eq!(
            SourceSpec::parse("/src/pg").unwrap(),
            SourceSpec::Tree("/src/pg".into())
        );
        assert_eq!(
            SourceSpec::parse("./pg").unwrap(),
            SourceSpec::Tree("./pg".into())
        );
        assert!(SourceSpec::parse("7").is_err());
        assert!(SourceSpec::parse("fifteen").is_err());
    }

    #[test]
    fn upstream_versions() {
        assert_eq!(upstream("15.18-0+deb12u1"), "15.18");
        assert_eq!(upstream("1:15.18-1"), "15.18");
        assert_eq!(upstream("15.18"), "15.18");
    }

    #[test]
    fn tree_needs_configure_and_changes_key_when_edited() {
        let d = tempfile::tempdir().unwrap();
        assert!(tree(d.path()).is_err());
        fs::write(d.path().join("configure"), "PACKAGE_VERSION='15.99'\n").unwrap();
        let a = tree(d.path()).unwrap();
        assert_eq!(a.version, "15.99");
        assert_eq!(tree(d.path()).unwrap().id, a.id);
        fs::write(d.path().join("new.c"), "int x;\n").unwrap();
        assert_ne!(tree(d.path()).unwrap().id, a.id);
        fs::write(d.path().join("config.status"), "").unwrap();
        assert!(tree(d.path())
            .unwrap_err()
            .to_string()
            .contains("distclean"));
    }
}
