//! Embedded SQLite: a file in the run directory (or a given path); query parameters of the
//! target become PRAGMAs applied on every connection.
//!
//! Its own crate so that only the targets that use SQLite compile the bundled library; the
//! seam (`dbdelta-engine`) and the server engines do not.
#![deny(missing_docs)]

mod limit;
mod pragma;

use dbdelta_engine::{
    ConnectOptions, Connection, Dialect, Engine, EngineConfig, EngineError, EngineInfo, EngineKind,
    ErrorKind, Family, Op, OpenOptions, Outcome, OwnedValue, RowSource, SettleReport, SettleWait,
    SpecError, StatementTexts, StmtId, Value,
};
use dbdelta_model::{Location, TargetSpec};
use rusqlite::ffi::ErrorCode;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one statement waits for a lock before the event is rolled back and retried.
const BUSY_GIVE_UP: Duration = Duration::from_secs(10);

thread_local! {
    /// Busy-handler invocations on this thread (one worker = one thread = one connection).
    static BUSY_WAITS: Cell<u64> = const { Cell::new(0) };
}

/// An open SQLite target.
#[derive(Debug)]
pub struct SqliteEngine {
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    prepared: bool,
}

/// The `sqlite` engine kind: a file target, its parameters PRAGMAs.
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteKind;

impl EngineKind for SqliteKind {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        if matches!(spec.location, Location::Url { .. }) {
            return Err(SpecError::Shape(format!(
                "--target {}: sqlite takes a file path (sqlite:/path/file.db), not a URL",
                spec.name
            )));
        }
        Ok(Box::new(SqliteConfig::from_spec(spec)?))
    }

    /// Statements run on the caller's thread.
    fn thread_per_connection(&self) -> bool {
        true
    }
}

/// A validated `sqlite` target: where its file is and the PRAGMAs every connection applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteConfig {
    /// The target's name (`<scratch>/<name>.db` by default, and in messages).
    pub name: String,
    /// The file the spec gives; `None` = `<scratch>/<name>.db`, created by dbdelta.
    pub file: Option<PathBuf>,
    /// PRAGMA name and value pairs, in the spec's order.
    pub pragmas: Vec<(String, String)>,
}

impl SqliteConfig {
    /// Checks a target before anything runs: PRAGMA syntax, names and values (applied to a
    /// throwaway database and read back, since SQLite ignores values it does not know), and
    /// that the directory of a given file exists (dbdelta creates none outside its own).
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        let file = match &spec.location {
            Location::Default => None,
            Location::Path { path } => Some(path.clone()),
            Location::Url { .. } => {
                return Err(EngineError::config(format!(
                    "target '{}': sqlite takes a file path (sqlite:/path/file.db), not a URL",
                    spec.name
                )))
            }
        };
        for (k, v) in &spec.params {
            if !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || !v
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
            {
                return Err(EngineError::config(format!(
                    "target '{}': '{k}={v}' is not a valid PRAGMA (names and values are words or numbers, e.g. journal_mode=WAL)",
                    spec.name
                )));
            }
        }
        if let Some(dir) = file
            .as_deref()
            .and_then(Path::parent)
            .filter(|d| !d.as_os_str().is_empty())
        {
            if !dir.is_dir() {
                return Err(EngineError::config(format!(
                    "target '{}': the directory {} does not exist: create it first or give another path",
                    spec.name,
                    dir.display()
                )));
            }
        }
        // One probe directory per check: targets are checked from several threads at once.
        static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let scratch = std::env::temp_dir().join(format!(
            "dbdelta-pragma-check-{}-{}",
            std::process::id(),
            PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&scratch).map_err(|e| {
            EngineError::config(format!("cannot create {}: {e}", scratch.display()))
        })?;
        let probe = SqliteEngine {
            path: scratch.join("probe.db"),
            pragmas: spec.params.clone(),
            prepared: false,
        };
        let checked = probe.check_pragmas(&spec.name);
        let _ = std::fs::remove_dir_all(&scratch);
        checked?;
        Ok(SqliteConfig {
            name: spec.name.clone(),
            file,
            pragmas: spec.params.clone(),
        })
    }

    /// Opens the target: its file is `<scratch>/<name>.db` unless the spec gives a path.
    /// Each PRAGMA is applied once here, on the real file, to validate it.
    pub fn open_sqlite(
        &self,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<SqliteEngine, EngineError> {
        let path = match &self.file {
            Some(p) => p.clone(),
            None => {
                let path = scratch.join(format!("{}.db", self.name));
                if let Some(dir) = path.parent() {
                    // The scratch area is dbdelta's own.
                    std::fs::create_dir_all(dir).map_err(|e| {
                        EngineError::config(format!("cannot create {}: {e}", dir.display()))
                    })?;
                }
                path
            }
        };
        let engine = SqliteEngine {
            path,
            pragmas: self.pragmas.clone(),
            prepared: opts.prepared,
        };
        engine.check_pragmas(&self.name)?;
        Ok(engine)
    }
}

impl EngineConfig for SqliteConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(self.open_sqlite(scratch, opts)?))
    }

    /// The given file's directory, else the run's.
    fn data_parent(&self, runs: &Path) -> Option<PathBuf> {
        match &self.file {
            Some(path) => path.parent().map(Path::to_path_buf),
            None => Some(runs.to_path_buf()),
        }
    }
}

