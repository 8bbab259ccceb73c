//! The options a `rocksdb:` target takes as parameters, with db_bench's names, validated
//! once so a bad one is refused before anything runs (exit 2, naming the option).
//!
//! Defaults are those of RocksDB's `tools/benchmark_compare.sh`
//! so that dbdelta and db_bench compare on the same configuration, except the block cache
//! (1 GiB instead of 16 GiB: enough for the default 1M keys, safe on small machines).

use dbdelta_engine::EngineError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Block cache implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    /// `lru_cache`.
    Lru,
    /// `hyper_clock_cache`: lock-free reads; needs a library whose C API has it (8.0+),
    /// checked when the library is loaded.
    HyperClock,
}

/// Validated RocksDB options of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct RocksOptions {
    /// `lib`: the librocksdb shared library to load (default: the system's).
    pub lib: Option<PathBuf>,
    /// `cache_size`: block cache bytes.
    pub cache_size: u64,
    /// `cache_type`.
    pub cache_type: CacheType,
    /// `compression`: the C API's compression type number.
    pub compression: i32,
    /// `use_direct_reads`.
    pub use_direct_reads: bool,
    /// `use_direct_io_for_flush_and_compaction`.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// `bytes_per_sync`.
    pub bytes_per_sync: u64,
    /// `write_buffer_size`.
    pub write_buffer_size: u64,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: i32,
    /// `target_file_size_base`.
    pub target_file_size_base: u64,
    /// `max_bytes_for_level_base`.
    pub max_bytes_for_level_base: u64,
    /// `max_background_jobs`.
    pub max_background_jobs: i32,
    /// `block_size`.
    pub block_size: u64,
    /// `bloom_bits`: bits per key of the bloom filter (0 = none).
    pub bloom_bits: f64,
    /// `cache_index_and_filter_blocks`.
    pub cache_index_and_filter_blocks: bool,
    /// `sync`: fsync the WAL on every write.
    pub sync: bool,
    /// `disable_wal`.
    pub disable_wal: bool,
    /// `enable_pipelined_write`: WAL and memtable writes pipelined (db_bench's default
    /// `true`; RocksDB's own default is `false`).
    pub enable_pipelined_write: bool,
    /// `table_cache_numshardbits` (db_bench's default 4; RocksDB's own 6).
    pub table_cache_numshardbits: i32,
    /// `perf_level`: RocksDB's `PerfLevel` on each worker thread, 1 (`kDisable`, db_bench's
    /// `--perf_level` default) to 5 (`kEnableTime`); the library's own default is 2
    /// (`kEnableCount`), whose per-thread counters cost a put ~0.05 µs.
    pub perf_level: i32,
    /// `statistics`: RocksDB's statistics object (tickers for write amplification, stall
    /// time and cache misses per step); off saves its small overhead.
    pub statistics: bool,
}

impl Default for RocksOptions {
    fn default() -> Self {
        const MIB: u64 = 1 << 20;
        RocksOptions {
            lib: None,
            cache_size: 1024 * MIB,
            cache_type: CacheType::Lru,
            compression: 4, // lz4
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            bytes_per_sync: MIB,
            write_buffer_size: 32 * MIB,
            max_write_buffer_number: 8,
            target_file_size_base: 32 * MIB,
            max_bytes_for_level_base: 128 * MIB,
            max_background_jobs: 8,
            block_size: 8192,
            bloom_bits: 10.0,
            cache_index_and_filter_blocks: false,
            sync: false,
            disable_wal: false,
            // db_bench's flag defaults where they differ from RocksDB's Options: a
            // db_bench run with benchmark_compare.sh's flags gets them too.
            enable_pipelined_write: true,
            table_cache_numshardbits: 4,
            perf_level: 1,
            statistics: true,
        }
    }
}

/// Compression names and the C API's numbers.
const COMPRESSIONS: &[(&str, i32)] = &[
    ("none", 0),
    ("snappy", 1),
    ("zlib", 2),
    ("bz2", 3),
    ("lz4", 4),
    ("lz4hc", 5),
    ("xpress", 6),
    ("zstd", 7),
];

/// The name of a compression number.
pub fn compression_name(n: i32) -> &'static str {
    COMPRESSIONS
        .iter()
        .find(|c| c.1 == n)
        .map(|c| c.0)
        .unwrap_or("unknown")
}

