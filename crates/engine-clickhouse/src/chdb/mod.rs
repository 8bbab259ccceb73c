//! Embedded ClickHouse: chDB (`chdb` or `chdb:/path/dir`), the `_chdb.abi3.so` of the
//! PyPI wheel `chdb-core`, driven through its ADBC entry point inside the dbdelta process.
//!
//! Values come back as Arrow arrays. To give checksums the same text a ClickHouse server
//! gives over HTTP (enum names, not their numbers; dates as dates), [`Connection::run_rows`]
//! asks chDB itself to render a `SELECT`'s rows as `TabSeparated`
//! (`formatRowNoNewline('TabSeparated', *)`) and reads them like the HTTP engine does.

mod arrow;
mod error;
pub(crate) mod ffi;

use crate::{sql, tsv};
use dbdelta_engine::{
    text, Connection, Dialect, Engine, EngineConfig, EngineError, EngineInfo, EngineKind,
    ErrorKind, Op, OpenOptions, Outcome, Rows, SessionParts, SettleReport, SettleWait, SpecError,
    StatementTexts, StmtId, TableSize, Value,
};
use dbdelta_kit::params::config_err;
use dbdelta_kit::quote;
use dbdelta_model::{Location, TargetSpec};
use error::ChdbError;
use ffi::{AdbcError, ArrowArray, ArrowArrayStream, ArrowSchema, Driver, Handle};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The file that marks a directory as a chDB database dbdelta created.
pub const OWNED_MARKER: &str = "DBDELTA_OWNED";

/// Environment variable naming `_chdb.abi3.so` when the target has no `lib=`.
pub const LIB_ENV: &str = "DBDELTA_CHDB_LIB";

/// Environment variable naming the libpython whose symbols chDB needs.
pub const LIBPYTHON_ENV: &str = "DBDELTA_LIBPYTHON";

/// Target parameters that configure dbdelta rather than ClickHouse.
const OWN_PARAMS: &[&str] = &["lib", "libpython"];

/// Where `_chdb.abi3.so` is looked for when neither `lib=` nor [`LIB_ENV`] is given:
/// the site-packages of dbdelta's test venv.
const VENV: &str = "/opt/dbdelta-venv";

/// What a chDB target's spec says.
#[derive(Debug, Clone, PartialEq)]
pub struct ChdbOptions {
    /// `_chdb.abi3.so` (from `lib=`, else [`LIB_ENV`], else the venv); `None` = not found.
    pub lib: Option<PathBuf>,
    /// libpython (from `libpython=`, else [`LIBPYTHON_ENV`], else the system's).
    pub libpython: Option<PathBuf>,
    /// ClickHouse settings, applied with `SET` on every connection.
    pub settings: Vec<(String, String)>,
}

/// `_chdb.abi3.so` in the venv's site-packages, if installed there.
fn venv_lib(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.flatten()
        .map(|e| e.path().join("site-packages/chdb/_chdb.abi3.so"))
        .find(|p| p.is_file())
}

/// A libpython3 shared library of this system (the highest minor version found).
fn system_libpython() -> Option<PathBuf> {
    let dirs = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ];
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(minor) = name
                .strip_prefix("libpython3.")
                .and_then(|r| r.strip_suffix(".so.1.0"))
                .and_then(|m| m.parse::<u32>().ok())
            else {
                continue;
            };
            found.push((minor, e.path()));
        }
    }
    found.sort();
    found.pop().map(|(_, p)| p)
}

