//! Bulk load. Rows are formatted on the calling thread into chunks of a few MiB and sent by
//! two loader threads on their own connections, so formatting, the network and the server's
//! insert work overlap instead of taking turns. Each chunk is one autocommitted statement,
//! as in sysbench's prepare.
//!
//! The server's cost per row is what matters, so chunks go as `LOAD DATA LOCAL INFILE`
//! (tab-separated data streamed from memory: no SQL parsing per value) when the server
//! allows it, else as multi-row INSERTs. Either way the chunk is declared in the table's own
//! character set when its text is ASCII, which spares the server a conversion per value.
//!
//! AUTO_INCREMENT ids must stay dense (sysbench picks ids uniformly in 1..table_size), but
//! InnoDB leaves gaps after each LOAD DATA (it cannot know the row count up front). So in
//! LOAD DATA mode the producer assigns the AUTO_INCREMENT column itself, from MAX+1 in
//! source order; multi-row INSERTs ("simple inserts") get dense ids from the server.

use crate::client::RawConn;
use crate::endpoint::Endpoint;
use crate::errors::{statement_error, ClientError};
use dbdelta_engine::{text, Connection, Dialect, EngineError, OwnedValue, RowSource};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// Loader connections sending chunks concurrently.
const LOADERS: usize = 2;

/// Upper bound of one chunk. Bigger chunks stop paying off at a few MiB, and the server's
/// `max_allowed_packet` caps INSERT statements anyway.
const CHUNK_BYTES: usize = 4 << 20;

/// Character sets in which ASCII text is stored byte for byte.
const ASCII_COMPATIBLE: [&str; 5] = ["latin1", "utf8mb4", "utf8mb3", "utf8", "ascii"];

/// How chunks are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `LOAD DATA LOCAL INFILE` with tab-separated rows.
    Tsv,
    /// Multi-row `INSERT ... VALUES (...),(...)`.
    Insert,
}

/// One formatted chunk.
struct Chunk {
    data: Vec<u8>,
    rows: u64,
    ascii: bool,
}

/// What every loader needs to send a chunk.
struct Plan {
    format: Format,
    /// LOAD DATA statement for ASCII chunks (table charset) and for others (utf8mb4).
    load_ascii: String,
    load_utf8: String,
    table: String,
}

/// Loads `rows` into `table` through `conn` (its settings and the table's layout) and
/// loader connections opened at `endpoint`; returns the number of rows inserted.
pub(crate) fn bulk_insert(
    conn: &mut dyn Connection,
    endpoint: &Endpoint,
    table: &str,
    rows: &mut dyn RowSource,
) -> Result<u64, EngineError> {
    let max_packet = conn
        .query_scalar("SELECT @@max_allowed_packet")?
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1 << 20);
    let limit = max_packet
        .saturating_sub(64 * 1024)
        .clamp(64 * 1024, CHUNK_BYTES);
    let charset = table_charset(conn, table)?;
    let auto = auto_increment_column(conn, table, rows.columns())?;
    let cols = rows.columns().join(", ");
    let load_cols = match &auto {
        Some((col, _)) => format!("{col}, {cols}"),
        None => cols.clone(),
    };
    let load = |cs: &str| {
        format!(
            "LOAD DATA LOCAL INFILE 'dbdelta-bulk' INTO TABLE {table} CHARACTER SET {cs} FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({load_cols})"
        )
    };
    let mut plan = Plan {
        format: Format::Tsv,
        load_ascii: load(&charset),
        load_utf8: load("utf8mb4"),
        table: table.to_string(),
    };

    let mut loaders = Vec::new();
    for _ in 0..LOADERS {
        match endpoint.connect_raw() {
            Ok(c) => loaders.push(c),
            // Too many connections or similar: load on fewer (at worst, this) connection.
            Err(_) => break,
        }
    }
    let Some(first) = loaders.first_mut() else {
        return text::bulk_insert_multirow(conn, table, rows, limit);
    };
    // An empty LOAD DATA tells whether the server allows LOCAL (MySQL 8: local_infile=OFF).
    match first.load_local(&plan.load_ascii, b"") {
        Ok(_) => {}
        Err(ClientError::Server { .. }) | Err(ClientError::Unsupported(_)) => {
            plan.format = Format::Insert;
        }
        Err(e) => return Err(statement_error(e, &plan.load_ascii)),
    }
    if plan.format == Format::Insert {
        let names = format!("SET NAMES {charset}");
        for l in &mut loaders {
            l.query(names.as_bytes())
                .map_err(|e| statement_error(e, &names))?;
        }
    }
    let head = format!("INSERT INTO {table}({cols}) VALUES ");
    let next_id = match (plan.format, auto) {
        (Format::Tsv, Some((_, next))) => Some(next),
        _ => None,
    };
    run_loaders(loaders, &plan, rows, &head, limit, next_id)
}

