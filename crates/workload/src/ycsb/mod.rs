//! YCSB's core workload (`CoreWorkload.java`): the load of `recordcount`
//! records in hashed key order, then workloads A–F as key-value operations. SQL engines run
//! them through the JDBC binding's `usertable` ([`dbdelta_engine::usertable`]); engines
//! that serve key-value operations natively (RocksDB) take them as they are.

pub mod gen;

use crate::benchmark::{Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup};
use crate::rng::Rng;
use crate::suite::{Dataset, WorkloadKind};
use crate::Workload;
use dbdelta_engine::ops::{KvKind, KvOp};
use dbdelta_engine::usertable::{self, KvRoute, UsertableRows};
use dbdelta_engine::{Connection, Engine, EngineError, OpBatch};
use dbdelta_model::RunOptions;
use gen::{AcknowledgedCounter, Discrete, ScrambledZipfian, SkewedLatest};
use std::sync::Arc;

/// The most fields a record has (the usertable's limit).
const MAX_FIELDS: usize = usertable::MAX_FIELDS as usize;

/// The six core workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// 50 % read, 50 % update, zipfian ("session store").
    A,
    /// 95 % read, 5 % update, zipfian ("photo tagging").
    B,
    /// 100 % read, zipfian ("user profile cache").
    C,
    /// 95 % read, 5 % insert, latest ("user status updates").
    D,
    /// 95 % scan (1–100 records), 5 % insert, zipfian ("threaded conversations").
    E,
    /// 50 % read, 50 % read-modify-write, zipfian ("user database").
    F,
}

/// Operation types in YCSB's chooser order; an event's type is its index here.
pub const OP_TYPES: [&str; 5] = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"];
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const SCAN: usize = 3;
const RMW: usize = 4;

impl Mix {
    /// The YCSB core workload of a `ycsb-*` kind; `None` for the others.
    pub fn of(kind: WorkloadKind) -> Option<Mix> {
        Some(match kind {
            WorkloadKind::YcsbA => Mix::A,
            WorkloadKind::YcsbB => Mix::B,
            WorkloadKind::YcsbC => Mix::C,
            WorkloadKind::YcsbD => Mix::D,
            WorkloadKind::YcsbE => Mix::E,
            WorkloadKind::YcsbF => Mix::F,
            _ => return None,
        })
    }

    /// Proportions of READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE (`workloads/workloadX`).
    pub fn proportions(self) -> [f64; 5] {
        match self {
            Mix::A => [0.5, 0.5, 0.0, 0.0, 0.0],
            Mix::B => [0.95, 0.05, 0.0, 0.0, 0.0],
            Mix::C => [1.0, 0.0, 0.0, 0.0, 0.0],
            Mix::D => [0.95, 0.0, 0.05, 0.0, 0.0],
            Mix::E => [0.0, 0.0, 0.05, 0.95, 0.0],
            Mix::F => [0.5, 0.0, 0.0, 0.0, 0.5],
        }
    }

    /// True for D (`requestdistribution=latest`); the others are zipfian.
    pub fn latest(self) -> bool {
        self == Mix::D
    }
}

/// What every worker of one YCSB step shares.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbConfig {
    /// The workload.
    pub mix: Mix,
    /// `recordcount`: records loaded (key numbers 0…recordcount−1).
    pub record_count: u64,
    /// `fieldcount` (10).
    pub field_count: u16,
    /// `fieldlength` (100, constant).
    pub field_length: usize,
    /// `maxscanlength` of the core workloads (100; lengths uniform in 1…max).
    pub max_scan_length: u32,
    /// `operationcount` when the step is counted, for `expectednewkeys`; 0 for a timed
    /// step, as YCSB with `maxexecutiontime` and no operation count.
    pub operation_count: u64,
}

impl YcsbConfig {
    /// YCSB's core-workload defaults for `mix` over `record_count` records.
    pub fn new(mix: Mix, record_count: u64) -> Self {
        YcsbConfig {
            mix,
            record_count,
            field_count: usertable::DEFAULT_FIELDS,
            field_length: 100,
            max_scan_length: 100,
            operation_count: 0,
        }
    }
}

/// The state a step's workers share: the insert key sequence and the precomputed zeta of
/// `latest`.
#[derive(Debug)]
pub struct YcsbShared {
    config: YcsbConfig,
    /// Insert sequence numbers of this process, 0, 1, 2, …; [`InsertKeys`] maps them to
    /// key numbers.
    inserts: AcknowledgedCounter,
    keys: InsertKeys,
    latest_zetan: f64,
}

