//! The `zipf-corpus` loader: documents of pseudo-words drawn from a Zipf vocabulary, the
//! same rows on every engine (seeded), for full-text search suites.
//!
//! Words are consonant-vowel syllables spelled from the word's rank, at least two
//! syllables (four letters): longer than InnoDB's minimum token size (3), never one of its
//! default stopwords (all short English words), unchanged by PostgreSQL's `simple`
//! configuration and SQLite FTS5's unicode61 tokenizer. So a word matches the same
//! documents on every engine, and `{{word:N}}` in a query names the word of rank N.

use crate::rng::{Rng, Zipf};
use dbdelta_engine::{OwnedValue, RowSource};

const CONSONANTS: &[u8] = b"bdfgklmnprstvz";
const VOWELS: &[u8] = b"aeiou";

/// The loader's settings (suite.toml `[loader]`, scale applied).
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusSpec {
    /// Table the rows go to (`id`, `body` columns), created by a setup script.
    pub table: String,
    /// Documents to write.
    pub docs: u64,
    /// Words per document.
    pub words_per_doc: u32,
    /// Distinct words.
    pub vocabulary: u64,
    /// Zipf exponent (1.0: rank r is r times rarer than rank 1).
    pub exponent: f64,
    /// Seed of the word draws.
    pub seed: u64,
}

/// The word of rank `rank` (1-based).
pub fn word(rank: u64) -> String {
    let syllables = (CONSONANTS.len() * VOWELS.len()) as u64;
    // Offset by one "digit" so every word has at least two syllables.
    let mut n = rank.saturating_sub(1) + syllables;
    let mut w = String::new();
    while n > 0 {
        let s = (n % syllables) as usize;
        w.push(CONSONANTS[s / VOWELS.len()] as char);
        w.push(VOWELS[s % VOWELS.len()] as char);
        n /= syllables;
    }
    w
}

/// Rows `(id, body)` of the corpus.
#[derive(Debug)]
pub struct Corpus {
    spec: CorpusSpec,
    zipf: Zipf,
    rng: Rng,
    next_id: u64,
    body: String,
}

impl Corpus {
    /// A corpus from its settings.
    pub fn new(spec: CorpusSpec) -> Self {
        Corpus {
            zipf: Zipf::new(spec.vocabulary, spec.exponent),
            rng: Rng::new(spec.seed, 0x00c0_4905),
            next_id: 1,
            body: String::new(),
            spec,
        }
    }
}

impl RowSource for Corpus {
    fn columns(&self) -> &[&'static str] {
        &["id", "body"]
    }

    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.next_id > self.spec.docs {
            return false;
        }
        self.body.clear();
        for i in 0..self.spec.words_per_doc {
            if i > 0 {
                self.body.push(' ');
            }
            self.body.push_str(&word(self.zipf.sample(&mut self.rng)));
        }
        out.push(OwnedValue::Int(self.next_id as i64));
        out.push(OwnedValue::Text(self.body.clone()));
        self.next_id += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn words_are_distinct_long_enough_and_stable() {
        let words: Vec<String> = (1..=20_000).map(word).collect();
        let set: HashSet<&String> = words.iter().collect();
        assert_eq!(set.len(), words.len());
        assert!(words.iter().all(|w| w.len() >= 4));
        // Rank 1 is 70 in base 70 (syllable digits, least significant first): "ba" "be".
        assert_eq!(word(1), "babe");
        assert_ne!(word(1), word(2));
    }

    #[test]
    fn corpus_is_reproducible_and_zipf_shaped() {
        let spec = CorpusSpec {
            table: "docs".into(),
            docs: 300,
            words_per_doc: 50,
            vocabulary: 5000,
            exponent: 1.0,
            seed: 7,
        };
        let collect = |spec: CorpusSpec| {
            let mut c = Corpus::new(spec);
            let mut rows = Vec::new();
            let mut row = Vec::new();
            while c.next_row(&mut row) {
                rows.push(std::mem::take(&mut row));
            }
            rows
        };
        let a = collect(spec.clone());
        assert_eq!(a.len(), 300);
        assert_eq!(a, collect(spec));
        let text: Vec<&str> = a
            .iter()
            .filter_map(|r| match &r[1] {
                OwnedValue::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .flat_map(|t| t.split(' '))
            .collect();
        let count = |w: &str| text.iter().filter(|t| **t == w).count();
        // Rank 1 about ten times as frequent as rank 10 (exponent 1).
        let (c1, c10) = (count(&word(1)), count(&word(10)));
        assert!(c1 > 5 * c10 && c10 > 0, "rank1 {c1} rank10 {c10}");
    }
}