impl ChdbOptions {
    /// Reads a target spec without loading anything.
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        if matches!(spec.location, Location::Url { .. }) {
            return Err(config_err(
                spec,
                "chdb is embedded: give chdb or chdb:/path/dir, not a URL (a server is clickhouse://host:8123)",
            ));
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let lib = spec
            .param("lib")
            .map(PathBuf::from)
            .or_else(|| env(LIB_ENV))
            .or_else(|| venv_lib(Path::new(VENV)))
            .map(|p| {
                if p.is_dir() {
                    p.join("_chdb.abi3.so")
                } else {
                    p
                }
            });
        let libpython = spec
            .param("libpython")
            .map(PathBuf::from)
            .or_else(|| env(LIBPYTHON_ENV))
            .or_else(system_libpython);
        let settings: Vec<(String, String)> = spec
            .params
            .iter()
            .filter(|(k, _)| !OWN_PARAMS.contains(&k.as_str()))
            .cloned()
            .collect();
        crate::managed::check_settings(spec, &settings)?;
        Ok(ChdbOptions {
            lib,
            libpython,
            settings,
        })
    }
}

/// One open chDB database.
struct Database {
    driver: &'static Driver,
    handle: Mutex<Handle>,
    dir: PathBuf,
}

/// chDB keeps one storage path per process: the path open now and how many targets use it.
static OPEN_PATH: Mutex<Option<(PathBuf, usize)>> = Mutex::new(None);

/// Claims the process's chDB storage path for `dir` (shared by targets at the same path).
fn claim_path(dir: &Path) -> Result<(), ChdbError> {
    let mut open = OPEN_PATH
        .lock()
        .map_err(|_| ChdbError::Poisoned("chDB path lock"))?;
    match open.as_mut() {
        Some((p, n)) if p == dir => *n += 1,
        Some((p, _)) => return Err(ChdbError::PathTaken { open: p.clone() }),
        None => *open = Some((dir.to_path_buf(), 1)),
    }
    Ok(())
}

fn release_path(dir: &Path) {
    if let Ok(mut open) = OPEN_PATH.lock() {
        if let Some((p, n)) = open.as_mut() {
            if p == dir {
                *n -= 1;
                if *n == 0 {
                    *open = None;
                }
            }
        }
    }
}

// SAFETY: the database handle is only used under its mutex (connection init, release).
unsafe impl Send for Database {}
// SAFETY: as above.
unsafe impl Sync for Database {}

impl Drop for Database {
    fn drop(&mut self) {
        if let (Some(release), Ok(mut h)) = (self.driver.table.database_release, self.handle.lock())
        {
            // A null handle was never created (DatabaseNew failed or was not reached).
            if !h.private_data.is_null() {
                let mut err = AdbcError::new();
                // SAFETY: the handle was created by database_new and is released once.
                unsafe { release(&mut *h, &mut err) };
                if !err.message.is_null() {
                    err.take();
                }
            }
        }
        release_path(&self.dir);
    }
}

/// An embedded chDB target.
pub struct ChdbEngine {
    db: Arc<Database>,
    dir: PathBuf,
    name: String,
    options: ChdbOptions,
    database: String,
}

impl std::fmt::Debug for ChdbEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChdbEngine")
            .field("dir", &self.dir)
            .field("lib", &self.db.driver.path)
            .finish_non_exhaustive()
    }
}

/// The `chdb` engine kind: ClickHouse embedded through chDB's library.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChdbKind;

impl EngineKind for ChdbKind {
    fn name(&self) -> &'static str {
        "chdb"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(ChdbConfig::from_spec(spec)?))
    }

    /// Queries run on the caller's thread.
    fn thread_per_connection(&self) -> bool {
        true
    }

    /// ClickHouse has no single-row updates, transactions or auto-increment keys.
    fn analytic_only(&self) -> bool {
        true
    }
}

/// A validated `chdb` target: its spec (name and directory) and the libraries to load.
#[derive(Debug, Clone)]
pub struct ChdbConfig {
    /// The target as given (its name and directory are used when opening).
    pub spec: TargetSpec,
    /// The libraries and options read from it.
    pub options: ChdbOptions,
}