/// Which key numbers a process's inserts take: from `start` on, every `stride`-th from
/// `start + offset`. A whole run takes them all (offset 0, stride 1); segment K of N takes
/// `start + K − 1 + j·N`, so the segments' inserts are disjoint and their union is the
/// key range one process would insert — YCSB's wiki splits a load over clients by
/// disjoint `insertstart`/`insertcount`, which needs the insert count in advance; a timed
/// step has none, so the range is interleaved instead of cut into blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertKeys {
    /// The first key number not inserted before this step (the record count after a load).
    pub start: u64,
    /// This process's first key number, relative to `start` (segment index − 1).
    pub offset: u64,
    /// Key numbers between this process's consecutive inserts (the segment count).
    pub stride: u64,
}

impl InsertKeys {
    /// Every key number from `start` on (one process measures the whole run).
    pub fn whole(start: u64) -> Self {
        InsertKeys {
            start,
            offset: 0,
            stride: 1,
        }
    }

    /// Segment `segment`'s share of the key numbers from `start` on.
    pub fn segment(start: u64, segment: dbdelta_model::Segment) -> Self {
        InsertKeys {
            start,
            offset: u64::from(segment.index - 1),
            stride: u64::from(segment.count.max(1)),
        }
    }

    /// The key number of this process's `seq`-th insert; `seq` = −1 is the last key before
    /// the step (so "every insert up to −1 acknowledged" is the loaded records).
    pub fn key(&self, seq: i64) -> i64 {
        if seq < 0 {
            self.start as i64 - 1
        } else {
            (self.start + self.offset) as i64 + seq * self.stride as i64
        }
    }
}

impl YcsbShared {
    /// Shared state for one step; inserts take key numbers from `insert_start` on (the
    /// record count after a fresh load, further on when earlier steps inserted: YCSB
    /// would collide with those rows).
    pub fn new(config: YcsbConfig, insert_start: u64) -> Arc<Self> {
        Self::with_keys(config, InsertKeys::whole(insert_start))
    }

    /// Shared state for one step whose inserts take the key numbers `keys` says (a
    /// segment's share); `keys.start` is raised to the record count, as in [`Self::new`].
    pub fn with_keys(config: YcsbConfig, mut keys: InsertKeys) -> Arc<Self> {
        keys.start = keys.start.max(config.record_count);
        let inserts = AcknowledgedCounter::new(0);
        let latest_zetan = if config.mix.latest() {
            SkewedLatest::zeta_for(keys.key(inserts.last_value()))
        } else {
            0.0
        };
        Arc::new(YcsbShared {
            config,
            inserts,
            keys,
            latest_zetan,
        })
    }

    /// The key number after this process's last insert (where the next step starts): past
    /// every key it took. Of several segments, the largest of theirs is past every key any
    /// of them took.
    pub fn next_insert(&self) -> u64 {
        let taken = self.inserts.peek_next();
        if taken == 0 {
            self.keys.start
        } else {
            (self.keys.key(taken - 1) + 1).max(0) as u64
        }
    }

    /// The highest key number with this process's every insert up to it acknowledged.
    fn last_key(&self) -> i64 {
        self.keys.key(self.inserts.last_value())
    }

    /// The step's configuration.
    pub fn config(&self) -> &YcsbConfig {
        &self.config
    }
}

enum Keys {
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

/// One worker's YCSB workload.
pub struct Ycsb {
    shared: Arc<YcsbShared>,
    rng: Rng,
    chooser: Discrete,
    keys: Keys,
    route: Option<KvRoute>,
    key: String,
    value: Vec<u8>,
    all_fields: Vec<u16>,
    /// The insert this worker has in flight, acknowledged when its event is done.
    pending_insert: Option<i64>,
    last_type: usize,
}

impl Ycsb {
    /// A worker's workload; `stream` makes its random sequence independent of the others'.
    pub fn new(shared: Arc<YcsbShared>, seed: u64, stream: u64) -> Self {
        let c = &shared.config;
        let p = c.mix.proportions();
        let chooser = Discrete::new(&[
            (p[READ], READ),
            (p[UPDATE], UPDATE),
            (p[INSERT], INSERT),
            (p[SCAN], SCAN),
            (p[RMW], RMW),
        ]);
        let keys = if c.mix.latest() {
            Keys::Latest(SkewedLatest::new(shared.last_key(), shared.latest_zetan))
        } else {
            // expectednewkeys = operationcount · insertproportion · 2 ("2 is fudge factor").
            let expected = (c.operation_count as f64 * p[INSERT] * 2.0) as i64;
            Keys::Zipfian(ScrambledZipfian::new(0, c.record_count as i64 + expected))
        };
        let all_fields = (0..c.field_count).collect();
        Ycsb {
            rng: Rng::new(seed, stream),
            chooser,
            keys,
            route: None,
            key: String::with_capacity(24),
            value: Vec::with_capacity(c.field_length * usize::from(c.field_count)),
            all_fields,
            pending_insert: None,
            last_type: READ,
            shared,
        }
    }

