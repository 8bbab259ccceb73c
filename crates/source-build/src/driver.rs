//! The build driver: configure + make + make install into the cache, once per (source,
//! recipe, compiler); a profile-guided recipe builds twice with a training run between.
//!
//! ```text
//! <cache>/builds/postgresql-15.18-<hash12>/
//!     bin/ lib/ share/ include/     make install's prefix: a managed target's bin directory
//!     build.log                     every command and its output
//!     dbdelta-build.json            written last: the build is complete (see BuildInfo)
//!     obj/                          the object tree; removed after a successful build
//!     pgo-profile/                  PGO only: the training run's .gcda files
//! ```

use crate::recipe::{hash12, Recipe};
use crate::source::Source;
use crate::{BuildError, Cache};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The file that marks a complete build and describes it.
pub const INFO_FILE: &str = "dbdelta-build.json";

/// Bumped when the way dbdelta builds changes, so old cache entries are not reused.
const DRIVER_VERSION: &str = "dbdelta-build 1";

/// Lines of the log quoted when a phase fails.
const TAIL_LINES: usize = 30;

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest<'a> {
    /// The source tree.
    pub source: &'a Source,
    /// The recipe.
    pub recipe: &'a Recipe,
    /// The cache.
    pub cache: &'a Cache,
    /// Parallel make jobs.
    pub jobs: usize,
    /// The C compiler command (`gcc` unless `$CC` says otherwise).
    pub cc: String,
}

