//! YCSB's generators, bit for bit as in YCSB 0.17.0's `site.ycsb.generator` package except
//! the random source (a seeded per-worker [`Rng`] instead of `ThreadLocalRandom`):
//! FNV-64 key hashing, Gray et al.'s zipfian with incremental zeta, the scrambled zipfian
//! over 10^10 items, `latest` (skewed towards the newest acknowledged key), the
//! acknowledged insert counter, the operation chooser and the printable random values.

use crate::rng::Rng;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// YCSB's `ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Items of the scrambled zipfian's inner generator (`ScrambledZipfianGenerator.ITEM_COUNT`).
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;
/// Precomputed zeta of the inner generator (`ScrambledZipfianGenerator.ZETAN`).
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `val`, least significant first,
/// then Java's `Math.abs` (which leaves `i64::MIN` negative).
pub fn fnv64(mut val: i64) -> i64 {
    let mut h: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    h.wrapping_abs()
}

/// `CoreWorkload.buildKeyName` with `zeropadding=1`: `user` + the (hashed) key number.
pub fn key_name(keynum: i64, hashed: bool, out: &mut String) {
    use std::fmt::Write;
    let n = if hashed { fnv64(keynum) } else { keynum };
    out.push_str("user");
    let _ = write!(out, "{n}");
}

/// Σ_{i=st}^{n-1} 1/(i+1)^θ added to `initial` (`ZipfianGenerator.zetastatic`).
pub fn zeta(st: i64, n: i64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// `ZipfianGenerator`: item `base` is the most popular. Popularity falls as 1/rank^θ.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

impl Zipfian {
    /// Over `[min, max]` with θ = 0.99, computing zeta (O(n): share the result through
    /// [`Zipfian::with_zetan`] when many workers need the same generator).
    pub fn new(min: i64, max: i64) -> Self {
        let z = zeta(0, max - min + 1, ZIPFIAN_CONSTANT, 0.0);
        Self::with_zetan(min, max, ZIPFIAN_CONSTANT, z)
    }

    /// Over `[min, max]` with a known zeta of its item count.
    pub fn with_zetan(min: i64, max: i64, theta: f64, zetan: f64) -> Self {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
        }
    }

    /// The zeta of the current item count.
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// A draw over the constructor's item count.
    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        self.next_of(self.items, rng)
    }

    /// A draw over `item_count` items; zeta is extended incrementally when the count grew
    /// (a smaller count keeps the larger zeta, as YCSB does without
    /// `allowitemcountdecrease`). `eta` keeps YCSB's use of the constructor's item count.
    pub fn next_of(&mut self, item_count: i64, rng: &mut Rng) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.unit();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }
}

/// `ScrambledZipfianGenerator` with θ = 0.99: zipfian popularity spread over the key
/// space by FNV hashing, so the hot keys are not adjacent.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: i64,
    item_count: i64,
    inner: Zipfian,
}

impl ScrambledZipfian {
    /// Over `[min, max]` (inclusive).
    pub fn new(min: i64, max: i64) -> Self {
        ScrambledZipfian {
            min,
            item_count: max - min + 1,
            inner: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
        }
    }

    /// The next key number.
    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        let z = self.inner.next(rng);
        self.min + fnv64(z) % self.item_count
    }
}

/// `AcknowledgedCounterGenerator`, shared by a step's workers: hands out insert key
/// numbers and reports as its last value the highest number below which every insert has
/// completed, so `latest` never chooses a key whose insert is still in flight.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicI64,
    limit: AtomicI64,
    pending: Mutex<BTreeSet<i64>>,
}

impl AcknowledgedCounter {
    /// A counter whose first value is `start` (its last value is `start − 1`).
    pub fn new(start: i64) -> Self {
        AcknowledgedCounter {
            next: AtomicI64::new(start),
            limit: AtomicI64::new(start - 1),
            pending: Mutex::new(BTreeSet::new()),
        }
    }

    /// The next key number to insert.
    pub fn next_value(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The first value not handed out yet.
    pub fn peek_next(&self) -> i64 {
        self.next.load(Ordering::Relaxed)
    }

    /// The highest value with every value up to it acknowledged.
    pub fn last_value(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `value`'s insert as done (successful or not, as YCSB's `finally` does). At most
    /// one insert per worker is in flight, so YCSB's 2^20-slot window cannot overflow.
    pub fn acknowledge(&self, value: i64) {
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.insert(value);
        let mut limit = self.limit.load(Ordering::Relaxed);
        while pending.remove(&(limit + 1)) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }
}

/// `SkewedLatestGenerator`: zipfian over the acknowledged keys, newest most popular.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipf: Zipfian,
}

