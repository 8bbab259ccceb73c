//! RocksDB db_bench's benchmarks as run by `tools/benchmark_compare.sh` (and
//! `tools/db_bench_tool.cc`): keys of 8 big-endian bytes padded with '0' to `key_size`,
//! values sliced from db_bench's `RandomGenerator` buffer (seed 301, half-compressible),
//! uniform key choice, seeks with 10 nexts, multi-gets of 10 keys, and the `*whilewriting`
//! steps' background writer limited to 2 MB/s whose operations are not counted as the
//! step's (db_bench excludes them from its report; dbdelta reports the writer's rate).

use crate::benchmark::{Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup};
use crate::rng::Rng;
use crate::suite::{Dataset, WorkloadKind};
use crate::Workload;
use dbdelta_engine::ops::KvKind;
use dbdelta_engine::{Connection, Engine, EngineError, Family, KvOp, Op, OpBatch, Outcome};
use dbdelta_model::RunOptions;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One db_bench benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bench {
    /// `fillseq` with the WAL disabled: keys 0…num−1 in order, one thread, then done.
    FillSeq,
    /// `readrandom`: a get of a uniform key.
    ReadRandom,
    /// `seekrandom` forward: seek, then 10 nexts (`fwdrange`).
    FwdRange,
    /// `seekrandom --reverse_iterator`: seek for prev, then 10 prevs (`revrange`).
    RevRange,
    /// `multireadrandom --batch_size=10`: one multi-get of 10 uniform keys.
    MultiReadRandom,
    /// `overwrite`: a put of a uniform key, for the step's duration.
    Overwrite,
    /// `overwritesome`: overwrite, num/threads/10 puts per thread, then done.
    OverwriteSome,
    /// `readwhilewriting`: readrandom while a writer puts at 2 MB/s.
    ReadWhileWriting,
    /// `fwdrangewhilewriting`.
    FwdRangeWhileWriting,
    /// `revrangewhilewriting`.
    RevRangeWhileWriting,
}

impl Bench {
    /// The db_bench benchmark of a kind; `None` for the others.
    pub fn of(kind: WorkloadKind) -> Option<Bench> {
        Some(match kind {
            WorkloadKind::Fillseq => Bench::FillSeq,
            WorkloadKind::Readrandom => Bench::ReadRandom,
            WorkloadKind::Fwdrange => Bench::FwdRange,
            WorkloadKind::Revrange => Bench::RevRange,
            WorkloadKind::Multireadrandom => Bench::MultiReadRandom,
            WorkloadKind::Overwrite => Bench::Overwrite,
            WorkloadKind::Overwritesome => Bench::OverwriteSome,
            WorkloadKind::Readwhilewriting => Bench::ReadWhileWriting,
            WorkloadKind::Fwdrangewhilewriting => Bench::FwdRangeWhileWriting,
            WorkloadKind::Revrangewhilewriting => Bench::RevRangeWhileWriting,
            _ => return None,
        })
    }

    /// True when a background writer runs beside the step's threads.
    pub fn while_writing(self) -> bool {
        matches!(
            self,
            Bench::ReadWhileWriting | Bench::FwdRangeWhileWriting | Bench::RevRangeWhileWriting
        )
    }

    /// True when the step ends after a number of operations rather than at a time.
    pub fn counted(self) -> bool {
        matches!(self, Bench::FillSeq | Bench::OverwriteSome)
    }

    /// The operation type names: the step's, then the background writer's.
    fn type_names(self) -> &'static [&'static str] {
        match self {
            Bench::FillSeq | Bench::Overwrite | Bench::OverwriteSome => &["PUT"],
            Bench::ReadRandom => &["GET"],
            Bench::FwdRange | Bench::RevRange => &["SEEK"],
            Bench::MultiReadRandom => &["MULTIGET"],
            Bench::ReadWhileWriting => &["GET", "BACKGROUND-PUT"],
            Bench::FwdRangeWhileWriting | Bench::RevRangeWhileWriting => {
                &["SEEK", "BACKGROUND-PUT"]
            }
        }
    }
}

/// The most keys one multi-get takes (db_bench's `--batch_size` is 10 here).
pub const MAX_BATCH: usize = 64;

