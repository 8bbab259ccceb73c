//! The RocksDB build driver: RocksDB's own Makefile builds `librocksdb.so` and that
//! version's `db_bench` from one copy of the tree (`LIB_MODE=shared`: every object is
//! compiled once, position-independent, and db_bench links the shared library through its
//! `$ORIGIN` run path), once per (source, recipe, compiler).
//!
//! ```text
//! <cache>/builds/rocksdb-9.9.3-<hash12>/
//!     lib/librocksdb.so.9.9.3 (+ .so.9.9, .so.9, .so links)   what a target's lib= loads
//!     bin/db_bench (+ links to ../lib, found through $ORIGIN)  the same version's db_bench
//!     build.log                     every command and its output
//!     dbdelta-build.json            written last: the build is complete (see BuildInfo)
//!     obj/                          the tree copy make runs in; kept when make fails or is
//!                                   interrupted (the next attempt with the same make line
//!                                   resumes it), removed after a successful build
//! ```

use super::version::{self, Version};
use crate::driver::{compiler_version, io_err, BuildInfo, Event, Lock, Run, INFO_FILE};
use crate::recipe::{hash12, Recipe};
use crate::source::Source;
use crate::{BuildError, Cache};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Bumped when the way dbdelta builds RocksDB changes, so old cache entries are not reused.
const DRIVER_VERSION: &str = "dbdelta-rocksdb-build 1";

/// The file in `obj/` that names the make line the copy was built with.
const STAMP: &str = ".dbdelta-make";

/// What to build.
#[derive(Debug, Clone)]
pub struct RocksBuildRequest<'a> {
    /// The RocksDB tree.
    pub source: &'a Source,
    /// The recipe (`cflags`, `lto`, `march`, `frame_pointers`; not `pgo`).
    pub recipe: &'a Recipe,
    /// The cache.
    pub cache: &'a Cache,
    /// Parallel make jobs.
    pub jobs: usize,
    /// The C++ compiler command (`g++` unless `$CXX` says otherwise).
    pub cxx: String,
}

/// A finished RocksDB build.
#[derive(Debug, Clone)]
pub struct RocksBuilt {
    /// The build's directory.
    pub dir: PathBuf,
    /// `lib/librocksdb.so`: what a `rocksdb:` target's `lib=` names.
    pub lib: PathBuf,
    /// `bin/db_bench`, built from the same tree, loading the same library.
    pub db_bench: PathBuf,
    /// Its manifest (`configure` holds make's variables).
    pub info: BuildInfo,
    /// True when the cache already held it.
    pub cached: bool,
}

/// make's variables and goals for a recipe (without `-j`): RocksDB's release build
/// (`DEBUG_LEVEL=0`, which defines `NDEBUG`), a shared library, `PORTABLE=1` so that only
/// the recipe's `march` chooses the instruction set, the recipe's `-O` level as
/// `OPTIMIZE_LEVEL` and its other flags as `EXTRA_CXXFLAGS`/`EXTRA_CFLAGS`.
pub fn make_vars(recipe: &Recipe) -> Result<Vec<String>, BuildError> {
    if recipe.pgo.is_some() {
        return Err(BuildError::Recipe(crate::RecipeError::BadValue {
            key: "pgo".into(),
            value: recipe.pgo.clone().unwrap_or_default(),
            expected: "RocksDB builds take cflags, lto, march and frame_pointers; pgo trains PostgreSQL builds only".into(),
        }));
    }
    let cflags = recipe.cflags();
    let (opt, rest): (Vec<&str>, Vec<&str>) =
        cflags.split_whitespace().partition(|t| t.starts_with("-O"));
    let mut vars = vec![
        "DEBUG_LEVEL=0".to_string(),
        "LIB_MODE=shared".to_string(),
        "PORTABLE=1".to_string(),
        format!("OPTIMIZE_LEVEL={}", opt.last().copied().unwrap_or("-O2")),
    ];
    if !rest.is_empty() {
        let extra = rest.join(" ");
        vars.push(format!("EXTRA_CXXFLAGS={extra}"));
        vars.push(format!("EXTRA_CFLAGS={extra}"));
    }
    let ld = recipe.ldflags(&cflags);
    if !ld.is_empty() {
        vars.push(format!("EXTRA_LDFLAGS={ld}"));
    }
    vars.push("shared_lib".into());
    vars.push("db_bench".into());
    Ok(vars)
}

/// The cache key of a request: the build directory it lives in.
pub fn build_dir(req: &RocksBuildRequest<'_>, cxx_version: &str) -> Result<PathBuf, BuildError> {
    let vars = make_vars(req.recipe)?.join(" ");
    let h = hash12(&[
        DRIVER_VERSION,
        &req.source.id,
        &req.recipe.canonical(),
        cxx_version,
        &vars,
    ]);
    Ok(req
        .cache
        .builds_dir()
        .join(format!("rocksdb-{}-{h}", req.source.version)))
}

