//! What the manifest records of a RocksDB target: the library version from the LOG file
//! (as benchmark.sh greps it) and the effective options from the newest OPTIONS file
//! RocksDB wrote, so two targets' differences show in the report's settings table.

use crate::options::RocksOptions;
use std::collections::BTreeMap;
use std::path::Path;

/// `RocksDB version: X.Y.Z` from the database's LOG.
pub fn version(dir: &Path) -> Option<String> {
    let log = std::fs::read_to_string(dir.join("LOG")).ok()?;
    log.lines().find_map(|l| {
        l.split_once("RocksDB version: ")
            .map(|(_, v)| v.trim().to_string())
    })
}

/// The newest `OPTIONS-<n>` file of `dir`.
fn newest_options_file(dir: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
}

/// dbdelta's option values, then every `key=value` of the OPTIONS file's sections under a
/// prefix (`db.`, `cf.`, `table.`).
pub fn effective(dir: &Path, options: &RocksOptions) -> BTreeMap<String, String> {
    let mut m = options.settings();
    let Some(text) = newest_options_file(dir).and_then(|p| std::fs::read_to_string(p).ok()) else {
        return m;
    };
    m.extend(parse_options_file(&text));
    m
}

/// `[DBOptions]` → `db.`, `[CFOptions "default"]` → `cf.`, `[TableOptions/… "default"]` →
/// `table.`; `[Version]` and other sections are skipped.
pub fn parse_options_file(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut prefix = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            prefix = if line.starts_with("[DBOptions") {
                Some("db.")
            } else if line.starts_with("[CFOptions") {
                Some("cf.")
            } else if line.starts_with("[TableOptions") {
                Some("table.")
            } else {
                None
            };
            continue;
        }
        if let (Some(p), Some((k, v))) = (prefix, line.split_once('=')) {
            m.insert(format!("{p}{}", k.trim()), v.trim().to_string());
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_file_sections_get_prefixes() {
        let text = "[Version]\n  rocksdb_version=7.8.3\n[DBOptions]\n  max_background_jobs=8\n\
                    [CFOptions \"default\"]\n  compression=kLZ4Compression\n\
                    [TableOptions/BlockBasedTable \"default\"]\n  block_size=8192\n";
        let m = parse_options_file(text);
        assert_eq!(m["db.max_background_jobs"], "8");
        assert_eq!(m["cf.compression"], "kLZ4Compression");
        assert_eq!(m["table.block_size"], "8192");
        assert!(!m.keys().any(|k| k.contains("rocksdb_version")));
    }
}