/// db_bench's sizes and limits for one step.
#[derive(Debug, Clone, PartialEq)]
pub struct DbBenchConfig {
    /// The benchmark.
    pub bench: Bench,
    /// `--num`: keys in the database.
    pub num: u64,
    /// `--key_size` (20).
    pub key_size: usize,
    /// `--value_size` (400).
    pub value_size: usize,
    /// `--seek_nexts` (10).
    pub seek_nexts: u32,
    /// `--batch_size` of multireadrandom (10; at most [`MAX_BATCH`]).
    pub batch_size: u32,
    /// `--benchmark_write_rate_limit` of the background writer, bytes/s (2 MiB).
    pub writer_bytes_per_sec: u64,
    /// Threads running the step (overwritesome's per-thread share).
    pub threads: u32,
}

impl DbBenchConfig {
    /// benchmark_compare.sh's settings for `bench` over `num` keys.
    pub fn new(bench: Bench, num: u64, threads: u32) -> Self {
        DbBenchConfig {
            bench,
            num: num.max(1),
            key_size: 20,
            value_size: 400,
            seek_nexts: 10,
            batch_size: 10,
            writer_bytes_per_sec: 2 << 20,
            threads: threads.max(1),
        }
    }
}

/// Park–Miller `Random` of RocksDB's `util/random.h`.
struct LegacyRandom(u32);

impl LegacyRandom {
    fn new(seed: u32) -> Self {
        let s = seed & 0x7fff_ffff;
        LegacyRandom(if s == 0 || s == 0x7fff_ffff { 1 } else { s })
    }

    fn next(&mut self) -> u32 {
        const M: u64 = 0x7fff_ffff;
        let product = u64::from(self.0) * 16807;
        let mut seed = ((product >> 31) + (product & M)) as u32;
        if u64::from(seed) > M {
            seed -= M as u32;
        }
        self.0 = seed;
        seed
    }
}

/// db_bench's `RandomGenerator` buffer: 100-byte pieces of 50 random printable bytes
/// repeated (`CompressibleString` at ratio 0.5), at least 1 MiB.
pub fn value_buffer(value_size: usize) -> Vec<u8> {
    let mut rnd = LegacyRandom::new(301);
    let mut data = Vec::with_capacity((1 << 20).max(value_size) + 100);
    while data.len() < (1 << 20).max(value_size) {
        let raw: Vec<u8> = (0..50).map(|_| b' ' + (rnd.next() % 95) as u8).collect();
        let mut piece = Vec::with_capacity(100);
        while piece.len() < 100 {
            piece.extend_from_slice(&raw);
        }
        piece.truncate(100);
        data.extend_from_slice(&piece);
    }
    data
}

/// `GenerateKeyFromInt`: 8 bytes of `v` big-endian, then '0' up to `key_size`.
pub fn key_from_int(v: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    let bytes = v.to_be_bytes();
    out.extend_from_slice(&bytes[..key_size.min(8)]);
    out.resize(key_size.max(out.len()), b'0');
}

/// What every worker of one step shares.
#[derive(Debug)]
pub struct DbBenchShared {
    config: DbBenchConfig,
    values: Vec<u8>,
    fill_next: AtomicU64,
}

impl DbBenchShared {
    /// Shared state of one step.
    pub fn new(config: DbBenchConfig) -> Arc<Self> {
        Arc::new(DbBenchShared {
            values: value_buffer(config.value_size),
            config,
            fill_next: AtomicU64::new(0),
        })
    }

    /// The step's configuration.
    pub fn config(&self) -> &DbBenchConfig {
        &self.config
    }
}

/// One worker (or the background writer) of a db_bench step.
pub struct DbBench {
    shared: Arc<DbBenchShared>,
    rng: Rng,
    writer: bool,
    key: Vec<u8>,
    keys: Vec<u8>,
    pos: usize,
    writes_left: Option<u64>,
    next_write: Option<Instant>,
    write_every: Duration,
}