/// Progress of a build, for the caller to show.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Something worth a line (fetching the source, where the log is, a cache hit).
    Note(&'a str),
    /// A phase began.
    PhaseStarted(&'a str),
    /// A phase ended successfully after this long.
    PhaseDone(&'a str, Duration),
}

/// The error of a phase's step (a command, the PGO training callback), kept whole so its
/// cause chain survives into [`BuildError::Phase`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A PGO training run's failure, for the training callback to return: a message that
/// already says what happened (it is quoted in the build's error), and the error behind
/// it when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct TrainError {
    /// What failed, naming the fix where there is one; includes the cause's text.
    pub message: String,
    /// The lower-level error (the training process could not start, its log could not be
    /// opened).
    #[source]
    pub source: Option<Cause>,
}

impl TrainError {
    /// A failure with no lower-level error (the training run exited with an error status).
    pub fn new(message: impl Into<String>) -> TrainError {
        TrainError {
            message: message.into(),
            source: None,
        }
    }

    /// A failure made from a lower-level error.
    pub fn with_source(message: impl Into<String>, source: impl Into<Cause>) -> TrainError {
        TrainError {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Why a phase of the driver's own failed.
#[derive(Debug, thiserror::Error)]
enum PhaseError {
    /// Its command ran and exited unsuccessfully.
    #[error("{0}")]
    Exit(std::process::ExitStatus),
    /// Its command could not be started.
    #[error("cannot start: {0}")]
    Start(#[source] std::io::Error),
    /// The PGO training ran but left no profile to build with.
    #[error("the training run wrote no profile (.gcda) into {}", .0.display())]
    NoProfile(PathBuf),
}

/// One timed phase of a build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// configure, make, install, train (…, instrumented).
    pub name: String,
    /// Wall-clock seconds.
    pub secs: f64,
}

/// The manifest of a build (`dbdelta-build.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The source, e.g. `postgresql-15 15.18-0+deb12u1 (Debian source package)`.
    pub source: String,
    /// The upstream version, e.g. `15.18`.
    pub source_version: String,
    /// The unpacked tree that was built.
    pub source_dir: String,
    /// The canonical recipe (`default` for plain -O2).
    pub recipe: String,
    /// CFLAGS of the final build.
    pub cflags: String,
    /// LDFLAGS of the final build.
    pub ldflags: String,
    /// configure's arguments.
    pub configure: Vec<String>,
    /// The compiler's `--version` first line.
    pub cc: String,
    /// The suite that trained a PGO build.
    pub pgo_training: Option<String>,
    /// Make jobs used.
    pub jobs: usize,
    /// The phases with their times.
    pub phases: Vec<Phase>,
    /// Total wall-clock seconds.
    pub seconds: f64,
    /// When the build finished, seconds since the Unix epoch.
    pub finished_unix: u64,
}

impl BuildInfo {
    /// Settings for a target's manifest (`build.*` keys), so run.json and reports show how
    /// the server was built.
    pub fn settings(&self, dir: &Path) -> BTreeMap<String, String> {
        let mut s = BTreeMap::new();
        s.insert("build.source".into(), self.source.clone());
        s.insert("build.recipe".into(), self.recipe.clone());
        s.insert("build.cflags".into(), self.cflags.clone());
        if !self.ldflags.is_empty() {
            s.insert("build.ldflags".into(), self.ldflags.clone());
        }
        s.insert("build.cc".into(), self.cc.clone());
        s.insert("build.configure".into(), self.configure.join(" "));
        s.insert("build.dir".into(), dir.display().to_string());
        if let Some(p) = &self.pgo_training {
            s.insert("build.pgo_training".into(), p.clone());
        }
        s
    }
}

/// A finished build.
#[derive(Debug, Clone)]
pub struct Built {
    /// The build's directory (make install's prefix).
    pub dir: PathBuf,
    /// Its bin directory: the managed target's location.
    pub bin: PathBuf,
    /// Its manifest.
    pub info: BuildInfo,
    /// True when the cache already held it.
    pub cached: bool,
}

/// Reads the manifest of a complete build at `dir` (the prefix; `bin`'s parent).
pub fn read_info(dir: &Path) -> Option<BuildInfo> {
    let bytes = fs::read(dir.join(INFO_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The first line of `cc --version`.
pub fn compiler_version(cc: &str) -> Result<String, BuildError> {
    let out = Command::new(cc).arg("--version").output().map_err(|e| {
        BuildError::Source(format!(
            "cannot run the C compiler '{cc}': {e}; install gcc (apt-get install build-essential) or set CC"
        ))
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// configure's arguments besides the prefix: what a benchmark server needs, nothing that
/// needs libraries this machine may lack (readline and zlib serve psql and pg_dump only).
fn configure_args(prefix: &Path) -> Vec<String> {
    let mut args = vec![
        format!("--prefix={}", prefix.display()),
        "--without-icu".to_string(),
        "--without-readline".to_string(),
        "--without-zlib".to_string(),
    ];
    // TLS targets (sslmode=require) need a server built with OpenSSL.
    if Path::new("/usr/include/openssl/ssl.h").exists() {
        args.push("--with-openssl".to_string());
    }
    args
}

pub(crate) fn io_err(path: &Path, e: std::io::Error) -> BuildError {
    BuildError::Io(format!("{}: {e}", path.display()))
}

/// The cache key of a request: the build directory it lives in.
pub fn build_dir(req: &BuildRequest<'_>, cc_version: &str) -> PathBuf {
    let recipe = req.recipe.canonical();
    let probe = configure_args(Path::new("/"));
    let configure = probe[1..].join(" ");
    let h = hash12(&[
        DRIVER_VERSION,
        &req.source.id,
        &recipe,
        cc_version,
        &configure,
    ]);
    req.cache.build_dir(&req.source.version, &h)
}

/// An exclusive lock on a cache entry, so two dbdelta processes never build it at once
/// (also taken by the other builders that share the cache, such as FerretDB's).
pub struct Lock(File);

impl Lock {
    /// Takes the lock file at `path` (created), waiting for another holder with a note.
    pub fn take(path: &Path, progress: &mut dyn FnMut(Event<'_>)) -> Result<Lock, BuildError> {
        let f = File::create(path).map_err(|e| io_err(path, e))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            progress(Event::Note(&format!(
                "waiting for another dbdelta building the same entry (lock {})",
                path.display()
            )));
            // SAFETY: as above, blocking this time.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(io_err(path, std::io::Error::last_os_error()));
            }
        }
        Ok(Lock(f))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: unlocking our own descriptor.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The running state of one build: its log and timings.
pub(crate) struct Run<'p> {
    pub(crate) name: String,
    pub(crate) log_path: PathBuf,
    pub(crate) log: File,
    pub(crate) phases: Vec<Phase>,
    pub(crate) progress: &'p mut dyn FnMut(Event<'_>),
}

impl Run<'_> {
    pub(crate) fn phase_failed(&mut self, phase: &str, cause: Cause) -> BuildError {
        let _ = self.log.flush();
        let text = fs::read(&self.log_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        BuildError::Phase {
            name: self.name.clone(),
            phase: phase.to_string(),
            cause,
            log: self.log_path.display().to_string(),
            tail: crate::tail(&text, TAIL_LINES),
        }
    }

    /// Runs one command as a phase, its output appended to the log.
    pub(crate) fn command(&mut self, phase: &str, cmd: &mut Command) -> Result<(), BuildError> {
        let _ = writeln!(self.log, "\n==> {phase}: {cmd:?}");
        let _ = self.log.flush();
        let out = self
            .log
            .try_clone()
            .map_err(|e| io_err(&self.log_path, e))?;
        let err = self
            .log
            .try_clone()
            .map_err(|e| io_err(&self.log_path, e))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        self.timed(phase, |_| match cmd.status() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(PhaseError::Exit(s).into()),
            Err(e) => Err(PhaseError::Start(e).into()),
        })
    }

    /// Times `f` as a phase; its error becomes a phase failure.
    pub(crate) fn timed(
        &mut self,
        phase: &str,
        f: impl FnOnce(&Path) -> Result<(), Cause>,
    ) -> Result<(), BuildError> {
        (self.progress)(Event::PhaseStarted(phase));
        let start = Instant::now();
        let result = f(&self.log_path);
        let took = start.elapsed();
        let _ = writeln!(self.log, "<== {phase}: {:.1} s", took.as_secs_f64());
        match result {
            Ok(()) => {
                (self.progress)(Event::PhaseDone(phase, took));
                self.phases.push(Phase {
                    name: phase.to_string(),
                    secs: took.as_secs_f64(),
                });
                Ok(())
            }
            Err(cause) => Err(self.phase_failed(phase, cause)),
        }
    }
}

/// The flags of one configure + make + install pass.
struct Pass<'a> {
    label: &'a str,
    prefix: &'a Path,
    cflags: String,
    ldflags: String,
    /// The PGO training build (`-fprofile-generate`).
    instrumented: bool,
}

/// The variables given on make's command line (`make` and `make install`). An instrumented
/// build links libgcov, whose `exit` reference fails libpq's "must not call exit" check;
/// PostgreSQL skips that check when `enable_coverage=yes`, which adds nothing else to
/// the build (only the `coverage` targets).
fn make_vars(instrumented: bool) -> &'static [&'static str] {
    if instrumented {
        &["enable_coverage=yes"]
    } else {
        &[]
    }
}

/// The complete build at `dir`, if there is one.
fn complete(dir: &Path) -> Option<Built> {
    let info = read_info(dir).filter(|_| dir.join("bin/postgres").is_file())?;
    Some(Built {
        bin: dir.join("bin"),
        dir: dir.to_path_buf(),
        info,
        cached: true,
    })
}

/// The requested build if the cache holds it complete; never builds.
pub fn lookup(req: &BuildRequest<'_>) -> Result<Option<Built>, BuildError> {
    let cc_version = compiler_version(&req.cc)?;
    Ok(complete(&build_dir(req, &cc_version)))
}

/// Builds (or finds in the cache) the requested build. `train` runs the PGO training
/// suite against an instrumented bin directory, its output appended to the given log file;
/// its error becomes the failed phase's `cause` (a [`TrainError`] says what failed and
/// keeps the error behind it).
pub fn build(
    req: &BuildRequest<'_>,
    progress: &mut dyn FnMut(Event<'_>),
    train: &mut dyn FnMut(&Path, &str, &Path) -> Result<(), Cause>,
) -> Result<Built, BuildError> {
    if req.jobs == 0 {
        return Err(BuildError::Source(
            "--jobs 0 is invalid: give 1 or more parallel make jobs".into(),
        ));
    }
    let cc_version = compiler_version(&req.cc)?;
    let dir = build_dir(req, &cc_version);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let builds = req.cache.builds_dir();
    fs::create_dir_all(&builds).map_err(|e| io_err(&builds, e))?;
    let _lock = Lock::take(&builds.join(format!("{name}.lock")), progress)?;
    if let Some(built) = complete(&dir) {
        progress(Event::Note(&format!(
            "{name}: cached (built in {:.0} s), {}",
            built.info.seconds,
            dir.display()
        )));
        return Ok(built);
    }
    // A failed or interrupted earlier attempt: start again.
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    }
    fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    // As root, managed servers run as an unprivileged user: it must reach the binaries.
    for d in [req.cache.root(), builds.as_path(), dir.as_path()] {
        let _ = fs::set_permissions(d, fs::Permissions::from_mode(0o755));
    }
    let log_path = dir.join("build.log");
    let log = File::create(&log_path).map_err(|e| io_err(&log_path, e))?;
    progress(Event::Note(&format!(
        "building {name} from {} with recipe {} ({cc_version}, make -j{}); log: {}",
        req.source.description,
        req.recipe.canonical(),
        req.jobs,
        log_path.display()
    )));
    let start = Instant::now();
    let mut run = Run {
        name: name.clone(),
        log_path,
        log,
        phases: Vec::new(),
        progress,
    };
    let obj = dir.join("obj");
    let final_cflags = req.recipe.cflags();
    let (cflags, ldflags) = match &req.recipe.pgo {
        None => {
            let ld = req.recipe.ldflags(&final_cflags);
            pass(
                req,
                &mut run,
                &obj,
                &Pass {
                    label: "",
                    prefix: &dir,
                    cflags: final_cflags.clone(),
                    ldflags: ld.clone(),
                    instrumented: false,
                },
            )?;
            (final_cflags, ld)
        }
        Some(suite) => {
            let profile = dir.join("pgo-profile");
            fs::create_dir_all(&profile).map_err(|e| io_err(&profile, e))?;
            // The instrumented server may run as another user: it writes the profile here.
            fs::set_permissions(&profile, fs::Permissions::from_mode(0o777))
                .map_err(|e| io_err(&profile, e))?;
            let gen = format!("{final_cflags} -fprofile-generate={}", profile.display());
            let instrumented = dir.join("pgo-instrumented");
            pass(
                req,
                &mut run,
                &obj,
                &Pass {
                    label: " (instrumented)",
                    prefix: &instrumented,
                    ldflags: req.recipe.ldflags(&gen),
                    cflags: gen,
                    instrumented: true,
                },
            )?;
            let bin = instrumented.join("bin");
            run.timed(&format!("train ({suite})"), |log| train(&bin, suite, log))?;
            let profiles = count_files(&profile, "gcda");
            if profiles == 0 {
                return Err(run.phase_failed(
                    &format!("train ({suite})"),
                    PhaseError::NoProfile(profile).into(),
                ));
            }
            let _ = writeln!(run.log, "training wrote {profiles} profile files");
            // The same object paths again: GCC finds each object's profile by its path.
            fs::remove_dir_all(&obj).map_err(|e| io_err(&obj, e))?;
            let use_flags = format!(
                "{final_cflags} -fprofile-use={} -fprofile-partial-training -Wno-missing-profile -Wno-error=coverage-mismatch",
                profile.display()
            );
            let ld = req.recipe.ldflags(&use_flags);
            pass(
                req,
                &mut run,
                &obj,
                &Pass {
                    label: "",
                    prefix: &dir,
                    cflags: use_flags.clone(),
                    ldflags: ld.clone(),
                    instrumented: false,
                },
            )?;
            let _ = fs::remove_dir_all(&instrumented);
            (use_flags, ld)
        }
    };
    let _ = fs::remove_dir_all(&obj);
    let info = BuildInfo {
        source: req.source.description.clone(),
        source_version: req.source.version.clone(),
        source_dir: req.source.dir.display().to_string(),
        recipe: req.recipe.canonical(),
        cflags,
        ldflags,
        configure: configure_args(&dir),
        cc: cc_version,
        pgo_training: req.recipe.pgo.clone(),
        jobs: req.jobs,
        phases: run.phases.clone(),
        seconds: start.elapsed().as_secs_f64(),
        finished_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let tmp = dir.join(format!("{INFO_FILE}.tmp"));
    let json = serde_json::to_vec_pretty(&info)
        .map_err(|e| BuildError::Io(format!("cannot encode the build manifest: {e}")))?;
    fs::write(&tmp, json).map_err(|e| io_err(&tmp, e))?;
    fs::rename(&tmp, dir.join(INFO_FILE)).map_err(|e| io_err(&dir, e))?;
    Ok(Built {
        bin: dir.join("bin"),
        dir,
        info,
        cached: false,
    })
}

/// configure + make + make install of one pass in a fresh `obj`.
fn pass(
    req: &BuildRequest<'_>,
    run: &mut Run<'_>,
    obj: &Path,
    p: &Pass<'_>,
) -> Result<(), BuildError> {
    fs::create_dir_all(obj).map_err(|e| io_err(obj, e))?;
    let mut configure = Command::new(req.source.dir.join("configure"));
    configure
        .args(configure_args(p.prefix))
        .current_dir(obj)
        .env("CC", &req.cc)
        .env("CFLAGS", &p.cflags)
        .env("LDFLAGS", &p.ldflags);
    if req.recipe.lto && (req.cc.contains("gcc") || req.cc == "cc") {
        // Archives of LTO objects need the plugin-aware ar and ranlib.
        configure.env("AR", "gcc-ar").env("RANLIB", "gcc-ranlib");
    }
    run.command(&format!("configure{}", p.label), &mut configure)?;
    let mut make = Command::new("make");
    make.arg(format!("-j{}", req.jobs))
        .args(make_vars(p.instrumented))
        .current_dir(obj)
        .env_remove("MAKEFLAGS");
    run.command(&format!("make{}", p.label), &mut make)?;
    let mut install = Command::new("make");
    install
        .arg("install")
        .args(make_vars(p.instrumented))
        .current_dir(obj)
        .env_remove("MAKEFLAGS");
    run.command(&format!("install{}", p.label), &mut install)
}

/// Files under `dir` (recursively) whose name ends with `.ext`.
fn count_files(dir: &Path, ext: &str) -> usize {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p, ext)
            } else {
                usize::from(p.extension().is_some_and(|x| x == ext))
            }
        })
        .sum()
}
