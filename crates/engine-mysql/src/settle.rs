//! Post-write maintenance for InnoDB (spec §A6.4): ANALYZE TABLE, then flush dirty pages by
//! lowering the dirty-page targets until the buffer pool is clean (or a bounded timeout),
//! then restore the settings.

use crate::connection::MysqlConnection;
use crate::managed::quote_ident;
use dbdelta_engine::{Connection, EngineError, SettleReport};
use std::time::{Duration, Instant};

/// Dirty pages at or below this share of the pool count as flushed.
const CLEAN_PERCENT: u64 = 1;
/// How often the dirty-page count is polled.
const POLL: Duration = Duration::from_millis(100);

/// The variables lowered during the flush wait, in the order they are set, and their
/// temporary values. The low-water mark goes first so it never exceeds the maximum.
const FLUSH_VARS: [(&str, &str); 3] = [
    ("innodb_max_dirty_pages_pct_lwm", "1"),
    ("innodb_max_dirty_pages_pct", "1"),
    ("innodb_idle_flush_pct", "100"),
];

/// Runs the settle actions for `tables` on `conn`.
pub(crate) fn settle(
    conn: &mut MysqlConnection,
    tables: &[String],
) -> Result<SettleReport, EngineError> {
    let mut actions = Vec::new();
    for t in tables {
        let sql = format!("ANALYZE TABLE {}", quote_ident(t)?);
        conn.query(&sql)?;
        actions.push(sql);
    }
    flush_dirty_pages(conn, tables, &mut actions)?;
    Ok(SettleReport { actions })
}

/// Global variable values by name (only those that exist).
fn globals(
    conn: &mut MysqlConnection,
    names: &[&str],
) -> Result<Vec<(String, String)>, EngineError> {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    let rows = conn.rows(&format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
    ))?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let mut it = r.into_iter();
            Some((it.next()??, it.next()?.unwrap_or_default()))
        })
        .collect())
}

/// (dirty, total) buffer pool pages; `None` when the server has no InnoDB.
fn dirty_pages(conn: &mut MysqlConnection) -> Result<Option<(u64, u64)>, EngineError> {
    let rows = conn.rows(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty','Innodb_buffer_pool_pages_total')",
    )?;
    let (mut dirty, mut total) = (None, None);
    for r in rows {
        let name = r.first().cloned().flatten().unwrap_or_default();
        let val = r
            .get(1)
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok());
        match name.to_ascii_lowercase().as_str() {
            "innodb_buffer_pool_pages_dirty" => dirty = val,
            "innodb_buffer_pool_pages_total" => total = val,
            _ => {}
        }
    }
    Ok(dirty.zip(total))
}

/// The spec's wait bound: min(1200, 60 + rows/1e6) seconds.
fn wait_bound(rows: u64) -> Duration {
    Duration::from_secs((60 + rows / 1_000_000).min(1200))
}

fn flush_dirty_pages(
    conn: &mut MysqlConnection,
    tables: &[String],
    actions: &mut Vec<String>,
) -> Result<(), EngineError> {
    let Some((start_dirty, _)) = dirty_pages(conn)? else {
        actions.push("no InnoDB buffer pool: dirty-page flush skipped".into());
        return Ok(());
    };
    let names: Vec<&str> = FLUSH_VARS.iter().map(|(n, _)| *n).collect();
    let saved = globals(conn, &names)?;
    let mut changed = Vec::new();
    for (name, value) in FLUSH_VARS {
        if !saved.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            continue;
        }
        let sql = format!("SET GLOBAL {name} = {value}");
        match conn.query(&sql) {
            Ok(_) => {
                actions.push(sql);
                changed.push(name);
            }
            // MariaDB ignores or rejects some of these; the wait still helps.
            Err(e) => actions.push(format!("{sql} refused: {}", e.message)),
        }
    }
    let rows = table_rows(conn, tables).unwrap_or(0);
    let bound = wait_bound(rows);
    let started = Instant::now();
    let waited = wait_clean(conn, bound);
    // Restore in reverse order (maximum before low-water mark), even after an error.
    for name in changed.iter().rev() {
        if let Some((_, old)) = saved.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            let sql = format!("SET GLOBAL {name} = {old}");
            match conn.query(&sql) {
                Ok(_) => actions.push(sql),
                Err(e) => actions.push(format!("{sql} failed: {}", e.message)),
            }
        }
    }
    let (dirty, total, clean) = waited?;
    actions.push(format!(
        "waited {:.1} s (bound {} s) for dirty pages: {start_dirty} -> {dirty} of {total}{}",
        started.elapsed().as_secs_f64(),
        bound.as_secs(),
        if clean { "" } else { " (bound reached)" }
    ));
    Ok(())
}

/// Polls until dirty pages are at most [`CLEAN_PERCENT`] of the pool or `bound` passes.
fn wait_clean(
    conn: &mut MysqlConnection,
    bound: Duration,
) -> Result<(u64, u64, bool), EngineError> {
    let deadline = Instant::now() + bound;
    loop {
        let (dirty, total) = dirty_pages(conn)?.unwrap_or((0, 0));
        if dirty * 100 <= total * CLEAN_PERCENT {
            return Ok((dirty, total, true));
        }
        if Instant::now() >= deadline {
            return Ok((dirty, total, false));
        }
        std::thread::sleep(POLL);
    }
}

/// Estimated rows of `tables` in the current database.
fn table_rows(conn: &mut MysqlConnection, tables: &[String]) -> Result<u64, EngineError> {
    if tables.is_empty() {
        return Ok(0);
    }
    let mut list = Vec::new();
    for t in tables {
        quote_ident(t)?;
        list.push(format!("'{t}'"));
    }
    let sql = format!(
        "SELECT COALESCE(SUM(TABLE_ROWS),0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({})",
        list.join(",")
    );
    Ok(conn
        .query_scalar(&sql)?
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_follows_spec() {
        assert_eq!(wait_bound(0), Duration::from_secs(60));
        assert_eq!(wait_bound(10_000_000), Duration::from_secs(70));
        assert_eq!(wait_bound(u64::MAX), Duration::from_secs(1200));
    }
}
