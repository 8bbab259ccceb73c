//! TPC-C 5.11: input generation, the nine tables, the loader and the consistency
//! conditions (spec: shared/spec/workloads-more.md Part F and the TPC-C specification).
