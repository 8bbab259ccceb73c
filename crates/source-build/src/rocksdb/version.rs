//! RocksDB versions as each artifact reports them: the tree's `include/rocksdb/version.h`,
//! the library's file name (`librocksdb.so.9.9.3`), db_bench's `--version` line and its
//! header (`RocksDB:    version 9.9.3`), and the `RocksDB version: 9.9.3` line the library
//! writes into a database's info `LOG` when it opens one. A build is checked by
//! [`agree`]: every report must name the same version.

use std::fmt;

/// A RocksDB version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// `ROCKSDB_MAJOR`.
    pub major: u32,
    /// `ROCKSDB_MINOR`.
    pub minor: u32,
    /// `ROCKSDB_PATCH`.
    pub patch: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl Version {
    /// `9.9.3` (exactly three numbers).
    pub fn parse(text: &str) -> Option<Version> {
        let mut it = text.trim().split('.').map(|p| p.parse::<u32>().ok());
        let v = Version {
            major: it.next()??,
            minor: it.next()??,
            patch: it.next()??,
        };
        it.next().is_none().then_some(v)
    }
}

/// The version `include/rocksdb/version.h` defines (`#define ROCKSDB_MAJOR 9` …).
pub fn from_header(text: &str) -> Option<Version> {
    let def = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse::<u32>().ok())
                .flatten()
        })
    };
    Some(Version {
        major: def("ROCKSDB_MAJOR")?,
        minor: def("ROCKSDB_MINOR")?,
        patch: def("ROCKSDB_PATCH")?,
    })
}

/// The version in a library's real file name: `librocksdb.so.9.9.3`.
pub fn from_library_name(name: &str) -> Option<Version> {
    Version::parse(name.strip_prefix("librocksdb.so.")?)
}

/// The version db_bench reports: its `--version` line (`db_bench version 9.9.3`) or its
/// header line (`RocksDB:    version 9.9.3`); both come from the library's
/// `GetRocksVersionAsString`.
pub fn from_db_bench(output: &str) -> Option<Version> {
    output.lines().find_map(|l| {
        let rest = l
            .trim()
            .strip_prefix("db_bench version ")
            .or_else(|| l.trim().strip_prefix("RocksDB:").map(str::trim_start))
            .map(|r| r.strip_prefix("version ").unwrap_or(r))?;
        Version::parse(rest.split_whitespace().next()?)
    })
}

/// The version a library wrote into a database's info `LOG` when it opened it
/// (`… RocksDB version: 9.9.3`); the last one, as a `LOG` may hold several opens.
pub fn from_info_log(log: &str) -> Option<Version> {
    log.lines().rev().find_map(|l| {
        let (_, rest) = l.split_once("RocksDB version: ")?;
        Version::parse(rest.split_whitespace().next()?)
    })
}

/// The reports of one build that disagree, or are missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the build's versions disagree: {}", .0.join(", "))]
pub struct Disagreement(pub Vec<String>);

/// Checks that every report names the same version as the source tree; `reports` are
/// (what, its version if it reported one). Returns the version.
pub fn agree(tree: Version, reports: &[(&str, Option<Version>)]) -> Result<Version, Disagreement> {
    let bad: Vec<String> = reports
        .iter()
        .filter(|(_, v)| *v != Some(tree))
        .map(|(what, v)| match v {
            Some(v) => format!("{what} says {v}, the source tree {tree}"),
            None => format!("{what} reports no version (the source tree is {tree})"),
        })
        .collect();
    if bad.is_empty() {
        Ok(tree)
    } else {
        Err(Disagreement(bad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "#pragma once\n#define ROCKSDB_MAJOR 9\n#define ROCKSDB_MINOR 9\n#define ROCKSDB_PATCH 3\n\
                          // Do not use these. We made the mistake of declaring macros\n#define MAJOR 1\n";
    const DB_BENCH_VERSION: &str = "db_bench version 9.9.3\n";
    const DB_BENCH_HEADER: &str =
        "Set seed to 1\nRocksDB:    version 9.9.3\nDate:       Fri Nov 27\nCPU:        2 * AMD\n";
    const LOG: &str = "2026/11/27-11:40:01.000 7f RocksDB version: 9.9.3\n\
                       2026/11/27-11:40:01.000 7f Compile date 2026-11-27\n";

    #[test]
    fn each_report_parses() {
        let v = Version::parse("9.9.3").unwrap();
        assert_eq!(from_header(HEADER), Some(v));
        assert_eq!(from_library_name("librocksdb.so.9.9.3"), Some(v));
        assert_eq!(from_library_name("librocksdb.so.9"), None);
        assert_eq!(from_db_bench(DB_BENCH_VERSION), Some(v));
        assert_eq!(from_db_bench(DB_BENCH_HEADER), Some(v));
        assert_eq!(from_info_log(LOG), Some(v));
        assert_eq!(from_info_log("no version here"), None);
        assert_eq!(Version::parse("9.9"), None);
        assert_eq!(Version::parse("9.9.3.1"), None);
        assert!(Version::parse("10.4.2").unwrap() > Version::parse("9.10.0").unwrap());
    }

    #[test]
    fn a_build_agrees_only_when_every_report_names_the_tree_version() {
        let tree = from_header(HEADER).unwrap();
        let ok = agree(
            tree,
            &[
                ("librocksdb.so", from_library_name("librocksdb.so.9.9.3")),
                ("db_bench", from_db_bench(DB_BENCH_VERSION)),
                ("the library's LOG", from_info_log(LOG)),
            ],
        );
        assert_eq!(ok, Ok(tree));
        // A db_bench that loaded another librocksdb (Debian's 7.8.3 through the loader path).
        let e = agree(
            tree,
            &[
                ("librocksdb.so", from_library_name("librocksdb.so.9.9.3")),
                ("db_bench", from_db_bench("db_bench version 7.8.3")),
                ("the library's LOG", from_info_log("")),
            ],
        )
        .unwrap_err();
        assert_eq!(e.0.len(), 2, "{e}");
        assert!(
            e.to_string()
                .contains("db_bench says 7.8.3, the source tree 9.9.3"),
            "{e}"
        );
        assert!(e.to_string().contains("LOG reports no version"), "{e}");
    }
}
