//! `--suite kv` (db_bench's benchmark_compare sequence) on embedded RocksDB: every step runs,
//! counted steps do exactly their operations, the background writer holds 2 MB/s, the
//! report carries db_bench's columns from RocksDB's statistics, and a known effect shows: a
//! block cache 1/100 of the data (direct reads, so misses reach the disk) makes
//! readrandom slower and its reads per operation larger. SQL engines cannot run it.

mod common;

use common::{dbdelta, require, run_ok, step_results, succeed};
use dbdelta_model::StepResult;

fn step<'a>(all: &'a [StepResult], name: &str) -> &'a StepResult {
    all.iter()
        .find(|r| r.step == name)
        .unwrap_or_else(|| panic!("no {name} result"))
}

#[test]
fn the_db_bench_sequence_on_rocksdb_with_a_known_effect() {
    if !require(
        &["/usr/lib/x86_64-linux-gnu/librocksdb.so"],
        "apt-get install librocksdb-dev",
    ) {
        return;
    }
    let keys = 60_000u64;
    let (_dir, rd) = run_ok(&[
        "--suite",
        "kv",
        "-t",
        "cached=rocksdb:?use_direct_reads=true&write_buffer_size=1M",
        // 60k keys x 420 B = 25 MB of data (in SST files: 1 MB memtables): a 256 KB cache is
        // 1/100 of it.
        "-t",
        "small=rocksdb:?use_direct_reads=true&write_buffer_size=1M&cache_size=256K",
        "--table-size",
        &keys.to_string(),
        "--threads",
        "2",
        "--read-secs",
        "1.5",
        "--write-secs",
        "1.5",
        "--warmup-secs",
        "0.3",
        // One window per target and step: the checks below read one (the kv
        // preset's rounds are tested in suite_rounds.rs).
        "--repeat",
        "1",
    ]);
    for target in ["cached", "small"] {
        let all = step_results(&rd, target);
        let measured: Vec<&StepResult> = all
            .iter()
            .filter(|r| !r.step.starts_with("settle-"))
            .collect();
        assert_eq!(measured.len(), 10, "{target}: every step of the sequence");
        for r in &measured {
            assert!(r.is_ok(), "{target} {}: {:?}", r.step, r.status);
            assert!(r.throughput.value > 0.0);
            assert!(
                r.engine_stats.contains_key("total-sst-files-size"),
                "{target} {}: RocksDB's counters",
                r.step
            );
        }
        let fill = step(&all, "fillseq");
        assert_eq!(
            (fill.events, fill.threads),
            (keys, 1),
            "fillseq writes --num keys on one thread"
        );
        assert!(fill.engine_stats["bytes.written"] > (keys * 420) as f64);
        assert_eq!(
            step(&all, "overwritesome").events,
            keys / 10,
            "num/threads/10 per thread"
        );
        let over = step(&all, "overwrite");
        assert!(over.engine_stats["bytes.written"] > 0.0);
        // The report's columns that must not be zero: LSM size, write amplification (1 MB
        // memtables flush during the step), the process's CPU and memory, and server CPU
        // (RocksDB's own threads: the workers and its flush and compaction threads).
        for r in &measured {
            assert!(
                r.engine_stats["total-sst-files-size"] > 0.0,
                "{target} {}",
                r.step
            );
            assert!(
                r.engine_stats["process.user-cpu-secs"] > 0.0,
                "{target} {}",
                r.step
            );
            assert!(
                r.engine_stats["process.rss-bytes"] > 0.0,
                "{target} {}",
                r.step
            );
            // /proc counts a thread's CPU in 10 ms ticks: a counted step as short as
            // overwritesome (keys/10 puts, tens of ms) can see none on a busy host.
            let costs = r.costs.as_ref().expect("costs");
            assert!(
                r.seconds < 0.5 || costs.server_cpu_us_op.unwrap_or(0.0) > 0.0,
                "{target} {} ({} s)",
                r.step,
                r.seconds
            );
        }
        let w_amp = dbdelta_report::dbbench::write_amp(over).expect("write amplification");
        assert!(w_amp > 0.0, "{target}: {w_amp}");
        for name in [
            "readwhilewriting",
            "fwdrangewhilewriting",
            "revrangewhilewriting",
        ] {
            let r = step(&all, name);
            let writer = r
                .op_types
                .iter()
                .find(|t| t.name == "BACKGROUND-PUT")
                .expect("the background writer's rate");
            // 2 MiB/s over 420-byte puts: 4993 a second (a loaded machine may lag a little).
            assert!(
                (3000.0..=5200.0).contains(&writer.per_sec),
                "{target} {name}: writer at {}/s",
                writer.per_sec
            );
            let readers: u64 = r
                .op_types
                .iter()
                .filter(|t| t.name != "BACKGROUND-PUT")
                .map(|t| t.count)
                .sum();
            assert_eq!(readers, r.events, "the writer's puts are not the step's");
        }
    }
    let (cached, small) = (step_results(&rd, "cached"), step_results(&rd, "small"));
    let (a, b) = (step(&cached, "readrandom"), step(&small, "readrandom"));
    assert!(
        b.throughput.value < 0.7 * a.throughput.value,
        "a tiny block cache makes readrandom slower: {} vs {}",
        b.throughput.value,
        a.throughput.value
    );
    let ro = |r: &StepResult| r.costs.as_ref().and_then(|c| c.r_o).unwrap_or(0.0);
    assert!(
        ro(b) > ro(a) + 0.1,
        "and reads more per operation: {} vs {}",
        ro(b),
        ro(a)
    );
    let miss = |r: &StepResult| r.engine_stats["block.cache.miss"] / r.events as f64;
    assert!(miss(b) > miss(a));
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("--- key-value engine"), "{text}");
    assert!(text.contains("ops_sec\tusec_op\tp50\tp99\tp99.9\tp99.99\tpmax\tlsm_sz\tc_wgb\tw_amp"));
}

