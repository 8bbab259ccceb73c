//! The FerretDB binary: built from the Go module proxy into dbdelta's build cache, once per
//! version and Go toolchain, beside the PostgreSQL builds.
//!
//! ```text
//! <cache>/builds/ferretdb-v1.24.2-<hash12>/
//!     bin/ferretdb            the server
//!     build.log               every command and its output
//!     dbdelta-build.json      written last: the build is complete (see FerretInfo)
//! ```
//!
//! `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` builds a binary that
//! panics at start ("Invalid build/version/version.txt file content"): the module zip lacks
//! that file, which FerretDB's `build/version` package embeds. So the module is downloaded
//! (`go mod download`), copied, given the file, and built with `go build ./cmd/ferretdb`.

use dbdelta_source_build::{Cache, Event, Lock, INFO_FILE};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The FerretDB version a `ferretdb:` target runs unless `version=` says otherwise.
pub const DEFAULT_VERSION: &str = "v1.24.2";

/// The Go module FerretDB is published as.
const MODULE: &str = "github.com/FerretDB/FerretDB";

/// Bumped when the way dbdelta builds FerretDB changes, so old cache entries are not reused.
const DRIVER_VERSION: &str = "dbdelta-ferretdb-build 1";

/// Lines of the log quoted when a phase fails.
const TAIL_LINES: usize = 30;

/// Why FerretDB could not be built; every message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// `version=` is not a FerretDB release tag.
    #[error("version={0} is not a FerretDB release: give a tag such as {DEFAULT_VERSION}")]
    Version(String),
    /// The Go toolchain is missing.
    #[error("building FerretDB needs the Go toolchain ('go version' failed: {0}); install Go 1.22 or newer (https://go.dev/dl/) and put 'go' on PATH")]
    NoGo(#[source] std::io::Error),
    /// A phase (download, build) failed.
    #[error("building FerretDB {version} failed in {phase} ({status}); the whole log is {}. Last lines:\n{tail}", .log.display())]
    Phase {
        /// The version.
        version: String,
        /// download, copy, build.
        phase: &'static str,
        /// The exit status, or why the command did not start.
        status: String,
        /// The log file.
        log: PathBuf,
        /// Its last lines.
        tail: String,
    },
    /// A file system error.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The manifest of a FerretDB build (`dbdelta-build.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FerretInfo {
    /// FerretDB's version tag, e.g. `v1.24.2`.
    pub version: String,
    /// `go version`'s output.
    pub go: String,
    /// The SQLite FerretDB's SQLite backend embeds (modernc.org/sqlite's translation), e.g.
    /// `3.46.0`; empty when the module did not say.
    pub sqlite_version: String,
    /// Seconds spent downloading the module and its dependencies.
    pub download_secs: f64,
    /// Seconds spent compiling.
    pub build_secs: f64,
    /// When the build finished, seconds since the Unix epoch.
    pub finished_unix: u64,
}

/// A FerretDB binary in the cache.
#[derive(Debug, Clone)]
pub struct FerretBuild {
    /// The server binary.
    pub binary: PathBuf,
    /// The cache entry's directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub info: FerretInfo,
    /// True when the cache already held it.
    pub cached: bool,
}

/// A FerretDB binary the user built (`binary=`): its version from `ferretdb --version`.
pub fn existing(binary: &Path) -> Result<FerretBuild, BuildError> {
    let out = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(io_err(binary))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map(|v| v.trim().to_string())
        .filter(|v| out.status.success() && !v.is_empty())
        .ok_or_else(|| BuildError::Io {
            path: binary.to_path_buf(),
            source: std::io::Error::other(format!(
                "'--version' printed no 'version: vX' line ({}): is it FerretDB?",
                out.status
            )),
        })?;
    Ok(FerretBuild {
        binary: binary.to_path_buf(),
        dir: binary.parent().unwrap_or(binary).to_path_buf(),
        info: FerretInfo {
            version,
            go: String::new(),
            sqlite_version: sqlite_version_of(binary),
            download_secs: 0.0,
            build_secs: 0.0,
            finished_unix: 0,
        },
        cached: true,
    })
}

