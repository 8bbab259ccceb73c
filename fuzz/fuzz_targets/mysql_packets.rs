//! MySQL packets: `[control byte, server bytes…]` through the sans-IO session decoder
//! (whole and split feeding), the binary row decoder and the blocking client's greeting,
//! authentication, framing (plain and compressed) and result paths.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbdelta_engine_mysql::fuzzing::mysql_packets(data);
});
