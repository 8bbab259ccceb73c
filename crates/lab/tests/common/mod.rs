//! Helpers shared by the lab's integration tests.

use std::path::Path;

/// True when every file in `needed` exists; otherwise the test is skipped with a message,
/// except under CI, where a missing server fails the test (it must never pass unrun).
pub fn require(needed: &[&str], install: &str) -> bool {
    let missing: Vec<&&str> = needed.iter().filter(|p| !Path::new(p).exists()).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{missing:?} missing under CI ({install}; scripts/test.sh installs it)"
    );
    eprintln!("SKIPPED: {missing:?} missing ({install})");
    false
}
