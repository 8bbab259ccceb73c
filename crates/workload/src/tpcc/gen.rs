//! TPC-C's input generation (clauses 2.1.6, 4.3.2, 5.2.4): NURand and its C constants,
//! customer last names from the syllable table, random strings, and the card deck that
//! deals the transaction mix.

use crate::rng::Rng;

/// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x`.
pub fn nurand(rng: &mut Rng, a: i64, c: i64, x: i64, y: i64) -> i64 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

/// The C constants of NURand for C_LAST (A = 255), C_ID (A = 1023) and OL_I_ID (A = 8191).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NurandC {
    /// C for customer last names.
    pub c_last: i64,
    /// C for customer ids.
    pub c_id: i64,
    /// C for item ids.
    pub ol_i_id: i64,
}

impl NurandC {
    /// The constants the load draws.
    pub fn load(rng: &mut Rng) -> Self {
        NurandC {
            c_last: rng.uniform(0, 255),
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }

    /// The constants of a run after a load with `load` (clause 2.1.6.1): C_LAST differs
    /// from the load's by a delta in [65, 119] other than 96 and 112; the others are new.
    pub fn run(load: &NurandC, rng: &mut Rng) -> Self {
        let c_last = loop {
            let c = rng.uniform(0, 255);
            let delta = (c - load.c_last).abs();
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break c;
            }
        };
        NurandC {
            c_last,
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }
}

/// The constants of a load with `seed`, and of the runs that follow it.
pub fn load_constants(seed: u64) -> NurandC {
    NurandC::load(&mut Rng::new(seed, 0x7C0C_0001))
}

/// The run constants of a load with `seed`.
pub fn run_constants(seed: u64) -> NurandC {
    NurandC::run(&load_constants(seed), &mut Rng::new(seed, 0x7C0C_0002))
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0…999): the syllables of its three digits (4.3.2.3).
pub fn last_name(n: i64, out: &mut String) {
    let n = n.clamp(0, 999) as usize;
    out.push_str(SYLLABLES[n / 100]);
    out.push_str(SYLLABLES[(n / 10) % 10]);
    out.push_str(SYLLABLES[n % 10]);
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A random alphanumeric string of length U[min, max] appended to `out` (a-string, 4.3.2.2).
pub fn a_string(rng: &mut Rng, min: i64, max: i64, out: &mut String) {
    let n = rng.uniform(min, max);
    for _ in 0..n {
        out.push(ALNUM[rng.uniform(0, ALNUM.len() as i64 - 1) as usize] as char);
    }
}

/// A random numeric string of length U[min, max] appended to `out` (n-string).
pub fn n_string(rng: &mut Rng, min: i64, max: i64, out: &mut String) {
    let n = rng.uniform(min, max);
    for _ in 0..n {
        out.push((b'0' + rng.uniform(0, 9) as u8) as char);
    }
}

/// A zip code: four random digits and "11111" (4.3.2.7).
pub fn zip(rng: &mut Rng, out: &mut String) {
    n_string(rng, 4, 4, out);
    out.push_str("11111");
}

/// The marker of the "original" items and stock rows (clause 2.4.2.2's brand-generic).
pub const ORIGINAL: &str = "ORIGINAL";

/// I_DATA / S_DATA: an a-string of U[min, max], with "ORIGINAL" at a random position in
/// 10 % of the rows (4.3.3.1).
pub fn original_data(rng: &mut Rng, min: i64, max: i64, out: &mut String) {
    let start = out.len();
    a_string(rng, min, max, out);
    let len = out.len() - start;
    // Strings shorter than the marker never carry it (the load's are 26–50 long).
    if len >= ORIGINAL.len() && rng.uniform(1, 10) == 1 {
        let at = start + rng.uniform(0, (len - ORIGINAL.len()) as i64) as usize;
        out.replace_range(at..at + ORIGINAL.len(), ORIGINAL);
    }
}

/// A warehouse other than `home` among `1..=warehouses` (remote order lines and payments);
/// `home` when it is the only one.
pub fn remote_warehouse(rng: &mut Rng, home: i64, warehouses: i64) -> i64 {
    if warehouses <= 1 {
        return home;
    }
    let w = rng.uniform(1, warehouses - 1);
    if w >= home {
        w + 1
    } else {
        w
    }
}

/// TPC-C's transaction types, in the order of the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnType {
    /// New-Order (45 %).
    NewOrder,
    /// Payment (43 %).
    Payment,
    /// Order-Status (4 %).
    OrderStatus,
    /// Delivery (4 %).
    Delivery,
    /// Stock-Level (4 %).
    StockLevel,
}

impl TxnType {
    /// All types, in order.
    pub const ALL: [TxnType; 5] = [
        TxnType::NewOrder,
        TxnType::Payment,
        TxnType::OrderStatus,
        TxnType::Delivery,
        TxnType::StockLevel,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            TxnType::NewOrder => "new-order",
            TxnType::Payment => "payment",
            TxnType::OrderStatus => "order-status",
            TxnType::Delivery => "delivery",
            TxnType::StockLevel => "stock-level",
        }
    }
}