#[test]
fn sql_engines_report_the_kv_suite_as_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "--suite",
                "kv",
                "-t",
                "lite=sqlite:",
                "--table-size",
                "100",
                "--read-secs",
                "0.2",
                "--write-secs",
                "0.2",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let all = step_results(&rd, "lite");
    assert_eq!(all.len(), 10);
    for r in all {
        assert_eq!(
            r.status,
            dbdelta_model::StepStatus::NotSupported {
                reason: "raw key-value operations are not supported by sqlite".into()
            }
        );
    }
}

/// `--steps readrandom` alone: fillseq (the step that writes the keys) runs too, said on
/// stderr, so readrandom finds every key instead of measuring an empty store. (A fillseq
/// writes every key however long its window: `fillseq_writes_every_key_past_a_short_write_window`.)
#[test]
fn a_kv_selection_gets_its_fillseq() {
    if !require(
        &["/usr/lib/x86_64-linux-gnu/librocksdb.so"],
        "apt-get install librocksdb-dev",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let base = [
        "run",
        "--quiet",
        "--no-store",
        "--suite",
        "kv",
        "-t",
        "r=rocksdb",
        "--read-secs",
        "0.3",
        "--warmup-secs",
        "0",
    ];
    let out = dbdelta()
        .args(base)
        .args(["--steps", "readrandom", "--table-size", "2000"])
        .args(["--write-secs", "60", "--run-dir"])
        .arg(&rd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("fillseq runs too"), "{err}");
    let all = step_results(&rd, "r");
    assert_eq!(step(&all, "fillseq").events, 2000);
    let read = step(&all, "readrandom");
    assert!(read.is_ok() && read.events > 0, "{:?}", read.status);
    assert!(read.rows_returned > 0, "readrandom found the keys");
}

/// A counted step ends when its operations are done, not when the duration flag's window
/// does: the quick preset's 0.3 s write window once cut the default run's fill short
/// (1,000,000 keys) and failed the step.
#[test]
fn fillseq_writes_every_key_past_a_short_write_window() {
    if !require(
        &["/usr/lib/x86_64-linux-gnu/librocksdb.so"],
        "apt-get install librocksdb-dev",
    ) {
        return;
    }
    let keys = 100_000u64;
    let (_dir, rd) = run_ok(&[
        "--suite",
        "kv",
        "-t",
        "a=rocksdb:",
        "--steps",
        "fillseq,readrandom",
        "--table-size",
        &keys.to_string(),
        // Far shorter than writing 100,000 keys takes on any host.
        "--write-secs",
        "0.05",
        "--read-secs",
        "0.2",
    ]);
    let all = step_results(&rd, "a");
    let fill = step(&all, "fillseq");
    assert_eq!(
        fill.status,
        dbdelta_model::StepStatus::Ok,
        "{:?}",
        fill.status
    );
    assert_eq!(
        fill.events, keys,
        "fillseq wrote {} of {keys} keys",
        fill.events
    );
    assert!(
        fill.seconds > 0.05,
        "the window was not extended: {} s",
        fill.seconds
    );
}