    /// `CoreWorkload.nextKeynum`: a key number no higher than the last acknowledged insert.
    fn next_keynum(&mut self) -> i64 {
        let last = self.shared.last_key();
        match &mut self.keys {
            Keys::Latest(g) => g.next(last, &mut self.rng),
            Keys::Zipfian(g) => loop {
                let k = g.next(&mut self.rng);
                if k <= last {
                    return k;
                }
            },
        }
    }

    fn set_key(&mut self, keynum: i64) {
        self.key.clear();
        gen::key_name(keynum, true, &mut self.key);
    }

    /// Fills `value` with `n` field values of `fieldlength` bytes each, back to back.
    fn fill_values(&mut self, n: usize) {
        self.value.clear();
        for _ in 0..n {
            gen::random_value(
                &mut self.rng,
                self.shared.config.field_length,
                &mut self.value,
            );
        }
    }

    fn push(&self, op: &KvOp<'_>, ops: &mut OpBatch) -> Result<(), EngineError> {
        match &self.route {
            Some(r) => r.push(op, ops),
            None => Err(EngineError::config(
                "the YCSB workload was not prepared on a connection",
            )),
        }
    }

    fn acknowledge(&mut self) {
        if let Some(k) = self.pending_insert.take() {
            self.shared.inserts.acknowledge(k);
        }
    }
}

impl Workload for Ycsb {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError> {
        self.route = KvRoute::prepare(conn, self.shared.config.field_count)?;
        if self.route.is_none() {
            return Err(EngineError::config(
                "this engine serves neither key-value nor SQL operations",
            ));
        }
        Ok(())
    }

    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        // An event that was never reported done still releases its insert key.
        self.acknowledge();
        let t = self.chooser.next(&mut self.rng);
        self.last_type = t;
        let field_len = self.shared.config.field_length;
        match t {
            READ | SCAN => {
                let k = self.next_keynum();
                self.set_key(k);
                let count = if t == SCAN {
                    gen::uniform(
                        &mut self.rng,
                        1,
                        i64::from(self.shared.config.max_scan_length),
                    ) as u32
                } else {
                    0
                };
                let kind = if t == SCAN {
                    KvKind::Scan
                } else {
                    KvKind::Read
                };
                self.push(
                    &KvOp {
                        kind,
                        key: self.key.as_bytes(),
                        fields: &[],
                        values: &[],
                        count,
                    },
                    ops,
                )
            }
            UPDATE | RMW => {
                let k = self.next_keynum();
                self.set_key(k);
                // writeallfields=false: one field, uniform over the field numbers.
                let f = gen::uniform(
                    &mut self.rng,
                    0,
                    i64::from(self.shared.config.field_count) - 1,
                ) as u16;
                self.fill_values(1);
                let kind = if t == RMW {
                    KvKind::ReadModifyWrite
                } else {
                    KvKind::Update
                };
                let values: [&[u8]; 1] = [&self.value];
                self.push(
                    &KvOp {
                        kind,
                        key: self.key.as_bytes(),
                        fields: &[f],
                        values: &values,
                        count: 0,
                    },
                    ops,
                )
            }
            _ => {
                let seq = self.shared.inserts.next_value();
                self.pending_insert = Some(seq);
                self.set_key(self.shared.keys.key(seq));
                let n = usize::from(self.shared.config.field_count).min(MAX_FIELDS);
                self.fill_values(n);
                // Each field's slice of the value buffer, on the stack (no allocation).
                let mut values: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
                for (i, v) in values.iter_mut().take(n).enumerate() {
                    *v = &self.value[i * field_len..(i + 1) * field_len];
                }
                self.push(
                    &KvOp {
                        kind: KvKind::Insert,
                        key: self.key.as_bytes(),
                        fields: &self.all_fields[..n],
                        values: &values[..n],
                        count: 0,
                    },
                    ops,
                )
            }
        }
    }

    fn uses_transactions(&self) -> bool {
        false
    }

    fn event_done(&mut self) {
        self.acknowledge();
    }