/// Cards of each type in the deck (clause 5.2.4.2: the mix is dealt from a shuffled deck
/// so every hundred transactions hold exactly these counts).
const CARDS: [(TxnType, usize); 5] = [
    (TxnType::NewOrder, 45),
    (TxnType::Payment, 43),
    (TxnType::OrderStatus, 4),
    (TxnType::Delivery, 4),
    (TxnType::StockLevel, 4),
];

/// A shuffled deck of 100 cards, reshuffled when it runs out.
#[derive(Debug, Clone)]
pub struct Deck {
    cards: Vec<TxnType>,
    next: usize,
}

impl Deck {
    /// A freshly shuffled deck.
    pub fn new(rng: &mut Rng) -> Self {
        let mut cards = Vec::with_capacity(100);
        for (t, n) in CARDS {
            cards.extend(std::iter::repeat_n(t, n));
        }
        let mut d = Deck { cards, next: 0 };
        d.shuffle(rng);
        d
    }

    fn shuffle(&mut self, rng: &mut Rng) {
        for i in (1..self.cards.len()).rev() {
            let j = rng.uniform(0, i as i64) as usize;
            self.cards.swap(i, j);
        }
        self.next = 0;
    }

    /// The next transaction type.
    pub fn deal(&mut self, rng: &mut Rng) -> TxnType {
        if self.next == self.cards.len() {
            self.shuffle(rng);
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::new(1, 1);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            let v = nurand(&mut rng, 255, 123, 0, 999);
            assert!((0..=999).contains(&v));
            counts[v as usize] += 1;
        }
        counts.sort_unstable();
        let mean = n as f64 / 1000.0;
        // The OR of two uniforms piles onto values with many one bits: the most common
        // values are several times the mean, the rarest far below it.
        assert!(f64::from(counts[999]) > 3.0 * mean, "max {}", counts[999]);
        assert!(f64::from(counts[0]) < 0.5 * mean, "min {}", counts[0]);
    }

    #[test]
    fn run_constant_follows_the_delta_rule() {
        let mut rng = Rng::new(9, 9);
        for _ in 0..10_000 {
            let load = NurandC::load(&mut rng);
            let run = NurandC::run(&load, &mut rng);
            let delta = (run.c_last - load.c_last).abs();
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
        }
        assert_eq!(
            run_constants(5),
            run_constants(5),
            "a run derives them from the seed"
        );
    }

    #[test]
    fn last_names_come_from_the_syllable_table() {
        let name = |n| {
            let mut s = String::new();
            last_name(n, &mut s);
            s
        };
        assert_eq!(name(0), "BARBARBAR");
        assert_eq!(name(371), "PRICALLYOUGHT");
        assert_eq!(name(999), "EINGEINGEING");
    }

    #[test]
    fn every_hundred_deals_hold_the_mix_exactly() {
        let mut rng = Rng::new(3, 3);
        let mut deck = Deck::new(&mut rng);
        for _ in 0..5 {
            let mut counts = [0usize; 5];
            for _ in 0..100 {
                counts[deck.deal(&mut rng) as usize] += 1;
            }
            assert_eq!(counts, [45, 43, 4, 4, 4]);
        }
    }

