//! CI runs the fuzz corpus as regression tests: every file of `fuzz/corpus/<target>/` and
//! `fuzz/regressions/<target>/` (reproducers of fixed crashes) goes through the entry
//! function its fuzz target calls, and none may panic. See `fuzz/README.md`.

use std::path::{Path, PathBuf};

/// A fuzz target's entry function.
type Entry = fn(&[u8]);

/// Each fuzz target and its entry function (what `fuzz/fuzz_targets/<target>.rs` calls).
const TARGETS: &[(&str, Entry)] = &[
    ("pg_messages", dbdelta_engine_postgres::fuzzing::pg_messages),
    (
        "mysql_packets",
        dbdelta_engine_mysql::fuzzing::mysql_packets,
    ),
    ("target_spec", dbdelta_model::fuzzing::target_spec),
    ("suite_config", crate::fuzzing::suite_config),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; an error when it cannot be read.
fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

#[test]
fn every_fuzz_target_has_an_entry_here_and_a_corpus() {
    let mut targets: Vec<String> = files(&fuzz_dir().join("fuzz_targets"))
        .expect("fuzz/fuzz_targets")
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    targets.sort();
    let mut known: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    known.sort();
    assert_eq!(targets, known, "fuzz/fuzz_targets and TARGETS differ");
}

#[test]
fn the_fuzz_corpus_and_regressions_run_without_panics() {
    let dir = fuzz_dir();
    let mut failed = Vec::new();
    let mut total = 0;
    for (name, entry) in TARGETS {
        let corpus = dir.join("corpus").join(name);
        let mut inputs = files(&corpus).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the corpus is part of the repository)",
                corpus.display()
            )
        });
        assert!(
            inputs.len() >= 5,
            "{}: only {} inputs; the seed corpus is missing",
            corpus.display(),
            inputs.len()
        );
        // Reproducers of fixed crashes; a target without any has no directory.
        let regressions = dir.join("regressions").join(name);
        if regressions.exists() {
            inputs.extend(files(&regressions).expect("fuzz/regressions"));
        }
        for path in inputs {
            let data = std::fs::read(&path).expect("read a corpus file");
            total += 1;
            if std::panic::catch_unwind(|| entry(&data)).is_err() {
                failed.push(path.display().to_string());
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {total} inputs panicked: {failed:#?}",
        failed.len()
    );
}