    fn op_type(&self) -> Option<usize> {
        Some(self.last_type)
    }

    fn op_type_names(&self) -> &'static [&'static str] {
        &OP_TYPES
    }
}

/// Creates the usertable on an SQL engine (dropping dbdelta's own earlier one) or empties a
/// native key-value store, then loads `record_count` records: key numbers 0…N−1 in order,
/// hashed into keys (`insertorder=hashed`), every field `fieldlength` random bytes.
pub fn load(
    conn: &mut dyn Connection,
    config: &YcsbConfig,
    seed: u64,
    i_own_this_database: bool,
) -> Result<u64, EngineError> {
    use dbdelta_engine::Family;
    if conn.families().contains(&Family::KeyValue) {
        conn.kv_clear()?;
    } else {
        crate::schema::drop_if_owned(conn, usertable::TABLE, i_own_this_database)?;
        crate::schema::ensure_ledger(conn)?;
        conn.query(&usertable::create_sql(config.field_count))?;
        crate::schema::record_owned(conn, usertable::TABLE)?;
    }
    let mut rng = Rng::new(seed, 0x7C5B_0000);
    let len = config.field_length;
    let mut buf = Vec::with_capacity(len);
    let mut rows =
        UsertableRows::new(config.record_count, config.field_count, |i, key, values| {
            gen::key_name(i as i64, true, key);
            for v in values.iter_mut() {
                buf.clear();
                gen::random_value(&mut rng, len, &mut buf);
                // Printable ASCII: always valid UTF-8.
                v.push_str(std::str::from_utf8(&buf).unwrap_or_default());
            }
        })?;
    conn.bulk_insert(usertable::TABLE, &mut rows)
}

/// YCSB's benchmark: the usertable (or a native key-value store) loaded in hashed key
/// order, and one [`Ycsb`] terminal per worker sharing the insert key sequence.
#[derive(Debug, Clone, Copy)]
pub struct YcsbBenchmark;

impl Benchmark for YcsbBenchmark {
    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn dataset(&self) -> Dataset {
        Dataset::Usertable
    }

    fn load_summary(&self, opts: &RunOptions) -> Option<String> {
        Some(format!("usertable, {} records", opts.table_size))
    }

    fn tables(&self, _: &RunOptions) -> Vec<String> {
        vec![usertable::TABLE.to_string()]
    }

    /// YCSB's load phase on one connection: records in hashed key order.
    fn load(&self, engine: &dyn Engine, opts: &RunOptions) -> Result<u64, LoadError> {
        let mut conn = engine.connect()?;
        // The load's mix is irrelevant: only the record layout matters.
        let config = YcsbConfig::new(Mix::A, opts.table_size);
        Ok(load(
            &mut *conn,
            &config,
            opts.seed,
            opts.i_own_this_database,
        )?)
    }

    fn step(&self, setup: &StepSetup<'_>, carry: &Carry) -> Arc<dyn StepWorkload> {
        // A validated suite's steps on dataset = "usertable" are all ycsb-*.
        let mix = Mix::of(setup.step.params.kind).unwrap_or(Mix::A);
        let keys = match setup.segment {
            Some(segment) => InsertKeys::segment(carry.next_insert, segment),
            None => InsertKeys::whole(carry.next_insert),
        };
        Arc::new(YcsbStep(YcsbShared::with_keys(
            YcsbConfig::new(mix, setup.opts.table_size),
            keys,
        )))
    }
}

/// What a YCSB step's terminals share: the insert key sequence and the zeta of `latest`.
#[derive(Debug)]
struct YcsbStep(Arc<YcsbShared>);

impl StepWorkload for YcsbStep {
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload> {
        Box::new(Ycsb::new(self.0.clone(), t.seed, t.stream))
    }

    fn counts_operations(&self) -> bool {
        true
    }

