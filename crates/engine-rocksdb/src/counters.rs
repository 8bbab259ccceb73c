//! What a step costs inside RocksDB, sampled at the window's edges: statistics tickers
//! (user bytes written, flush and compaction bytes, stall time, block cache hits and
//! misses), the LSM size and memtables, and the process's CPU and memory (db_bench's
//! `/usr/bin/time` and `ps` columns).

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

/// One sample of the database and the process.
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
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        c.cumulative
            .insert("process.user-cpu-secs".into(), tv(ru.ru_utime));
        c.cumulative
            .insert("process.sys-cpu-secs".into(), tv(ru.ru_stime));
    }
    if let Some(rss) = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
    {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
        c.current
            .insert("process.rss-bytes".into(), rss as f64 * page);
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