impl SkewedLatest {
    /// For a counter whose last value is `last` (zeta of `last` items precomputed once per
    /// step by [`SkewedLatest::zeta_for`]).
    pub fn new(last: i64, zetan: f64) -> Self {
        SkewedLatest {
            zipf: Zipfian::with_zetan(0, last - 1, ZIPFIAN_CONSTANT, zetan),
        }
    }

    /// The zeta [`SkewedLatest::new`] needs for a counter at `last`.
    pub fn zeta_for(last: i64) -> f64 {
        zeta(0, last, ZIPFIAN_CONSTANT, 0.0)
    }

    /// The next key number: `max − zipfian(max)` with `max` the counter's last value.
    pub fn next(&mut self, max: i64, rng: &mut Rng) -> i64 {
        max - self.zipf.next_of(max, rng)
    }
}

/// YCSB's uniform long in `[lb, ub]`: `abs(nextLong()) % (ub−lb+1) + lb`.
#[inline]
pub fn uniform(rng: &mut Rng, lb: i64, ub: i64) -> i64 {
    ((rng.next_u64() >> 1) % (ub - lb + 1) as u64) as i64 + lb
}

/// `DiscreteGenerator`: picks an index by weight, walking the weights in order.
#[derive(Debug, Clone)]
pub struct Discrete {
    /// (weight / sum, value) in the order given.
    shares: Vec<(f64, usize)>,
}

impl Discrete {
    /// From (weight, value) pairs; zero weights are left out, as CoreWorkload does.
    pub fn new(weights: &[(f64, usize)]) -> Self {
        let kept: Vec<(f64, usize)> = weights.iter().copied().filter(|w| w.0 > 0.0).collect();
        let sum: f64 = kept.iter().map(|w| w.0).sum();
        Discrete {
            shares: kept.into_iter().map(|(w, v)| (w / sum, v)).collect(),
        }
    }

    /// The next value.
    pub fn next(&self, rng: &mut Rng) -> usize {
        let mut val = rng.unit();
        for &(share, v) in &self.shares {
            if val < share {
                return v;
            }
            val -= share;
        }
        self.shares.last().map(|s| s.1).unwrap_or(0)
    }
}