    fn carry_on(&self, carry: &mut Carry) {
        carry.next_insert = self.0.next_insert();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw_mix(mix: Mix, n: usize) -> [u64; 5] {
        let shared = YcsbShared::new(YcsbConfig::new(mix, 1000), 0);
        let mut w = Ycsb::new(shared, 1, 2);
        let mut counts = [0u64; 5];
        for _ in 0..n {
            counts[w.chooser.next(&mut w.rng)] += 1;
        }
        counts
    }

    #[test]
    fn operation_mixes_within_one_percent_over_a_million_draws() {
        let n = 1_000_000;
        for mix in [Mix::A, Mix::B, Mix::C, Mix::D, Mix::E, Mix::F] {
            let counts = draw_mix(mix, n);
            for (i, want) in mix.proportions().iter().enumerate() {
                let got = counts[i] as f64 / n as f64;
                assert!(
                    (got - want).abs() <= 0.01 * want.max(0.05),
                    "{mix:?} {}: {got} vs {want}",
                    OP_TYPES[i]
                );
            }
        }
    }

    #[test]
    fn zipfian_key_numbers_never_pass_the_acknowledged_inserts() {
        let mut cfg = YcsbConfig::new(Mix::E, 100);
        cfg.operation_count = 10_000; // expectednewkeys = 1000: most draws are rejected
        let shared = YcsbShared::new(cfg, 0);
        let mut w = Ycsb::new(shared.clone(), 3, 4);
        for _ in 0..10_000 {
            let k = w.next_keynum();
            assert!((0..100).contains(&k), "{k}");
        }
        assert_eq!(shared.next_insert(), 100);
    }

    #[test]
    fn inserts_continue_the_sequence_and_are_acknowledged_when_done() {
        let shared = YcsbShared::new(YcsbConfig::new(Mix::D, 1000), 1500);
        assert_eq!(shared.last_key(), 1499);
        let mut w = Ycsb::new(shared.clone(), 5, 6);
        w.route = Some(KvRoute::Native);
        let mut ops = OpBatch::new();
        let mut inserted = 0;
        for _ in 0..2000 {
            ops.clear();
            w.next_event(&mut ops).unwrap();
            if w.last_type == INSERT {
                inserted += 1;
                assert_eq!(shared.last_key(), 1499 + inserted - 1);
                w.event_done();
                assert_eq!(shared.last_key(), 1499 + inserted);
            }
        }
        assert!(inserted > 50, "{inserted}");
        assert_eq!(shared.next_insert(), 1500 + inserted as u64);
    }

    /// The key numbers of `n` inserts by one worker of `shared`'s process.
    fn insert_keys(shared: &Arc<YcsbShared>, n: usize) -> Vec<i64> {
        let mut w = Ycsb::new(shared.clone(), 7, 8);
        w.route = Some(KvRoute::Native);
        let mut ops = OpBatch::new();
        let mut keys = Vec::new();
        while keys.len() < n {
            ops.clear();
            w.next_event(&mut ops).unwrap();
            if let Some(seq) = w.pending_insert {
                keys.push(shared.keys.key(seq));
            }
            w.event_done();
        }
        keys
    }

    #[test]
    fn segments_insert_disjoint_keys_whose_union_is_one_process_range() {
        let cfg = YcsbConfig::new(Mix::D, 1000);
        let start = 1200;
        let whole = insert_keys(&YcsbShared::new(cfg.clone(), start), 300);
        let mut union = Vec::new();
        let mut carries = Vec::new();
        for k in 1..=3 {
            let seg = dbdelta_model::Segment::new(k, 3).unwrap();
            let shared = YcsbShared::with_keys(cfg.clone(), InsertKeys::segment(start, seg));
            // Before any insert, a segment's reads see the loaded and carried keys only.
            assert_eq!(shared.last_key(), start as i64 - 1);
            let keys = insert_keys(&shared, 100);
            // Each segment's keys are its stride, in order, acknowledged as they complete.
            for (j, key) in keys.iter().enumerate() {
                assert_eq!(*key, (start + u64::from(k) - 1) as i64 + 3 * j as i64);
            }
            assert_eq!(shared.last_key(), *keys.last().unwrap());
            carries.push(shared.next_insert());
            union.extend(keys);
        }
        union.sort_unstable();
        let n = union.len();
        union.dedup();
        assert_eq!(union.len(), n, "segments inserted the same key twice");
        assert_eq!(union, whole, "the union is what one process inserts");
        // The next step starts past every key any segment took: the largest carry.
        let next = carries.into_iter().max().unwrap();
        assert_eq!(next, start + 300);
    }

    #[test]
    fn segments_with_unequal_inserts_carry_past_every_key() {
        let cfg = YcsbConfig::new(Mix::E, 100);
        let mut all = Vec::new();
        let mut next = 0;
        for (k, n) in [(1, 10), (2, 3), (3, 0)] {
            let seg = dbdelta_model::Segment::new(k, 3).unwrap();
            let shared = YcsbShared::with_keys(cfg.clone(), InsertKeys::segment(100, seg));
            all.extend(insert_keys(&shared, n));
            next = next.max(shared.next_insert());
        }
        assert!(all.iter().all(|k| (*k as u64) < next), "{all:?} {next}");
        assert_eq!(next, 100 + 9 * 3 + 1);
    }
}
