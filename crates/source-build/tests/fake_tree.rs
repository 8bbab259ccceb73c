//! The build driver against a fake PostgreSQL source tree whose `configure` writes a
//! Makefile; both record every invocation, so cache reuse, the PGO passes and failures are
//! tested without compiling PostgreSQL.

use dbdelta_source_build::{
    build, BuildError, BuildRequest, Cache, Cause, Recipe, Source, SourceSpec, TrainError,
};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `configure` records its arguments and CFLAGS, then writes a Makefile whose `all` and
/// `install` record themselves; `install` puts a `bin/postgres` script into the prefix that
/// writes a `.gcda` file where `-fprofile-generate=DIR` points (like an instrumented
/// server at exit).
fn fake_tree(dir: &Path, record: &Path, fail_make: bool) {
    let configure = format!(
        r#"#!/bin/sh
PACKAGE_VERSION='15.99'
prefix=
for a in "$@"; do case "$a" in --prefix=*) prefix="${{a#--prefix=}}";; esac; done
echo "configure $* CFLAGS=$CFLAGS LDFLAGS=$LDFLAGS" >> {record}
gen=$(echo "$CFLAGS" | sed -n 's/.*-fprofile-generate=\([^ ]*\).*/\1/p')
cat > Makefile <<MK
all:
	echo make >> {record}
	{fail}
install:
	echo install >> {record}
	mkdir -p $prefix/bin
	printf '#!/bin/sh\nif [ -n "$gen" ]; then touch "$gen/x.gcda"; fi\n' > $prefix/bin/postgres
	chmod +x $prefix/bin/postgres
MK
echo "configured for $prefix"
"#,
        record = record.display(),
        fail = if fail_make {
            "echo 'gram.y: error: boom' >&2; exit 1"
        } else {
            "true"
        },
    );
    fs::create_dir_all(dir).unwrap();
    let path = dir.join("configure");
    fs::write(&path, configure).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn recorded(record: &Path) -> Vec<String> {
    fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    tree: PathBuf,
    record: PathBuf,
    cache: Cache,
}

fn fixture(fail_make: bool) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("postgresql-15.99");
    let record = tmp.path().join("record.txt");
    fake_tree(&tree, &record, fail_make);
    let cache = Cache::new(tmp.path().join("cache"));
    Fixture {
        _tmp: tmp,
        tree,
        record,
        cache,
    }
}

impl Fixture {
    /// The fake tree as a build source.
    fn source(&self) -> Source {
        dbdelta_source_build::source::resolve(
            &SourceSpec::Tree(self.tree.clone()),
            &self.cache,
            &mut |_| {},
        )
        .unwrap()
    }
}

fn no_training(_: &Path, _: &str, _: &Path) -> Result<(), Cause> {
    panic!("no PGO in this recipe, yet the driver trained");
}

#[test]
fn second_build_is_a_cache_hit_and_recipes_get_their_own_entry() {
    let f = fixture(false);
    let source = f.source();
    assert_eq!(source.version, "15.99");
    let recipe = Recipe::parse("cflags=-O3&frame_pointers=on").unwrap();
    let req = BuildRequest {
        source: &source,
        recipe: &recipe,
        cache: &f.cache,
        jobs: 2,
        cc: "cc".into(),
    };
    let mut phases = Vec::new();
    let first = build(
        &req,
        &mut |e| {
            if let dbdelta_source_build::Event::PhaseDone(p, _) = e {
                phases.push(p.to_string())
            }
        },
        &mut no_training,
    )
    .unwrap();
    assert!(!first.cached);
    assert_eq!(phases, ["configure", "make", "install"]);
    assert_eq!(
        dbdelta_source_build::lookup(&req).unwrap().map(|b| b.dir),
        Some(first.dir.clone())
    );
    assert!(first.bin.join("postgres").is_file());
    let name = first
        .dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("postgresql-15.99-") && name.len() == "postgresql-15.99-".len() + 12);
    assert!(first.dir.join("build.log").is_file());
    assert!(
        !first.dir.join("obj").exists(),
        "the object tree is removed"
    );
    let info = dbdelta_source_build::read_info(&first.dir).unwrap();
    assert_eq!(info.recipe, "cflags=-O3&frame_pointers=on");
    assert_eq!(
        info.cflags,
        "-O3 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
    );
    assert!(!info.cc.is_empty());
    let settings = info.settings(&first.dir);
    assert_eq!(settings["build.recipe"], "cflags=-O3&frame_pointers=on");
    assert!(settings["build.source"].contains("15.99"));
    let log = recorded(&f.record);
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(
        log[0].contains("CFLAGS=-O3 -fno-omit-frame-pointer"),
        "{log:?}"
    );
    assert!(log[0].contains(&format!("--prefix={}", first.dir.display())));

    // Same source and recipe (written differently): nothing runs again.
    let same = Recipe::parse("frame_pointers=on,cflags=-O3").unwrap();
    let again = build(
        &BuildRequest {
            recipe: &same,
            ..req.clone()
        },
        &mut |_| {},
        &mut no_training,
    )
    .unwrap();
    assert!(again.cached);
    assert_eq!(again.dir, first.dir);
    assert_eq!(recorded(&f.record).len(), 3);

    // Another recipe: another entry, not in the cache until built.
    let o2 = Recipe::default();
    assert!(dbdelta_source_build::lookup(&BuildRequest {
        recipe: &o2,
        ..req.clone()
    })
    .unwrap()
    .is_none());
    let other = build(
        &BuildRequest {
            recipe: &o2,
            ..req.clone()
        },
        &mut |_| {},
        &mut no_training,
    )
    .unwrap();
    assert!(!other.cached);
    assert_ne!(other.dir, first.dir);
    assert_eq!(recorded(&f.record).len(), 6);

    // An incomplete entry (no manifest: an interrupted build) is rebuilt, not trusted.
    fs::remove_file(first.dir.join(dbdelta_source_build::INFO_FILE)).unwrap();
    let rebuilt = build(&req, &mut |_| {}, &mut no_training).unwrap();
    assert!(!rebuilt.cached);
    assert_eq!(recorded(&f.record).len(), 9);
}

