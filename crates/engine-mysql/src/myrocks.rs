//! MyRocks targets: `engine=rocksdb` on a mysql target puts the workloads' tables in
//! MariaDB's RocksDB storage engine (MyRocks) instead of InnoDB.
//!
//! On a managed server it loads the plugin (`plugin-load-add=ha_rocksdb.so`, Debian's
//! `mariadb-plugin-rocksdb`, or the plugin a source build installed beside the server) and
//! makes RocksDB the default engine; on any server it checks that `information_schema.ENGINES`
//! offers ROCKSDB, and the workloads' `CREATE TABLE` then says `ENGINE=ROCKSDB`. MyRocks
//! settings (`rocksdb_*`) are ordinary server settings of the target. MariaDB's MyRocks
//! documentation lists what the engine lacks: foreign keys and FULLTEXT indexes (no built-in
//! workload uses either), gap locks (REPEATABLE READ locks rows only) and SERIALIZABLE.

use crate::connection::MysqlConnection;
use dbdelta_engine::{Connection, EngineError};
use dbdelta_model::TargetSpec;
use std::path::{Path, PathBuf};

/// The target parameter (a dbdelta option, not a server setting).
pub(crate) const PARAM: &str = "engine";

/// The engine name as the server spells it in `ENGINE=` and `information_schema`.
pub(crate) const ROCKSDB: &str = "ROCKSDB";

/// The plugin library Debian's `mariadb-plugin-rocksdb` and a MariaDB source build install.
pub(crate) const PLUGIN_LIBRARY: &str = "ha_rocksdb.so";

/// Where a basedir keeps its plugins: Debian's `/usr/lib/mysql/plugin`, a source build's
/// `lib/plugin` (MariaDB's STANDALONE layout), MySQL's `lib/mysql/plugin` and `lib64`.
const PLUGIN_DIRS: [&str; 4] = [
    "lib/mysql/plugin",
    "lib/plugin",
    "lib64/mysql/plugin",
    "lib64/plugin",
];

/// Status variables a MyRocks target reads around each step (`SHOW GLOBAL STATUS`), in place
/// of InnoDB's: its rows, block cache, memtable, bloom filter, bytes read and written by
/// the engine, its WAL, flushes and compactions, and write stalls.
pub(crate) const STATUS: [&str; 20] = [
    "Rocksdb_rows_read",
    "Rocksdb_rows_inserted",
    "Rocksdb_rows_updated",
    "Rocksdb_rows_deleted",
    "Rocksdb_block_cache_hit",
    "Rocksdb_block_cache_miss",
    "Rocksdb_block_cache_data_hit",
    "Rocksdb_block_cache_data_miss",
    "Rocksdb_memtable_hit",
    "Rocksdb_memtable_miss",
    "Rocksdb_bloom_filter_useful",
    "Rocksdb_bytes_read",
    "Rocksdb_bytes_written",
    "Rocksdb_wal_bytes",
    "Rocksdb_wal_synced",
    "Rocksdb_flush_write_bytes",
    "Rocksdb_compact_read_bytes",
    "Rocksdb_compact_write_bytes",
    "Rocksdb_number_db_seek",
    "Rocksdb_stall_micros",
];

/// Settings read back into the manifest for a MyRocks target, besides the target's own.
pub(crate) const REPORTED: [&str; 8] = [
    "rocksdb_git_hash",
    "rocksdb_block_cache_size",
    "rocksdb_flush_log_at_trx_commit",
    "rocksdb_max_background_jobs",
    "rocksdb_default_cf_options",
    "rocksdb_use_direct_reads",
    "rocksdb_perf_context_level",
    "default_storage_engine",
];

/// True for the target parameter, written as the server writes settings (any case).
pub(crate) fn is_param(key: &str) -> bool {
    key.eq_ignore_ascii_case(PARAM)
}

/// The table engine the target asks for: `Some(ROCKSDB)` for `engine=rocksdb` (or
/// `myrocks`), `None` for `engine=innodb` or no parameter; anything else is an error naming
/// the choices.
pub(crate) fn wanted(spec: &TargetSpec) -> Result<Option<&'static str>, EngineError> {
    let mut engine = None;
    for (k, v) in spec.params.iter().filter(|(k, _)| is_param(k)) {
        engine = match v.to_ascii_lowercase().as_str() {
            "rocksdb" | "myrocks" => Some(ROCKSDB),
            "innodb" => None,
            _ => {
                return Err(EngineError::config(format!(
                    "target '{}': {k}={v} is not a table engine dbdelta knows: write {PARAM}=rocksdb for MyRocks (MariaDB's RocksDB engine) or {PARAM}=innodb (the default)",
                    spec.name
                )))
            }
        };
    }
    Ok(engine)
}

/// The `my.cnf` lines a managed MyRocks server needs before the target's own settings
/// (which come later and so win): the plugin and RocksDB as the default engine, so that
/// every table, dbdelta's ledger included, lives in it.
pub(crate) fn managed_settings() -> Vec<(String, String)> {
    vec![
        ("plugin-load-add".into(), PLUGIN_LIBRARY.into()),
        ("default-storage-engine".into(), ROCKSDB.into()),
    ]
}

