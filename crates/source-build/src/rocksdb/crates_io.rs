//! crates.io's sparse index and its download path: a crate's versions with their sha256
//! checksums (the index's JSON lines), the `.crate` file fetched through the `dl` template
//! of the index's `config.json` (as cargo's registry documentation describes it), checked
//! against the index's checksum, and unpacked with `tar`. Nothing in the crate runs: its build
//! script is never compiled.
//!
//! The index is `$DBDELTA_CRATES_INDEX` when set (a `file://` directory in tests), else
//! crates.io's sparse index. Transfers go through `curl`.

use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// crates.io's sparse index.
pub const DEFAULT_INDEX: &str = "https://index.crates.io";

/// Why a crate could not be listed, fetched or unpacked; every message names the crate.
#[derive(Debug, thiserror::Error)]
pub enum CrateError {
    /// A transfer failed.
    #[error("cannot fetch {url}: {detail} (is curl installed and the registry reachable?)")]
    Fetch {
        /// What was fetched.
        url: String,
        /// curl's own message.
        detail: String,
    },
    /// The index's answer is not what cargo's registry format says.
    #[error("the crate index's {what} is malformed: {detail}")]
    Index {
        /// Which file.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// The version is not in the index.
    #[error("{name} has no version {version} in the crate index; versions: {known}")]
    NoVersion {
        /// The crate.
        name: String,
        /// The version asked for.
        version: String,
        /// The versions there are.
        known: String,
    },
    /// The downloaded file is not the one the index describes.
    #[error("{file}: sha256 {actual} differs from the index's {expected}; the download is corrupt or was replaced: delete it and try again")]
    Checksum {
        /// The file.
        file: String,
        /// The index's checksum.
        expected: String,
        /// The file's.
        actual: String,
    },
    /// The file could not be unpacked.
    #[error("cannot unpack {file}: {detail}")]
    Unpack {
        /// The `.crate` file.
        file: String,
        /// tar's message.
        detail: String,
    },
    /// A file system error.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CrateError + '_ {
    move |source| CrateError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One version of a crate as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The crate's name.
    pub name: String,
    /// Its version (`0.17.1+9.9.3`).
    pub vers: String,
    /// The `.crate` file's sha256, hex.
    pub cksum: String,
    /// Withdrawn by its publisher.
    pub yanked: bool,
}

/// The directory of a crate's index file, per cargo's registry layout: `1`, `2`, `3/a`, and
/// `ab/cd` for longer names, in the name's own case (`{prefix}`).
fn prefix(name: &str) -> String {
    match name.len() {
        1 => "1".to_string(),
        2 => "2".to_string(),
        3 => format!("3/{}", &name[..1]),
        _ => format!("{}/{}", &name[..2], &name[2..4]),
    }
}

/// The index file of a crate, per cargo's registry layout: `1/a`, `2/ab`, `3/a/abc`, and
/// `ab/cd/abcd…` for longer names, lower case.
pub fn index_path(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    format!("{}/{n}", prefix(&n))
}

/// The download URL from the `dl` template of `config.json`: `{crate}`, `{version}`,
/// `{prefix}`, `{lowerprefix}` and `{sha256-checksum}` are replaced; a template without
/// any marker gets `/{crate}/{version}/download` appended (cargo's registry documentation).
pub fn expand_dl(template: &str, entry: &IndexEntry) -> String {
    const MARKERS: &[&str] = &[
        "{crate}",
        "{version}",
        "{prefix}",
        "{lowerprefix}",
        "{sha256-checksum}",
    ];
    if !MARKERS.iter().any(|m| template.contains(m)) {
        return format!(
            "{}/{}/{}/download",
            template.trim_end_matches('/'),
            entry.name,
            entry.vers
        );
    }
    template
        .replace("{crate}", &entry.name)
        .replace("{version}", &entry.vers)
        .replace("{lowerprefix}", &prefix(&entry.name.to_ascii_lowercase()))
        .replace("{prefix}", &prefix(&entry.name))
        .replace("{sha256-checksum}", &entry.cksum)
}

/// Parses an index file: one JSON object per line.
pub fn parse_index(name: &str, text: &str) -> Result<Vec<IndexEntry>, CrateError> {
    let bad = |detail: String| CrateError::Index {
        what: format!("entry of {name}"),
        detail,
    };
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let field = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::to_string)
                .ok_or_else(|| bad(format!("no '{k}' string")))
        };
        let cksum = field("cksum")?;
        if cksum.len() != 64 || !cksum.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad(format!("cksum '{cksum}' is not a sha256")));
        }
        out.push(IndexEntry {
            name: field("name")?,
            vers: field("vers")?,
            cksum: cksum.to_ascii_lowercase(),
            yanked: v.get("yanked").and_then(|y| y.as_bool()).unwrap_or(false),
        });
    }
    Ok(out)
}