/// The character set of `table` when ASCII text is stored unchanged in it, else utf8mb4.
fn table_charset(conn: &mut dyn Connection, table: &str) -> Result<String, EngineError> {
    let Some(name) = plain_name(table) else {
        return Ok("utf8mb4".into());
    };
    let cs = conn.query_scalar(&format!(
        "SELECT c.CHARACTER_SET_NAME FROM information_schema.TABLES t JOIN information_schema.COLLATIONS c ON c.COLLATION_NAME = t.TABLE_COLLATION WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = '{name}'"
    ))?;
    Ok(cs
        .filter(|c| ASCII_COMPATIBLE.contains(&c.as_str()))
        .unwrap_or_else(|| "utf8mb4".into()))
}

/// The AUTO_INCREMENT column of `table` when the row source does not fill it, with the
/// next id to assign (MAX + 1).
fn auto_increment_column(
    conn: &mut dyn Connection,
    table: &str,
    columns: &[&str],
) -> Result<Option<(String, i64)>, EngineError> {
    let Some(name) = plain_name(table) else {
        return Ok(None);
    };
    let col = conn.query_scalar(&format!(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{name}' AND EXTRA LIKE '%auto_increment%'"
    ))?;
    let Some(col) = col.filter(|c| !columns.iter().any(|x| x.eq_ignore_ascii_case(c))) else {
        return Ok(None);
    };
    let Some(quoted) = plain_name(&col).map(|c| format!("`{c}`")) else {
        return Ok(None);
    };
    let next = conn
        .query_scalar(&format!(
            "SELECT COALESCE(MAX({quoted}), 0) + 1 FROM {table}"
        ))?
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1);
    Ok(Some((quoted, next)))
}

/// The bare table name when it is a plain identifier (safe to put in a string literal).
fn plain_name(table: &str) -> Option<&str> {
    let name = table.rsplit('.').next().unwrap_or(table).trim_matches('`');
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        .then_some(name)
}

fn run_loaders(
    loaders: Vec<RawConn>,
    plan: &Plan,
    rows: &mut dyn RowSource,
    head: &str,
    limit: usize,
    next_id: Option<i64>,
) -> Result<u64, EngineError> {
    let (work_tx, work_rx) = mpsc::sync_channel::<Chunk>(loaders.len());
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let failed = AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = loaders
            .into_iter()
            .map(|raw| {
                let rx = Arc::clone(&work_rx);
                let free_tx = free_tx.clone();
                let failed = &failed;
                s.spawn(move || load(raw, plan, &rx, &free_tx, failed))
            })
            .collect();
        // Only the loaders hold the receiver: when all of them stop, sends fail.
        drop(work_rx);
        drop(free_tx);
        let mut producer = Producer {
            format: plan.format,
            head,
            limit,
            work: &work_tx,
            free: &free_rx,
            failed: &failed,
            chunk: Chunk {
                data: Vec::with_capacity(limit + 1024),
                rows: 0,
                ascii: true,
            },
            sent: 0,
            next_id,
        };
        let produced = producer.run(rows);
        drop(work_tx);
        let mut total = 0;
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(n)) => total += n,
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(EngineError::statement("bulk loader thread panicked"));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let sent = produced?;
        if sent != total {
            return Err(EngineError::statement(format!(
                "bulk load into {}: {sent} rows sent but {total} confirmed",
                plan.table
            )));
        }
        Ok(total)
    })
}

/// A loader thread: sends chunks until the work channel closes or one fails.
fn load(
    mut raw: RawConn,
    plan: &Plan,
    rx: &Mutex<Receiver<Chunk>>,
    free: &mpsc::Sender<Vec<u8>>,
    failed: &AtomicBool,
) -> Result<u64, EngineError> {
    let mut n = 0;
    loop {
        let next = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return Err(EngineError::statement("bulk loader queue poisoned")),
        };
        let Ok(chunk) = next else {
            return Ok(n);
        };
        if let Err(e) = send_chunk(&mut raw, plan, &chunk) {
            failed.store(true, Ordering::Relaxed);
            return Err(e);
        }
        n += chunk.rows;
        let _ = free.send(chunk.data);
    }
}

fn send_chunk(raw: &mut RawConn, plan: &Plan, chunk: &Chunk) -> Result<(), EngineError> {
    match plan.format {
        Format::Tsv => {
            let sql = if chunk.ascii {
                &plan.load_ascii
            } else {
                &plan.load_utf8
            };
            let (loaded, warnings) = raw
                .load_local(sql, &chunk.data)
                .map_err(|e| statement_error(e, sql))?;
            // LOCAL loads skip duplicates and clip bad values with warnings instead of
            // failing: count both as errors.
            if loaded != chunk.rows || warnings > 0 {
                return Err(EngineError::statement(format!(
                    "bulk load into {}: {loaded} of {} rows loaded with {warnings} warnings (duplicate keys or values that do not fit the columns)",
                    plan.table, chunk.rows
                )));
            }
            Ok(())
        }
        Format::Insert => {
            raw.query(&chunk.data).map_err(|e| {
                statement_error(
                    e,
                    &String::from_utf8_lossy(&chunk.data[..chunk.data.len().min(200)]),
                )
            })?;
            Ok(())
        }
    }
}

