//! A RocksDB source from a crate, without the network: a small fixture `.crate` (a fake
//! `librocksdb-sys` whose `rocksdb/` tree has RocksDB's version header and a Makefile that
//! makes a stand-in `librocksdb.so.X.Y.Z` and `db_bench`) served by a `file://` sparse
//! index, then downloaded, checked, unpacked, built, installed and version-checked by the
//! real driver.

use dbdelta_source_build::rocksdb::crates_io::Index;
use dbdelta_source_build::rocksdb::{self, RocksBuildRequest, RocksSourceSpec};
use dbdelta_source_build::{BuildError, Cache, Recipe};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::Path;
use std::process::Command;

const CRATE: &str = "librocksdb-sys";
const VERS: &str = "0.17.1+9.9.3";

/// A Makefile standing in for RocksDB's: the two goals dbdelta asks for, each making a
/// file; db_bench reports `reported` as its version. With `reported` = `fail-once`, the
/// first make leaves a half-done object (`half.o`) and fails; a make that finds it succeeds.
fn makefile(reported: &str) -> String {
    if reported == "fail-once" {
        return "shared_lib:\n\ttest -f half.o || { touch half.o; exit 1; }\n\tprintf 'x\\n' > librocksdb.so.9.9.3\n\
                db_bench:\n\tprintf '#!/bin/sh\\necho db_bench version 9.9.3\\n' > db_bench\n\tchmod +x db_bench\n"
            .to_string();
    }
    format!(
        "shared_lib:\n\tprintf 'not really a library\\n' > librocksdb.so.9.9.3\n\
         db_bench:\n\tprintf '#!/bin/sh\\necho db_bench version {reported}\\n' > db_bench\n\tchmod +x db_bench\n"
    )
}

