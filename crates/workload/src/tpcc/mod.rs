//! TPC-C 5.11: input generation ([`gen`]), the nine tables ([`schema`]), the initial
//! population ([`load`]), the five transactions ([`txn`]) and the consistency conditions
//! ([`check`]). Spec: the TPC-C specification; where dbdelta differs from sysbench-tpcc
//! and HammerDB: shared/spec/workloads-more.md Part F and the README.

pub mod check;
pub mod gen;
pub mod load;
pub mod schema;
pub mod txn;

pub use txn::{Tpcc, TpccConfig, TXN_TYPES};