impl ChdbConfig {
    /// Reads a target spec without loading anything ([`ChdbOptions::from_spec`]).
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        // The database is a directory: a file there would fail later as "File exists".
        if let Location::Path { path } = &spec.location {
            if path.exists() && !path.is_dir() {
                return Err(config_err(
                    spec,
                    format!(
                        "{} is a file, not a directory: chdb:PATH names the directory that \
                         holds (or will hold) the database; give a directory",
                        path.display()
                    ),
                ));
            }
        }
        Ok(ChdbConfig {
            spec: spec.clone(),
            options: ChdbOptions::from_spec(spec)?,
        })
    }
}

impl EngineConfig for ChdbConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(ChdbEngine::open_config(self, scratch, opts)?))
    }
}

impl ChdbEngine {
    /// Validates a target without loading chDB.
    pub fn check_spec(spec: &TargetSpec) -> Result<ChdbOptions, EngineError> {
        ChdbOptions::from_spec(spec)
    }

    /// Opens a target from its spec ([`ChdbConfig::from_spec`], then
    /// [`ChdbEngine::open_config`]).
    pub fn open(
        spec: &TargetSpec,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        Self::open_config(&ChdbConfig::from_spec(spec)?, scratch, opts)
    }

    /// Opens the target: `<scratch>/<name>.chdb` unless the spec gives a directory. An
    /// existing non-empty directory dbdelta did not create is refused unless the user owns
    /// it (`--i-own-this-database`).
    pub fn open_config(
        cfg: &ChdbConfig,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        let spec = &cfg.spec;
        let options = cfg.options.clone();
        let Some(lib) = options.lib.clone() else {
            return Err(config_err(
                spec,
                format!(
                    "cannot find chDB's _chdb.abi3.so: install the wheel (pip install chdb-core) and give \
                     lib=/path/to/site-packages/chdb/_chdb.abi3.so, or set {LIB_ENV}"
                ),
            ));
        };
        let Some(libpython) = options.libpython.clone() else {
            return Err(config_err(
                spec,
                format!(
                    "chDB's library needs CPython's symbols (no interpreter is started): install libpython3 \
                     (Debian: apt-get install libpython3.11) or give libpython=/path/to/libpython3.X.so.1.0, \
                     or set {LIBPYTHON_ENV}"
                ),
            ));
        };
        let dir = match &spec.location {
            Location::Path { path } => path.clone(),
            _ => scratch.join(format!("{}.chdb", spec.name)),
        };
        let existing = std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
        if existing && !dir.join(OWNED_MARKER).exists() && !opts.i_own_this_database {
            return Err(config_err(
                spec,
                format!(
                    "{} already holds files and was not created by dbdelta; refusing to use it. \
                     Give an empty or new directory, or pass --i-own-this-database",
                    dir.display()
                ),
            ));
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| config_err(spec, format!("cannot create {}: {e}", dir.display())))?;
        std::fs::write(dir.join(OWNED_MARKER), b"created by dbdelta\n")
            .map_err(|e| config_err(spec, format!("cannot write in {}: {e}", dir.display())))?;
        let driver = ffi::load(&lib, &libpython).map_err(|e| {
            config_err(
                spec,
                format!(
                    "cannot load chDB ({e}); give lib=/path/to/chdb/_chdb.abi3.so (pip install chdb-core) \
                     and libpython=/path/to/libpython3.X.so.1.0"
                ),
            )
        })?;
        let db = open_database(driver, &dir)
            .map_err(|e| config_err(spec, format!("chDB cannot open {}: {e}", dir.display())))?;
        let engine = ChdbEngine {
            db: Arc::new(db),
            dir,
            name: spec.name.clone(),
            options,
            database: opts.database.clone(),
        };
        let mut c = engine.connect_without_database()?;
        c.query(&format!(
            "CREATE DATABASE IF NOT EXISTS {}",
            quote::ident(&engine.database, Dialect::Clickhouse)
        ))?;
        Ok(engine)
    }

    fn connect_without_database(&self) -> Result<ChdbConnection, EngineError> {
        ChdbConnection::open(
            Arc::clone(&self.db),
            &self.name,
            None,
            &self.options.settings,
        )
    }