/// The complete build at `dir`, if there is one.
fn complete(dir: &Path) -> Option<RocksBuilt> {
    let info = crate::driver::read_info(dir)?;
    let lib = dir.join("lib/librocksdb.so");
    let db_bench = dir.join("bin/db_bench");
    (lib.exists() && db_bench.is_file()).then(|| RocksBuilt {
        dir: dir.to_path_buf(),
        lib,
        db_bench,
        info,
        cached: true,
    })
}

/// The requested build if the cache holds it complete, else the directory it would be
/// built in; never builds.
pub fn lookup(req: &RocksBuildRequest<'_>) -> Result<Result<RocksBuilt, PathBuf>, BuildError> {
    let cxx = compiler_version(&req.cxx)?;
    let dir = build_dir(req, &cxx)?;
    Ok(complete(&dir).ok_or(dir))
}

/// A verification failure: the build's artifacts disagree on their version.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct VerifyError(String);

/// Builds (or finds in the cache) the requested build.
pub fn build(
    req: &RocksBuildRequest<'_>,
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<RocksBuilt, BuildError> {
    if req.jobs == 0 {
        return Err(BuildError::Source(
            "--jobs 0 is invalid: give 1 or more parallel make jobs".into(),
        ));
    }
    let vars = make_vars(req.recipe)?;
    let tree_version = Version::parse(&req.source.version).ok_or_else(|| {
        BuildError::Source(format!(
            "{}: '{}' is not a RocksDB version",
            req.source.description, req.source.version
        ))
    })?;
    let cxx_version = compiler_version(&req.cxx)?;
    let dir = build_dir(req, &cxx_version)?;
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
    let obj = dir.join("obj");
    let stamp_text = vars.join(" ");
    let resumable = fs::read_to_string(obj.join(STAMP)).is_ok_and(|s| s.trim() == stamp_text);
    // An earlier attempt: its object tree is resumed when it was made with the same make
    // line; everything else starts again.
    if dir.exists() {
        for e in fs::read_dir(&dir).map_err(|e| io_err(&dir, e))?.flatten() {
            let p = e.path();
            if resumable && p == obj {
                continue;
            }
            let r = if p.is_dir() && !p.is_symlink() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            r.map_err(|e| io_err(&p, e))?;
        }
    }
    fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    for d in [req.cache.root(), builds.as_path(), dir.as_path()] {
        let _ = fs::set_permissions(d, fs::Permissions::from_mode(0o755));
    }
    let log_path = dir.join("build.log");
    let log = fs::File::create(&log_path).map_err(|e| io_err(&log_path, e))?;
    progress(Event::Note(&format!(
        "building {name} from {} with recipe {} ({cxx_version}, make -j{}{}); log: {}",
        req.source.description,
        req.recipe.canonical(),
        req.jobs,
        if resumable { ", resuming its make" } else { "" },
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
    if !resumable {
        let part = dir.join("obj.part");
        let _ = fs::remove_dir_all(&part);
        let mut cp = Command::new("cp");
        cp.arg("-a").arg(&req.source.dir).arg(&part);
        run.command("copy the tree", &mut cp)?;
        fs::rename(&part, &obj).map_err(|e| io_err(&obj, e))?;
        let stamp = obj.join(STAMP);
        fs::write(&stamp, format!("{stamp_text}\n")).map_err(|e| io_err(&stamp, e))?;
    }
    let mut make = Command::new("make");
    make.arg(format!("-j{}", req.jobs))
        .args(&vars)
        .current_dir(&obj)
        .env("CXX", &req.cxx)
        .env_remove("MAKEFLAGS");
    run.command("make shared_lib db_bench", &mut make)?;
    let installed = run.timed("install", |_| {
        install(&obj, &dir).map_err(|e| Box::new(VerifyError(e.to_string())) as _)
    });
    installed?;
    let db_bench = dir.join("bin/db_bench");
    run.timed("verify versions", |_| {
        verify(&dir, &db_bench, tree_version).map_err(|e| Box::new(VerifyError(e)) as _)
    })?;
    let _ = fs::remove_dir_all(&obj);
    let cflags = req.recipe.cflags();
    let info = BuildInfo {
        source: req.source.description.clone(),
        source_version: req.source.version.clone(),
        source_dir: req.source.dir.display().to_string(),
        recipe: req.recipe.canonical(),
        ldflags: req.recipe.ldflags(&cflags),
        cflags,
        configure: vars,
        cc: cxx_version,
        pgo_training: None,
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
    Ok(RocksBuilt {
        lib: dir.join("lib/librocksdb.so"),
        db_bench,
        dir,
        info,
        cached: false,
    })
}

/// The real file name of the shared library make left in `obj` (`librocksdb.so.9.9.3`).
fn library_file(obj: &Path) -> Result<String, BuildError> {
    fs::read_dir(obj)
        .map_err(|e| io_err(obj, e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| version::from_library_name(n).is_some())
        .ok_or_else(|| {
            BuildError::Io(format!(
                "{}: make left no librocksdb.so.X.Y.Z",
                obj.display()
            ))
        })
}

/// The links RocksDB's `make install-shared` makes to a library file: `.so.X.Y`, `.so.X`
/// and `.so`.
pub fn library_links(file: &str) -> Vec<String> {
    let Some(v) = version::from_library_name(file) else {
        return Vec::new();
    };
    vec![
        format!("librocksdb.so.{}.{}", v.major, v.minor),
        format!("librocksdb.so.{}", v.major),
        "librocksdb.so".to_string(),
    ]
}

/// Copies the library into `lib/` and db_bench into `bin/`, with links in `bin/` so that
/// db_bench's `$ORIGIN` run path finds this library and no other.
fn install(obj: &Path, dir: &Path) -> Result<(), BuildError> {
    let lib = dir.join("lib");
    let bin = dir.join("bin");
    for d in [&lib, &bin] {
        let _ = fs::remove_dir_all(d);
        fs::create_dir_all(d).map_err(|e| io_err(d, e))?;
        let _ = fs::set_permissions(d, fs::Permissions::from_mode(0o755));
    }
    let file = library_file(obj)?;
    fs::copy(obj.join(&file), lib.join(&file)).map_err(|e| io_err(&lib.join(&file), e))?;
    for link in library_links(&file) {
        std::os::unix::fs::symlink(&file, lib.join(&link))
            .map_err(|e| io_err(&lib.join(&link), e))?;
    }
    for name in std::iter::once(file.clone()).chain(library_links(&file)) {
        let to = Path::new("../lib").join(&name);
        std::os::unix::fs::symlink(&to, bin.join(&name))
            .map_err(|e| io_err(&bin.join(&name), e))?;
    }
    let db_bench = bin.join("db_bench");
    fs::copy(obj.join("db_bench"), &db_bench).map_err(|e| io_err(&db_bench, e))?;
    Ok(())
}

/// Runs the installed db_bench for its version (with no loader path of the caller's, so it
/// loads what its run path finds) and checks it and the library's file name against the
/// tree's version.
fn verify(dir: &Path, db_bench: &Path, tree: Version) -> Result<(), String> {
    let out = Command::new(db_bench)
        .arg("--version")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", db_bench.display()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = library_file(&dir.join("lib")).map_err(|e| e.to_string())?;
    version::agree(
        tree,
        &[
            (&lib, version::from_library_name(&lib)),
            ("db_bench --version", version::from_db_bench(&text)),
        ],
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_lines_follow_the_recipe() {
        assert_eq!(
            make_vars(&Recipe::default()).unwrap().join(" "),
            "DEBUG_LEVEL=0 LIB_MODE=shared PORTABLE=1 OPTIMIZE_LEVEL=-O2 shared_lib db_bench"
        );
        let r = Recipe::parse("cflags=-O3&lto=on&march=native&frame_pointers=on").unwrap();
        let v = make_vars(&r).unwrap();
        assert!(v.contains(&"OPTIMIZE_LEVEL=-O3".to_string()), "{v:?}");
        let extra = v.iter().find(|x| x.starts_with("EXTRA_CXXFLAGS=")).unwrap();
        assert!(
            extra.contains("-march=native")
                && extra.contains("-flto=auto")
                && extra.contains("-fno-omit-frame-pointer")
                && !extra.contains("-O3"),
            "{extra}"
        );
        assert!(v
            .iter()
            .any(|x| x.starts_with("EXTRA_LDFLAGS=") && x.contains("-flto")));
        let e = make_vars(&Recipe::parse("pgo=sysbench").unwrap()).unwrap_err();
        assert!(e.to_string().contains("PostgreSQL builds only"), "{e}");
    }

    #[test]
    fn library_links_are_those_of_make_install_shared() {
        assert_eq!(
            library_links("librocksdb.so.9.9.3"),
            ["librocksdb.so.9.9", "librocksdb.so.9", "librocksdb.so"]
        );
        assert!(library_links("librocksdb.a").is_empty());
    }

    #[test]
    fn the_cache_key_changes_with_recipe_and_source() {
        let cache = Cache::new("/c");
        let src = Source {
            dir: "/s".into(),
            version: "9.9.3".into(),
            description: "d".into(),
            id: "crate:librocksdb-sys@0.17.1+9.9.3:sha256:00".into(),
        };
        let key = |recipe: &Recipe, src: &Source| {
            build_dir(
                &RocksBuildRequest {
                    source: src,
                    recipe,
                    cache: &cache,
                    jobs: 2,
                    cxx: "g++".into(),
                },
                "g++ 12",
            )
            .unwrap()
        };
        let a = key(&Recipe::default(), &src);
        assert!(
            a.to_string_lossy().starts_with("/c/builds/rocksdb-9.9.3-"),
            "{a:?}"
        );
        assert_ne!(a, key(&Recipe::parse("lto=on").unwrap(), &src));
        let other = Source {
            id: "crate:librocksdb-sys@0.17.0+9.9.3:sha256:11".into(),
            ..src.clone()
        };
        assert_ne!(a, key(&Recipe::default(), &other));
        assert_eq!(a, key(&Recipe::parse("lto=off").unwrap(), &src));
    }
}
