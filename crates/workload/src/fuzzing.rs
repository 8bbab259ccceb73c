//! The suite part of the `suite_config` fuzz target (`fuzz/` at the repository root) and of
//! its corpus regression test. Not part of the workload API.

use crate::dbbench::Bench;
use crate::suite::{group_of, Suite, SuiteItem};
use crate::tpcb::Script;
use crate::ycsb::Mix;

/// Parses `data` (as UTF-8, lossily) as a suite file, as `--suite FILE` does, and as the
/// Insert Benchmark's step list; on success walks every step as the runner and `--steps`
/// do. Panics only on a bug.
pub fn suite_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(suite) = Suite::parse(&text, "fuzz.toml") {
        assert!(!suite.families.is_empty());
        let mut orders = Vec::new();
        for item in &suite.items {
            match item {
                SuiteItem::Action { order, .. } => orders.push(*order),
                SuiteItem::Step(s) => {
                    orders.push(s.order);
                    let kind = s.params.kind;
                    let _ = (kind.dataset(), Bench::of(kind), Mix::of(kind));
                    let _ = (Script::of(kind), kind.counts_transactions());
                    let _ = group_of(&s.name);
                    assert!(s.matches(&s.label) && s.matches("*"));
                    let _ = s.matches(&s.name);
                }
            }
        }
        assert!(
            orders.windows(2).all(|w| w[0] < w[1]),
            "suite items out of order"
        );
    }
    let _ = crate::ibench::steps::parse(&text);
}
