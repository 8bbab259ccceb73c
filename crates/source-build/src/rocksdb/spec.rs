//! Where a RocksDB build's source comes from: a RocksDB release found in the crates of
//! crates.io's `librocksdb-sys` (`9.9` → `librocksdb-sys 0.17.1+9.9.3`, whose `rocksdb/`
//! directory is the whole RocksDB tree), a crate named exactly (`crate:NAME@VERSION`), or an
//! unpacked RocksDB tree given as a path. Crates are unpacked once into
//! `<cache>/src/NAME-VERSION/`.

use super::crates_io::{self, Index, IndexEntry};
use super::version::{self, Version};
use crate::source::Source;
use crate::{BuildError, Cache};
use std::fs;
use std::path::{Path, PathBuf};

/// The crate whose versions carry RocksDB's releases.
pub const SYS_CRATE: &str = "librocksdb-sys";

/// The file in an unpacked crate that says it is complete (holds the `.crate`'s sha256).
const MARKER: &str = ".dbdelta-crate";

/// A RocksDB source as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RocksSourceSpec {
    /// A RocksDB release, given as its first one, two or three numbers (`9`, `9.9`, `9.9.3`):
    /// the newest matching release packaged in `librocksdb-sys`.
    Release(Vec<u32>),
    /// One crate version, exactly (`crate:librocksdb-sys@0.17.1+9.9.3`).
    Crate {
        /// The crate.
        name: String,
        /// Its version.
        version: String,
    },
    /// An unpacked RocksDB tree (it has `Makefile` and `include/rocksdb/version.h`).
    Tree(PathBuf),
}

fn err(text: String) -> BuildError {
    BuildError::Source(text)
}

impl RocksSourceSpec {
    /// `9.9` is a release, `crate:NAME@VERSION` a crate, anything with a `/` (or
    /// `.`-relative) a path.
    pub fn parse(text: &str) -> Result<RocksSourceSpec, BuildError> {
        let t = text.trim();
        if let Some(c) = t.strip_prefix("crate:") {
            let (name, version) = c.split_once('@').ok_or_else(|| {
                err(format!(
                    "source '{t}': write crate:NAME@VERSION, e.g. crate:{SYS_CRATE}@0.17.1+9.9.3"
                ))
            })?;
            let ok_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
            let ok_version = !version.is_empty()
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
            if !ok_name || !ok_version {
                return Err(err(format!(
                    "source '{t}': '{name}@{version}' is not a crate name and version, e.g. crate:{SYS_CRATE}@0.17.1+9.9.3"
                )));
            }
            return Ok(RocksSourceSpec::Crate {
                name: name.to_string(),
                version: version.to_string(),
            });
        }
        if t.contains('/') || t.starts_with('.') {
            return Ok(RocksSourceSpec::Tree(PathBuf::from(t)));
        }
        let parts: Option<Vec<u32>> = t.split('.').map(|p| p.parse::<u32>().ok()).collect();
        match parts {
            Some(p) if !p.is_empty() && p.len() <= 3 && (5..=99).contains(&p[0]) => {
                Ok(RocksSourceSpec::Release(p))
            }
            _ => Err(err(format!(
                "source '{t}' is not a RocksDB release, crate or path: give a release such as 9.9 or 11.8.1 (from crates.io's {SYS_CRATE}), crate:{SYS_CRATE}@0.17.1+9.9.3, or the path of a RocksDB source tree"
            ))),
        }
    }
}

/// The RocksDB release a crate version packages: the build metadata of `0.17.1+9.9.3`, or
/// the version itself for the old crates numbered after RocksDB (`6.20.3`).
pub fn packaged_release(crate_version: &str) -> Option<Version> {
    match crate_version.split_once('+') {
        Some((_, meta)) => Version::parse(meta),
        None => Version::parse(crate_version).filter(|v| v.major >= 5),
    }
}

fn matches(release: &[u32], v: Version) -> bool {
    let have = [v.major, v.minor, v.patch];
    release.iter().zip(have.iter()).all(|(a, b)| a == b)
}

/// The newest unyanked crate version packaging a release that starts with `release`.
pub fn pick_release<'a>(
    entries: &'a [IndexEntry],
    release: &[u32],
) -> Result<&'a IndexEntry, BuildError> {
    let mut best: Option<(Version, &IndexEntry)> = None;
    for e in entries.iter().filter(|e| !e.yanked) {
        let Some(v) = packaged_release(&e.vers) else {
            continue;
        };
        // The later crate of one release wins (its packaging fixes).
        if matches(release, v) && best.is_none_or(|(b, _)| v >= b) {
            best = Some((v, e));
        }
    }
    best.map(|(_, e)| e).ok_or_else(|| {
        let mut have: Vec<Version> = entries
            .iter()
            .filter(|e| !e.yanked)
            .filter_map(|e| packaged_release(&e.vers))
            .collect();
        have.sort();
        have.dedup();
        let list: Vec<String> = have.iter().map(|v| v.to_string()).collect();
        err(format!(
            "RocksDB {} is not packaged in crates.io's {SYS_CRATE}; releases there: {}",
            release
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join("."),
            list.join(", ")
        ))
    })
}

