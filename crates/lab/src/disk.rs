//! Refusing, before anything starts, a load that cannot fit on the disk that would hold it.

use crate::error::{input, LabError};
use crate::plan::Target;
use crate::plan::{OutDir, RunPlan};
use std::path::{Path, PathBuf};

/// Bytes one sysbench row takes on disk with its two indexes, rounded up. Measured on SQLite:
/// 1M rows take 217 MB; PostgreSQL's tuple header and line pointer add about 30 bytes a row.
const ROW_BYTES: u64 = 260;
/// More rows than this in one table is a typo, not a benchmark (about 260 TB).
const MAX_ROWS: u64 = 1_000_000_000_000;
/// One YCSB record: ten 100-byte fields, the `user…` key and the row and index overhead of
/// the SQL engines (PostgreSQL's 24-byte tuple header, line pointer, B-tree entry).
const YCSB_RECORD_BYTES: u64 = 1_100;
/// One db_bench key: a 20-byte key and a 400-byte value, uncompressed (RocksDB's lz4 on
/// db_bench's half-compressible values can halve it; the estimate takes no credit for it),
/// plus the SST's per-entry index and filter share.
const KV_KEY_BYTES: u64 = 440;
/// One pgbench scale unit: 100,000 accounts, 10 tellers and a branch with their primary
/// keys: `pgbench -i -s 1` takes about 16 MB on PostgreSQL.
const TPCB_SCALE_BYTES: u64 = 16_000_000;
/// One TPC-C warehouse with its districts, customers, stock, orders and indexes: about
/// 100 MB at load on PostgreSQL and InnoDB (HammerDB's and sysbench-tpcc's sizing).
const TPCC_WAREHOUSE_BYTES: u64 = 100_000_000;
/// One Insert Benchmark row with its primary key and three secondary indexes.
const IBENCH_ROW_BYTES: u64 = 200;
/// Bytes of a corpus word with its separator (pseudo-words of two to four syllables).
const CORPUS_WORD_BYTES: u64 = 7;
/// A corpus document's row overhead (id, header, primary key).
const CORPUS_ROW_BYTES: u64 = 40;

/// What a run loads on every target, and about how many bytes that takes on disk.
struct Estimate {
    /// The flags (or suite keys) that size it, as the user wrote them.
    what: String,
    /// Bytes on disk.
    bytes: u64,
    /// How the estimate is made.
    per: String,
}

/// The load of `plan` and its size; `None` when it loads nothing of its own.
fn estimate(plan: &RunPlan) -> Option<Estimate> {
    use dbdelta_workload::suite::Dataset;
    let o = &plan.options;
    if let Some(ib) = &plan.ibench {
        let rows = ib.rows_load.saturating_add(ib.rows_write);
        return Some(Estimate {
            what: format!(
                "--rows-load {} + --rows-write {} × --clients {}",
                ib.rows_load, ib.rows_write, ib.clients
            ),
            bytes: rows
                .saturating_mul(u64::from(ib.clients))
                .saturating_mul(IBENCH_ROW_BYTES),
            per: format!("{IBENCH_ROW_BYTES} bytes a row with its indexes"),
        });
    }
    if let Some(qs) = &plan.queryset {
        let l = qs.set.loader.as_ref()?;
        let doc = u64::from(l.spec.words_per_doc)
            .saturating_mul(CORPUS_WORD_BYTES)
            .saturating_add(CORPUS_ROW_BYTES);
        return Some(Estimate {
            what: format!(
                "[loader] docs = {} × words_per_doc = {} ({}/suite.toml)",
                l.spec.docs,
                l.spec.words_per_doc,
                qs.set.origin.display()
            ),
            // Twice the text: a full-text or trigram index is about as large again.
            bytes: l.spec.docs.saturating_mul(doc).saturating_mul(2),
            per: format!("{doc} bytes a document, twice that with its index"),
        });
    }
    let rows = o.table_size;
    Some(match plan.suite.dataset {
        Dataset::Sbtest => Estimate {
            what: format!("--table-size {rows} × --tables {}", o.tables),
            bytes: u64::from(o.tables)
                .saturating_mul(rows)
                .saturating_mul(ROW_BYTES),
            per: format!("{ROW_BYTES} bytes a row with its indexes"),
        },
        Dataset::Usertable => Estimate {
            what: format!("--table-size {rows} (YCSB records)"),
            bytes: rows.saturating_mul(YCSB_RECORD_BYTES),
            per: format!("{YCSB_RECORD_BYTES} bytes a record of ten 100-byte fields"),
        },
        Dataset::Keys => Estimate {
            what: format!("--table-size {rows} (db_bench keys)"),
            bytes: rows.saturating_mul(KV_KEY_BYTES),
            per: format!("{KV_KEY_BYTES} bytes a key with its 400-byte value, uncompressed"),
        },
        Dataset::Pgbench => Estimate {
            what: format!("--scale-factor {}", o.tpc.scale_factor),
            bytes: u64::from(o.tpc.scale_factor).saturating_mul(TPCB_SCALE_BYTES),
            per: format!("{} MB a scale unit", TPCB_SCALE_BYTES / 1_000_000),
        },
        Dataset::Tpcc => Estimate {
            what: format!("--warehouses {}", o.tpc.warehouses),
            bytes: u64::from(o.tpc.warehouses).saturating_mul(TPCC_WAREHOUSE_BYTES),
            per: format!("{} MB a warehouse", TPCC_WAREHOUSE_BYTES / 1_000_000),
        },
    })
}

