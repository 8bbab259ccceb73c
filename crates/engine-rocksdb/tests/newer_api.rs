//! Options whose C API only newer libraries have: Debian's librocksdb 7.8.3 lacks
//! `rocksdb_cache_create_hyper_clock`, so `cache_type=hyper_clock` is refused when the
//! library loads, naming its version and the fix; the same target with the LRU cache opens.

use dbdelta_engine::OpenOptions;
use dbdelta_engine_rocksdb::RocksdbEngine;
use dbdelta_model::testing::require;
use dbdelta_model::TargetSpec;

const DEBIAN_LIB: &str = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8";

#[test]
fn hyper_clock_is_refused_by_a_7x_library_naming_its_version() {
    if !require(&[DEBIAN_LIB], "apt-get install librocksdb-dev") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!(
        "h=rocksdb:{}/h?lib={DEBIAN_LIB}&cache_type=hyper_clock",
        d.path().display()
    ))
    .unwrap();
    let e = RocksdbEngine::open(&spec, d.path(), &OpenOptions::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("cache_type=hyper_clock")
            && e.contains("rocksdb_cache_create_hyper_clock")
            && e.contains("RocksDB 7.8.3")
            && e.contains("cache_type=lru"),
        "{e}"
    );
    let lru = TargetSpec::parse(&format!(
        "l=rocksdb:{}/l?lib={DEBIAN_LIB}&cache_type=lru",
        d.path().display()
    ))
    .unwrap();
    assert!(RocksdbEngine::open(&lru, d.path(), &OpenOptions::default()).is_ok());
}
