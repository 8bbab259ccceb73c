//! MariaDB server builds with the MyRocks plugin: the source (Debian's `mariadb` source
//! package, unpacked once into the cache as `src/mariadb-<version>`, or an unpacked tree),
//! the recipe's CMake arguments, and the configure, build and install commands into
//! `<cache>/builds/mariadb-<version>-<hash12>/`, a basedir a managed `mysql:` target runs
//! (`mysql:<dir>?engine=rocksdb`).
//!
//! The recipe keys mean what they mean for PostgreSQL ([`crate::recipe`]): `cflags` replaces
//! the default `-O2` of a `CMAKE_BUILD_TYPE=Release` build (CMake's own Release flags are
//! `-O3`; the write-ups compare MariaDB's Release builds at `-O2`), `lto=on` compiles and
//! links with `-flto=auto` (with `gcc-ar`/`gcc-ranlib`, which static libraries of LTO objects
//! need), `march` and `frame_pointers` add their flags. `pgo` has no MariaDB recipe here and
//! is refused. The RocksDB storage engine is built from the same tree as a dynamic plugin
//! (`lib/plugin/ha_rocksdb.so`); plugins no benchmark loads (Mroonga, Spider, CONNECT,
//! ColumnStore, …), Galera, the embedded server and the unit tests are left out, which halves
//! the build. Debian builds `RelWithDebInfo` with the same list of system libraries.

use crate::recipe::{hash12, Recipe};
use crate::BuildError;
use std::fs;
use std::path::{Path, PathBuf};

/// The Debian source package that builds the server and `mariadb-plugin-rocksdb`.
pub const DEBIAN_PACKAGE: &str = "mariadb";

/// Where the build's log is kept, in the build directory.
pub const LOG_FILE: &str = "build.log";

/// The marker written into an unpacked Debian source once it is complete (its Debian
/// version), as for PostgreSQL's sources.
const MARKER: &str = ".dbdelta-source";

/// The source as written: `10.11` (Debian's `mariadb` source package of that series) or a
/// path to an unpacked tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MariadbSourceSpec {
    /// Debian's `mariadb` source package of this `major.minor` series.
    Debian {
        /// The series, e.g. `10.11`.
        series: String,
    },
    /// An unpacked MariaDB source tree (it has a `VERSION` file and `CMakeLists.txt`).
    Tree(PathBuf),
}

impl MariadbSourceSpec {
    /// `10.11` is a Debian source package series; anything with a `/` (or `.`-relative) is
    /// a path.
    pub fn parse(text: &str) -> Result<MariadbSourceSpec, BuildError> {
        let t = text.trim();
        if t.contains('/') || t.starts_with('.') {
            return Ok(MariadbSourceSpec::Tree(PathBuf::from(t)));
        }
        let parts: Vec<&str> = t.split('.').collect();
        if parts.len() == 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        {
            return Ok(MariadbSourceSpec::Debian {
                series: t.to_string(),
            });
        }
        Err(BuildError::Source(format!(
            "MariaDB source '{t}' is neither a series nor a path: give 10.11 (Debian's {DEBIAN_PACKAGE} source package) or a source tree path such as ./mariadb-10.11.18"
        )))
    }
}

/// A MariaDB source tree ready to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MariadbSource {
    /// The unpacked tree.
    pub dir: PathBuf,
    /// The upstream version, e.g. `10.11.18`.
    pub version: String,
    /// What identifies the source's content in the cache key.
    pub id: String,
}

/// The version in a MariaDB tree's `VERSION` file (`MYSQL_VERSION_MAJOR=10`, `_MINOR=11`,
/// `_PATCH=18`).
pub fn tree_version(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join("VERSION")).ok()?;
    let get = |k: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(k)?.strip_prefix('=')?.trim();
            (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit())).then(|| v.to_string())
        })
    };
    Some(format!(
        "{}.{}.{}",
        get("MYSQL_VERSION_MAJOR")?,
        get("MYSQL_VERSION_MINOR")?,
        get("MYSQL_VERSION_PATCH")?
    ))
}

