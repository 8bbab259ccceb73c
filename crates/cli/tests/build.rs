//! `dbdelta build`: bad recipes exit 2 naming the parameter and the valid choices; a build
//! from a fake source tree (a `configure` that writes a Makefile, both recording their
//! runs) is made once and then found in the cache. Real PostgreSQL builds take minutes:
//! they are measured in bench/builds.sh.

mod common;

use common::dbdelta;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[test]
fn a_bad_recipe_exits_2_naming_the_parameter() {
    let cases: &[(&str, &[&str])] = &[
        ("lto=maybe", &["lto=maybe", "on or off"]),
        (
            "opt=3",
            &["'opt'", "cflags, frame_pointers, lto, march, pgo"],
        ),
        ("cflags=-O3;rm -rf /", &["cflags", "shell metacharacters"]),
        ("cflags=-O3 `id`", &["cflags", "shell metacharacters"]),
        ("cflags=O3", &["cflags", "starts with '-'"]),
        ("frame_pointers", &["has no value", "key=value"]),
        ("pgo=nosuchsuite", &["pgo=nosuchsuite"]),
    ];
    let cache = tempfile::tempdir().unwrap();
    for (recipe, needles) in cases {
        let out = dbdelta()
            .args(["build", "postgres", "--source", "15", "--recipe", recipe])
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{recipe}: {err}");
        assert!(err.contains("--recipe"), "{recipe}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{recipe} must say {n}: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(
        fs::read_dir(cache.path()).unwrap().next().is_none(),
        "nothing is fetched or built for a bad recipe"
    );
    for (args, needle) in [
        (&["build", "mysql", "--source", "15"][..], "give postgres"),
        (
            &["build", "postgres", "--source", "fifteen"][..],
            "--source",
        ),
        (
            &["build", "postgres", "--source", "15", "--jobs", "0"][..],
            "--jobs 0",
        ),
    ] {
        let out = dbdelta().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A source tree whose configure and make only record that they ran.
fn fake_tree(dir: &Path, record: &Path) {
    fs::create_dir_all(dir).unwrap();
    let configure = format!(
        r#"#!/bin/sh
PACKAGE_VERSION='15.99'
for a in "$@"; do case "$a" in --prefix=*) prefix="${{a#--prefix=}}";; esac; done
echo "configure CFLAGS=$CFLAGS" >> {r}
printf 'all:\n\techo make >> {r}\ninstall:\n\tmkdir -p %s/bin && touch %s/bin/postgres\n' "$prefix" "$prefix" > Makefile
"#,
        r = record.display()
    );
    let path = dir.join("configure");
    fs::write(&path, configure).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_second_build_comes_from_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("postgresql-15.99");
    let record = tmp.path().join("record.txt");
    fake_tree(&tree, &record);
    let cache = tmp.path().join("cache");
    let build = |recipe: &str| {
        let out = dbdelta()
            .args(["build", "postgres", "--source"])
            .arg(&tree)
            .args(["--recipe", recipe, "--jobs", "1", "--cache-dir"])
            .arg(&cache)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).trim().to_string(), err)
    };
    let (bin, err) = build("cflags=-O3,frame_pointers=on");
    assert!(
        bin.starts_with(&cache.join("builds/postgresql-15.99-").display().to_string()),
        "{bin}"
    );
    assert!(bin.ends_with("/bin"), "{bin}");
    assert!(Path::new(&bin).join("postgres").is_file());
    // One line per phase with its time.
    for phase in ["configure", "make", "install"] {
        assert!(
            err.lines()
                .any(|l| l.contains(phase) && l.trim_end().ends_with(" s")),
            "{phase}: {err}"
        );
    }
    assert!(err.contains("build.log"), "{err}");
    let runs = || fs::read_to_string(&record).unwrap().lines().count();
    assert_eq!(runs(), 2, "configure and make ran once each");
    assert!(fs::read_to_string(&record)
        .unwrap()
        .contains("CFLAGS=-O3 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"));

    // The same recipe in another order: the cache, nothing runs.
    let (again, err) = build("frame_pointers=on&cflags=-O3");
    assert_eq!(again, bin);
    assert!(err.contains("cached"), "{err}");
    assert_eq!(runs(), 2);
    let manifest: serde_json::Value = serde_json::from_slice(
        &fs::read(Path::new(&bin).parent().unwrap().join("dbdelta-build.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["recipe"], "cflags=-O3&frame_pointers=on");
    assert_eq!(manifest["source_version"], "15.99");
    assert!(
        manifest["cc"].as_str().unwrap().contains("gcc")
            || !manifest["cc"].as_str().unwrap().is_empty()
    );
}