impl DbBench {
    /// Worker `worker` of the step; with `writer`, the background writer of a
    /// `*whilewriting` step.
    pub fn new(shared: Arc<DbBenchShared>, seed: u64, stream: u64, writer: bool) -> Self {
        let c = &shared.config;
        let writes_left = (c.bench == Bench::OverwriteSome && !writer)
            .then(|| (c.num / u64::from(c.threads) / 10).max(1));
        let bytes = (c.key_size + c.value_size) as f64;
        let write_every = Duration::from_secs_f64(bytes / c.writer_bytes_per_sec.max(1) as f64);
        DbBench {
            rng: Rng::new(seed, stream),
            writer,
            key: Vec::with_capacity(c.key_size),
            keys: Vec::with_capacity(c.key_size * c.batch_size as usize),
            pos: 0,
            writes_left,
            next_write: None,
            write_every,
            shared,
        }
    }

    /// `RandomGenerator::Generate`: the next `value_size` bytes of the buffer.
    fn value_range(&mut self) -> std::ops::Range<usize> {
        let len = self.shared.config.value_size;
        if self.pos + len > self.shared.values.len() {
            self.pos = 0;
        }
        self.pos += len;
        self.pos - len..self.pos
    }

    fn uniform_key(&mut self) -> u64 {
        self.rng.next_u64() % self.shared.config.num
    }

    /// Builds the next event's operation from the worker's buffers and hands it to `f`.
    fn next_op<R>(&mut self, f: impl FnOnce(KvOp<'_>) -> R) -> R {
        let (bench, key_size) = (self.shared.config.bench, self.shared.config.key_size);
        let (kind, k) = if self.writer {
            // GenericRateLimiter charging key+value bytes a put: a fixed schedule.
            let now = Instant::now();
            let at = *self.next_write.get_or_insert(now);
            if at > now {
                std::thread::sleep(at - now);
            }
            self.next_write = Some(at.max(now - self.write_every * 10) + self.write_every);
            (KvKind::Put, self.uniform_key())
        } else {
            match bench {
                Bench::FillSeq => {
                    let next = &self.shared.fill_next;
                    // One thread owns the sequence: a load and a store do (a locked add is
                    // ~7 ns, ~1 % of a put).
                    let k = if self.shared.config.threads == 1 {
                        let k = next.load(Ordering::Relaxed);
                        next.store(k + 1, Ordering::Relaxed);
                        k
                    } else {
                        next.fetch_add(1, Ordering::Relaxed)
                    };
                    (KvKind::PutNoWal, k.min(self.shared.config.num - 1))
                }
                Bench::Overwrite | Bench::OverwriteSome => {
                    if let Some(n) = self.writes_left.as_mut() {
                        *n = n.saturating_sub(1);
                    }
                    (KvKind::Put, self.uniform_key())
                }
                Bench::ReadRandom | Bench::ReadWhileWriting => (KvKind::Get, self.uniform_key()),
                Bench::FwdRange | Bench::FwdRangeWhileWriting => {
                    (KvKind::SeekNext, self.uniform_key())
                }
                Bench::RevRange | Bench::RevRangeWhileWriting => {
                    (KvKind::SeekPrev, self.uniform_key())
                }
                Bench::MultiReadRandom => return self.multi_get(f),
            }
        };
        key_from_int(k, key_size, &mut self.key);
        let value = matches!(kind, KvKind::Put | KvKind::PutNoWal)
            .then(|| self.value_range())
            .map(|r| [&self.shared.values[r]]);
        f(KvOp {
            kind,
            key: &self.key,
            fields: &[],
            values: value.as_ref().map_or(&[], |v| &v[..]),
            count: match kind {
                KvKind::SeekNext | KvKind::SeekPrev => self.shared.config.seek_nexts,
                _ => 0,
            },
        })
    }

    /// multireadrandom's operation: a multi-get of `batch_size` uniform keys.
    fn multi_get<R>(&mut self, f: impl FnOnce(KvOp<'_>) -> R) -> R {
        let key_size = self.shared.config.key_size;
        let n = (self.shared.config.batch_size as usize).min(MAX_BATCH);
        self.keys.clear();
        for _ in 0..n {
            let k = self.uniform_key();
            key_from_int(k, key_size, &mut self.key);
            self.keys.extend_from_slice(&self.key);
        }
        // The keys' slices on the stack: no allocation an event.
        let mut keys: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
        for (slot, key) in keys.iter_mut().zip(self.keys.chunks(key_size.max(1))) {
            *slot = key;
        }
        f(KvOp {
            kind: KvKind::MultiGet,
            key: &[],
            fields: &[],
            values: &keys[..n],
            count: n as u32,
        })
    }
}

impl Workload for DbBench {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError> {
        if conn.families().contains(&Family::RawKeyValue) {
            Ok(())
        } else {
            Err(EngineError::unsupported(Family::RawKeyValue, "db_bench"))
        }
    }

    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        self.next_op(|op| ops.kv(op.kind, op.key, op.fields, op.values, op.count));
        Ok(())
    }

    fn run_direct(
        &mut self,
        run: &mut dyn FnMut(Op<'_>) -> Result<Outcome, EngineError>,
    ) -> Option<Result<Outcome, EngineError>> {
        Some(self.next_op(|op| run(Op::Kv(op))))
    }

    fn uses_transactions(&self) -> bool {
        false
    }

    fn finished(&self) -> bool {
        match self.shared.config.bench {
            Bench::FillSeq => {
                self.shared.fill_next.load(Ordering::Relaxed) >= self.shared.config.num
            }
            Bench::OverwriteSome => self.writes_left == Some(0),
            _ => false,
        }
    }

    fn background(&self) -> bool {
        self.writer
    }

    fn op_type(&self) -> Option<usize> {
        Some(usize::from(self.writer))
    }

    fn op_type_names(&self) -> &'static [&'static str] {
        self.shared.config.bench.type_names()
    }
}

/// db_bench's benchmark: binary keys in a native ordered store, written by the suite's
/// fillseq step (there is no load), and one [`DbBench`] terminal per worker.
#[derive(Debug, Clone, Copy)]
pub struct DbBenchBenchmark;

impl Benchmark for DbBenchBenchmark {
    fn name(&self) -> &'static str {
        "db_bench"
    }