/// Resolves a source without fetching: a tree is checked (it must hold MyRocks'
/// `storage/rocksdb/rocksdb`), a Debian series must already be unpacked in `src_root`
/// (`apt-get source mariadb` there, see the builds documentation).
pub fn resolve(spec: &MariadbSourceSpec, src_root: &Path) -> Result<MariadbSource, BuildError> {
    match spec {
        MariadbSourceSpec::Tree(path) => {
            let dir = path.canonicalize().map_err(|e| {
                BuildError::Source(format!(
                    "MariaDB source tree {}: {e}; give the directory of an unpacked MariaDB source (it holds VERSION)",
                    path.display()
                ))
            })?;
            let version = check_tree(&dir)?;
            Ok(MariadbSource {
                id: format!("tree:{}:{version}", dir.display()),
                dir,
                version,
            })
        }
        MariadbSourceSpec::Debian { series } => {
            let prefix = format!("mariadb-{series}.");
            let mut found: Vec<(PathBuf, String)> = fs::read_dir(src_root)
                .map_err(|e| {
                    BuildError::Source(format!(
                        "no MariaDB {series} source in {}: {e}; run apt-get source {DEBIAN_PACKAGE} there, or give a source tree path",
                        src_root.display()
                    ))
                })?
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .filter_map(|e| {
                    let debian = fs::read_to_string(e.path().join(MARKER)).ok()?;
                    Some((e.path(), debian.trim().to_string()))
                })
                .collect();
            found.sort();
            let (dir, debian) = found.pop().ok_or_else(|| {
                BuildError::Source(format!(
                    "no unpacked MariaDB {series} source in {}: run apt-get source {DEBIAN_PACKAGE} in a directory there, move mariadb-{series}.N to it and write its Debian version into {MARKER}; or give a source tree path",
                    src_root.display()
                ))
            })?;
            let version = check_tree(&dir)?;
            Ok(MariadbSource {
                id: format!("debian:{DEBIAN_PACKAGE}={debian}"),
                dir,
                version,
            })
        }
    }
}

/// The tree's version, or why it cannot build MariaDB with MyRocks.
fn check_tree(dir: &Path) -> Result<String, BuildError> {
    let version = tree_version(dir).ok_or_else(|| {
        BuildError::Source(format!(
            "{} is not a MariaDB source tree: it has no VERSION file with MYSQL_VERSION_MAJOR/MINOR/PATCH",
            dir.display()
        ))
    })?;
    if !dir.join("storage/rocksdb/rocksdb/CMakeLists.txt").is_file() {
        return Err(BuildError::Source(format!(
            "{} has no MyRocks sources (storage/rocksdb/rocksdb): use Debian's source package or a release tarball, which include them",
            dir.display()
        )));
    }
    Ok(version)
}

/// Refuses recipe keys without a MariaDB meaning here (`pgo`).
pub fn check_recipe(recipe: &Recipe) -> Result<(), BuildError> {
    if recipe.pgo.is_some() {
        return Err(BuildError::Source(
            "pgo is not available for MariaDB builds: build with cflags, lto, march and frame_pointers".into(),
        ));
    }
    Ok(())
}

/// What a build makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The server, its tools and `lib/plugin/ha_rocksdb.so`: a basedir for
    /// `mysql:<dir>?engine=rocksdb` (an hour or more on 2 cores).
    Server,
    /// The MyRocks plugin alone (`ha_rocksdb.so`, with the RocksDB it embeds), for a server
    /// of exactly the same version through `plugin_dir=` (MariaDB refuses a storage engine
    /// built for another version): about a third of the build. Only the storage engine
    /// follows the recipe; the server's own code is whatever that server was built with.
    Plugin,
}

/// Where a plugin build puts the plugin, under the build directory (`plugin_dir=`).
const PLUGIN_DIR: &str = "lib/plugin";

/// The ninja target and output of the plugin, under the build tree.
const PLUGIN_OUTPUT: &str = "storage/rocksdb/ha_rocksdb.so";

