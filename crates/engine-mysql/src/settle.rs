//! Post-write maintenance for InnoDB, after Mark Callaghan's published sysbench scripts'
//! post-write block: ANALYZE TABLE, then raise dirty-page
//! flushing (the dirty-page targets to 1 %, idle flushing to 100 %) and wait out the whole
//! settle time the run asks for, as the published scripts do, then restore the settings.
//! MyRocks tables first have their memtables flushed and L0 compacted into L1
//! (`rocksdb_force_flush_memtable_and_lzero_now`, synchronous), what the published MyRocks
//! scripts do after a load: reads then search a settled LSM instead of racing the
//! compactions a load leaves behind, which run in other targets' turns.

use crate::connection::MysqlConnection;
use crate::managed::quote_ident;
use dbdelta_engine::{Connection, EngineError, SettleWait};
use std::time::Instant;

/// The variables lowered during the flush wait, in the order they are set, and their
/// temporary values. The low-water mark goes first so it never exceeds the maximum.
const FLUSH_VARS: [(&str, &str); 3] = [
    ("innodb_max_dirty_pages_pct_lwm", "1"),
    ("innodb_max_dirty_pages_pct", "1"),
    ("innodb_idle_flush_pct", "100"),
];

/// Runs the settle actions for `tables` on `conn`, appending them to `actions`; the settle
/// began at `started` and lasts until `wait` is over.
pub(crate) fn settle(
    conn: &mut MysqlConnection,
    tables: &[String],
    myrocks: bool,
    wait: &SettleWait<'_>,
    started: Instant,
    actions: &mut Vec<String>,
) -> Result<(), EngineError> {
    for t in tables {
        let sql = format!("ANALYZE TABLE {}", quote_ident(t)?);
        conn.query(&sql)?;
        actions.push(sql);
    }
    if myrocks {
        let sql = "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = ON";
        conn.query(sql)?;
        actions.push(sql.to_string());
    }
    flush_dirty_pages(conn, wait, started, actions)
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

/// Raises dirty-page flushing, waits out the settle time, restores the settings. The wait
/// is the full time, not until the pool looks clean: the scripts sleep `sleep_secs`, and
/// purge and change-buffer merges go on after the last dirty page is written.
fn flush_dirty_pages(
    conn: &mut MysqlConnection,
    wait: &SettleWait<'_>,
    started: Instant,
    actions: &mut Vec<String>,
) -> Result<(), EngineError> {
    let Some((start_dirty, _)) = dirty_pages(conn)? else {
        actions.push("no InnoDB buffer pool: no dirty-page flushing to raise".into());
        actions.push(wait.wait_out(started));
        return Ok(());
    };
    let names: Vec<&str> = FLUSH_VARS.iter().map(|(n, _)| *n).collect();
    let saved = conn.globals(&names)?;
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
    let waited = wait.wait_out(started);
    let after = dirty_pages(conn);
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
    let (dirty, total) = after?.unwrap_or((0, 0));
    actions.push(format!(
        "{waited}; dirty pages {start_dirty} -> {dirty} of {total}"
    ));
    Ok(())
}