    fn dataset(&self) -> Dataset {
        Dataset::Keys
    }

    fn load_summary(&self, _: &RunOptions) -> Option<String> {
        None
    }

    fn tables(&self, _: &RunOptions) -> Vec<String> {
        Vec::new()
    }

    /// Refused when the suite is parsed already: fillseq writes the keys.
    fn load(&self, _: &dyn Engine, _: &RunOptions) -> Result<u64, LoadError> {
        Err(
            EngineError::config("db_bench's keys are written by the fillseq step, not by a load")
                .into(),
        )
    }

    fn step(&self, setup: &StepSetup<'_>, _: &Carry) -> Arc<dyn StepWorkload> {
        // A validated suite's steps on dataset = "keys" are all db_bench's.
        let bench = Bench::of(setup.step.params.kind).unwrap_or(Bench::ReadRandom);
        Arc::new(DbBenchStep {
            shared: DbBenchShared::new(DbBenchConfig::new(
                bench,
                setup.opts.table_size,
                setup.threads,
            )),
            threads: setup.threads,
        })
    }
}

/// What a db_bench step's terminals share: sizes, the value buffer, fillseq's key counter.
#[derive(Debug)]
struct DbBenchStep {
    shared: Arc<DbBenchShared>,
    /// The step's threads: workers past them are the background writer.
    threads: u32,
}

impl StepWorkload for DbBenchStep {
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload> {
        // Workers past the step's threads are the background writer of *whilewriting.
        let writer = t.worker >= self.threads;
        Box::new(DbBench::new(self.shared.clone(), t.seed, t.stream, writer))
    }

    fn counts_operations(&self) -> bool {
        true
    }

    fn background_workers(&self) -> u32 {
        u32::from(self.shared.config().bench.while_writing())
    }

    fn flush_before(&self) -> bool {
        true
    }

    fn counted(&self) -> bool {
        self.shared.config().bench.counted()
    }