impl Scope {
    /// The cache directory name's prefix.
    fn name(self) -> &'static str {
        match self {
            Scope::Server => "mariadb",
            Scope::Plugin => "myrocks-plugin",
        }
    }

    /// The file whose presence (with [`DONE_FILE`]) says a build of this scope finished.
    fn product(self) -> &'static str {
        match self {
            Scope::Server => "bin/mariadbd",
            Scope::Plugin => "lib/plugin/ha_rocksdb.so",
        }
    }

    /// What a target takes from the build directory `dir`: the basedir, or the plugin
    /// directory.
    pub fn target_path(self, dir: &Path) -> PathBuf {
        match self {
            Scope::Server => dir.to_path_buf(),
            Scope::Plugin => dir.join(PLUGIN_DIR),
        }
    }
}

/// The build's cache directory name: `mariadb-<version>-<hash12>` (the server) or
/// `myrocks-plugin-<version>-<hash12>` over the source, the recipe and the compiler.
pub fn build_name(
    scope: Scope,
    source: &MariadbSource,
    recipe: &Recipe,
    cc_version: &str,
) -> String {
    let key = hash12(&[
        scope.name(),
        &source.id,
        &recipe.canonical(),
        cc_version,
        &cmake_args(recipe, Path::new("/"), Path::new("/")).join(" "),
    ]);
    format!("{}-{}-{key}", scope.name(), source.version)
}

/// Plugins and parts left out of the build (no benchmark loads them).
const LEFT_OUT: [&str; 14] = [
    "-DPLUGIN_MROONGA=NO",
    "-DPLUGIN_SPIDER=NO",
    "-DPLUGIN_CONNECT=NO",
    "-DPLUGIN_OQGRAPH=NO",
    "-DPLUGIN_COLUMNSTORE=NO",
    "-DPLUGIN_S3=NO",
    "-DPLUGIN_SPHINX=NO",
    "-DPLUGIN_TOKUDB=NO",
    "-DPLUGIN_AWS_KEY_MANAGEMENT=NO",
    "-DPLUGIN_HASHICORP_KEY_MANAGEMENT=NO",
    "-DPLUGIN_AUTH_PAM=NO",
    "-DPLUGIN_AUTH_PAM_V1=NO",
    "-DPLUGIN_AUTH_GSSAPI=NO",
    "-DWITH_WSREP=OFF",
];

/// System libraries and switches as Debian's build uses them, without the optional ones
/// (NUMA, PMEM, jemalloc, systemd) that would change the server beside the recipe.
const SYSTEM: [&str; 14] = [
    "-DWITH_UNIT_TESTS=OFF",
    "-DWITH_EMBEDDED_SERVER=OFF",
    "-DWITH_MARIABACKUP=OFF",
    "-DCONC_WITH_UNIT_TESTS=OFF",
    "-DWITH_SAFEMALLOC=OFF",
    "-DWITH_SSL=system",
    "-DWITH_PCRE=system",
    "-DWITH_ZLIB=system",
    "-DWITH_LIBFMT=system",
    "-DWITH_URING=ON",
    "-DWITH_LIBAIO=ON",
    "-DWITH_PMEM=OFF",
    "-DWITH_NUMA=OFF",
    "-DWITH_JEMALLOC=no",
];

