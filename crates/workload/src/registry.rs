//! The benchmarks dbdelta runs, one line each: a suite's `dataset` picks its benchmark,
//! which the runner asks for the load, the steps' shared state and the check. Adding a
//! benchmark is its module plus one line here (and its `Dataset` name).

use crate::benchmark::Benchmark;
use crate::dbbench::DbBenchBenchmark;
use crate::suite::Dataset;
use crate::sysbench::SysbenchBenchmark;
use crate::tpcb::PgbenchBenchmark;
use crate::tpcc::benchmark::TpccBenchmark;
use crate::ycsb::YcsbBenchmark;

/// The benchmark that loads and runs `dataset`.
pub fn benchmark(dataset: Dataset) -> &'static dyn Benchmark {
    match dataset {
        Dataset::Sbtest => &SysbenchBenchmark,
        Dataset::Usertable => &YcsbBenchmark,
        Dataset::Keys => &DbBenchBenchmark,
        Dataset::Pgbench => &PgbenchBenchmark,
        Dataset::Tpcc => &TpccBenchmark,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dataset_has_the_benchmark_of_its_name() {
        for (dataset, name) in [
            (Dataset::Sbtest, "sysbench"),
            (Dataset::Usertable, "ycsb"),
            (Dataset::Keys, "db_bench"),
            (Dataset::Pgbench, "pgbench"),
            (Dataset::Tpcc, "tpcc"),
        ] {
            let b = benchmark(dataset);
            assert_eq!(b.dataset(), dataset);
            assert_eq!(b.name(), name);
        }
    }
}