/// The RocksDB tree of an unpacked crate: its `rocksdb/` directory, or its top.
fn rocks_tree(unpacked: &Path) -> PathBuf {
    let inner = unpacked.join("rocksdb");
    if inner.join("include/rocksdb/version.h").is_file() {
        inner
    } else {
        unpacked.to_path_buf()
    }
}

/// Checks a RocksDB tree and reads its version.
fn tree_version(dir: &Path) -> Result<Version, BuildError> {
    let header = dir.join("include/rocksdb/version.h");
    let text = fs::read_to_string(&header).map_err(|e| {
        err(format!(
            "{} is not a RocksDB source tree ({}: {e}); give the directory that holds Makefile and include/rocksdb/",
            dir.display(),
            header.display()
        ))
    })?;
    if !dir.join("Makefile").is_file() {
        return Err(err(format!(
            "{} has no Makefile: give the top directory of a RocksDB source tree",
            dir.display()
        )));
    }
    version::from_header(&text).ok_or_else(|| {
        err(format!(
            "{} defines no ROCKSDB_MAJOR/MINOR/PATCH: not a RocksDB source tree",
            header.display()
        ))
    })
}

fn tree(path: &Path) -> Result<Source, BuildError> {
    let dir = path.canonicalize().map_err(|e| {
        err(format!(
            "source tree {}: {e}; give the directory of an unpacked RocksDB source",
            path.display()
        ))
    })?;
    let v = tree_version(&dir)?;
    let fingerprint = crate::source::tree_fingerprint(&dir);
    Ok(Source {
        description: format!("{} (source tree, RocksDB {v})", dir.display()),
        id: format!("tree:{}:{fingerprint}", dir.display()),
        dir,
        version: v.to_string(),
    })
}

/// An unpacked, complete crate in the cache.
fn cached_crate(cache: &Cache, name: &str, vers: &str) -> Option<Source> {
    let top = cache.src_dir().join(format!("{name}-{vers}"));
    let sum = fs::read_to_string(top.join(MARKER)).ok()?;
    crate_source(&top, name, vers, sum.trim()).ok()
}

fn crate_source(top: &Path, name: &str, vers: &str, sum: &str) -> Result<Source, BuildError> {
    let dir = rocks_tree(top);
    let v = tree_version(&dir)?;
    Ok(Source {
        description: format!("crates.io {name} {vers} (RocksDB {v})"),
        id: format!("crate:{name}@{vers}:sha256:{sum}"),
        dir,
        version: v.to_string(),
    })
}

/// Downloads and unpacks one crate version into the cache (once).
fn fetch_crate(
    cache: &Cache,
    index: &Index,
    entry: &IndexEntry,
    note: &mut dyn FnMut(&str),
) -> Result<Source, BuildError> {
    if let Some(s) = cached_crate(cache, &entry.name, &entry.vers) {
        return Ok(s);
    }
    let src = cache.src_dir();
    note(&format!(
        "downloading {} {} from {} (sha256 {})",
        entry.name,
        entry.vers,
        index.base(),
        &entry.cksum[..12]
    ));
    let fail = |e: crates_io::CrateError| err(e.to_string());
    let file = index
        .download(entry, &src.join("downloads"))
        .map_err(fail)?;
    let top = format!("{}-{}", entry.name, entry.vers);
    let dest = src.join(&top);
    crates_io::unpack(&file, &top, &dest).map_err(fail)?;
    let _ = fs::remove_file(&file);
    let s = crate_source(&dest, &entry.name, &entry.vers, &entry.cksum)?;
    fs::write(dest.join(MARKER), format!("{}\n", entry.cksum))
        .map_err(|e| BuildError::Io(format!("{}: {e}", dest.display())))?;
    note(&format!("unpacked {} into {}", top, dest.display()));
    Ok(s)
}

/// Resolves a source: finds the crate in the cache or downloads it from `index`, or checks
/// the tree.
pub fn resolve(
    spec: &RocksSourceSpec,
    cache: &Cache,
    index: &Index,
    note: &mut dyn FnMut(&str),
) -> Result<Source, BuildError> {
    let fail = |e: crates_io::CrateError| err(e.to_string());
    match spec {
        RocksSourceSpec::Tree(p) => tree(p),
        RocksSourceSpec::Crate { name, version } => {
            if let Some(s) = cached_crate(cache, name, version) {
                return Ok(s);
            }
            let entries = index.versions(name).map_err(fail)?;
            let entry = crates_io::pick(&entries, name, version).map_err(fail)?;
            fetch_crate(cache, index, entry, note)
        }
        RocksSourceSpec::Release(release) => {
            let entries = index.versions(SYS_CRATE).map_err(fail)?;
            let entry = pick_release(&entries, release)?;
            fetch_crate(cache, index, entry, note)
        }
    }
}