    /// A concrete connection (the [`Engine::connect`] result, unboxed).
    pub fn connect_chdb(&self) -> Result<ChdbConnection, EngineError> {
        ChdbConnection::open(
            Arc::clone(&self.db),
            &self.name,
            Some(&self.database),
            &self.options.settings,
        )
    }
}

fn open_database(driver: &'static Driver, dir: &Path) -> Result<Database, ChdbError> {
    claim_path(dir)?;
    let db = Database {
        driver,
        handle: Mutex::new(Handle::new()),
        dir: dir.to_path_buf(),
    };
    let t = &driver.table;
    let mut err = AdbcError::new();
    let path = CString::new(dir.display().to_string())?;
    {
        let mut h = db
            .handle
            .lock()
            .map_err(|_| ChdbError::Poisoned("chDB database lock"))?;
        let h: &mut Handle = &mut h;
        // SAFETY: the functions were checked present at load; handle and error are valid.
        unsafe {
            if let (Some(new), Some(set), Some(init)) =
                (t.database_new, t.database_set_option, t.database_init)
            {
                if new(h, &mut err) != 0
                    || set(h, c"path".as_ptr(), path.as_ptr(), &mut err) != 0
                    || init(h, &mut err) != 0
                {
                    // Dropping `db` releases what was created and the path claim.
                    return Err(ChdbError::Adbc(err.take()));
                }
            }
        }
    }
    Ok(db)
}

impl Engine for ChdbEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Clickhouse
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(self.connect_chdb()?))
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut c = self.connect_chdb()?;
        let version = c.query_scalar("SELECT version()")?.unwrap_or_default();
        let mut rows = Rows::new();
        c.run_rows(&Op::Query(sql::CHANGED_SETTINGS), &mut rows)?;
        let mut settings: BTreeMap<String, String> = (0..rows.len())
            .filter_map(|i| Some((rows.get(i, 0)?.to_string(), rows.get(i, 1)?.to_string())))
            .collect();
        settings.insert(
            "chdb_library".into(),
            self.db.driver.path.display().to_string(),
        );
        settings.insert(
            "chdb_libpython".into(),
            self.db.driver.libpython.display().to_string(),
        );
        Ok(EngineInfo {
            version: format!("chDB (ClickHouse {version})"),
            settings,
        })
    }

    /// Merges each table's parts (`OPTIMIZE TABLE … FINAL`).
    fn settle(
        &self,
        tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        let mut c = self.connect_chdb()?;
        let mut actions = crate::merge_parts(&mut c, &self.database, tables)?;
        actions.extend(wait.skipped());
        Ok(SettleReport { actions })
    }

    fn data_dir(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    fn embedded(&self) -> bool {
        true
    }

    /// ClickHouse's own thread pools inside the dbdelta process (names as ClickHouse sets
    /// them, cut to 15 bytes by the kernel): query pipelines, merges, background schedules.
    fn background_thread_prefixes(&self) -> &'static [&'static str] {
        &[
            "ThreadPool",
            "QueryPipelineEx",
            "QueryPullPipeEx",
            "QueryPushPipeEx",
            "QueryCompPipeEx",
            "AggregatorPool",
            "AggregDestruct",
            "ParallelFormat",
            "ParallelParse",
            "BgSchPool",
            "BgStrmSchPool",
            "BgMBSchPool",
            "BgDistSchPool",
            "MergeMutate",
            "Move",
            "Fetch",
            "Common",
            "MemoryWorker",
            "PoolDelayExec",
            "IOThreadPool",
            "IOWritePool",
            "ThreadPoolRead",
        ]
    }
}

/// One ADBC connection to the embedded database, with one reused statement.
pub struct ChdbConnection {
    db: Arc<Database>,
    target: String,
    database: String,
    conn: Handle,
    stmt: Handle,
    texts: StatementTexts,
    sql: String,
    cell: String,
    body: Vec<u8>,
    scratch: Vec<u8>,
}

// SAFETY: the ADBC handles belong to this connection alone, used by one thread at a time.
unsafe impl Send for ChdbConnection {}

