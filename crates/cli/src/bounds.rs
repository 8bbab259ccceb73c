//! The largest value each count flag of `dbdelta run` takes, checked when the flag is
//! resolved (exit 2, naming the flag and the limit), so no number reaches a conversion, a
//! thread pool, an allocation or a foreign library unchecked. Each limit is far above any
//! benchmark configuration published for the tool the suite follows; whether this machine
//! can hold a value below it (threads, memory, disk) is the lab's check before the run.

use anyhow::{bail, Result};
use std::fmt::Display;

/// `--threads`: every count can be one OS thread (thread-per-connection engines, TLS), and
/// sysbench's and YCSB's published runs stop at a few hundred.
pub const MAX_THREADS: u32 = 4096;
/// `--connections`: each is a socket; Linux's default per-process ceiling (fs.nr_open) is
/// 1,048,576 files.
pub const MAX_CONNECTIONS: u32 = 1_000_000;
/// `--tables`: sysbench's warm-up step runs one thread per table.
pub const MAX_TABLES: u32 = 4096;
/// `--repeat`: rounds are kept in memory and in the run directory per step and target.
pub const MAX_REPEAT: u32 = 1000;
/// `--repeat-query`: runs of each query per target.
pub const MAX_REPEAT_QUERY: u32 = 10_000;
/// `--warehouses`: about 100 MB each (TPC-C 1.4: a terabyte at 10,000); terminals default
/// to ten per warehouse and stock rows to 100,000 per warehouse, both in 32 bits.
pub const MAX_WAREHOUSES: u32 = 10_000;
/// `--terminals`: one connection each; the same ceiling as `--connections`' level of
/// 100,000 connections the event loop was measured with.
pub const MAX_TERMINALS: u32 = 100_000;
/// `--scale-factor`: pgbench's accounts are 100,000 per branch; at 100,000 the accounts
/// table is some 1.3 TB.
pub const MAX_SCALE_FACTOR: u32 = 100_000;
/// `--max-tries`: tries of one transaction.
pub const MAX_TRIES: u32 = 1000;
/// `--transactions`: per terminal; past it a step would outlast any window.
pub const MAX_TRANSACTIONS: u64 = 1_000_000_000_000;
/// `--latency-limit`: a day in milliseconds, like the timeouts.
pub const MAX_LATENCY_LIMIT_MS: f64 = 86_400_000.0;
/// `--clients` (Insert Benchmark): three connections and a table each; the published runs
/// use up to 20.
pub const MAX_CLIENTS: u32 = 1024;
/// `--rows-load` / `--rows-write` per client; the disk check refuses far less.
pub const MAX_IBENCH_ROWS: u64 = 1_000_000_000_000;

/// `v` when it is at most `max`; else the refusal naming `flag`.
pub fn at_most<T: PartialOrd + Display>(flag: &str, v: T, max: T, why: &str) -> Result<T> {
    if v > max {
        bail!("{flag} {v} is too large: give at most {max} ({why})");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_past_the_limit_names_the_flag_and_the_limit() {
        assert_eq!(at_most("--tables", 4096, MAX_TABLES, "x").unwrap(), 4096);
        let e = at_most("--tables", 4097, MAX_TABLES, "one thread each")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--tables 4097") && e.contains("at most 4096"),
            "{e}"
        );
    }
}