/// Writes the fixture crate and a sparse index serving it under `root`; returns the index.
fn fixture(root: &Path, reported: &str, corrupt: bool) -> Index {
    let top = root.join("pkg").join(format!("{CRATE}-{VERS}"));
    let tree = top.join("rocksdb");
    fs::create_dir_all(tree.join("include/rocksdb")).unwrap();
    fs::write(
        tree.join("include/rocksdb/version.h"),
        "#define ROCKSDB_MAJOR 9\n#define ROCKSDB_MINOR 9\n#define ROCKSDB_PATCH 3\n",
    )
    .unwrap();
    fs::write(tree.join("Makefile"), makefile(reported)).unwrap();
    // The crate's build script is never run: it would fail the test.
    fs::write(top.join("build.rs"), "fn main() { panic!(\"ran\") }\n").unwrap();
    let index = root.join("index");
    let dl = index.join("dl");
    fs::create_dir_all(&dl).unwrap();
    let file = dl.join(format!("{CRATE}-{VERS}.crate"));
    let st = Command::new("tar")
        .arg("-czf")
        .arg(&file)
        .arg("-C")
        .arg(root.join("pkg"))
        .arg(format!("{CRATE}-{VERS}"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut sum = dbdelta_hex(&Sha256::digest(fs::read(&file).unwrap()));
    if corrupt {
        sum = sum.replace(|c: char| c != '0', "0");
    }
    fs::write(
        index.join("config.json"),
        format!(
            "{{\"dl\": \"file://{}/{{crate}}-{{version}}.crate\"}}",
            dl.display()
        ),
    )
    .unwrap();
    let entries = index.join("li/br");
    fs::create_dir_all(&entries).unwrap();
    fs::write(
        entries.join(CRATE),
        format!(
            "{{\"name\":\"{CRATE}\",\"vers\":\"0.16.0+8.10.0\",\"cksum\":\"{}\",\"yanked\":false}}\n\
             {{\"name\":\"{CRATE}\",\"vers\":\"{VERS}\",\"cksum\":\"{sum}\",\"yanked\":false}}\n",
            "11".repeat(32)
        ),
    )
    .unwrap();
    Index::new(format!("file://{}", index.display()))
}

fn dbdelta_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn a_release_is_fetched_from_the_index_checked_unpacked_and_cached() {
    let d = tempfile::tempdir().unwrap();
    let index = fixture(d.path(), "9.9.3", false);
    let cache = Cache::new(d.path().join("cache"));
    let spec = RocksSourceSpec::parse("9.9").unwrap();
    let mut notes = Vec::new();
    let src =
        rocksdb::spec::resolve(&spec, &cache, &index, &mut |n| notes.push(n.to_string())).unwrap();
    assert_eq!(src.version, "9.9.3");
    assert!(
        src.dir.ends_with(format!("{CRATE}-{VERS}/rocksdb")),
        "{:?}",
        src.dir
    );
    assert!(src.id.starts_with(&format!("crate:{CRATE}@{VERS}:sha256:")));
    assert!(notes.iter().any(|n| n.contains("downloading")), "{notes:?}");
    // The second time needs no index at all.
    fs::remove_dir_all(d.path().join("index")).unwrap();
    let again = rocksdb::spec::resolve_cached(&spec, &cache).unwrap();
    assert_eq!(again, src);
    let exact = RocksSourceSpec::parse(&format!("crate:{CRATE}@{VERS}")).unwrap();
    assert_eq!(rocksdb::spec::resolve_cached(&exact, &cache).unwrap(), src);
    let e = rocksdb::spec::resolve_cached(&RocksSourceSpec::parse("8.10").unwrap(), &cache)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--cached-only"), "{e}");
}

#[test]
fn a_download_whose_checksum_differs_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let index = fixture(d.path(), "9.9.3", true);
    let cache = Cache::new(d.path().join("cache"));
    let e = rocksdb::spec::resolve(
        &RocksSourceSpec::parse("9.9.3").unwrap(),
        &cache,
        &index,
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sha256") && e.contains("differs"), "{e}");
    assert!(!cache.src_dir().join(format!("{CRATE}-{VERS}")).exists());
}

fn build(d: &Path, reported: &str) -> (Cache, Result<rocksdb::RocksBuilt, BuildError>) {
    let index = fixture(d, reported, false);
    let cache = Cache::new(d.join("cache"));
    let spec = RocksSourceSpec::parse("9.9").unwrap();
    let src = rocksdb::spec::resolve(&spec, &cache, &index, &mut |_| {}).unwrap();
    let recipe = Recipe::default();
    let req = RocksBuildRequest {
        source: &src,
        recipe: &recipe,
        cache: &cache,
        jobs: 1,
        cxx: "true".into(),
    };
    let built = rocksdb::build(&req, &mut |_| {});
    (cache, built)
}

#[test]
fn a_build_installs_the_library_and_db_bench_and_checks_their_versions() {
    let d = tempfile::tempdir().unwrap();
    let (cache, built) = build(d.path(), "9.9.3");
    let b = built.unwrap();
    assert!(!b.cached);
    assert!(b.lib.ends_with("lib/librocksdb.so"));
    assert_eq!(
        fs::read_link(&b.lib).unwrap(),
        Path::new("librocksdb.so.9.9.3")
    );
    // db_bench finds the library beside it through its $ORIGIN run path.
    assert!(b.dir.join("bin/librocksdb.so.9").exists());
    assert!(b.db_bench.is_file());
    assert!(!b.dir.join("obj").exists(), "the object tree is removed");
    assert_eq!(b.info.source_version, "9.9.3");
    assert!(b.info.configure.contains(&"LIB_MODE=shared".to_string()));
    assert!(b.info.phases.iter().any(|p| p.name == "verify versions"));
    // Cached the second time.
    let src =
        rocksdb::spec::resolve_cached(&RocksSourceSpec::parse("9.9").unwrap(), &cache).unwrap();
    let recipe = Recipe::default();
    let req = RocksBuildRequest {
        source: &src,
        recipe: &recipe,
        cache: &cache,
        jobs: 1,
        cxx: "true".into(),
    };
    assert!(rocksdb::build(&req, &mut |_| {}).unwrap().cached);
    assert!(rocksdb::lookup(&req).unwrap().is_ok());
    let other = Recipe::parse("cflags=-O3").unwrap();
    let miss = rocksdb::lookup(&RocksBuildRequest {
        recipe: &other,
        ..req.clone()
    })
    .unwrap();
    assert!(miss.is_err(), "another recipe is another entry");
}

#[test]
fn a_db_bench_of_another_version_fails_the_build_naming_both() {
    let d = tempfile::tempdir().unwrap();
    let (_, built) = build(d.path(), "7.8.3");
    let e = built.unwrap_err().to_string();
    assert!(
        e.contains("verify versions")
            && e.contains("db_bench --version says 7.8.3, the source tree 9.9.3"),
        "{e}"
    );
}

#[test]
fn a_failed_make_is_resumed_in_its_object_tree() {
    let d = tempfile::tempdir().unwrap();
    let (cache, built) = build(d.path(), "fail-once");
    let e = built.unwrap_err().to_string();
    assert!(e.contains("make shared_lib db_bench"), "{e}");
    let src =
        rocksdb::spec::resolve_cached(&RocksSourceSpec::parse("9.9").unwrap(), &cache).unwrap();
    let recipe = Recipe::default();
    let req = RocksBuildRequest {
        source: &src,
        recipe: &recipe,
        cache: &cache,
        jobs: 1,
        cxx: "true".into(),
    };
    let mut notes = Vec::new();
    let b = rocksdb::build(&req, &mut |e| {
        if let dbdelta_source_build::driver::Event::Note(n) = e {
            notes.push(n.to_string())
        }
    })
    .unwrap();
    assert!(
        notes.iter().any(|n| n.contains("resuming its make")),
        "{notes:?}"
    );
    assert!(
        b.info.phases.iter().all(|p| p.name != "copy the tree"),
        "{:?}",
        b.info.phases
    );
    // The object tree is removed once the build is complete.
    assert!(!b.dir.join("obj").exists());
}
