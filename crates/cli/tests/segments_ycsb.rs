//! YCSB inserts over segments of one run: three segments of workloads D and E against one
//! shared SQLite file insert disjoint key numbers (no duplicate-key error), each segment's
//! keys its own contiguous stride, and the next step continues past every key taken.

mod common;

use common::step_results;
use dbdelta_workload::ycsb::gen::key_name;
use std::collections::HashMap;
use std::path::Path;

const RECORDS: i64 = 1000;
const SEGMENTS: i64 = 3;

fn segment(dir: &Path, k: i64) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
        .args(["run", "--quiet", "--no-store", "--suite", "ycsb"])
        .args(["--steps", "workload-d,workload-e"])
        .arg("-t")
        // WAL without an fsync per commit: beside two CPU hogs and a build, a commit's fsync
        // in rollback mode waited seconds for writeback and a 1 s window stalled (exit 3);
        // what is tested is which keys the segments insert, not the disk.
        .arg(format!(
            "s=sqlite:{}?journal_mode=WAL&synchronous=NORMAL",
            dir.join("db.sqlite").display()
        ))
        .args([
            "--threads",
            "3",
            "--insert-secs",
            "1",
            "--warmup-secs",
            "0.2",
        ])
        .args(["--table-size", &RECORDS.to_string()])
        .arg("--segment")
        .arg(format!("{k}/{SEGMENTS}"))
        .arg("--segment-barrier")
        .arg(dir.join("barrier.db"))
        .arg("--run-dir")
        .arg(dir.join(format!("s{k}")))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("err{k}"))).unwrap())
        .spawn()
        .unwrap()
}

/// Waits for every segment. The first that fails ends the others (they would wait for it at
/// the barrier for ten minutes) and the test with its error output.
fn wait_all(dir: &Path, mut children: Vec<std::process::Child>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(900);
    let mut done = vec![false; children.len()];
    while done.contains(&false) {
        let mut failed = None;
        for (i, c) in children.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            if let Some(status) = c.try_wait().unwrap() {
                done[i] = true;
                if !status.success() {
                    failed = Some((i + 1, status));
                }
            }
        }
        if let Some((k, status)) = failed {
            for c in &mut children {
                let _ = c.kill();
                let _ = c.wait();
            }
            let err = std::fs::read_to_string(dir.join(format!("err{k}"))).unwrap_or_default();
            panic!("segment {k} ended with {status}: {err}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "segments still running after 900 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn segments_of_ycsb_d_and_e_insert_disjoint_contiguous_keys() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (1..=SEGMENTS).map(|k| segment(dir.path(), k)).collect();
    wait_all(dir.path(), children);
    let mut measured_inserts = 0;
    for k in 1..=SEGMENTS {
        let err = std::fs::read_to_string(dir.path().join(format!("err{k}"))).unwrap();
        for r in step_results(&dir.path().join(format!("s{k}")), "s") {
            // A key inserted twice fails on the primary key: no segment may have one.
            assert_eq!(r.errors, 0, "segment {k} {}: {err}", r.label);
            measured_inserts += r
                .op_types
                .iter()
                .filter(|t| t.name == "INSERT")
                .map(|t| t.count)
                .sum::<u64>();
        }
    }
    assert!(measured_inserts > 0, "the steps inserted nothing");
    let rows = std::process::Command::new("sqlite3")
        .arg(dir.path().join("db.sqlite"))
        .arg("SELECT ycsb_key FROM usertable")
        .output()
        .expect("the sqlite3 shell");
    let rows = String::from_utf8_lossy(&rows.stdout);
    let keys: Vec<&str> = rows.lines().collect();
    // The warm-ups insert too (unmeasured): at least the measured inserts are there.
    assert!(
        keys.len() as u64 >= RECORDS as u64 + measured_inserts,
        "{} rows, {measured_inserts} measured inserts",
        keys.len()
    );
    // Key names are hashed key numbers (YCSB's orderedinserts=false): map them back.
    let mut by_name = HashMap::new();
    for n in 0..RECORDS + 10 * keys.len() as i64 {
        let mut s = String::new();
        key_name(n, true, &mut s);
        by_name.insert(s, n);
    }
    let mut numbers: Vec<i64> = keys
        .iter()
        .map(|k| {
            *by_name
                .get(*k)
                .unwrap_or_else(|| panic!("{k}: no key number"))
        })
        .collect();
    numbers.sort_unstable();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "a key twice");
    assert_eq!(
        &numbers[..RECORDS as usize],
        &(0..RECORDS).collect::<Vec<_>>()
    );
    // Each step's inserts are, per segment, its stride start + k − 1 + j·N without a hole;
    // workload E starts where the carry says: past D's largest key, the same on every
    // segment. Find that start and check both steps' keys against it.
    let inserted = &numbers[RECORDS as usize..];
    let split = (1..inserted.len()).find(|&i| {
        let next_start = inserted[i - 1] + 1;
        strided(&inserted[..i], RECORDS) && strided(&inserted[i..], next_start)
    });
    assert!(
        split.is_some(),
        "no split of the inserted keys into two strided steps: {inserted:?}"
    );
}

/// Whether `keys` (sorted, at least one) are, for each segment k, `start + k − 1 + j·N` for
/// j = 0, 1, … without a hole (some segments may have inserted fewer than others, or none:
/// with two CPU hogs beside, two of the three segments inserted nothing in workload D's 1 s
/// window of 5 % inserts).
fn strided(keys: &[i64], start: i64) -> bool {
    !keys.is_empty()
        && (1..=SEGMENTS).all(|k| {
            let mine: Vec<i64> = keys
                .iter()
                .copied()
                .filter(|n| (n - start).rem_euclid(SEGMENTS) == k - 1)
                .collect();
            mine.iter()
                .enumerate()
                .all(|(j, n)| *n == start + k - 1 + j as i64 * SEGMENTS)
        })
        && keys.iter().all(|n| *n >= start)
}