    #[test]
    fn original_appears_in_a_tenth_of_the_rows() {
        let mut rng = Rng::new(4, 4);
        let n = 10_000;
        let mut hits = 0;
        for _ in 0..n {
            let mut s = String::new();
            original_data(&mut rng, 26, 50, &mut s);
            assert!((26..=50).contains(&s.len()));
            hits += usize::from(s.contains("ORIGINAL"));
        }
        let share = hits as f64 / n as f64;
        assert!((share - 0.10).abs() < 0.02, "{share}");
    }

    #[test]
    fn nurand_covers_the_customer_and_item_ranges() {
        let mut rng = Rng::new(2, 2);
        let c = NurandC::load(&mut rng);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for _ in 0..100_000 {
            let id = nurand(&mut rng, 1023, c.c_id, 1, 3000);
            assert!((1..=3000).contains(&id));
            let item = nurand(&mut rng, 8191, c.ol_i_id, 1, 100_000);
            assert!((1..=100_000).contains(&item));
            lo = lo.min(id);
            hi = hi.max(id);
        }
        assert!(lo < 20 && hi > 2980, "[{lo}, {hi}]");
    }

    #[test]
    fn load_constants_are_in_range_and_fixed_by_the_seed() {
        for seed in 0..200 {
            let c = load_constants(seed);
            assert!((0..=255).contains(&c.c_last));
            assert!((0..=1023).contains(&c.c_id));
            assert!((0..=8191).contains(&c.ol_i_id));
            assert_eq!(c, load_constants(seed));
        }
    }

    #[test]
    fn strings_have_the_specified_shapes() {
        let mut rng = Rng::new(6, 6);
        let mut s = String::new();
        let mut lengths = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            s.clear();
            a_string(&mut rng, 8, 16, &mut s);
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()), "{s}");
            lengths.insert(s.len());
            s.clear();
            n_string(&mut rng, 16, 16, &mut s);
            assert!(
                s.len() == 16 && s.bytes().all(|b| b.is_ascii_digit()),
                "{s}"
            );
            s.clear();
            zip(&mut rng, &mut s);
            assert!(s.len() == 9 && s.ends_with("11111"), "{s}");
            assert!(s.bytes().all(|b| b.is_ascii_digit()), "{s}");
        }
        assert_eq!(lengths, (8..=16).collect(), "every length in [8, 16]");
        // Appends: the generators build composite fields in one buffer.
        s.clear();
        s.push_str("x-");
        a_string(&mut rng, 3, 3, &mut s);
        assert!(s.starts_with("x-") && s.len() == 5);
        // Too short for the marker: never panics, never carries it.
        for _ in 0..100 {
            s.clear();
            original_data(&mut rng, 0, 7, &mut s);
            assert!(!s.contains(ORIGINAL));
        }
    }

    #[test]
    fn the_deck_reshuffles_and_names_the_types() {
        let mut rng = Rng::new(8, 8);
        let mut deck = Deck::new(&mut rng);
        let first: Vec<TxnType> = (0..100).map(|_| deck.deal(&mut rng)).collect();
        let second: Vec<TxnType> = (0..100).map(|_| deck.deal(&mut rng)).collect();
        assert_ne!(first, second, "a new order after the deck ran out");
        let names: Vec<&str> = TxnType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "new-order",
                "payment",
                "order-status",
                "delivery",
                "stock-level"
            ]
        );
    }

    #[test]
    fn remote_warehouses_are_never_home_and_cover_the_others() {
        let mut rng = Rng::new(5, 5);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let w = remote_warehouse(&mut rng, 3, 5);
            assert_ne!(w, 3);
            seen[(w - 1) as usize] = true;
        }
        assert_eq!(seen, [true, true, false, true, true]);
        assert_eq!(remote_warehouse(&mut rng, 1, 1), 1);
    }
}