#[test]
fn pgo_builds_twice_around_the_training() {
    let f = fixture(false);
    let source = f.source();
    let recipe = Recipe::parse("pgo=sysbench").unwrap();
    let req = BuildRequest {
        source: &source,
        recipe: &recipe,
        cache: &f.cache,
        jobs: 1,
        cc: "cc".into(),
    };
    let mut trained = Vec::new();
    let mut train = |bin: &Path, suite: &str, _log: &Path| -> Result<(), Cause> {
        // The instrumented server runs and writes its profile, as a training run does.
        let st = std::process::Command::new(bin.join("postgres")).status()?;
        trained.push((bin.to_path_buf(), suite.to_string(), st.success()));
        Ok(())
    };
    let built = build(&req, &mut |_| {}, &mut train).unwrap();
    assert_eq!(trained.len(), 1);
    assert_eq!(trained[0].1, "sysbench");
    assert!(trained[0].0.ends_with("pgo-instrumented/bin"));
    let log = recorded(&f.record);
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(log[0].contains("-fprofile-generate="), "{log:?}");
    assert!(log[3].contains("-fprofile-use=") && log[3].contains("-fprofile-partial-training"));
    assert!(log[3].contains("LDFLAGS=-O2 -fprofile-use="), "{log:?}");
    let info = dbdelta_source_build::read_info(&built.dir).unwrap();
    assert_eq!(info.pgo_training.as_deref(), Some("sysbench"));
    let names: Vec<&str> = info.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "configure (instrumented)",
            "make (instrumented)",
            "install (instrumented)",
            "train (sysbench)",
            "configure",
            "make",
            "install"
        ]
    );
    assert!(!built.dir.join("pgo-instrumented").exists());

    // A training that writes no profile fails the build, naming the phase.
    let g = fixture(false);
    let source = g.source();
    let e = build(
        &BuildRequest {
            source: &source,
            ..req.clone()
        },
        &mut |_| {},
        &mut |_: &Path, _: &str, _: &Path| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("train (sysbench)") && e.contains("no profile"),
        "{e}"
    );

    // A training that fails: its error is the phase's cause, its message in the build's.
    let h = fixture(false);
    let source = h.source();
    let e = build(
        &BuildRequest {
            source: &source,
            cache: &h.cache,
            ..req.clone()
        },
        &mut |_| {},
        &mut |_: &Path, _: &str, _: &Path| {
            let io = std::io::Error::from(std::io::ErrorKind::NotFound);
            Err(TrainError::with_source(format!("cannot run the training: {io}"), io).into())
        },
    )
    .unwrap_err();
    let BuildError::Phase { phase, cause, .. } = &e else {
        panic!("not a phase failure: {e:?}");
    };
    assert_eq!(phase, "train (sysbench)");
    assert_eq!(
        cause.to_string(),
        "cannot run the training: entity not found"
    );
    let io = cause
        .downcast_ref::<TrainError>()
        .and_then(|t| t.source.as_deref())
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    assert_eq!(io, Some(std::io::ErrorKind::NotFound), "{e:?}");
    assert!(
        e.to_string()
            .contains("failed in train (sysbench) (cannot run the training: entity not found)"),
        "{e}"
    );
}

#[test]
fn a_failed_phase_names_it_and_quotes_the_log() {
    let f = fixture(true);
    let source = f.source();
    let recipe = Recipe::default();
    let req = BuildRequest {
        source: &source,
        recipe: &recipe,
        cache: &f.cache,
        jobs: 1,
        cc: "cc".into(),
    };
    let e = build(&req, &mut |_| {}, &mut no_training).unwrap_err();
    assert!(matches!(e, BuildError::Phase { .. }), "{e:?}");
    if let BuildError::Phase { cause, .. } = &e {
        // make's exit status, as std reports it.
        assert_eq!(cause.to_string(), "exit status: 2");
    }
    let msg = e.to_string();
    assert!(msg.contains("failed in make"), "{msg}");
    assert!(msg.contains("gram.y: error: boom"), "{msg}");
    assert!(msg.contains("build.log"), "{msg}");
    // Not a cache entry: the next attempt builds again.
    let again = build(&req, &mut |_| {}, &mut no_training).unwrap_err();
    assert!(again.to_string().contains("failed in make"));
    assert_eq!(
        recorded(&f.record)
            .iter()
            .filter(|l| l.starts_with("configure"))
            .count(),
        2
    );
}