impl std::fmt::Debug for ChdbConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChdbConnection")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl ChdbConnection {
    fn open(
        db: Arc<Database>,
        target: &str,
        database: Option<&str>,
        settings: &[(String, String)],
    ) -> Result<Self, EngineError> {
        let t = &db.driver.table;
        let mut conn = Handle::new();
        let mut stmt = Handle::new();
        let mut err = AdbcError::new();
        let fail = |err: &mut AdbcError| {
            EngineError::connection(format!(
                "target '{target}': chDB connection: {}",
                err.take()
            ))
        };
        {
            let mut dbh = db
                .handle
                .lock()
                .map_err(|_| EngineError::connection("chDB database lock poisoned"))?;
            // SAFETY: functions checked at load; handles are fresh and valid for writes.
            unsafe {
                if let (Some(new), Some(init)) = (t.connection_new, t.connection_init) {
                    if new(&mut conn, &mut err) != 0 || init(&mut conn, &mut *dbh, &mut err) != 0 {
                        return Err(fail(&mut err));
                    }
                }
            }
        }
        // SAFETY: as above; the connection was initialized.
        unsafe {
            if let Some(new) = t.statement_new {
                if new(&mut conn, &mut stmt, &mut err) != 0 {
                    return Err(fail(&mut err));
                }
            }
        }
        let mut c = ChdbConnection {
            db,
            target: target.to_string(),
            database: database.unwrap_or("default").to_string(),
            conn,
            stmt,
            texts: StatementTexts::default(),
            sql: String::new(),
            cell: String::new(),
            body: Vec::new(),
            scratch: Vec::new(),
        };
        if let Some(d) = database {
            c.query(&format!("USE `{d}`"))?;
        }
        for (k, v) in settings {
            c.query(&format!("SET {k} = {}", sql::literal(v)))?;
        }
        Ok(c)
    }

    /// Runs a `SELECT` with chDB rendering its rows as `TabSeparated`, as a server does over
    /// HTTP (enum names, dates, FixedString padding), and reads them into `rows`.
    fn rows_as_text(&mut self, select: &str, rows: &mut Rows) -> Result<Outcome, EngineError> {
        let wrapped = format!("SELECT formatRowNoNewline('TabSeparated', *) FROM ({select}\n)");
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let mut cell = std::mem::take(&mut self.cell);
        let r = self.execute_stream(&wrapped, &mut |array, formats| {
            if array.n_children < 1 || formats.is_empty() {
                return Err(EngineError::statement(
                    "chDB returned no column for formatRowNoNewline",
                ));
            }
            // SAFETY: child 0 is the String column of a valid batch of array.length rows.
            let child = unsafe { &**array.children };
            for row in 0..array.length.max(0) as usize {
                // SAFETY: as above; row < length.
                let some =
                    unsafe { arrow::value(child, &formats[0], row, &mut cell) }.map_err(|e| {
                        EngineError::with_source(ErrorKind::Statement, e.to_string(), e)
                    })?;
                if some {
                    body.extend_from_slice(cell.as_bytes());
                }
                body.push(b'\n');
            }
            Ok(())
        });
        self.cell = cell;
        let n = r.map(|_| tsv::push_rows(&body, rows, &mut self.scratch));
        self.body = body;
        Ok(Outcome {
            rows: n?,
            affected: 0,
            has_result: true,
        })
    }

    /// Runs `sql`, handing each batch of the result to `each` (the batch's struct array and
    /// the column formats); returns the row count.
    fn execute_stream(
        &mut self,
        sql: &str,
        each: &mut BatchFn<'_>,
    ) -> Result<(u64, usize), EngineError> {
        let t = &self.db.driver.table;
        let text = CString::new(sql).map_err(|_| {
            EngineError::statement(format!(
                "target '{}': the statement holds a NUL byte",
                self.target
            ))
        })?;
        let mut err = AdbcError::new();
        let mut stream = ArrowArrayStream::empty();
        let mut affected: i64 = -1;
        // SAFETY: functions checked at load; the statement handle is ours and initialized.
        let st = unsafe {
            match (t.statement_set_sql_query, t.statement_execute_query) {
                (Some(set), Some(exec)) => {
                    let s = set(&mut self.stmt, text.as_ptr(), &mut err);
                    if s != 0 {
                        s
                    } else {
                        exec(&mut self.stmt, &mut stream, &mut affected, &mut err)
                    }
                }
                _ => 1,
            }
        };
        if st != 0 {
            let msg = err.take();
            return Err(match sql::parse_exception(&msg) {
                Some((code, m)) => sql::server_error(&self.target, code, &m),
                None => EngineError::statement(format!("target '{}': chDB: {msg}", self.target)),
            });
        }
        let guard = StreamGuard(&mut stream);
        let result = read_stream(guard.0, each);
        drop(guard);
        result
    }
}

