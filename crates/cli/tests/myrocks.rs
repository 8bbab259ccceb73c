//! MyRocks from the command line: a managed MariaDB with `engine=rocksdb` (Debian's
//! mariadb-plugin-rocksdb) beside an InnoDB one, the MyRocks counters per operation in the
//! report and the table engine in the manifest; a bad `engine=` value and a `pgo` recipe for
//! `dbdelta build mariadb` are refused with exit 2. The library-level run (sysbench and the
//! Insert Benchmark, engines in information_schema.TABLES) is crates/lab/tests/myrocks.rs.

mod common;

use common::dbdelta;

#[test]
fn myrocks_beside_innodb_reports_its_counters() {
    if !common::require(
        &["/usr/sbin/mariadbd", "/usr/lib/mysql/plugin/ha_rocksdb.so"],
        "apt-get install mariadb-server mariadb-plugin-rocksdb",
    ) {
        return;
    }
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "inno=mysql:/usr?innodb_buffer_pool_size=64M",
        "-t",
        "rocks=mysql:/usr?engine=rocksdb&rocksdb_block_cache_size=64M",
        "--steps",
        "point-query,update-index",
        "--read-secs",
        "0.3",
        "--write-secs",
        "0.3",
        "--warmup-secs",
        "0",
        "--table-size",
        "1000",
    ]);
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        report.contains("--- MyRocks counters per operation"),
        "{report}"
    );
    // The MyRocks table has the MyRocks target's lines only.
    let section = report
        .split("--- MyRocks counters per operation")
        .nth(1)
        .unwrap_or_default();
    let section = section.split("\n--- ").next().unwrap_or_default();
    assert!(section.contains("\trocks\tupdate-index"), "{section}");
    assert!(!section.contains("\tinno\t"), "{section}");
    let settings = std::fs::read_to_string(rd.join("targets/rocks/settings.json")).unwrap();
    assert!(settings.contains("ROCKSDB"), "{settings}");
    assert!(settings.contains("rocksdb_git_hash"), "{settings}");
}

#[test]
fn bad_engine_values_and_mariadb_pgo_are_refused() {
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "m=mysql:/usr?engine=myisam",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("engine=myisam") && err.contains("engine=rocksdb"),
        "{err}"
    );
    let out = dbdelta()
        .args([
            "build",
            "mariadb",
            "--source",
            "10.11",
            "--recipe",
            "pgo=sysbench",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--recipe") && err.contains("pgo"), "{err}");
    // The MyRocks plugin alone is MariaDB's.
    let out = dbdelta()
        .args(["build", "rocksdb", "--source", "9.9", "--plugin-only"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--plugin-only") && err.contains("build mariadb"),
        "{err}"
    );
}