impl SqliteEngine {
    /// Opens a target from its spec ([`SqliteConfig::from_spec`], then
    /// [`SqliteConfig::open_sqlite`]).
    pub fn open(
        spec: &TargetSpec,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        SqliteConfig::from_spec(spec)?.open_sqlite(scratch, opts)
    }

    /// Checks a target before anything runs ([`SqliteConfig::from_spec`]).
    pub fn check_spec(spec: &TargetSpec) -> Result<(), EngineError> {
        SqliteConfig::from_spec(spec).map(|_| ())
    }

    /// Every PRAGMA is one SQLite knows, and reads back as given.
    fn check_pragmas(&self, target: &str) -> Result<(), EngineError> {
        let conn = self.open_raw()?;
        for (k, v) in &self.pragmas {
            let known: bool = conn
                .query_row(
                    "SELECT count(*) FROM pragma_pragma_list WHERE name = ?1",
                    [k.to_ascii_lowercase()],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n > 0)
                .unwrap_or(true);
            if !known {
                return Err(EngineError::config(format!(
                    "target '{target}': '{k}' is not an SQLite PRAGMA (see https://sqlite.org/pragma.html)"
                )));
            }
            // The message carries the reason whole; as a source too, error chains would
            // print it twice.
            crate::pragma::check_took_effect(&conn, k, v)
                .map_err(|why| EngineError::config(format!("target '{target}': {why}")))?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open_raw(&self) -> Result<rusqlite::Connection, EngineError> {
        let conn = rusqlite::Connection::open(&self.path).map_err(|e| {
            EngineError::config(format!(
                "cannot open SQLite file {}: {e}",
                self.path.display()
            ))
        })?;
        conn.busy_handler(Some(busy_wait)).map_err(sql_err)?;
        for (k, v) in &self.pragmas {
            // PRAGMAs that return a row (journal_mode) need query, others execute.
            let sql = format!("PRAGMA {k}={v}");
            let mut stmt = conn
                .prepare(&sql)
                .map_err(|e| EngineError::config(format!("PRAGMA {k}={v} failed: {e}")))?;
            let mut rows = stmt.raw_query();
            while rows.next().map_err(sql_err)?.is_some() {}
        }
        conn.set_prepared_statement_cache_capacity(64);
        Ok(conn)
    }

    fn journal_mode_is_wal(conn: &rusqlite::Connection) -> bool {
        conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
            .map(|m| m.eq_ignore_ascii_case("wal"))
            .unwrap_or(false)
    }
}

fn busy_wait(attempt: i32) -> bool {
    BUSY_WAITS.with(|c| c.set(c.get() + 1));
    // Back off from 50 µs to 1 ms; give up after about BUSY_GIVE_UP.
    let micros = (50u64 << attempt.clamp(0, 5) as u32).min(1000);
    if u128::from(attempt.max(0) as u32) * 1000 > BUSY_GIVE_UP.as_micros() {
        return false;
    }
    std::thread::sleep(Duration::from_micros(micros));
    true
}

fn sql_err(e: rusqlite::Error) -> EngineError {
    let kind = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => ErrorKind::Retryable,
        Some(ErrorCode::ConstraintViolation) => ErrorKind::Retryable,
        // Only a connection's statement limit interrupts (see `limit`).
        Some(ErrorCode::OperationInterrupted) => ErrorKind::Timeout,
        _ => ErrorKind::Statement,
    };
    let code = e.sqlite_error().map(|f| f.extended_code);
    let err = EngineError::with_source(kind, e.to_string(), e);
    match code {
        Some(c) => err.with_code(format!("SQLite {c}")),
        None => err,
    }
}

impl Engine for SqliteEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(SqliteConnection {
            conn: self.open_raw()?,
            sqls: StatementTexts::default(),
            prepared: self.prepared,
            text: String::new(),
            limit: None,
        }))
    }

    /// The I/O timeout of `opts` becomes a limit on each statement (SQLite has no socket to
    /// bound): one that runs past it is interrupted and fails as a timeout.
    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        let conn = self.open_raw()?;
        let limit = opts
            .io_timeout
            .map(|t| limit::StatementLimit::install(&conn, t));
        Ok(Box::new(SqliteConnection {
            conn,
            sqls: StatementTexts::default(),
            prepared: self.prepared,
            text: String::new(),
            limit,
        }))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let conn = self.open_raw()?;
        let mut settings = BTreeMap::new();
        for name in [
            "journal_mode",
            "synchronous",
            "page_size",
            "cache_size",
            "locking_mode",
        ] {
            if let Ok(v) = conn.query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            }) {
                let text = match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(s) => s,
                    other => format!("{other:?}"),
                };
                settings.insert(name.to_string(), text);
            }
        }
        for (k, v) in &self.pragmas {
            settings.entry(k.clone()).or_insert_with(|| v.clone());
        }
        settings.insert("file".into(), self.path.display().to_string());
        Ok(EngineInfo {
            version: format!("SQLite {}", rusqlite::version()),
            settings,
        })
    }

    fn settle(
        &self,
        _tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let conn = self.open_raw()?;
        let mut actions = vec!["ANALYZE".to_string()];
        conn.execute_batch("ANALYZE").map_err(sql_err)?;
        if Self::journal_mode_is_wal(&conn) {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(sql_err)?;
            actions.push("PRAGMA wal_checkpoint(TRUNCATE)".to_string());
        }
        actions.extend(wait.skipped());
        Ok(SettleReport { actions })
    }

    fn data_dir(&self) -> Option<PathBuf> {
        self.path.parent().map(Path::to_path_buf)
    }

    fn embedded(&self) -> bool {
        true
    }

    // SQLite checkpoints in the committing connection: no work outlives a statement.
    fn background_work(&self) -> bool {
        false
    }
}

