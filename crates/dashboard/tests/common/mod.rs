//! Shared by the dashboard's tests: the synthetic history and golden files.
#![allow(dead_code)]

pub mod synthetic;

use std::path::Path;

/// Compares `actual` with the golden file `path`; `DBDELTA_BLESS=1` writes it instead (a
/// missing golden file fails, so nothing unreviewed is committed to).
pub fn check_golden(path: &Path, actual: &str) {
    if std::env::var("DBDELTA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "golden file {}: {e}.\n  DBDELTA_BLESS=1 cargo test -p dbdelta-dashboard  # to create it, then review it",
            path.display()
        )
    });
    if expected != actual {
        let actual_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "actual.{}",
            path.file_name().expect("name").to_string_lossy()
        ));
        std::fs::write(&actual_path, actual).expect("write actual");
        panic!(
            "{} differs from the output.\n  diff -u {} {}\n  DBDELTA_BLESS=1 cargo test -p dbdelta-dashboard  # to accept",
            path.display(),
            path.display(),
            actual_path.display()
        );
    }
}