/// Checks the run's load (`--table-size` × `--tables`, `--scale-factor`, `--warehouses`,
/// the kv keys, YCSB records, the Insert Benchmark's rows, a query-set loader's documents)
/// against the free space of every local data directory.
pub fn ensure_room(plan: &RunPlan) -> Result<(), LabError> {
    let rows = plan.options.table_size;
    if rows > MAX_ROWS {
        return Err(input!(
            "--table-size {rows} is more than {MAX_ROWS} rows: give fewer rows"
        ));
    }
    let Some(load) = estimate(plan) else {
        return Ok(());
    };
    // Targets sharing a filesystem load one after another, each removing its data after.
    for t in &plan.targets {
        let Some(dir) = data_dir(t, &plan.out) else {
            continue;
        };
        let Some(free) = free_bytes(&dir) else {
            continue;
        };
        if load.bytes > free {
            return Err(input!(
                "{}: target {} needs about {} on disk ({}) but {} has {} free; load less \
                 or put the data elsewhere (--out DIR, or a path in the target)",
                load.what,
                t.name,
                size(load.bytes),
                load.per,
                dir.display(),
                size(free)
            ));
        }
    }
    Ok(())
}

/// A byte count for people: GB, MB or KB with one decimal, or bytes, so a small disk does
/// not read "0.0 GB".
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} KB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.1} GB", b / 1e9),
    }
}

/// Where a target's data would live on this machine, as its engine says; `None` for
/// external servers and the mock engine, whose data is not on a local disk of ours.
fn data_dir(t: &Target, out: &OutDir) -> Option<PathBuf> {
    let run_parent = match out {
        OutDir::Exact(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        OutDir::Under(p) => p.clone(),
    };
    t.config().data_parent(&run_parent)
}

/// Free bytes for an unprivileged writer on the filesystem of `dir` (or its nearest
/// existing ancestor: the run directory does not exist yet).
fn free_bytes(dir: &Path) -> Option<u64> {
    let mut probe = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.to_path_buf()
    };
    while !probe.exists() {
        probe = probe.parent()?.to_path_buf();
    }
    let c = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs writes into the struct we pass; `c` is a valid C string.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_keep_their_digits_on_small_disks() {
        assert_eq!(size(512), "512 bytes");
        assert_eq!(size(40_960), "41.0 KB");
        assert_eq!(size(3_400_000), "3.4 MB");
        assert_eq!(size(12_300_000_000), "12.3 GB");
    }
}