/// A sparse index reached through `curl`.
#[derive(Debug, Clone)]
pub struct Index {
    base: String,
}

impl Index {
    /// The index at `base` (`https://…` or `file:///dir`).
    pub fn new(base: impl Into<String>) -> Index {
        Index {
            base: base.into().trim_end_matches('/').to_string(),
        }
    }

    /// `$DBDELTA_CRATES_INDEX`, else crates.io's.
    pub fn from_env() -> Index {
        let base = std::env::var("DBDELTA_CRATES_INDEX")
            .ok()
            .filter(|b| !b.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_INDEX.to_string());
        Index::new(base)
    }

    /// The index's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn curl(url: &str, out: Option<&Path>) -> Result<Vec<u8>, CrateError> {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-f", "-L", "--retry", "2"]);
        if let Some(o) = out {
            cmd.arg("-o").arg(o);
        }
        let res = cmd.arg(url).output().map_err(|e| CrateError::Fetch {
            url: url.to_string(),
            detail: format!("cannot run curl: {e}"),
        })?;
        if !res.status.success() {
            return Err(CrateError::Fetch {
                url: url.to_string(),
                detail: String::from_utf8_lossy(&res.stderr).trim().to_string(),
            });
        }
        Ok(res.stdout)
    }

    /// Every version of `name`.
    pub fn versions(&self, name: &str) -> Result<Vec<IndexEntry>, CrateError> {
        let url = format!("{}/{}", self.base, index_path(name));
        let body = Index::curl(&url, None)?;
        parse_index(name, &String::from_utf8_lossy(&body))
    }

    /// The `dl` template of the index's `config.json`.
    pub fn dl_template(&self) -> Result<String, CrateError> {
        let url = format!("{}/config.json", self.base);
        let body = Index::curl(&url, None)?;
        let v: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| CrateError::Index {
                what: url.clone(),
                detail: format!("not JSON: {e}"),
            })?;
        v.get("dl")
            .and_then(|d| d.as_str())
            .map(str::to_string)
            .ok_or_else(|| CrateError::Index {
                what: url,
                detail: "no 'dl' string".into(),
            })
    }

    /// Downloads `entry`'s `.crate` file into `dir` and checks it against the index's
    /// checksum; returns its path.
    pub fn download(&self, entry: &IndexEntry, dir: &Path) -> Result<PathBuf, CrateError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let url = expand_dl(&self.dl_template()?, entry);
        let file = dir.join(format!("{}-{}.crate", entry.name, entry.vers));
        let part = file.with_extension("crate.part");
        Index::curl(&url, Some(&part))?;
        verify(&part, &entry.cksum)?;
        fs::rename(&part, &file).map_err(io(&file))?;
        Ok(file)
    }
}