/// The `cmake` configure arguments of a build of `src` into `prefix` with `recipe`.
pub fn cmake_args(recipe: &Recipe, src: &Path, prefix: &Path) -> Vec<String> {
    let flags = format!("{} -DNDEBUG", recipe.cflags());
    let mut args = vec![
        "-S".to_string(),
        src.display().to_string(),
        "-G".to_string(),
        "Ninja".to_string(),
        "-DCMAKE_BUILD_TYPE=Release".to_string(),
        // The recipe's flags are the whole Release flags: CMake's default `-O3` would
        // otherwise follow (and win over) the recipe's `-O` level.
        format!("-DCMAKE_C_FLAGS_RELEASE={flags}"),
        format!("-DCMAKE_CXX_FLAGS_RELEASE={flags}"),
        format!("-DCMAKE_INSTALL_PREFIX={}", prefix.display()),
        // bin/, lib/plugin/, share/ under the prefix: a relocatable basedir.
        "-DINSTALL_LAYOUT=STANDALONE".to_string(),
        "-DINSTALL_MYSQLTESTDIR=".to_string(),
        "-DPLUGIN_ROCKSDB=DYNAMIC".to_string(),
        "-DWITH_SYSTEMD=no".to_string(),
    ];
    let ldflags = recipe.ldflags(&recipe.cflags());
    if !ldflags.is_empty() {
        for kind in ["EXE", "SHARED", "MODULE"] {
            args.push(format!("-DCMAKE_{kind}_LINKER_FLAGS={ldflags}"));
        }
    }
    if recipe.lto {
        // Static libraries of LTO objects need the compiler's archiver plugin.
        args.push("-DCMAKE_AR=/usr/bin/gcc-ar".to_string());
        args.push("-DCMAKE_RANLIB=/usr/bin/gcc-ranlib".to_string());
    }
    args.extend(LEFT_OUT.iter().map(|s| s.to_string()));
    args.extend(SYSTEM.iter().map(|s| s.to_string()));
    args
}

/// The commands of a build, in order (program and arguments), run in `work`: configure,
/// compile with `jobs` jobs (everything, or the plugin's target alone), install into
/// `prefix` (`cmake --install`, or the plugin copied to `prefix/lib/plugin`).
pub fn commands(
    scope: Scope,
    recipe: &Recipe,
    src: &Path,
    work: &Path,
    prefix: &Path,
    jobs: usize,
) -> Vec<Vec<String>> {
    let tree = work.join("build");
    let build = tree.display().to_string();
    let mut configure = vec!["cmake".to_string()];
    configure.extend(cmake_args(recipe, src, prefix));
    configure.push("-B".to_string());
    configure.push(build.clone());
    let mut compile = vec![
        "ninja".to_string(),
        "-C".to_string(),
        build.clone(),
        format!("-j{}", jobs.max(1)),
    ];
    let install = match scope {
        Scope::Server => vec!["cmake".to_string(), "--install".to_string(), build],
        Scope::Plugin => {
            compile.push(PLUGIN_OUTPUT.to_string());
            vec![
                "install".to_string(),
                "-D".to_string(),
                "-m".to_string(),
                "0755".to_string(),
                tree.join(PLUGIN_OUTPUT).display().to_string(),
                prefix.join(Scope::Plugin.product()).display().to_string(),
            ]
        }
    };
    vec![configure, compile, install]
}

/// The file that marks a finished build in its directory (the recipe and source, for
/// people): a directory without it is an interrupted build and is built again.
pub const DONE_FILE: &str = "dbdelta-build.txt";

/// The phases' names, in the order of [`commands`].
const PHASES: [&str; 3] = ["configure", "build", "install"];

/// The finished build of `source` and `recipe` in `builds_dir`, if there is one: what a
/// target takes ([`Scope::target_path`]).
pub fn lookup(
    scope: Scope,
    source: &MariadbSource,
    recipe: &Recipe,
    cc_version: &str,
    builds_dir: &Path,
) -> Option<PathBuf> {
    let dir = builds_dir.join(build_name(scope, source, recipe, cc_version));
    (dir.join(DONE_FILE).is_file() && dir.join(scope.product()).is_file())
        .then(|| scope.target_path(&dir))
}

