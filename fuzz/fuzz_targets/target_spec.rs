//! The `--target NAME=SPEC` parser.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbdelta_model::fuzzing::target_spec(data);
});
