//! Random generators with sysbench's semantics: xoroshiro128+ per worker, uniform with
//! inclusive bounds, zipfian by rejection-inversion (exponent 0.8 by default), and the
//! `###########-…` digit templates of the sbtest `c` and `pad` columns.

/// sysbench's default zipfian exponent (`--rand-zipfian-exp`).
pub const ZIPF_EXPONENT: f64 = 0.8;

/// The template of column `c`: 10 groups of 11 digits joined by '-' (119 chars).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// The template of column `pad`: 5 groups of 11 digits joined by '-' (59 chars).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// xoroshiro128+, the PRNG sysbench uses per thread.
#[derive(Debug, Clone)]
pub struct Rng {
    s0: u64,
    s1: u64,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator seeded from `seed` and a stream number (e.g. step and worker index), so
    /// every worker of every step draws an independent, reproducible sequence.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let s0 = splitmix64(&mut x);
        let s1 = splitmix64(&mut x);
        Rng {
            s0,
            s1: if s0 == 0 && s1 == 0 { 1 } else { s1 },
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(24) ^ s1 ^ (s1 << 16);
        self.s1 = s1.rotate_left(37);
        result
    }

    /// A double in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [a, b], both inclusive: `a + floor(u·(b−a+1))` as sysbench computes it.
    #[inline]
    pub fn uniform(&mut self, a: i64, b: i64) -> i64 {
        debug_assert!(a <= b);
        let span = (b - a + 1) as f64;
        let v = a + (self.unit() * span) as i64;
        v.min(b)
    }

    /// Fills `out` (cleared first) from a template: every '#' becomes a random digit.
    pub fn fill_template(&mut self, template: &str, out: &mut String) {
        out.clear();
        let mut bits = 0u64;
        let mut left = 0;
        for ch in template.chars() {
            if ch == '#' {
                if left == 0 {
                    bits = self.next_u64();
                    left = 19; // 10^19 < 2^64: take 19 decimal digits per draw
                }
                out.push(char::from(b'0' + (bits % 10) as u8));
                bits /= 10;
                left -= 1;
            } else {
                out.push(ch);
            }
        }
    }
}

/// Zipfian over [1, n] with rank 1 the most frequent, by rejection-inversion
/// (Hörmann & Derflinger), the method sysbench's `sb_rand_zipfian` uses.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    /// A zipfian over [1, n] with the given exponent (> 0).
    pub fn new(n: u64, exponent: f64) -> Self {
        let mut z = Zipf {
            n: n.max(1) as f64,
            exponent,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A rank in [1, n].
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// The key distribution of `get_id()` (sysbench `--rand-type`).
#[derive(Debug, Clone)]
pub enum KeyDist {
    /// Uniform over [1, n].
    Uniform(i64),
    /// Zipfian over [1, n].
    Zipfian(Zipf),
}

impl KeyDist {
    /// A key in [1, n].
    #[inline]
    pub fn key(&self, rng: &mut Rng) -> i64 {
        match self {
            KeyDist::Uniform(n) => rng.uniform(1, *n),
            KeyDist::Zipfian(z) => z.sample(rng) as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_bounds_are_inclusive() {
        let mut r = Rng::new(42, 0);
        let (mut lo, mut hi) = (false, false);
        for _ in 0..20_000 {
            let v = r.uniform(1, 10);
            assert!((1..=10).contains(&v));
            lo |= v == 1;
            hi |= v == 10;
        }
        assert!(lo && hi, "both bounds must be reachable");
        assert_eq!(r.uniform(7, 7), 7);
    }

    #[test]
    fn uniform_is_flat() {
        let mut r = Rng::new(1, 2);
        let mut counts = [0u32; 10];
        let n = 200_000;
        for _ in 0..n {
            counts[(r.uniform(1, 10) - 1) as usize] += 1;
        }
        for c in counts {
            let share = f64::from(c) / f64::from(n);
            assert!((share - 0.1).abs() < 0.005, "{counts:?}");
        }
    }

    #[test]
    fn zipf_rank1_vs_rank10_matches_theory() {
        let z = Zipf::new(1000, ZIPF_EXPONENT);
        let mut r = Rng::new(7, 0);
        let mut counts = vec![0u64; 1001];
        for _ in 0..400_000 {
            let k = z.sample(&mut r);
            assert!((1..=1000).contains(&k));
            counts[k as usize] += 1;
        }
        let ratio = counts[1] as f64 / counts[10] as f64;
        let theory = 10f64.powf(ZIPF_EXPONENT); // 6.31
        assert!(
            (ratio / theory - 1.0).abs() < 0.08,
            "ratio {ratio} vs {theory}"
        );
        // Rank-1 share against the normalised harmonic number.
        let h: f64 = (1..=1000).map(|k| (k as f64).powf(-ZIPF_EXPONENT)).sum();
        let share = counts[1] as f64 / 400_000.0;
        assert!(
            (share * h - 1.0).abs() < 0.05,
            "share {share} expected {}",
            1.0 / h
        );
    }

    #[test]
    fn templates_have_sysbench_shape() {
        assert_eq!(C_TEMPLATE.len(), 119);
        assert_eq!(PAD_TEMPLATE.len(), 59);
        let mut r = Rng::new(3, 3);
        let mut s = String::new();
        r.fill_template(C_TEMPLATE, &mut s);
        assert_eq!(s.len(), 119);
        for (a, b) in s.chars().zip(C_TEMPLATE.chars()) {
            if b == '#' {
                assert!(a.is_ascii_digit());
            } else {
                assert_eq!(a, '-');
            }
        }
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups.iter().all(|g| g.len() == 11));
        let first = s.clone();
        r.fill_template(C_TEMPLATE, &mut s);
        assert_ne!(first, s, "values must differ between draws");
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(9, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(9, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(9, 2);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
