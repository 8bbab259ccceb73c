//! PostgreSQL backend messages: `[control byte, server bytes…]` through the sans-IO
//! session decoder (whole and split feeding) and the blocking client's startup,
//! authentication and response paths.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbdelta_engine_postgres::fuzzing::pg_messages(data);
});