/// Every option name a target may give.
pub const NAMES: &[&str] = &[
    "lib",
    "cache_size",
    "cache_type",
    "compression",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "bytes_per_sync",
    "write_buffer_size",
    "max_write_buffer_number",
    "target_file_size_base",
    "max_bytes_for_level_base",
    "max_background_jobs",
    "block_size",
    "bloom_bits",
    "cache_index_and_filter_blocks",
    "sync",
    "disable_wal",
    "statistics",
    "enable_pipelined_write",
    "table_cache_numshardbits",
    "perf_level",
];

/// Largest `cache_size`: 1 TiB, more memory than a host this runs on has (the cache is
/// allocated as it fills, so the limit only catches typos).
const MAX_CACHE: u64 = 1 << 40;
/// Largest `write_buffer_size`: RocksDB's own ceiling for a memtable (64 GiB; it clips
/// larger values).
const MAX_WRITE_BUFFER: u64 = 64 << 30;
/// Largest `max_write_buffer_number`: memtables held in memory at once.
const MAX_WRITE_BUFFERS: i32 = 256;
/// Largest `max_background_jobs`: each is a thread of RocksDB's flush and compaction pools.
const MAX_BACKGROUND_JOBS: i32 = 1024;
/// Largest `target_file_size_base`, `max_bytes_for_level_base` and `bytes_per_sync`:
/// 1 TiB (RocksDB multiplies the level base by 10 per level in 64 bits).
const MAX_FILE: u64 = 1 << 40;
/// Smallest `max_bytes_for_level_base`: RocksDB's dynamic level sizing divides it by the
/// level multiplier per level and asserts the base level's size is above 0 (a value of 1
/// aborted the process in its first compaction: `CalculateBaseBytes`).
const MIN_LEVEL_BASE: u64 = 64 << 10;
/// Largest `block_size`: 256 MiB (RocksDB refuses 4 GiB and more; each read decodes a
/// whole block).
const MAX_BLOCK: u64 = 256 << 20;