    fn shortfall(&self) -> Option<String> {
        let c = self.shared.config();
        let written = self.shared.fill_next.load(Ordering::Relaxed).min(c.num);
        (c.bench == Bench::FillSeq && written < c.num).then(|| {
            format!(
                "fillseq wrote {written} of the {} keys of --table-size before its window \
                 (--write-secs) ended: the steps after it would read keys that are not there; \
                 give a longer --write-secs or a smaller --table-size (db_bench's fillseq \
                 writes every key, however long it takes)",
                c.num
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection that records each key-value operation it is given and fails the
    /// first `fail` of them with a serialization failure.
    /// An operation as the connection saw it: kind, key, values, count.
    type Seen = (KvKind, Vec<u8>, Vec<Vec<u8>>, u32);

    #[derive(Default)]
    struct Recording {
        ops: Vec<Seen>,
        fail: usize,
    }

    impl Connection for Recording {
        fn dialect(&self) -> dbdelta_engine::Dialect {
            dbdelta_engine::Dialect::Sqlite
        }
        fn prepare(&mut self, _: &str) -> Result<dbdelta_engine::StmtId, EngineError> {
            unreachable!("db_bench prepares nothing")
        }
        fn execute(
            &mut self,
            _: dbdelta_engine::StmtId,
            _: &[dbdelta_engine::Value<'_>],
        ) -> Result<Outcome, EngineError> {
            unreachable!("db_bench executes no statement")
        }
        fn query(&mut self, _: &str) -> Result<Outcome, EngineError> {
            Ok(Outcome::default())
        }
        fn query_scalar(&mut self, _: &str) -> Result<Option<String>, EngineError> {
            Ok(None)
        }
        fn families(&self) -> &'static [Family] {
            &[Family::RawKeyValue]
        }
        fn into_session(
            self: Box<Self>,
        ) -> Result<dbdelta_engine::SessionParts, Box<dyn Connection>> {
            Err(self)
        }
        fn kv(&mut self, op: &KvOp<'_>) -> Result<Outcome, EngineError> {
            let values = op.values.iter().map(|v| v.to_vec()).collect();
            self.ops.push((op.kind, op.key.to_vec(), values, op.count));
            if self.fail > 0 {
                self.fail -= 1;
                return Err(
                    EngineError::new(dbdelta_engine::ErrorKind::Retryable, "busy")
                        .with_code("SQLite 5"),
                );
            }
            Ok(Outcome {
                affected: 1,
                ..Outcome::default()
            })
        }
    }

    #[test]
    fn events_run_directly_are_the_operations_the_batch_would_hold() {
        for bench in [
            Bench::FillSeq,
            Bench::ReadRandom,
            Bench::Overwrite,
            Bench::FwdRange,
            Bench::RevRange,
            Bench::MultiReadRandom,
        ] {
            let config = DbBenchConfig::new(bench, 1000, 1);
            let mut direct = DbBench::new(DbBenchShared::new(config.clone()), 7, 3, false);
            let mut batched = DbBench::new(DbBenchShared::new(config), 7, 3, false);
            let mut conn = Recording::default();
            let mut buffers = crate::EventBuffers::default();
            let mut n = crate::Counters::default();
            let mut via_batch = Recording::default();
            for _ in 0..20 {
                let run = crate::run_event(&mut direct, &mut conn, &mut buffers, &mut n, 1);
                assert!(run.result.is_ok() && run.retries == 0);
                let mut ops = OpBatch::new();
                batched.next_event(&mut ops).unwrap();
                let mut scratch = dbdelta_engine::Scratch::default();
                dbdelta_engine::ops::run_batch(&mut via_batch, &ops, &mut scratch, |_| ()).unwrap();
            }
            assert_eq!(conn.ops, via_batch.ops, "{bench:?}");
            assert!(buffers.ops.is_empty(), "{bench:?} ran without the batch");
            assert_eq!(n.queries, 20, "{bench:?}");
        }
    }

    #[test]
    fn a_direct_event_that_failed_to_serialize_runs_again_as_it_was() {
        let config = DbBenchConfig::new(Bench::Overwrite, 1000, 1);
        let mut w = DbBench::new(DbBenchShared::new(config), 7, 3, false);
        let mut conn = Recording {
            fail: 2,
            ..Recording::default()
        };
        let (mut buffers, mut n) = (crate::EventBuffers::default(), crate::Counters::default());
        let run = crate::run_event(&mut w, &mut conn, &mut buffers, &mut n, 3);
        assert!(run.result.is_ok());
        assert_eq!(run.retries, 2);
        assert_eq!(conn.ops.len(), 3);
        assert!(
            conn.ops.windows(2).all(|p| p[0] == p[1]),
            "the same put each time"
        );
        // Out of tries: the failure is the event's.
        conn.fail = 1;
        let run = crate::run_event(&mut w, &mut conn, &mut buffers, &mut n, 1);
        assert!(run.result.is_err_and(|e| e.is_serialization()));
    }

    #[test]
    fn keys_are_big_endian_then_zero_padded() {
        let mut k = Vec::new();
        key_from_int(1, 20, &mut k);
        assert_eq!(k, b"\0\0\0\0\0\0\0\x01000000000000");
        let mut k2 = Vec::new();
        key_from_int(256, 20, &mut k2);
        assert!(k < k2, "byte order is numeric order");
    }

    #[test]
    fn values_are_half_compressible_printable_pieces() {
        let v = value_buffer(400);
        assert!(v.len() >= 1 << 20 && v.len().is_multiple_of(100));
        assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
        // Each 100-byte piece is 50 bytes twice.
        assert_eq!(v[..50], v[50..100]);
        assert_ne!(v[..50], v[100..150]);
        // Park-Miller from seed 301: the first draws are fixed.
        let mut r = LegacyRandom::new(301);
        assert_eq!(r.next(), 301 * 16807);
        assert_eq!(v[0], b' ' + ((301u32 * 16807) % 95) as u8);
    }

    #[test]
    fn overwritesome_stops_after_a_tenth_of_the_keys_per_thread() {
        let shared = DbBenchShared::new(DbBenchConfig::new(Bench::OverwriteSome, 1000, 2));
        let mut w = DbBench::new(shared, 1, 2, false);
        let mut ops = OpBatch::new();
        let mut n = 0;
        while !w.finished() {
            ops.clear();
            w.next_event(&mut ops).unwrap();
            n += 1;
        }
        assert_eq!(n, 50);
    }

    #[test]
    fn a_fillseq_that_did_not_write_every_key_says_how_many_it_wrote() {
        let step = DbBenchStep {
            shared: DbBenchShared::new(DbBenchConfig::new(Bench::FillSeq, 10, 1)),
            threads: 1,
        };
        step.shared.fill_next.store(4, Ordering::Relaxed);
        let why = step.shortfall().unwrap();
        assert!(why.contains("wrote 4 of the 10 keys"), "{why}");
        step.shared.fill_next.store(11, Ordering::Relaxed);
        assert_eq!(step.shortfall(), None);
        let read = DbBenchStep {
            shared: DbBenchShared::new(DbBenchConfig::new(Bench::ReadRandom, 10, 1)),
            threads: 1,
        };
        assert_eq!(read.shortfall(), None);
    }

    #[test]
    fn fillseq_hands_out_each_key_once_then_finishes() {
        let shared = DbBenchShared::new(DbBenchConfig::new(Bench::FillSeq, 5, 1));
        let mut w = DbBench::new(shared, 1, 2, false);
        let mut ops = OpBatch::new();
        for _ in 0..5 {
            assert!(!w.finished());
            ops.clear();
            w.next_event(&mut ops).unwrap();
        }
        assert!(w.finished());
    }

    #[test]
    fn the_writer_is_paced_at_the_byte_rate() {
        let mut c = DbBenchConfig::new(Bench::ReadWhileWriting, 1000, 1);
        c.writer_bytes_per_sec = 420 * 200; // 200 puts/s
        let mut w = DbBench::new(DbBenchShared::new(c), 1, 2, true);
        assert!(w.background() && w.op_type() == Some(1));
        let mut ops = OpBatch::new();
        let t0 = Instant::now();
        for _ in 0..21 {
            ops.clear();
            w.next_event(&mut ops).unwrap();
        }
        let secs = t0.elapsed().as_secs_f64();
        assert!(secs >= 0.099, "20 intervals of 5 ms: {secs}");
    }
}
