//! Refusing, before anything starts, a load that cannot fit on the disk that would hold it.

use crate::error::{input, LabError};
use crate::plan::{OutDir, RunPlan};
use dbdelta_model::{Location, TargetSpec};
use std::path::{Path, PathBuf};

/// Bytes one sysbench row takes on disk with its two indexes, rounded up. Measured on SQLite:
/// 1M rows take 217 MB; PostgreSQL's tuple header and line pointer add about 30 bytes a row.
const ROW_BYTES: u64 = 260;
/// More rows than this in one table is a typo, not a benchmark (about 260 TB).
const MAX_ROWS: u64 = 1_000_000_000_000;

/// Checks `--table-size` × `--tables` against the free space of every local data directory.
pub fn ensure_room(plan: &RunPlan) -> Result<(), LabError> {
    let (tables, rows) = (plan.options.tables, plan.options.table_size);
    if rows > MAX_ROWS {
        return Err(input!(
            "--table-size {rows} is more than {MAX_ROWS} rows: give fewer rows"
        ));
    }
    if plan.ibench.is_some() {
        return Ok(());
    }
    let need = u64::from(tables)
        .saturating_mul(rows)
        .saturating_mul(ROW_BYTES);
    // Targets sharing a filesystem load one after another, each removing its data after.
    for t in &plan.targets {
        let Some(dir) = data_dir(t, &plan.out) else {
            continue;
        };
        let Some(free) = free_bytes(&dir) else {
            continue;
        };
        if need > free {
            return Err(input!(
                "--table-size {rows} × --tables {tables}: target {} needs about {} GB on disk \
                 ({ROW_BYTES} bytes a row with its indexes) but {} has {} GB free; load fewer \
                 rows or put the data elsewhere (--out DIR, or a path in the target)",
                t.name,
                gb(need),
                dir.display(),
                gb(free)
            ));
        }
    }
    Ok(())
}

fn gb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e9)
}

/// Where a target's data would live on this machine; `None` for external servers and the
/// mock engine, whose data is not on a local disk of ours.
fn data_dir(t: &TargetSpec, out: &OutDir) -> Option<PathBuf> {
    let run_parent = match out {
        OutDir::Exact(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        OutDir::Under(p) => p.clone(),
    };
    match (t.engine.as_str(), &t.location) {
        ("sqlite", Location::Path { path }) => path.parent().map(Path::to_path_buf),
        ("sqlite" | "postgres" | "mysql", Location::Default | Location::Path { .. }) => {
            Some(run_parent)
        }
        _ => None,
    }
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