/// Checks a version tag: `v` and three dot-separated numbers (`v1.24.2`).
pub fn check_version(v: &str) -> Result<(), BuildError> {
    let ok = v
        .strip_prefix('v')
        .map(|rest| {
            let parts: Vec<&str> = rest.split('.').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(BuildError::Version(v.to_string()))
    }
}

/// `go version`'s output, which keys the cache entry (another toolchain builds another
/// binary).
fn go_version() -> Result<String, BuildError> {
    let out = Command::new("go")
        .arg("version")
        .stdin(Stdio::null())
        .output()
        .map_err(BuildError::NoGo)?;
    if !out.status.success() {
        return Err(BuildError::NoGo(std::io::Error::other(format!(
            "exit status {}",
            out.status
        ))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The cache entry of `version` built by the toolchain `go`.
fn entry_dir(cache: &Cache, version: &str, go: &str) -> PathBuf {
    let h = dbdelta_source_build::recipe::hash12(&[DRIVER_VERSION, MODULE, version, go]);
    cache.builds_dir().join(format!("ferretdb-{version}-{h}"))
}

/// The complete build at `dir`, if there is one.
fn complete(dir: &Path) -> Option<FerretBuild> {
    let binary = dir.join("bin/ferretdb");
    let info: FerretInfo = serde_json::from_slice(&fs::read(dir.join(INFO_FILE)).ok()?).ok()?;
    binary.is_file().then(|| FerretBuild {
        binary,
        dir: dir.to_path_buf(),
        info,
        cached: true,
    })
}

/// The build of `version` if the cache holds it complete; never builds.
pub fn lookup(cache: &Cache, version: &str) -> Result<Option<FerretBuild>, BuildError> {
    check_version(version)?;
    Ok(complete(&entry_dir(cache, version, &go_version()?)))
}

/// Builds FerretDB `version` into `cache` (or finds it there). Takes the cache entry's lock,
/// so two dbdelta processes never build it at once.
pub fn ensure(
    cache: &Cache,
    version: &str,
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<FerretBuild, BuildError> {
    check_version(version)?;
    let go = go_version()?;
    let dir = entry_dir(cache, version, &go);
    let builds = cache.builds_dir();
    fs::create_dir_all(&builds).map_err(io_err(&builds))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock = builds.join(format!("{name}.lock"));
    let _lock = Lock::take(&lock, progress).map_err(|e| BuildError::Io {
        path: lock.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    if let Some(b) = complete(&dir) {
        progress(Event::Note(&format!(
            "FerretDB {version}: cached, {}",
            b.binary.display()
        )));
        return Ok(b);
    }
    // A failed or interrupted earlier attempt: start again.
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    }
    fs::create_dir_all(dir.join("bin")).map_err(io_err(&dir))?;
    {
        use std::os::unix::fs::PermissionsExt;
        // As root, managed servers run as an unprivileged user: it must reach the binary.
        for d in [
            cache.root(),
            builds.as_path(),
            dir.as_path(),
            &dir.join("bin"),
        ] {
            let _ = fs::set_permissions(d, fs::Permissions::from_mode(0o755));
        }
    }
    let log_path = dir.join("build.log");
    let mut log = fs::File::create(&log_path).map_err(io_err(&log_path))?;
    progress(Event::Note(&format!(
        "building FerretDB {version} from the Go module proxy ({go}); log: {}",
        log_path.display()
    )));
    let mut phase = Phase {
        version,
        log: &mut log,
        log_path: &log_path,
        progress,
    };
    let t0 = Instant::now();
    let download = phase.run(
        "download",
        Command::new("go")
            .args(["mod", "download", "-json"])
            .arg(format!("{MODULE}@{version}")),
    )?;
    let module_dir = module_dir(&download).ok_or_else(|| {
        phase.failed(
            "download",
            "go mod download printed no module directory".into(),
        )
    })?;
    let download_secs = t0.elapsed().as_secs_f64();
    let src = dir.join("src");
    phase.run(
        "copy",
        Command::new("cp").arg("-r").arg(&module_dir).arg(&src),
    )?;
    phase.run("copy", Command::new("chmod").arg("-R").arg("u+w").arg(&src))?;
    // What the module zip lacks: FerretDB's build/version package embeds this file and
    // panics at start without it.
    let version_txt = src.join("build/version/version.txt");
    fs::write(&version_txt, version).map_err(io_err(&version_txt))?;
    let t1 = Instant::now();
    phase.run(
        "build",
        Command::new("go")
            .args(["build", "-o"])
            .arg(dir.join("bin/ferretdb"))
            .arg("./cmd/ferretdb")
            .current_dir(&src),
    )?;
    let build_secs = t1.elapsed().as_secs_f64();
    let sqlite_version = sqlite_version_of(&dir.join("bin/ferretdb"));
    let _ = fs::remove_dir_all(&src);
    let info = FerretInfo {
        version: version.to_string(),
        go,
        sqlite_version,
        download_secs,
        build_secs,
        finished_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let tmp = dir.join(format!("{INFO_FILE}.tmp"));
    let json = serde_json::to_vec_pretty(&info).map_err(|e| BuildError::Io {
        path: tmp.clone(),
        source: std::io::Error::other(e),
    })?;
    fs::write(&tmp, json).map_err(io_err(&tmp))?;
    let info_path = dir.join(INFO_FILE);
    fs::rename(&tmp, &info_path).map_err(io_err(&info_path))?;
    Ok(FerretBuild {
        binary: dir.join("bin/ferretdb"),
        dir,
        info,
        cached: false,
    })
}

/// One build's log and progress.
struct Phase<'a, 'p> {
    version: &'a str,
    log: &'a mut fs::File,
    log_path: &'a Path,
    progress: &'a mut (dyn FnMut(Event<'_>) + 'p),
}

impl Phase<'_, '_> {
    fn failed(&mut self, phase: &'static str, status: String) -> BuildError {
        let _ = self.log.flush();
        let text = fs::read(self.log_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        BuildError::Phase {
            version: self.version.to_string(),
            phase,
            status,
            log: self.log_path.to_path_buf(),
            tail: lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n"),
        }
    }

    /// Runs `cmd` (Go's own toolchain only: `GOTOOLCHAIN=local`, no toolchain download),
    /// its standard error into the log; returns its standard output (also logged).
    fn run(&mut self, phase: &'static str, cmd: &mut Command) -> Result<String, BuildError> {
        (self.progress)(Event::PhaseStarted(phase));
        let _ = writeln!(self.log, "\n==> {phase}: {cmd:?}");
        let _ = self.log.flush();
        let err = self.log.try_clone().map_err(io_err(self.log_path))?;
        let start = Instant::now();
        let out = cmd
            .env("GOTOOLCHAIN", "local")
            .env("GOFLAGS", "-buildvcs=false")
            .stdin(Stdio::null())
            .stderr(err)
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => return Err(self.failed(phase, format!("cannot start: {e}"))),
        };
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let _ = self.log.write_all(stdout.as_bytes());
        if !out.status.success() {
            return Err(self.failed(phase, out.status.to_string()));
        }
        (self.progress)(Event::PhaseDone(phase, start.elapsed()));
        Ok(stdout)
    }
}

/// The `Dir` of `go mod download -json`'s output.
fn module_dir(json: &str) -> Option<PathBuf> {
    #[derive(Deserialize)]
    struct Download {
        #[serde(rename = "Dir")]
        dir: Option<String>,
    }
    let d: Download = serde_json::from_str(json).ok()?;
    d.dir.filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// The SQLite a FerretDB binary embeds: the modernc.org/sqlite module it was built with
/// (`go version -m`), whose translated amalgamation (`lib/sqlite_linux_*.go`, in Go's module
/// cache) says `SQLITE_VERSION = "3.46.0"`; else `modernc.org/sqlite v1.32.0`; empty when
/// Go cannot tell.
pub fn sqlite_version_of(binary: &Path) -> String {
    let go = |args: &[&str]| {
        Command::new("go")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let Some(modules) = go(&["version", "-m", &binary.display().to_string()]) else {
        return String::new();
    };
    let Some(module) = sqlite_module(&modules) else {
        return String::new();
    };
    go(&["env", "GOMODCACHE"])
        .map(|c| PathBuf::from(c.trim()).join(format!("modernc.org/sqlite@{module}/lib")))
        .and_then(|lib| {
            let file = fs::read_dir(&lib)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("sqlite_linux_") && n.ends_with(".go"))
                })?;
            version_constant(&fs::read_to_string(file).ok()?)
        })
        .unwrap_or_else(|| format!("(modernc.org/sqlite {module})"))
}

/// The version of modernc.org/sqlite in `go version -m`'s output.
fn sqlite_module(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 3 && f[0] == "dep" && f[1] == "modernc.org/sqlite").then(|| f[2].to_string())
    })
}

/// The value of the `SQLITE_VERSION = "x.y.z"` constant in Go source.
fn version_constant(text: &str) -> Option<String> {
    let at = text.find("SQLITE_VERSION = \"")? + "SQLITE_VERSION = \"".len();
    let rest = &text[at..];
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_release_tags() {
        assert!(check_version("v1.24.2").is_ok());
        for bad in ["1.24.2", "v1.24", "v1.24.x", "latest", "v1..2", ""] {
            let e = check_version(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("version={bad} is not")), "{e}");
        }
    }

    #[test]
    fn download_json_and_sqlite_constant() {
        let j = r#"{"Path": "github.com/FerretDB/FerretDB", "Version": "v1.24.2", "Dir": "/m/x@v1.24.2"}"#;
        assert_eq!(module_dir(j), Some(PathBuf::from("/m/x@v1.24.2")));
        assert_eq!(module_dir("{}"), None);
        assert_eq!(module_dir("not json"), None);
        let go = "\tSQLITE_SOURCE_ID = \"2024\"\n\tSQLITE_VERSION = \"3.46.0\"\n";
        assert_eq!(version_constant(go).as_deref(), Some("3.46.0"));
        assert_eq!(version_constant("nothing"), None);
        let m = "\tpath\tx\n\tdep\tmodernc.org/sqlite\tv1.32.0\th1:abc=\n";
        assert_eq!(sqlite_module(m).as_deref(), Some("v1.32.0"));
        assert_eq!(sqlite_module("\tdep\tmodernc.org/libc\tv1\n"), None);
    }

    #[test]
    fn entries_are_keyed_by_version_and_toolchain() {
        let c = Cache::new("/c");
        let a = entry_dir(&c, "v1.24.2", "go version go1.22");
        assert!(a.starts_with("/c/builds"));
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("ferretdb-v1.24.2-"));
        assert_ne!(a, entry_dir(&c, "v1.24.2", "go version go1.23"));
        assert_ne!(a, entry_dir(&c, "v1.24.1", "go version go1.22"));
    }
}