/// `bytes` in the largest binary unit that divides it.
fn show_bytes(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Bytes with an optional K/M/G suffix (binary: `64M` = 64 MiB; `KB`, `MiB`, … accepted).
pub fn parse_bytes(v: &str) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

impl RocksOptions {
    /// Options from a target's parameters; an unknown name or a bad value is an error that
    /// names the target, the option and the values it takes.
    pub fn from_params(target: &str, params: &[(String, String)]) -> Result<Self, EngineError> {
        let mut o = RocksOptions::default();
        for (k, v) in params {
            let bad = |want: &str| {
                EngineError::config(format!(
                    "target '{target}': RocksDB option {k}={v} is invalid: {want}"
                ))
            };
            let bytes_up_to = |max: u64, why: &str| {
                parse_bytes(v).filter(|n| *n <= max).ok_or_else(|| {
                    bad(&format!(
                        "give bytes up to {} ({why}), e.g. 64M or 1G",
                        show_bytes(max)
                    ))
                })
            };
            let flag = || parse_bool(v).ok_or_else(|| bad("give true or false"));
            let small = |min: i32, max: i32, why: &str| {
                v.parse::<i32>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| bad(&format!("give an integer from {min} to {max} ({why})")))
            };
            match k.as_str() {
                "lib" => o.lib = Some(PathBuf::from(v)),
                "cache_size" => {
                    o.cache_size = bytes_up_to(MAX_CACHE, "more memory than a host has")?
                }
                "cache_type" => o.cache_type = match v.as_str() {
                    "lru" | "lru_cache" => CacheType::Lru,
                    "hyper_clock" | "hyper_clock_cache" | "hcc" => CacheType::HyperClock,
                    _ => return Err(bad(
                        "use lru or hyper_clock (HyperClockCache, in the C API from RocksDB 8.0)",
                    )),
                },
                "compression" => {
                    o.compression = COMPRESSIONS
                        .iter()
                        .find(|c| c.0 == v.to_ascii_lowercase())
                        .map(|c| c.1)
                        .ok_or_else(|| {
                            bad("use none, snappy, zlib, bz2, lz4, lz4hc, xpress or zstd")
                        })?
                }
                "use_direct_reads" => o.use_direct_reads = flag()?,
                "use_direct_io_for_flush_and_compaction" => {
                    o.use_direct_io_for_flush_and_compaction = flag()?
                }
                "bytes_per_sync" => o.bytes_per_sync = bytes_up_to(MAX_FILE, "a file's size")?,
                "write_buffer_size" => {
                    o.write_buffer_size =
                        bytes_up_to(MAX_WRITE_BUFFER, "RocksDB's own ceiling for a memtable")?;
                    if o.write_buffer_size < 64 << 10 {
                        return Err(bad("use at least 64K"));
                    }
                }
                "max_write_buffer_number" => {
                    o.max_write_buffer_number =
                        small(2, MAX_WRITE_BUFFERS, "memtables kept in memory")?
                }
                "target_file_size_base" => {
                    o.target_file_size_base = bytes_up_to(MAX_FILE, "one SST file")?.max(1)
                }
                "max_bytes_for_level_base" => {
                    o.max_bytes_for_level_base =
                        bytes_up_to(MAX_FILE, "level 1; deeper levels multiply it")?;
                    if o.max_bytes_for_level_base < MIN_LEVEL_BASE {
                        return Err(bad(
                            "use at least 64K (RocksDB divides it by 10 per level and aborts \
                             the process when a level's target size reaches 0)",
                        ));
                    }
                }
                "max_background_jobs" => {
                    o.max_background_jobs =
                        small(1, MAX_BACKGROUND_JOBS, "a thread each in RocksDB's pools")?
                }
                "block_size" => {
                    o.block_size = bytes_up_to(MAX_BLOCK, "every read reads a whole block")?;
                    if o.block_size == 0 {
                        return Err(bad("use at least 1"));
                    }
                }
                "bloom_bits" => {
                    o.bloom_bits = v
                        .parse::<f64>()
                        .ok()
                        .filter(|b| b.is_finite() && (0.0..=64.0).contains(b))
                        .ok_or_else(|| bad("give bits per key from 0 (no filter) to 64"))?
                }
                "cache_index_and_filter_blocks" => o.cache_index_and_filter_blocks = flag()?,
                "sync" => o.sync = flag()?,
                "disable_wal" => o.disable_wal = flag()?,
                "statistics" => o.statistics = flag()?,
                "enable_pipelined_write" => o.enable_pipelined_write = flag()?,
                // RocksDB's LRU cache of open tables takes fewer than 20 shard bits.
                "table_cache_numshardbits" => {
                    o.table_cache_numshardbits = small(0, 19, "2^n shards of the table cache")?
                }
                // RocksDB's PerfLevel: kDisable = 1 … kEnableTime = 5 (0 is kUninitialized).
                "perf_level" => {
                    o.perf_level = small(
                        1,
                        5,
                        "1 = no perf context counters (db_bench's default), 2 = counts, 3-5 = timers too",
                    )?
                }
                _ => {
                    return Err(EngineError::config(format!(
                        "target '{target}': unknown RocksDB option '{k}'; options are {}",
                        NAMES.join(", ")
                    )))
                }
            }
        }
        Ok(o)
    }

    /// The options as the manifest shows them (db_bench's names).
    pub fn settings(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            m.insert(k.to_string(), v);
        };
        put("cache_size", self.cache_size.to_string());
        put(
            "cache_type",
            match self.cache_type {
                CacheType::Lru => "lru",
                CacheType::HyperClock => "hyper_clock",
            }
            .into(),
        );
        put("compression", compression_name(self.compression).into());
        put("use_direct_reads", self.use_direct_reads.to_string());
        put(
            "use_direct_io_for_flush_and_compaction",
            self.use_direct_io_for_flush_and_compaction.to_string(),
        );
        put("bytes_per_sync", self.bytes_per_sync.to_string());
        put("write_buffer_size", self.write_buffer_size.to_string());
        put(
            "max_write_buffer_number",
            self.max_write_buffer_number.to_string(),
        );
        put(
            "target_file_size_base",
            self.target_file_size_base.to_string(),
        );
        put(
            "max_bytes_for_level_base",
            self.max_bytes_for_level_base.to_string(),
        );
        put("max_background_jobs", self.max_background_jobs.to_string());
        put("block_size", self.block_size.to_string());
        put("bloom_bits", self.bloom_bits.to_string());
        put(
            "cache_index_and_filter_blocks",
            self.cache_index_and_filter_blocks.to_string(),
        );
        put("sync", self.sync.to_string());
        put("disable_wal", self.disable_wal.to_string());
        put("statistics", self.statistics.to_string());
        put(
            "enable_pipelined_write",
            self.enable_pipelined_write.to_string(),
        );
        put(
            "table_cache_numshardbits",
            self.table_cache_numshardbits.to_string(),
        );
        put("perf_level", self.perf_level.to_string());
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_parse_with_db_bench_names() {
        let o = RocksOptions::from_params(
            "r",
            &params(&[
                ("cache_size", "8M"),
                ("compression", "zstd"),
                ("use_direct_reads", "true"),
                ("bytes_per_sync", "0"),
                ("write_buffer_size", "16MiB"),
            ]),
        )
        .unwrap();
        assert_eq!(o.cache_size, 8 << 20);
        assert_eq!(o.compression, 7);
        assert!(o.use_direct_reads);
        assert_eq!(o.bytes_per_sync, 0);
        assert_eq!(o.write_buffer_size, 16 << 20);
        assert_eq!(o.settings()["compression"], "zstd");
        // db_bench's defaults, not RocksDB's Options'.
        assert!(o.enable_pipelined_write);
        assert_eq!(o.table_cache_numshardbits, 4);
        assert_eq!(o.perf_level, 1, "db_bench's --perf_level (kDisable)");
        assert_eq!(o.settings()["perf_level"], "1");
        let o = RocksOptions::from_params(
            "r",
            &params(&[
                ("enable_pipelined_write", "false"),
                ("table_cache_numshardbits", "6"),
            ]),
        )
        .unwrap();
        assert!(!o.enable_pipelined_write);
        assert_eq!(o.settings()["table_cache_numshardbits"], "6");
        assert!(
            RocksOptions::from_params("r", &params(&[("table_cache_numshardbits", "20")])).is_err()
        );
        let o = RocksOptions::from_params("r", &params(&[("perf_level", "2")])).unwrap();
        assert_eq!(o.perf_level, 2);
        for bad in ["0", "6", "count"] {
            let e = RocksOptions::from_params("r", &params(&[("perf_level", bad)])).unwrap_err();
            assert!(e.to_string().contains("from 1 to 5"), "{e}");
        }
    }

    #[test]
    fn bad_options_name_the_option_and_the_fix() {
        let e = RocksOptions::from_params("r", &params(&[("block_cache", "1G")])).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown RocksDB option 'block_cache'"),
            "{e}"
        );
        assert!(e.to_string().contains("cache_size"), "{e}");
        let e = RocksOptions::from_params("r", &params(&[("cache_size", "lots")])).unwrap_err();
        assert!(e.to_string().contains("cache_size=lots") && e.to_string().contains("64M"));
        let o = RocksOptions::from_params("r", &params(&[("cache_type", "hyper_clock")])).unwrap();
        assert_eq!(o.cache_type, CacheType::HyperClock);
        assert_eq!(o.settings()["cache_type"], "hyper_clock");
        let e = RocksOptions::from_params("r", &params(&[("cache_type", "clock")])).unwrap_err();
        assert!(e.to_string().contains("hyper_clock"), "{e}");
        let e = RocksOptions::from_params("r", &params(&[("compression", "brotli")])).unwrap_err();
        assert!(e.to_string().contains("zstd"), "{e}");
    }

    #[test]
    fn options_past_their_limits_name_the_option_and_the_limit() {
        for (k, v, limit) in [
            ("cache_size", "16383T", "up to 1T"),
            ("write_buffer_size", "1T", "up to 64G"),
            ("block_size", "4G", "up to 256M"),
            ("bytes_per_sync", "2T", "up to 1T"),
            ("target_file_size_base", "18446744073709551615", "up to 1T"),
            ("max_bytes_for_level_base", "2T", "up to 1T"),
            ("max_background_jobs", "2147483647", "from 1 to 1024"),
            ("max_write_buffer_number", "100000", "from 2 to 256"),
        ] {
            let e = RocksOptions::from_params("r", &params(&[(k, v)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("{k}={v}")) && e.contains(limit), "{e}");
        }
        assert!(RocksOptions::from_params("r", &params(&[("block_size", "256M")])).is_ok());
        let e = RocksOptions::from_params("r", &params(&[("max_bytes_for_level_base", "0")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 64K"), "{e}");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("1kb"), Some(1024));
        assert_eq!(parse_bytes("x"), None);
        assert_eq!(parse_bytes("1Q"), None);
    }
}