/// The plugin library in `basedir`, or an error saying how to get it. A target that sets
/// `plugin_dir` itself is trusted to hold it (the server says so if not).
pub(crate) fn check_plugin(
    target: &str,
    basedir: &Path,
    params: &[(String, String)],
) -> Result<Option<PathBuf>, EngineError> {
    if params
        .iter()
        .any(|(k, _)| k.replace('-', "_").eq_ignore_ascii_case("plugin_dir"))
    {
        return Ok(None);
    }
    let found = PLUGIN_DIRS
        .iter()
        .map(|d| basedir.join(d).join(PLUGIN_LIBRARY))
        .find(|p| p.is_file());
    match found {
        Some(p) => Ok(Some(p)),
        None => Err(EngineError::config(format!(
            "target '{target}': {PARAM}=rocksdb needs the MyRocks plugin {PLUGIN_LIBRARY} in basedir {} (looked in {}); apt-get install mariadb-plugin-rocksdb, or use a MariaDB build with the plugin (dbdelta build mariadb)",
            basedir.display(),
            PLUGIN_DIRS.join(", ")
        ))),
    }
}

/// What a server log says about a MyRocks plugin the server refused for its version (MariaDB
/// loads a storage engine only into the server version it was built for), as the fix: the
/// log's own last line then blames only the engine (`Unknown/unsupported storage engine`).
pub(crate) fn refused_plugin(log: &str) -> Option<String> {
    let line = log.lines().find(|l| {
        l.contains(PLUGIN_LIBRARY) && l.contains("not supported by this version of the server")
    })?;
    let why = line
        .split_once("mariadbd: ")
        .map_or(line, |(_, rest)| rest)
        .trim();
    Some(format!(
        "the server refused the MyRocks plugin ({why}): a storage engine loads only into the server version it was built for; give plugin_dir= a plugin built from this server's version (dbdelta build mariadb --plugin-only --source TREE_OF_THAT_VERSION) or run the server of the plugin's version"
    ))
}

/// Fails unless the server offers ROCKSDB (`information_schema.ENGINES`, support `YES` or
/// `DEFAULT`): an external server without the plugin, or one that failed to load it.
pub(crate) fn check_server(target: &str, conn: &mut MysqlConnection) -> Result<(), EngineError> {
    let support = conn
        .query_scalar("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")?
        .unwrap_or_default();
    if matches!(support.to_ascii_uppercase().as_str(), "YES" | "DEFAULT") {
        Ok(())
    } else {
        Err(EngineError::config(format!(
            "target '{target}': {PARAM}=rocksdb but the server does not offer the ROCKSDB engine (information_schema.ENGINES says '{}'); load the MyRocks plugin (plugin-load-add={PLUGIN_LIBRARY}, Debian's mariadb-plugin-rocksdb) and see the server log",
            if support.is_empty() { "absent" } else { support.as_str() }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_of_another_server_version_is_named_as_the_cause() {
        // Debian's 10.11.18 plugin in its 10.11.19 server, as the server logs it.
        let log = "2026-11-27 23:17:40 0 [Note] Plugin 'FEEDBACK' is disabled.\n\
            2026-11-27 23:17:40 0 [ERROR] mariadbd: Can't open shared library 'ha_rocksdb.so' (errno: 8, API version for INFORMATION SCHEMA plugin ROCKSDB_TRX not supported by this version of the server)\n\
            2026-11-27 23:17:40 0 [ERROR] Unknown/unsupported storage engine: ROCKSDB\n";
        let why = refused_plugin(log).unwrap();
        assert!(
            why.starts_with("the server refused the MyRocks plugin (Can't open shared library 'ha_rocksdb.so' (errno: 8, API version")
                && why.contains("--plugin-only"),
            "{why}"
        );
        assert_eq!(
            refused_plugin("[ERROR] Unknown/unsupported storage engine: ROCKSDB"),
            None
        );
    }
    use dbdelta_model::Location;

    fn spec(params: &[(&str, &str)]) -> TargetSpec {
        TargetSpec {
            name: "my".into(),
            engine: "mysql".into(),
            location: Location::Default,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_engine_parameter_names_rocksdb_or_innodb() {
        assert_eq!(wanted(&spec(&[])).unwrap(), None);
        assert_eq!(
            wanted(&spec(&[("engine", "rocksdb")])).unwrap(),
            Some(ROCKSDB)
        );
        assert_eq!(
            wanted(&spec(&[("ENGINE", "MyRocks")])).unwrap(),
            Some(ROCKSDB)
        );
        assert_eq!(wanted(&spec(&[("engine", "InnoDB")])).unwrap(), None);
        let e = wanted(&spec(&[("engine", "myisam")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("engine=myisam") && e.contains("engine=rocksdb"),
            "{e}"
        );
    }

    #[test]
    fn the_plugin_is_looked_for_in_the_basedir() {
        let d = tempfile::tempdir().unwrap();
        let e = check_plugin("my", d.path(), &[]).unwrap_err().to_string();
        assert!(e.contains("mariadb-plugin-rocksdb"), "{e}");
        // A target naming its own plugin_dir is not second-guessed.
        let own = vec![("plugin-dir".to_string(), "/x".to_string())];
        assert_eq!(check_plugin("my", d.path(), &own).unwrap(), None);
        let dir = d.path().join("lib/plugin");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(PLUGIN_LIBRARY), b"").unwrap();
        assert_eq!(
            check_plugin("my", d.path(), &[]).unwrap(),
            Some(dir.join(PLUGIN_LIBRARY))
        );
    }

    #[test]
    fn managed_servers_load_the_plugin_and_default_to_rocksdb() {
        let s = managed_settings();
        assert!(s.contains(&("plugin-load-add".into(), PLUGIN_LIBRARY.into())));
        assert!(s.contains(&("default-storage-engine".into(), ROCKSDB.into())));
        // None of them is a setting dbdelta reserves for itself.
        for (k, _) in &s {
            assert_eq!(crate::options::reserved_option(k), None, "{k}");
        }
    }
}