/// One SQLite connection; statements are kept in rusqlite's per-connection cache.
pub struct SqliteConnection {
    conn: rusqlite::Connection,
    sqls: StatementTexts,
    prepared: bool,
    text: String,
    /// `--statement-timeout` (connections opened with an I/O timeout), else `None`.
    limit: Option<limit::StatementLimit>,
}

impl SqliteConnection {
    /// A statement starts: its time limit, if any, starts too.
    #[inline]
    fn tick(&self) {
        if let Some(l) = &self.limit {
            l.tick();
        }
    }
}

fn bind(stmt: &mut rusqlite::Statement<'_>, params: &[Value<'_>]) -> Result<(), EngineError> {
    if stmt.parameter_count() != params.len() {
        return Err(EngineError::statement(format!(
            "statement has {} placeholders but got {} parameters",
            stmt.parameter_count(),
            params.len()
        )));
    }
    for (i, p) in params.iter().enumerate() {
        match p {
            Value::Int(v) => stmt.raw_bind_parameter(i + 1, v),
            Value::Text(s) => stmt.raw_bind_parameter(i + 1, s),
            Value::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null),
        }
        .map_err(sql_err)?;
    }
    Ok(())
}

fn run(
    stmt: &mut rusqlite::Statement<'_>,
    changes: impl Fn() -> u64,
    mut keep: Option<&mut dbdelta_engine::Rows>,
) -> Result<Outcome, EngineError> {
    if let Some(k) = keep.as_deref_mut() {
        k.clear();
    }
    let width = stmt.column_count();
    if width > 0 {
        let mut rows = stmt.raw_query();
        let mut n = 0;
        while let Some(row) = rows.next().map_err(sql_err)? {
            n += 1;
            if let Some(k) = keep.as_deref_mut() {
                keep_row(row, width, k)?;
            }
        }
        Ok(Outcome {
            rows: n,
            affected: 0,
            has_result: true,
        })
    } else {
        stmt.raw_execute().map_err(sql_err)?;
        Ok(Outcome {
            rows: 0,
            affected: changes(),
            has_result: false,
        })
    }
}

/// Appends one result row's values as text.
fn keep_row(
    row: &rusqlite::Row<'_>,
    width: usize,
    keep: &mut dbdelta_engine::Rows,
) -> Result<(), EngineError> {
    use rusqlite::types::ValueRef;
    use std::fmt::Write as _;
    keep.start_row();
    for i in 0..width {
        match row.get_ref(i).map_err(sql_err)? {
            ValueRef::Null => keep.push(None),
            ValueRef::Integer(v) => keep.push_with(|t| {
                let _ = write!(t, "{v}");
            }),
            ValueRef::Real(v) => keep.push_with(|t| {
                let _ = write!(t, "{v}");
            }),
            ValueRef::Text(b) | ValueRef::Blob(b) => keep.push(Some(b)),
        }
    }
    Ok(())
}

impl SqliteConnection {
    fn execute_keeping(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        self.tick();
        let sql = self.sqls.get(stmt)?;
        let conn = &self.conn;
        if self.prepared {
            let mut st = conn.prepare_cached(sql).map_err(sql_err)?;
            bind(&mut st, params)?;
            run(&mut st, || conn.changes(), keep)
        } else {
            dbdelta_engine::text::interpolate(sql, params, Dialect::Sqlite, &mut self.text)?;
            let mut st = conn.prepare(&self.text).map_err(sql_err)?;
            run(&mut st, || conn.changes(), keep)
        }
    }

