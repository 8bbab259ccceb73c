//! Suite files (`--suite FILE`, suites/*.toml) and config files (`--config FILE`). The
//! config loader lives in the CLI binary; its source files are compiled in here as they are.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/cli/src/config.rs"]
mod config;
#[allow(dead_code)]
#[path = "../../crates/cli/src/flags.rs"]
mod flags;
#[path = "../../crates/cli/src/fuzzing.rs"]
mod fuzzing;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzzing::suite_config(data);
});