/// Resolves a source without the network: a crate must already be unpacked in the cache
/// (for a release, the newest cached `librocksdb-sys` packaging it).
pub fn resolve_cached(spec: &RocksSourceSpec, cache: &Cache) -> Result<Source, BuildError> {
    match spec {
        RocksSourceSpec::Tree(p) => tree(p),
        RocksSourceSpec::Crate { name, version } => cached_crate(cache, name, version)
            .ok_or_else(|| {
                err(format!(
                    "crate {name} {version} is not unpacked in {}: build once without --cached-only to fetch it",
                    cache.src_dir().display()
                ))
            }),
        RocksSourceSpec::Release(release) => {
            let prefix = format!("{SYS_CRATE}-");
            let mut found: Vec<(Version, Source)> = fs::read_dir(cache.src_dir())
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let vers = n.strip_prefix(&prefix)?.to_string();
                    let v = packaged_release(&vers).filter(|v| matches(release, *v))?;
                    Some((v, cached_crate(cache, SYS_CRATE, &vers)?))
                })
                .collect();
            found.sort_by_key(|f| f.0);
            found.pop().map(|(_, s)| s).ok_or_else(|| {
                err(format!(
                    "no {SYS_CRATE} crate of RocksDB {} is unpacked in {}: build once without --cached-only to fetch it",
                    release.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("."),
                    cache.src_dir().display()
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(vers: &str, yanked: bool) -> IndexEntry {
        IndexEntry {
            name: SYS_CRATE.into(),
            vers: vers.into(),
            cksum: "00".repeat(32),
            yanked,
        }
    }

    #[test]
    fn specs_parse() {
        assert_eq!(
            RocksSourceSpec::parse("9.9").unwrap(),
            RocksSourceSpec::Release(vec![9, 9])
        );
        assert_eq!(
            RocksSourceSpec::parse("11.8.1").unwrap(),
            RocksSourceSpec::Release(vec![11, 8, 1])
        );
        assert_eq!(
            RocksSourceSpec::parse("crate:librocksdb-sys@0.17.1+9.9.3").unwrap(),
            RocksSourceSpec::Crate {
                name: SYS_CRATE.into(),
                version: "0.17.1+9.9.3".into()
            }
        );
        assert_eq!(
            RocksSourceSpec::parse("/src/rocksdb").unwrap(),
            RocksSourceSpec::Tree("/src/rocksdb".into())
        );
        assert_eq!(
            RocksSourceSpec::parse("./rocksdb").unwrap(),
            RocksSourceSpec::Tree("./rocksdb".into())
        );
        for bad in [
            "nine",
            "9.9.3.1",
            "crate:librocksdb-sys",
            "crate:@1",
            "crate:x@1;id",
            "3.1",
            "",
        ] {
            assert!(RocksSourceSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn releases_pick_the_newest_matching_crate() {
        let idx = [
            e("6.20.3", false),
            e("0.6.1+6.28.2", false),
            e("0.8.3+7.4.4", false),
            e("0.16.0+8.10.0", false),
            e("0.17.0+9.9.3", false),
            e("0.17.1+9.9.3", false),
            e("0.17.3+10.4.2", false),
            e("0.18.0+10.5.0", true),
        ];
        assert_eq!(pick_release(&idx, &[9, 9]).unwrap().vers, "0.17.1+9.9.3");
        assert_eq!(pick_release(&idx, &[6]).unwrap().vers, "0.6.1+6.28.2");
        assert_eq!(pick_release(&idx, &[6, 20]).unwrap().vers, "6.20.3");
        assert_eq!(pick_release(&idx, &[10]).unwrap().vers, "0.17.3+10.4.2");
        let msg = pick_release(&idx, &[9, 10]).unwrap_err().to_string();
        assert!(
            msg.contains("RocksDB 9.10 is not packaged") && msg.contains("9.9.3"),
            "{msg}"
        );
        // A yanked crate is never picked.
        assert!(pick_release(&idx, &[10, 5]).is_err());
        assert_eq!(packaged_release("0.1.0"), None);
    }

    #[test]
    fn trees_need_the_version_header_and_a_makefile() {
        let d = tempfile::tempdir().unwrap();
        assert!(tree(d.path())
            .unwrap_err()
            .to_string()
            .contains("not a RocksDB source tree"));
        fs::create_dir_all(d.path().join("include/rocksdb")).unwrap();
        fs::write(
            d.path().join("include/rocksdb/version.h"),
            "#define ROCKSDB_MAJOR 8\n#define ROCKSDB_MINOR 10\n#define ROCKSDB_PATCH 0\n",
        )
        .unwrap();
        assert!(tree(d.path()).unwrap_err().to_string().contains("Makefile"));
        fs::write(d.path().join("Makefile"), "all:\n").unwrap();
        let s = tree(d.path()).unwrap();
        assert_eq!(s.version, "8.10.0");
        assert!(s.id.starts_with("tree:"));
    }
}