/// Builds `source` with `recipe` into `builds_dir/<scope>-<version>-<hash12>` (reused when
/// finished earlier) and returns what a target takes from it ([`Scope::target_path`]). The
/// work tree is `.work-<name>` beside it, the log `build.log` in it; `note` hears each phase
/// as it starts. The server takes an hour or more on 2 cores, the plugin alone about a third
/// of that.
pub fn build(
    scope: Scope,
    source: &MariadbSource,
    recipe: &Recipe,
    builds_dir: &Path,
    jobs: usize,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, BuildError> {
    check_recipe(recipe)?;
    let cc = crate::driver::compiler_version("gcc")?;
    if let Some(found) = lookup(scope, source, recipe, &cc, builds_dir) {
        return Ok(found);
    }
    let name = build_name(scope, source, recipe, &cc);
    let prefix = builds_dir.join(&name);
    let work = builds_dir.join(format!(".work-{name}"));
    let io = |p: &Path, e: std::io::Error| BuildError::Io(format!("{}: {e}", p.display()));
    fs::create_dir_all(&work).map_err(|e| io(&work, e))?;
    let log_path = work.join(LOG_FILE);
    let log = fs::File::create(&log_path).map_err(|e| io(&log_path, e))?;
    for (phase, cmd) in
        PHASES
            .iter()
            .zip(commands(scope, recipe, &source.dir, &work, &prefix, jobs))
    {
        note(&format!("{name}: {phase}"));
        let (out, err) = match (log.try_clone(), log.try_clone()) {
            (Ok(o), Ok(e)) => (o, e),
            (Err(e), _) | (_, Err(e)) => return Err(io(&log_path, e)),
        };
        let status = std::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .status();
        let cause: Option<crate::driver::Cause> = match status {
            Ok(s) if s.success() => None,
            Ok(s) => Some(format!("{} exited with {s}", cmd[0]).into()),
            Err(e) => Some(Box::new(e)),
        };
        if let Some(cause) = cause {
            let text = fs::read(&log_path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            return Err(BuildError::Phase {
                name,
                phase: phase.to_string(),
                cause,
                log: log_path.display().to_string(),
                tail: crate::tail(&text, 20),
            });
        }
    }
    let about = format!(
        "built: {}\nsource: {}\nversion: {}\nrecipe: {}\ncompiler: {cc}\ncmake: {}\n",
        scope.name(),
        source.id,
        source.version,
        recipe.canonical(),
        cmake_args(recipe, &source.dir, &prefix).join(" ")
    );
    let done = prefix.join(DONE_FILE);
    fs::write(&done, about).map_err(|e| io(&done, e))?;
    let _ = fs::copy(&log_path, prefix.join(LOG_FILE));
    let _ = fs::remove_dir_all(&work);
    Ok(scope.target_path(&prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg<'a>(args: &'a [String], key: &str) -> Option<&'a str> {
        args.iter().find_map(|a| a.strip_prefix(key))
    }

    #[test]
    fn sources_parse() {
        assert_eq!(
            MariadbSourceSpec::parse("10.11").unwrap(),
            MariadbSourceSpec::Debian {
                series: "10.11".into()
            }
        );
        assert_eq!(
            MariadbSourceSpec::parse("./mariadb-10.11.18").unwrap(),
            MariadbSourceSpec::Tree("./mariadb-10.11.18".into())
        );
        for bad in ["10", "ten.eleven", "10.11.x", ""] {
            let e = MariadbSourceSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("10.11"), "{bad}: {e}");
        }
    }

    fn fake_tree(dir: &Path, patch: u32, rocksdb: bool) {
        fs::write(
            dir.join("VERSION"),
            format!("MYSQL_VERSION_MAJOR=10\nMYSQL_VERSION_MINOR=11\nMYSQL_VERSION_PATCH={patch}\nSERVER_MATURITY=stable\n"),
        )
        .unwrap();
        if rocksdb {
            let r = dir.join("storage/rocksdb/rocksdb");
            fs::create_dir_all(&r).unwrap();
            fs::write(r.join("CMakeLists.txt"), "").unwrap();
        }
    }

    #[test]
    fn trees_need_a_version_and_myrocks() {
        let d = tempfile::tempdir().unwrap();
        let spec = MariadbSourceSpec::Tree(d.path().to_path_buf());
        assert!(resolve(&spec, d.path()).is_err());
        fake_tree(d.path(), 18, false);
        let e = resolve(&spec, d.path()).unwrap_err().to_string();
        assert!(e.contains("storage/rocksdb"), "{e}");
        fake_tree(d.path(), 18, true);
        let s = resolve(&spec, d.path()).unwrap();
        assert_eq!(s.version, "10.11.18");
        assert!(s.id.starts_with("tree:"));
    }

    #[test]
    fn debian_sources_are_found_unpacked_in_the_cache() {
        let root = tempfile::tempdir().unwrap();
        let spec = MariadbSourceSpec::parse("10.11").unwrap();
        let e = resolve(&spec, root.path()).unwrap_err().to_string();
        assert!(e.contains("apt-get source mariadb"), "{e}");
        let dir = root.path().join("mariadb-10.11.18");
        fs::create_dir_all(&dir).unwrap();
        fake_tree(&dir, 18, true);
        // Not complete until the marker says which Debian version it is.
        assert!(resolve(&spec, root.path()).is_err());
        fs::write(dir.join(MARKER), "1:10.11.18-0+deb12u1\n").unwrap();
        let s = resolve(&spec, root.path()).unwrap();
        assert_eq!(s.version, "10.11.18");
        assert_eq!(s.id, "debian:mariadb=1:10.11.18-0+deb12u1");
        assert!(resolve(&MariadbSourceSpec::parse("10.6").unwrap(), root.path()).is_err());
    }

    #[test]
    fn the_default_recipe_is_a_release_build_at_o2_with_the_rocksdb_plugin() {
        let args = cmake_args(&Recipe::default(), Path::new("/src"), Path::new("/p"));
        assert_eq!(arg(&args, "-DCMAKE_BUILD_TYPE="), Some("Release"));
        assert_eq!(arg(&args, "-DCMAKE_C_FLAGS_RELEASE="), Some("-O2 -DNDEBUG"));
        assert_eq!(
            arg(&args, "-DCMAKE_CXX_FLAGS_RELEASE="),
            Some("-O2 -DNDEBUG")
        );
        assert_eq!(arg(&args, "-DPLUGIN_ROCKSDB="), Some("DYNAMIC"));
        assert_eq!(arg(&args, "-DCMAKE_INSTALL_PREFIX="), Some("/p"));
        assert_eq!(arg(&args, "-DCMAKE_EXE_LINKER_FLAGS="), None);
        assert_eq!(arg(&args, "-DCMAKE_AR="), None);
    }

    #[test]
    fn recipe_keys_reach_the_compiler_and_linker() {
        let r = Recipe::parse("lto=on&march=native&frame_pointers=on&cflags=-O3").unwrap();
        let args = cmake_args(&r, Path::new("/src"), Path::new("/p"));
        let c = arg(&args, "-DCMAKE_CXX_FLAGS_RELEASE=").unwrap();
        for f in [
            "-O3",
            "-march=native",
            "-flto=auto",
            "-fno-omit-frame-pointer",
            "-DNDEBUG",
        ] {
            assert!(c.split(' ').any(|t| t == f), "{f}: {c}");
        }
        assert!(!c.contains("-O2"), "{c}");
        for kind in ["EXE", "SHARED", "MODULE"] {
            let l = arg(&args, &format!("-DCMAKE_{kind}_LINKER_FLAGS=")).unwrap();
            assert!(l.contains("-flto=auto"), "{kind}: {l}");
        }
        assert_eq!(arg(&args, "-DCMAKE_AR="), Some("/usr/bin/gcc-ar"));
        let march = Recipe::parse("march=native").unwrap();
        let args = cmake_args(&march, Path::new("/src"), Path::new("/p"));
        assert_eq!(
            arg(&args, "-DCMAKE_C_FLAGS_RELEASE="),
            Some("-O2 -march=native -DNDEBUG")
        );
        assert_eq!(arg(&args, "-DCMAKE_EXE_LINKER_FLAGS="), None);
    }

    #[test]
    fn pgo_is_refused_and_the_cache_key_follows_the_recipe() {
        let e = check_recipe(&Recipe::parse("pgo=sysbench").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("pgo") && e.contains("lto"), "{e}");
        check_recipe(&Recipe::parse("lto=on").unwrap()).unwrap();
        let src = MariadbSource {
            dir: "/s".into(),
            version: "10.11.18".into(),
            id: "debian:mariadb=1:10.11.18-0+deb12u1".into(),
        };
        let name =
            |scope, recipe: &str, cc| build_name(scope, &src, &Recipe::parse(recipe).unwrap(), cc);
        let a = name(Scope::Server, "", "gcc 12.2.0");
        assert!(a.starts_with("mariadb-10.11.18-") && a.len() == "mariadb-10.11.18-".len() + 12);
        assert_eq!(a, name(Scope::Server, "", "gcc 12.2.0"));
        assert_ne!(a, name(Scope::Server, "lto=on", "gcc 12.2.0"));
        assert_ne!(a, name(Scope::Server, "", "gcc 13.1.0"));
        let p = name(Scope::Plugin, "", "gcc 12.2.0");
        assert!(p.starts_with("myrocks-plugin-10.11.18-"), "{p}");
        assert_ne!(a[a.len() - 12..], p[p.len() - 12..]);
    }

    #[test]
    fn only_a_finished_build_is_found() {
        let builds = tempfile::tempdir().unwrap();
        let src = MariadbSource {
            dir: "/s".into(),
            version: "10.11.18".into(),
            id: "tree:/s:10.11.18".into(),
        };
        let r = Recipe::default();
        let found = |scope| lookup(scope, &src, &r, "gcc", builds.path());
        assert_eq!(found(Scope::Server), None);
        let dir = builds
            .path()
            .join(build_name(Scope::Server, &src, &r, "gcc"));
        fs::create_dir_all(dir.join("bin")).unwrap();
        fs::write(dir.join("bin/mariadbd"), "").unwrap();
        // Interrupted: no done file yet.
        assert_eq!(found(Scope::Server), None);
        fs::write(dir.join(DONE_FILE), "").unwrap();
        assert_eq!(found(Scope::Server), Some(dir));
        // The plugin alone is another build, found by its plugin, and given as plugin_dir.
        assert_eq!(found(Scope::Plugin), None);
        let dir = builds
            .path()
            .join(build_name(Scope::Plugin, &src, &r, "gcc"));
        fs::create_dir_all(dir.join("lib/plugin")).unwrap();
        fs::write(dir.join(DONE_FILE), "").unwrap();
        assert_eq!(found(Scope::Plugin), None);
        fs::write(dir.join("lib/plugin/ha_rocksdb.so"), "").unwrap();
        assert_eq!(found(Scope::Plugin), Some(dir.join("lib/plugin")));
    }

    #[test]
    fn commands_configure_build_and_install() {
        let c = |scope| {
            commands(
                scope,
                &Recipe::default(),
                Path::new("/src"),
                Path::new("/w"),
                Path::new("/p"),
                2,
            )
        };
        let server = c(Scope::Server);
        assert_eq!(server.len(), 3);
        assert_eq!(server[0][0], "cmake");
        assert!(server[0].ends_with(&["-B".to_string(), "/w/build".to_string()]));
        assert_eq!(server[1], ["ninja", "-C", "/w/build", "-j2"]);
        assert_eq!(server[2], ["cmake", "--install", "/w/build"]);
        // The plugin alone: the same configure, its one target, the module copied.
        let plugin = c(Scope::Plugin);
        assert_eq!(plugin[0], server[0]);
        assert_eq!(
            plugin[1],
            [
                "ninja",
                "-C",
                "/w/build",
                "-j2",
                "storage/rocksdb/ha_rocksdb.so"
            ]
        );
        assert_eq!(
            plugin[2],
            [
                "install",
                "-D",
                "-m",
                "0755",
                "/w/build/storage/rocksdb/ha_rocksdb.so",
                "/p/lib/plugin/ha_rocksdb.so"
            ]
        );
    }
}
