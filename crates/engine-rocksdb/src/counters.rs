//! What a step costs inside RocksDB, sampled at the window's edges: statistics tickers
//! (user bytes written, flush and compaction bytes, stall time, block cache hits and
//! misses), the LSM size and memtables. The runner adds the process's CPU and memory.

use crate::db::Db;
use dbdelta_engine::EngineCounters;

/// Tickers kept, under the names the report reads (`rocksdb.` dropped).
const TICKERS: &[&str] = &[
    "bytes.written",
    "bytes.read",
    "flush.write.bytes",
    "compact.write.bytes",
    "compact.read.bytes",
    "stall.micros",
    "block.cache.miss",
    "block.cache.hit",
    "wal.bytes",
    "number.keys.written",
    "number.keys.read",
];

/// Integer properties kept as levels.
const PROPERTIES: &[&str] = &[
    "rocksdb.total-sst-files-size",
    "rocksdb.live-sst-files-size",
    "rocksdb.cur-size-all-mem-tables",
    "rocksdb.block-cache-usage",
    "rocksdb.estimate-num-keys",
    "rocksdb.num-running-compactions",
];

/// `rocksdb.<name> COUNT : <n>` lines of the statistics dump.
pub fn parse_tickers(dump: &str) -> impl Iterator<Item = (&str, f64)> {
    dump.lines().filter_map(|l| {
        let (name, rest) = l.split_once(" COUNT : ")?;
        let name = name.trim().strip_prefix("rocksdb.")?;
        Some((name, rest.trim().parse::<f64>().ok()?))
    })
}

/// One sample of the database.
pub fn sample(db: &Db) -> EngineCounters {
    let mut c = EngineCounters::default();
    if let Some(dump) = db.statistics() {
        for (name, v) in parse_tickers(&dump) {
            if TICKERS.contains(&name) {
                c.cumulative.insert(name.to_string(), v);
            }
        }
    }
    for p in PROPERTIES {
        if let Some(v) = db.property_int(p) {
            c.current
                .insert(p.trim_start_matches("rocksdb.").to_string(), v as f64);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    #[test]
    fn tickers_are_read_from_the_dump() {
        let dump =
            "rocksdb.block.cache.miss COUNT : 12\nrocksdb.db.get.micros P50 : 1.0 P95 : 2.0\n\
                    rocksdb.compact.write.bytes COUNT : 4096\n";
        let t: Vec<(&str, f64)> = super::parse_tickers(dump).collect();
        assert_eq!(
            t,
            [("block.cache.miss", 12.0), ("compact.write.bytes", 4096.0)]
        );
    }
}
