//! The entry of the `suite_config` fuzz target. This file is compiled twice: into the CLI's
//! tests (the corpus regression test, `fuzz_corpus.rs`) and into `fuzz/` with `#[path]`
//! next to `config.rs` and `flags.rs`, so both run the same code.

use std::path::Path;

/// Parses `data` (as UTF-8, lossily) as a suite file and as a `--config` file; turns each
/// `[[target]]` table of a parsed config into its `NAME=SPEC` text and parses that, as
/// `dbdelta run --config` does. Panics only on a bug.
pub fn suite_config(data: &[u8]) {
    dbdelta_workload::fuzzing::suite_toml(data);
    let text = String::from_utf8_lossy(data);
    let file = Path::new("fuzz.toml");
    if let Ok(cfg) = crate::config::parse(&text, file) {
        for t in &cfg.targets {
            if let Ok(spec) = t.to_spec_text(file) {
                dbdelta_model::fuzzing::target_spec(spec.as_bytes());
            }
        }
    }
}