/// The entry of `name` at `version` (exact), or an error listing the versions there are.
pub fn pick<'a>(
    entries: &'a [IndexEntry],
    name: &str,
    version: &str,
) -> Result<&'a IndexEntry, CrateError> {
    entries
        .iter()
        .find(|e| e.vers == version)
        .ok_or_else(|| CrateError::NoVersion {
            name: name.to_string(),
            version: version.to_string(),
            known: entries
                .iter()
                .filter(|e| !e.yanked)
                .map(|e| e.vers.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Checks a file's sha256 against `expected` (hex).
pub fn verify(file: &Path, expected: &str) -> Result<(), CrateError> {
    let bytes = fs::read(file).map_err(io(file))?;
    let actual = crate::hex(&Sha256::digest(&bytes));
    if !actual.eq_ignore_ascii_case(expected) {
        return Err(CrateError::Checksum {
            file: file.display().to_string(),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(())
}

/// Unpacks a `.crate` file (a gzip'ed tar whose one top directory is `NAME-VERSION`) into
/// `dest`, which must not exist yet; returns `dest`. Unpacks beside it first, so an
/// interrupted unpack never looks complete.
pub fn unpack(file: &Path, top: &str, dest: &Path) -> Result<PathBuf, CrateError> {
    let parent = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io(parent))?;
    let work = parent.join(format!(".unpack-{}-{}", top, std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(io(&work))?;
    let unpack_err = |detail: String| CrateError::Unpack {
        file: file.display().to_string(),
        detail,
    };
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(file)
        .arg("-C")
        .arg(&work)
        .arg("--no-same-owner")
        .output()
        .map_err(|e| unpack_err(format!("cannot run tar: {e}")))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&work);
        return Err(unpack_err(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let inner = work.join(top);
    if !inner.is_dir() {
        let _ = fs::remove_dir_all(&work);
        return Err(unpack_err(format!(
            "it has no top directory {top}/ (not a crate file?)"
        )));
    }
    let _ = fs::remove_dir_all(dest);
    fs::rename(&inner, dest).map_err(io(dest))?;
    let _ = fs::remove_dir_all(&work);
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, vers: &str) -> IndexEntry {
        IndexEntry {
            name: name.into(),
            vers: vers.into(),
            cksum: "ab".repeat(32),
            yanked: false,
        }
    }

    #[test]
    fn index_paths_follow_cargos_layout() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("librocksdb-sys"), "li/br/librocksdb-sys");
        assert_eq!(index_path("Serde"), "se/rd/serde");
    }

    #[test]
    fn dl_templates_expand() {
        let e = entry("librocksdb-sys", "0.17.1+9.9.3");
        assert_eq!(
            expand_dl("https://x/api/v1/crates", &e),
            "https://x/api/v1/crates/librocksdb-sys/0.17.1+9.9.3/download"
        );
        assert_eq!(
            expand_dl(
                "https://x/{prefix}/{crate}-{version}.crate?{sha256-checksum}",
                &e
            ),
            format!(
                "https://x/li/br/librocksdb-sys-0.17.1+9.9.3.crate?{}",
                "ab".repeat(32)
            )
        );
        let e = entry("Abc", "1.0.0");
        assert_eq!(
            expand_dl("file:///d/{lowerprefix}/{prefix}/{crate}", &e),
            "file:///d/3/a/3/A/Abc"
        );
    }

    #[test]
    fn index_lines_parse_and_bad_ones_are_named() {
        let text = format!(
            "{{\"name\":\"x\",\"vers\":\"0.1.0\",\"cksum\":\"{}\",\"yanked\":false}}\n\
             {{\"name\":\"x\",\"vers\":\"0.2.0\",\"cksum\":\"{}\",\"yanked\":true}}\n",
            "AB".repeat(32),
            "cd".repeat(32)
        );
        let v = parse_index("x", &text).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].cksum, "ab".repeat(32));
        assert!(v[1].yanked);
        assert_eq!(pick(&v, "x", "0.2.0").unwrap().vers, "0.2.0");
        let e = pick(&v, "x", "9.9.9").unwrap_err().to_string();
        assert!(e.contains("no version 9.9.9") && e.contains("0.1.0"), "{e}");
        let e = parse_index("x", "{\"name\":\"x\",\"vers\":\"1\",\"cksum\":\"zz\"}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a sha256"), "{e}");
    }
}