    fn query_keeping(
        &mut self,
        sql: &str,
        keep: Option<&mut dbdelta_engine::Rows>,
    ) -> Result<Outcome, EngineError> {
        self.tick();
        let conn = &self.conn;
        let mut st = conn.prepare(sql).map_err(sql_err)?;
        run(&mut st, || conn.changes(), keep)
    }
}

impl Connection for SqliteConnection {
    fn into_session(
        self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        Err(self)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        if self.prepared {
            self.conn.prepare_cached(sql).map_err(sql_err)?;
        }
        Ok(self.sqls.add(sql))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        self.execute_keeping(stmt, params, None)
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        self.query_keeping(sql, None)
    }

    fn run_rows(
        &mut self,
        op: &Op<'_>,
        rows: &mut dbdelta_engine::Rows,
    ) -> Result<Outcome, EngineError> {
        match op {
            Op::Execute { stmt, params } => self.execute_keeping(*stmt, params, Some(rows)),
            Op::Query(sql) => self.query_keeping(sql, Some(rows)),
            Op::Kv(kv) => Err(EngineError::unsupported(Family::KeyValue, kv.kind.name())),
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), EngineError> {
        self.tick();
        self.conn.execute_batch(sql).map_err(sql_err)
    }

    /// Pages of the table (and its indexes) from the `dbstat` virtual table. A virtual
    /// table (FTS5) is the sum of its shadow tables (`name_data`, `name_idx`, …).
    fn table_size(
        &mut self,
        table: &str,
    ) -> Result<Option<dbdelta_engine::TableSize>, EngineError> {
        self.tick();
        let kind: Option<String> = self
            .conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(sql_err)?;
        let Some(create) = kind else {
            return Ok(None);
        };
        let pages = |sql: &str| -> Result<u64, EngineError> {
            self.conn
                .query_row(sql, [table], |r| r.get::<_, Option<i64>>(0))
                .map(|v| v.unwrap_or(0).max(0) as u64)
                .map_err(sql_err)
        };
        if create.to_ascii_uppercase().starts_with("CREATE VIRTUAL") {
            let shadow = pages(
                "SELECT sum(pgsize) FROM dbstat WHERE name IN \
                 (SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?1 || '\\_%' ESCAPE '\\')",
            )?;
            return Ok(Some(dbdelta_engine::TableSize {
                data_bytes: shadow,
                ..Default::default()
            }));
        }
        let data = pages("SELECT sum(pgsize) FROM dbstat WHERE name = ?1")?;
        let index = pages(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN \
             (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1)",
        )?;
        Ok(Some(dbdelta_engine::TableSize {
            data_bytes: data,
            index_bytes: Some(index),
            uncompressed_bytes: None,
        }))
    }

    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        self.tick();
        let mut st = self.conn.prepare(sql).map_err(sql_err)?;
        let mut rows = st.raw_query();
        match rows.next().map_err(sql_err)? {
            None => Ok(None),
            Some(row) => {
                let v: rusqlite::types::Value = row.get(0).map_err(sql_err)?;
                Ok(match v {
                    rusqlite::types::Value::Null => None,
                    rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                    rusqlite::types::Value::Real(f) => Some(f.to_string()),
                    rusqlite::types::Value::Text(s) => Some(s),
                    rusqlite::types::Value::Blob(b) => Some(format!("<{} bytes>", b.len())),
                })
            }
        }
    }

    fn bulk_insert(&mut self, table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        // One transaction with a prepared INSERT: SQLite's fastest correct load path.
        let cols = rows.columns().join(", ");
        let marks = vec!["?"; rows.columns().len()].join(", ");
        let sql = format!("INSERT INTO {table}({cols}) VALUES ({marks})");
        let tx = self.conn.unchecked_transaction().map_err(sql_err)?;
        let mut n = 0;
        {
            let mut st = tx.prepare(&sql).map_err(sql_err)?;
            let mut row: Vec<OwnedValue> = Vec::new();
            loop {
                row.clear();
                if !rows.next_row(&mut row) {
                    break;
                }
                let vals: Vec<Value<'_>> = row.iter().map(OwnedValue::as_value).collect();
                bind(&mut st, &vals)?;
                if let Some(l) = &self.limit {
                    l.tick();
                }
                st.raw_execute().map_err(sql_err)?;
                n += 1;
            }
        }
        tx.commit().map_err(sql_err)?;
        Ok(n)
    }

    fn busy_retries(&self) -> u64 {
        BUSY_WAITS.with(Cell::get)
    }
}