/// Formats rows into chunks and queues them.
struct Producer<'a> {
    format: Format,
    head: &'a str,
    limit: usize,
    work: &'a SyncSender<Chunk>,
    free: &'a Receiver<Vec<u8>>,
    failed: &'a AtomicBool,
    chunk: Chunk,
    sent: u64,
    /// The next AUTO_INCREMENT value to write (LOAD DATA mode), if the table has one.
    next_id: Option<i64>,
}

impl Producer<'_> {
    /// Formats and queues every row; returns the number of rows queued.
    fn run(&mut self, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        let mut row: Vec<OwnedValue> = Vec::new();
        let mut buf: Vec<u8> = Vec::with_capacity(512);
        let mut lit = String::with_capacity(512);
        loop {
            row.clear();
            if !rows.next_row(&mut row) {
                break;
            }
            buf.clear();
            let ascii = match self.format {
                Format::Tsv => {
                    if let Some(id) = self.next_id.as_mut() {
                        let _ = write!(buf, "{id}\t");
                        *id += 1;
                    }
                    tsv_row(&row, &mut buf)
                }
                Format::Insert => insert_tuple(&row, &mut buf, &mut lit),
            };
            if self.chunk.rows > 0 && self.chunk.data.len() + 1 + buf.len() > self.limit {
                self.flush()?;
            }
            if self.format == Format::Insert {
                if self.chunk.rows == 0 {
                    self.chunk.data.extend_from_slice(self.head.as_bytes());
                } else {
                    self.chunk.data.push(b',');
                }
            }
            self.chunk.data.extend_from_slice(&buf);
            self.chunk.rows += 1;
            self.chunk.ascii &= ascii;
        }
        if self.chunk.rows > 0 {
            self.flush()?;
        }
        Ok(self.sent)
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        let mut data = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.limit + 1024));
        data.clear();
        let next = Chunk {
            data,
            rows: 0,
            ascii: true,
        };
        let full = std::mem::replace(&mut self.chunk, next);
        let rows = full.rows;
        if self.failed.load(Ordering::Relaxed) || self.work.send(full).is_err() {
            return Err(EngineError::statement(
                "bulk load stopped: a loader connection failed",
            ));
        }
        self.sent += rows;
        Ok(())
    }
}

/// Appends one tab-separated line; returns true when its text is ASCII.
fn tsv_row(row: &[OwnedValue], out: &mut Vec<u8>) -> bool {
    let mut ascii = true;
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match v {
            OwnedValue::Int(n) => {
                let _ = write!(out, "{n}");
            }
            OwnedValue::Null => out.extend_from_slice(b"\\N"),
            OwnedValue::Text(s) => {
                ascii &= s.is_ascii();
                for &b in s.as_bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        0 => out.extend_from_slice(b"\\0"),
                        _ => out.push(b),
                    }
                }
            }
        }
    }
    out.push(b'\n');
    ascii
}

/// Appends one `(v, v, ...)` tuple; non-ASCII text gets a `_utf8mb4` introducer because the
/// loader sessions speak the table's character set. Returns true when all text is ASCII.
fn insert_tuple(row: &[OwnedValue], out: &mut Vec<u8>, lit: &mut String) -> bool {
    let mut ascii = true;
    out.push(b'(');
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if let OwnedValue::Text(s) = v {
            if !s.is_ascii() {
                ascii = false;
                out.extend_from_slice(b"_utf8mb4");
            }
        }
        lit.clear();
        text::push_literal(lit, v.as_value(), Dialect::Mysql);
        out.extend_from_slice(lit.as_bytes());
    }
    out.push(b')');
    ascii
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_escapes() {
        let mut out = Vec::new();
        let ascii = tsv_row(
            &[
                OwnedValue::Int(-5),
                OwnedValue::Text("a\tb\\c\nd\re\0".into()),
            ],
            &mut out,
        );
        assert!(ascii);
        assert_eq!(out, b"-5\ta\\tb\\\\c\\nd\\re\\0\n");
        out.clear();
        assert!(!tsv_row(&[OwnedValue::Text("é".into())], &mut out));
    }

    #[test]
    fn insert_tuple_introduces_non_ascii() {
        let mut out = Vec::new();
        let mut lit = String::new();
        assert!(!insert_tuple(
            &[OwnedValue::Int(1), OwnedValue::Text("é'".into())],
            &mut out,
            &mut lit
        ));
        assert_eq!(String::from_utf8(out).unwrap(), "(1,_utf8mb4'é''')");
    }
}
