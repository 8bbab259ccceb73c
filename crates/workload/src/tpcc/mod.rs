//! TPC-C 5.11: input generation ([`gen`]), the nine tables ([`schema`]), the initial
//! population ([`load`]), the five transactions ([`txn`]) and the consistency conditions
//! ([`check`]), and TPC-C as a benchmark the runner asks ([`benchmark`]). Spec: the TPC-C
//! specification; where dbdelta differs from sysbench-tpcc and HammerDB: docs/suites.md.

pub mod benchmark;
pub mod check;
pub mod gen;
pub mod load;
pub mod schema;
pub mod txn;

pub use txn::{Tpcc, TpccConfig, TXN_TYPES};
