//! MyRocks (MariaDB's RocksDB engine, Debian's mariadb-plugin-rocksdb) as a managed target
//! with `engine=rocksdb`: sysbench steps of every group and the Insert Benchmark's l.i0 and
//! l.i1 run on it, every table they create is a ROCKSDB table in `information_schema.TABLES`,
//! each step's result carries MyRocks' own counters, and the manifest records the MyRocks
//! settings. Under CI a missing plugin fails the test.

mod common;

use dbdelta_engine::{Engine, OpenOptions, SettleWait};
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{StepResult, StepStatus, TargetSpec};
use dbdelta_runner::ibench::{create_tables, run_step, Share, StepContext};
use dbdelta_runner::{run_target, Silent, StopFlag, TargetOutcome};
use dbdelta_workload::ibench::steps::builtin;
use dbdelta_workload::Suite;

const PLUGIN: &str = "/usr/lib/mysql/plugin/ha_rocksdb.so";

/// The sysbench steps run: point, range, secondary-index, update, insert, delete and
/// read-write, so every statement shape meets the engine.
const STEPS: [&str; 7] = [
    "point-query",
    "range-covered-si",
    "update-index",
    "update-nonindex",
    "read-write",
    "insert",
    "delete",
];

fn counter(r: &StepResult, key: &str) -> f64 {
    r.engine_stats.get(key).copied().unwrap_or(-1.0)
}

#[test]
fn sysbench_and_the_insert_benchmark_run_on_myrocks() {
    if !common::require(
        &["/usr/sbin/mariadbd", PLUGIN],
        "apt-get install mariadb-server mariadb-plugin-rocksdb",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec =
        TargetSpec::parse("myr=mysql:/usr?engine=rocksdb&rocksdb_block_cache_size=64M").unwrap();
    let e = dbdelta_engine_mysql::open(&spec, dir.path(), &OpenOptions::default()).unwrap();

    // sysbench: every step succeeds and counts MyRocks' work, not InnoDB's.
    let suite = Suite::load("sysbench").unwrap();
    let opts = OptionsBuilder::new()
        .steps(&STEPS)
        .secs(0.3)
        .warmup(0.0)
        .tables(1, 2000)
        .build();
    let mut results: Vec<StepResult> = Vec::new();
    let mut sink = |r: &StepResult| -> Result<(), String> {
        results.push(r.clone());
        Ok(())
    };
    let outcome = run_target(
        &e,
        "myr",
        &suite,
        &opts,
        &StopFlag::new(),
        &Silent,
        &mut sink,
    )
    .unwrap();
    assert!(matches!(outcome, TargetOutcome::Complete), "{outcome:?}");
    for step in STEPS {
        let r = results
            .iter()
            .find(|r| r.step == step)
            .unwrap_or_else(|| panic!("{step} has no result"));
        assert!(r.is_ok(), "{step}: {:?}", r.status);
        assert!(
            r.engine_stats.keys().any(|k| k.starts_with("db.rocksdb_")),
            "{step}: {:?}",
            r.engine_stats
        );
        assert!(
            !r.engine_stats.keys().any(|k| k.starts_with("db.innodb_")),
            "{step}: InnoDB's counters on a MyRocks target: {:?}",
            r.engine_stats
        );
        assert!(counter(r, "db.handler_commit") > 0.0, "{step}");
    }
    let by = |s: &str| results.iter().find(|r| r.step == s).unwrap();
    // Reads go through MyRocks (its row reads), writes through its WAL.
    assert!(counter(by("point-query"), "db.rocksdb_rows_read") > 0.0);
    for w in ["update-index", "insert", "delete"] {
        assert!(counter(by(w), "db.rocksdb_wal_bytes") > 0.0, "{w}");
    }

    // The settle flushes MyRocks' memtables and compacts L0 before the reads that follow.
    let settled = e
        .settle(&["sbtest1".to_string()], &SettleWait::none())
        .unwrap();
    assert!(
        settled
            .actions
            .iter()
            .any(|a| a == "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = ON"),
        "{:?}",
        settled.actions
    );
    let in_memtable = e
        .connect()
        .unwrap()
        .query_scalar(
            "SELECT VALUE FROM information_schema.ROCKSDB_CFSTATS \
             WHERE CF_NAME = 'default' AND STAT_TYPE = 'NUM_ENTRIES_ACTIVE_MEM_TABLE'",
        )
        .unwrap();
    assert_eq!(in_memtable.as_deref(), Some("0"), "flushed");

    // The Insert Benchmark's load and its secondary indexes.
    let o = IbenchOptions {
        rows_load: 3000,
        settle_sleep_secs: 0.0,
        ..IbenchOptions::quick(1)
    };
    create_tables(&e, &o, false).unwrap();
    let steps = builtin();
    let mut loaded = 0;
    for (i, s) in steps.iter().take(2).enumerate() {
        assert!(["l.i0", "l.x"].contains(&s.name.as_str()), "{}", s.name);
        let ctx = StepContext {
            target: "myr",
            opts: &o,
            step: s,
            order: i as u32 + 1,
            loaded_rows: loaded,
            os_metrics: false,
            device: None,
            share: Share::WHOLE,
        };
        let r = run_step(&e, &ctx, &StopFlag::new());
        assert_eq!(r.status, StepStatus::Ok, "{}", s.name);
        assert!(
            counter(&r, "db.rocksdb_rows_inserted") >= 0.0,
            "{}: {:?}",
            s.name,
            r.engine_stats
        );
        if i == 0 {
            assert!(
                counter(&r, "db.rocksdb_rows_inserted") >= 3000.0,
                "{:?}",
                r.engine_stats
            );
        }
        loaded = 3000;
    }
    let l_i1 = steps.iter().find(|s| s.name == "l.i1").expect("l.i1");
    let ctx = StepContext {
        target: "myr",
        opts: &o,
        step: l_i1,
        order: 3,
        loaded_rows: loaded,
        os_metrics: false,
        device: None,
        share: Share::WHOLE,
    };
    let r = run_step(&e, &ctx, &StopFlag::new());
    assert_eq!(r.status, StepStatus::Ok, "l.i1");
    assert!(
        counter(&r, "db.rocksdb_rows_deleted") > 0.0,
        "{:?}",
        r.engine_stats
    );

    // Every table the workloads made (and dbdelta's ledger) lives in MyRocks.
    let mut conn = e.connect().unwrap();
    let engines = conn
        .query_scalar(
            "SELECT GROUP_CONCAT(CONCAT(TABLE_NAME, '=', ENGINE) ORDER BY TABLE_NAME) \
             FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
        )
        .unwrap()
        .unwrap_or_default();
    for t in ["sbtest1", "pi1", "dbdelta_objects"] {
        assert!(engines.contains(&format!("{t}=ROCKSDB")), "{engines}");
    }
    assert!(!engines.contains("InnoDB"), "{engines}");
    let indexes = conn
        .query_scalar(
            "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'pi1'",
        )
        .unwrap();
    assert_eq!(
        indexes.as_deref(),
        Some("4"),
        "pi1: primary key and 3 secondary indexes"
    );

    // The manifest: the table engine, MyRocks' build and the target's MyRocks setting.
    let info = e.info().unwrap();
    assert_eq!(info.settings["table_engine"], "ROCKSDB");
    assert!(!info.settings["rocksdb_git_hash"].is_empty());
    assert_eq!(info.settings["rocksdb_block_cache_size"], "67108864");
    assert_eq!(
        info.settings["default_storage_engine"].to_ascii_uppercase(),
        "ROCKSDB"
    );
}