/// What reads one batch of a result: the batch's struct array and the column formats.
type BatchFn<'a> = dyn FnMut(&ArrowArray, &[String]) -> Result<(), EngineError> + 'a;

/// Releases a stream on every path.
struct StreamGuard<'a>(&'a mut ArrowArrayStream);

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the producer's release, called once (it nulls the pointer).
            unsafe { release(self.0) };
        }
    }
}

/// Reads every batch of `stream`; returns (rows, columns).
fn read_stream(
    stream: &mut ArrowArrayStream,
    each: &mut BatchFn<'_>,
) -> Result<(u64, usize), EngineError> {
    let stream_err = |stream: &mut ArrowArrayStream, code: i32| {
        let msg = stream
            .get_last_error
            // SAFETY: the producer's own error accessor.
            .map(|f| unsafe { f(stream) })
            .filter(|p| !p.is_null())
            // SAFETY: a NUL-terminated message owned by the stream.
            .map(|p| {
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_else(|| format!("error {code}"));
        match sql::parse_exception(&msg) {
            Some((c, m)) => sql::server_error("chdb", c, &m),
            None => EngineError::statement(format!("chDB result stream: {msg}")),
        }
    };
    if stream.release.is_none() {
        // No result set.
        return Ok((0, 0));
    }
    let mut schema = ArrowSchema::empty();
    let formats: Vec<String> = match stream.get_schema {
        // SAFETY: schema is valid for writes; released below.
        Some(get) => match unsafe { get(stream, &mut schema) } {
            0 => {
                // SAFETY: a struct schema's children are n_children valid pointers.
                let f = (0..schema.n_children.max(0) as usize)
                    .map(|i| arrow::format_of(unsafe { &**schema.children.add(i) }))
                    .collect();
                if let Some(rel) = schema.release {
                    // SAFETY: released once.
                    unsafe { rel(&mut schema) };
                }
                f
            }
            code => return Err(stream_err(stream, code)),
        },
        None => Vec::new(),
    };
    let mut rows = 0u64;
    loop {
        let mut array = ArrowArray::empty();
        let Some(next) = stream.get_next else { break };
        // SAFETY: array is valid for writes.
        let code = unsafe { next(stream, &mut array) };
        if code != 0 {
            return Err(stream_err(stream, code));
        }
        let Some(rel) = array.release else {
            break; // end of stream
        };
        rows += array.length.max(0) as u64;
        let r = each(&array, &formats);
        // SAFETY: released once, after use.
        unsafe { rel(&mut array) };
        r?;
    }
    Ok((rows, formats.len()))
}

impl Drop for ChdbConnection {
    fn drop(&mut self) {
        let t = &self.db.driver.table;
        let mut err = AdbcError::new();
        // SAFETY: our own handles, released once, statement before connection.
        unsafe {
            if let Some(rel) = t.statement_release {
                rel(&mut self.stmt, &mut err);
            }
            if let Some(rel) = t.connection_release {
                rel(&mut self.conn, &mut err);
            }
        }
        if !err.message.is_null() {
            err.take();
        }
    }
}

impl Connection for ChdbConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Clickhouse
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        Ok(self.texts.add(sql))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        let mut sql = std::mem::take(&mut self.sql);
        let r = text::interpolate(self.texts.get(stmt)?, params, Dialect::Clickhouse, &mut sql)
            .and_then(|_| self.query(&sql));
        self.sql = sql;
        r
    }

    /// Runs `sql` and reads every batch of the result, counting rows.
    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        let (rows, cols) = self.execute_stream(sql, &mut |_, _| Ok(()))?;
        Ok(Outcome {
            rows,
            affected: 0,
            has_result: cols > 0,
        })
    }

    fn batch(&mut self, script: &str) -> Result<(), EngineError> {
        for stmt in sql::split_statements(script) {
            self.query(stmt)?;
        }
        Ok(())
    }

    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        let mut rows = Rows::new();
        self.run_rows(&Op::Query(sql), &mut rows)?;
        Ok(rows.get(0, 0).map(str::to_string))
    }

    fn rollback(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn run_rows(&mut self, op: &Op<'_>, rows: &mut Rows) -> Result<Outcome, EngineError> {
        rows.clear();
        let sql: String = match op {
            Op::Query(sql) => sql.to_string(),
            Op::Execute { stmt, params } => {
                let mut s = String::new();
                text::interpolate(self.texts.get(*stmt)?, params, Dialect::Clickhouse, &mut s)?;
                s
            }
            Op::Kv(kv) => {
                return Err(EngineError::unsupported(
                    dbdelta_engine::Family::KeyValue,
                    kv.kind.name(),
                ))
            }
        };
        let body_sql = sql.trim().trim_end_matches(';');
        if sql::starts_with_word(body_sql, &["SELECT", "WITH", "("]) {
            match self.rows_as_text(body_sql, rows) {
                // A SELECT that cannot be a subquery (a FORMAT clause): values from Arrow.
                Err(e) if e.code.as_deref() == Some("ClickHouse 62") => rows.clear(),
                other => return other,
            }
        }
        let mut cell = std::mem::take(&mut self.cell);
        let r = self.execute_stream(body_sql, &mut |array, formats| {
            for row in 0..array.length.max(0) as usize {
                rows.start_row();
                for (c, f) in formats
                    .iter()
                    .enumerate()
                    .take(array.n_children.max(0) as usize)
                {
                    // SAFETY: children are the batch's columns, each of array.length rows.
                    let child = unsafe { &**array.children.add(c) };
                    let some = unsafe { arrow::value(child, f, row, &mut cell) }.map_err(|e| {
                        EngineError::with_source(ErrorKind::Statement, e.to_string(), e)
                    })?;
                    rows.push(some.then_some(cell.as_bytes()));
                }
            }
            Ok(())
        });
        self.cell = cell;
        let (n, cols) = r?;
        Ok(Outcome {
            rows: n,
            affected: 0,
            has_result: cols > 0,
        })
    }

    fn table_size(&mut self, table: &str) -> Result<Option<TableSize>, EngineError> {
        let database = self.database.clone();
        let (db, t) = sql::qualified(table, &database);
        let mut rows = Rows::new();
        self.run_rows(&Op::Query(&sql::parts_query(db, t)), &mut rows)?;
        let parts = [rows.get(0, 0), rows.get(0, 1), rows.get(0, 2)].map(|v| v.map(str::to_string));
        let engine = self.query_scalar(&sql::engine_query(db, t))?;
        sql::table_size(
            db,
            t,
            [
                parts[0].as_deref(),
                parts[1].as_deref(),
                parts[2].as_deref(),
            ],
            engine.as_deref(),
        )
    }

    fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>> {
        Err(self)
    }
}

/// True when a CPython interpreter was started in this process (it never is by dbdelta);
/// `None` when libpython is not loaded.
pub fn python_interpreter_running() -> Option<bool> {
    ffi::python_initialized()
}