/// `RandomByteIterator`: `len` printable bytes (0x20–0x7F), six from each 32-bit draw.
pub fn random_value(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + len, b' ');
    let buf = &mut out[start..];
    let mut base = 0;
    while base < len {
        let r = rng.next_u64() as u32 as i32;
        let left = len - base;
        // Filled from the highest index down, as the Java switch falls through.
        let parts = [
            (r >> 25) & 95,
            (r >> 20) & 63,
            (r >> 15) & 31,
            (r >> 10) & 95,
            (r >> 5) & 63,
            r & 31,
        ];
        for (k, p) in parts.iter().enumerate() {
            let idx = 5 - k;
            if idx < left {
                buf[base + idx] = (*p as u8) + b' ';
            }
        }
        base += 6;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_vectors_match_ycsb() {
        let keys: Vec<String> = (0..5)
            .map(|i| {
                let mut s = String::new();
                key_name(i, true, &mut s);
                s
            })
            .collect();
        assert_eq!(
            keys,
            [
                "user6284781860667377211",
                "user8517097267634966620",
                "user1820151046732198393",
                "user4052466453699787802",
                "user3232700585171816769"
            ]
        );
        let mut s = String::new();
        key_name(7, false, &mut s);
        assert_eq!(s, "user7");
    }

    #[test]
    fn scrambled_hot_keys_are_the_hashes_of_the_first_ranks() {
        // recordcount 1000, no inserts: items 0..=1000, hottest = fnv(0..2) % 1001.
        let hot: Vec<i64> = (0..3).map(|z| fnv64(z) % 1001).collect();
        assert_eq!(hot, [144, 610, 213]);
        let mut g = ScrambledZipfian::new(0, 1000);
        let mut rng = Rng::new(1, 2);
        let mut counts = vec![0u64; 1001];
        let n = 1_000_000;
        for _ in 0..n {
            counts[g.next(&mut rng) as usize] += 1;
        }
        let mut ranked: Vec<(u64, usize)> = counts.iter().copied().zip(0..).collect();
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(ranked[0].1, 144);
        // Rank 1 has probability 1/zetan of the inner generator.
        let p1 = ranked[0].0 as f64 / n as f64;
        let want = 1.0 / SCRAMBLED_ZETAN;
        assert!((p1 - want).abs() < 0.003, "{p1} vs {want}");
    }

    #[test]
    fn zipfian_frequencies_follow_one_over_rank_to_theta() {
        let n_items = 1000;
        let mut g = Zipfian::new(0, n_items - 1);
        let zetan = g.zetan();
        let mut rng = Rng::new(3, 4);
        let mut counts = vec![0u64; n_items as usize];
        let draws = 2_000_000;
        for _ in 0..draws {
            counts[g.next(&mut rng) as usize] += 1;
        }
        for rank in [0usize, 1] {
            let want = 1.0 / ((rank + 1) as f64).powf(ZIPFIAN_CONSTANT) / zetan;
            let got = counts[rank] as f64 / draws as f64;
            assert!((got - want).abs() < 0.004, "rank {rank}: {got} vs {want}");
        }
        // The tail is an approximation (Gray et al.): check ranks 10..100 carry about the
        // mass the exact distribution gives them.
        let want: f64 = (10..100)
            .map(|i| 1.0 / ((i + 1) as f64).powf(ZIPFIAN_CONSTANT))
            .sum::<f64>()
            / zetan;
        let got = counts[10..100].iter().sum::<u64>() as f64 / draws as f64;
        assert!((got - want).abs() / want < 0.05, "{got} vs {want}");
    }

    #[test]
    fn incremental_zeta_equals_the_full_sum() {
        let full = zeta(0, 5000, ZIPFIAN_CONSTANT, 0.0);
        let part = zeta(0, 3000, ZIPFIAN_CONSTANT, 0.0);
        let extended = zeta(3000, 5000, ZIPFIAN_CONSTANT, part);
        assert!((full - extended).abs() < 1e-9);
        let mut g = Zipfian::new(0, 2999);
        let mut rng = Rng::new(5, 6);
        for _ in 0..100 {
            let v = g.next_of(5000, &mut rng);
            assert!((0..5000).contains(&v));
        }
        assert!((g.zetan() - full).abs() < 1e-9);
    }

    #[test]
    fn latest_prefers_the_newest_keys() {
        let last = 10_000;
        let mut g = SkewedLatest::new(last, SkewedLatest::zeta_for(last));
        let mut rng = Rng::new(7, 8);
        let draws = 500_000;
        let mut newest = 0;
        let mut recent = 0;
        for _ in 0..draws {
            let k = g.next(last, &mut rng);
            assert!((1..=last).contains(&k), "{k}");
            newest += u64::from(k == last);
            recent += u64::from(k > last - 100);
        }
        let zetan = SkewedLatest::zeta_for(last);
        let p_newest = newest as f64 / draws as f64;
        assert!((p_newest - 1.0 / zetan).abs() < 0.004, "{p_newest}");
        let want_recent: f64 = (1..=100)
            .map(|i| 1.0 / (i as f64).powf(ZIPFIAN_CONSTANT))
            .sum::<f64>()
            / zetan;
        let got_recent = recent as f64 / draws as f64;
        assert!(
            (got_recent - want_recent).abs() < 0.02,
            "{got_recent} vs {want_recent}"
        );
    }

    #[test]
    fn acknowledged_counter_waits_for_holes() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.last_value(), 99);
        let (a, b, d) = (c.next_value(), c.next_value(), c.next_value());
        assert_eq!((a, b, d), (100, 101, 102));
        c.acknowledge(101);
        assert_eq!(c.last_value(), 99, "100 is still in flight");
        c.acknowledge(100);
        assert_eq!(c.last_value(), 101);
        c.acknowledge(102);
        assert_eq!(c.last_value(), 102);
        assert_eq!(c.peek_next(), 103);
    }

    #[test]
    fn discrete_mix_within_one_percent() {
        let d = Discrete::new(&[(0.5, 0), (0.0, 1), (0.05, 2), (0.45, 3)]);
        let mut rng = Rng::new(9, 10);
        let mut counts = [0u64; 4];
        let n = 1_000_000;
        for _ in 0..n {
            counts[d.next(&mut rng)] += 1;
        }
        assert_eq!(counts[1], 0);
        for (i, want) in [(0, 0.5), (2, 0.05), (3, 0.45)] {
            let got = counts[i] as f64 / n as f64;
            assert!((got - want).abs() < 0.01 * want.max(0.1), "{i}: {got}");
        }
    }

    #[test]
    fn uniform_scan_lengths_cover_one_to_max() {
        let mut rng = Rng::new(11, 12);
        let mut counts = [0u64; 101];
        let n = 1_000_000;
        for _ in 0..n {
            counts[uniform(&mut rng, 1, 100) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        for c in &counts[1..] {
            let share = *c as f64 / n as f64;
            assert!((share - 0.01).abs() < 0.001, "{share}");
        }
    }

    #[test]
    fn values_are_printable_and_of_the_asked_length() {
        let mut rng = Rng::new(13, 14);
        let mut v = Vec::new();
        for len in [0, 1, 5, 6, 7, 100] {
            v.clear();
            random_value(&mut rng, len, &mut v);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|b| (0x20..=0x7f).contains(b)));
        }
        assert!(std::str::from_utf8(&v).is_ok());
    }
}
