//! Embedded RocksDB (`rocksdb:` or `rocksdb:/path`): key-value operations run natively on a
//! database in the run directory (or at a path dbdelta created), with db_bench's option
//! names as target parameters. librocksdb is loaded at run time ([`ffi`]), so `lib=` can
//! point each target at another library build.
//!
//! Records of YCSB's usertable are stored as YCSB's RocksDB binding stores them: one value
//! per key holding every field as `[len][name][len][value]` with 4-byte big-endian lengths.
#![deny(missing_docs)]

mod counters;
mod db;
mod error;
mod ffi;
pub mod options;
pub mod record;
mod settings;

use db::{Batch, Db, ReadOpts, WriteOpts};
use dbdelta_engine::ops::{KvKind, KvOp};
use dbdelta_engine::{
    Connection, Dialect, Engine, EngineConfig, EngineCounters, EngineError, EngineInfo, EngineKind,
    Family, OpenOptions, Outcome, OwnedValue, RowSource, SettleReport, SettleWait, SpecError,
    StmtId, Value,
};
use dbdelta_model::{Location, TargetSpec};
pub use options::RocksOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The file that marks a directory as a database dbdelta created (and may empty).
pub const OWNED_MARKER: &str = "DBDELTA_OWNED";

/// An open RocksDB target.
pub struct RocksdbEngine {
    db: Arc<Db>,
    dir: PathBuf,
    options: RocksOptions,
}

impl std::fmt::Debug for RocksdbEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksdbEngine")
            .field("dir", &self.dir)
            .finish()
    }
}

fn config(e: impl std::fmt::Display) -> EngineError {
    EngineError::config(e.to_string())
}

/// The `rocksdb` engine kind: an embedded key-value store, db_bench's options as parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct RocksdbKind;

impl EngineKind for RocksdbKind {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn configure(&self, spec: &TargetSpec) -> Result<Box<dyn EngineConfig>, SpecError> {
        Ok(Box::new(RocksdbConfig::from_spec(spec)?))
    }

    /// Operations run on the caller's thread.
    fn thread_per_connection(&self) -> bool {
        true
    }

    /// A key-value store: the SQL suites' statements have nothing to run on.
    fn serves_sql(&self) -> bool {
        false
    }
}

/// A validated `rocksdb` target: its directory and its options.
#[derive(Debug, Clone)]
pub struct RocksdbConfig {
    /// The target's name (`<scratch>/<name>.rocksdb` by default, and in messages).
    pub name: String,
    /// The directory the spec gives; `None` = `<scratch>/<name>.rocksdb`.
    pub dir: Option<PathBuf>,
    /// The database options.
    pub options: RocksOptions,
}

impl RocksdbConfig {
    /// Validates a target's options without opening anything.
    pub fn from_spec(spec: &TargetSpec) -> Result<Self, EngineError> {
        let dir = match &spec.location {
            Location::Url { .. } => {
                return Err(config(format!(
                "target '{}': rocksdb is embedded: give rocksdb: or rocksdb:/path/dir, not a URL",
                spec.name
            )))
            }
            Location::Path { path } => Some(path.clone()),
            Location::Default => None,
        };
        // The database is a directory: a file there would fail later as "File exists".
        if let Some(p) = dir.as_ref().filter(|p| p.exists() && !p.is_dir()) {
            return Err(config(format!(
                "target '{}': {} is a file, not a directory: rocksdb:PATH names the directory \
                 that holds (or will hold) the database; give a directory",
                spec.name,
                p.display()
            )));
        }
        Ok(RocksdbConfig {
            name: spec.name.clone(),
            dir,
            options: RocksOptions::from_params(&spec.name, &spec.params)?,
        })
    }
}

impl EngineConfig for RocksdbConfig {
    fn open(&self, scratch: &Path, opts: &OpenOptions) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(RocksdbEngine::open_config(self, scratch, opts)?))
    }

    /// The given directory, else the run's (the disk check walks up to what exists).
    fn data_parent(&self, runs: &Path) -> Option<PathBuf> {
        Some(self.dir.clone().unwrap_or_else(|| runs.to_path_buf()))
    }
}

impl RocksdbEngine {
    /// Validates a target's options without opening anything.
    pub fn check_spec(spec: &TargetSpec) -> Result<RocksOptions, EngineError> {
        RocksdbConfig::from_spec(spec).map(|c| c.options)
    }

    /// Opens a target from its spec ([`RocksdbConfig::from_spec`], then
    /// [`RocksdbEngine::open_config`]).
    pub fn open(
        spec: &TargetSpec,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        Self::open_config(&RocksdbConfig::from_spec(spec)?, scratch, opts)
    }

    /// Opens the target: `<scratch>/<name>.rocksdb` unless the spec gives a directory. An
    /// existing non-empty directory that dbdelta did not create is refused unless the user
    /// owns it (`--i-own-this-database`): a load empties the database.
    pub fn open_config(
        cfg: &RocksdbConfig,
        scratch: &Path,
        opts: &OpenOptions,
    ) -> Result<Self, EngineError> {
        let name = &cfg.name;
        let options = cfg.options.clone();
        let dir = match &cfg.dir {
            Some(path) => path.clone(),
            None => scratch.join(format!("{name}.rocksdb")),
        };
        let existing = std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
        if existing && !dir.join(OWNED_MARKER).exists() && !opts.i_own_this_database {
            return Err(config(format!(
                "target '{}': {} already holds files and was not created by dbdelta; refusing to use it. \
                 Give an empty or new directory, or pass --i-own-this-database to allow dbdelta to empty it",
                name,
                dir.display()
            )));
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| config(format!("cannot create {}: {e}", dir.display())))?;
        std::fs::write(dir.join(OWNED_MARKER), b"created by dbdelta\n")
            .map_err(|e| config(format!("cannot write in {}: {e}", dir.display())))?;
        let api = ffi::Api::load(options.lib.as_deref()).map_err(|e| {
            config(format!(
                "target '{}': cannot load librocksdb ({e}); install it (Debian: apt-get install librocksdb-dev) \
                 or give lib=/path/to/librocksdb.so",
                name
            ))
        })?;
        let db = Db::open(Arc::new(api), &dir, &options).map_err(|e| {
            config(format!(
                "target '{}': RocksDB cannot open {}: {e}",
                name,
                dir.display()
            ))
        })?;
        Ok(RocksdbEngine {
            db: Arc::new(db),
            dir,
            options,
        })
    }

    /// RocksDB's statistics dump (`rocksdb.…` tickers and histograms).
    pub fn statistics(&self) -> Option<String> {
        self.db.statistics()
    }

    /// A DB property (`rocksdb.stats`, `rocksdb.levelstats`, …).
    pub fn property(&self, name: &str) -> Option<String> {
        self.db.property(name)
    }

    /// An integer DB property (`rocksdb.estimate-live-data-size`, …).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.db.property_int(name)
    }

    /// Waits until no flush or compaction is pending or running (db_bench's
    /// `waitforcompaction`), for at most `limit`.
    pub fn wait_for_compaction(&self, limit: Duration) -> Result<(), EngineError> {
        let start = Instant::now();
        loop {
            let busy = [
                "rocksdb.compaction-pending",
                "rocksdb.num-running-compactions",
                "rocksdb.num-running-flushes",
                "rocksdb.mem-table-flush-pending",
            ]
            .iter()
            .any(|p| self.db.property_int(p).unwrap_or(0) > 0);
            if !busy {
                return Ok(());
            }
            if start.elapsed() >= limit {
                return Err(EngineError::statement(format!(
                    "compaction still running after {} s",
                    limit.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Engine for RocksdbEngine {
    fn dialect(&self) -> Dialect {
        Dialect::Rocksdb
    }

    fn connect(&self) -> Result<Box<dyn Connection>, EngineError> {
        Ok(Box::new(RocksdbConnection::new(
            self.db.clone(),
            &self.options,
        )))
    }

    fn families(&self) -> &'static [Family] {
        &[Family::KeyValue, Family::RawKeyValue]
    }

    fn info(&self) -> Result<EngineInfo, EngineError> {
        Ok(EngineInfo {
            version: settings::version(&self.dir).unwrap_or_else(|| "unknown".into()),
            settings: settings::effective(&self.dir, &self.options),
        })
    }

    /// Flushes the memtables and waits for compaction (at most 10 minutes).
    fn settle(
        &self,
        _tables: &[String],
        wait: &SettleWait<'_>,
    ) -> Result<SettleReport, EngineError> {
        self.db.flush().map_err(error::statement)?;
        self.wait_for_compaction(Duration::from_secs(600))?;
        let mut actions = vec!["flush".to_string(), "waitforcompaction".to_string()];
        actions.extend(wait.skipped());
        Ok(SettleReport { actions })
    }

    fn data_dir(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    fn embedded(&self) -> bool {
        true
    }

    fn flush_writes(&self) -> Result<(), EngineError> {
        self.db.flush().map_err(error::statement)
    }

    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        Ok(Some(counters::sample(&self.db)))
    }

    /// RocksDB names its flush and compaction threads `rocksdb:low`, `rocksdb:high`, ….
    fn background_thread_prefixes(&self) -> &'static [&'static str] {
        &["rocksdb:"]
    }
}

/// One worker's handle on the database: its own read and write options and buffers.
pub struct RocksdbConnection {
    db: Arc<Db>,
    read: ReadOpts,
    write: WriteOpts,
    write_no_wal: WriteOpts,
    record: Vec<u8>,
    batch: Batch,
    /// RocksDB's perf level for the thread running the operations (`perf_level=`).
    perf_level: i32,
}

impl RocksdbConnection {
    fn new(db: Arc<Db>, o: &RocksOptions) -> Self {
        let api = db.api.clone();
        RocksdbConnection {
            read: ReadOpts::new(&api),
            write: WriteOpts::new(&api, o.sync, o.disable_wal),
            write_no_wal: WriteOpts::new(&api, false, true),
            batch: Batch::new(&api),
            db,
            record: Vec::with_capacity(2048),
            perf_level: o.perf_level,
        }
    }

    fn not_sql(&self, what: &str) -> EngineError {
        EngineError::unsupported(Family::Sql, what)
    }

    /// YCSB's RocksDB binding's update: read the record, replace the given fields, write
    /// the whole record back.
    fn update(&mut self, op: &KvOp<'_>) -> Result<(), EngineError> {
        let record = &mut self.record;
        record.clear();
        self.db
            .get_pinned(&self.read, op.key, |old| {
                record::merge(old.unwrap_or_default(), op.fields, op.values, record)
            })
            .map_err(error::statement)?;
        self.db
            .put(&self.write, op.key, &self.record)
            .map_err(error::statement)
    }

    fn read(&mut self, op: &KvOp<'_>) -> Result<u64, EngineError> {
        // Walk the fields as the binding's deserialisation does, on the pinned value.
        let found = self
            .db
            .get_pinned(&self.read, op.key, |v| {
                v.map(|v| std::hint::black_box(record::count_fields(v, op.fields)))
                    .is_some()
            })
            .map_err(error::statement)?;
        Ok(u64::from(found))
    }

    fn scan(&mut self, op: &KvOp<'_>) -> u64 {
        let mut it = self.db.iter(&self.read);
        it.seek(op.key);
        let mut n = 0;
        while n < u64::from(op.count) && it.valid() {
            std::hint::black_box(record::count_fields(it.value(), op.fields));
            n += 1;
            it.next();
        }
        n
    }
}

impl RocksdbConnection {
    /// db_bench's seekrandom: a new iterator, a seek (or seek-for-prev), then up to `count`
    /// steps, copying out at most 256 bytes of each value. Returns the values read.
    fn seek(&mut self, op: &KvOp<'_>) -> u64 {
        let reverse = op.kind == KvKind::SeekPrev;
        let mut it = self.db.iter(&self.read);
        if reverse {
            it.seek_for_prev(op.key);
        } else {
            it.seek(op.key);
        }
        let mut buf = [0u8; 256];
        let mut n = 0;
        while n < u64::from(op.count) && it.valid() {
            let v = it.value();
            let len = v.len().min(buf.len());
            buf[..len].copy_from_slice(&v[..len]);
            std::hint::black_box(&buf);
            n += 1;
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        n
    }
}

impl Connection for RocksdbConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Rocksdb
    }

    fn prepare(&mut self, _sql: &str) -> Result<StmtId, EngineError> {
        Err(self.not_sql("prepare"))
    }

    fn execute(&mut self, _stmt: StmtId, _params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        Err(self.not_sql("execute"))
    }

    fn query(&mut self, _sql: &str) -> Result<Outcome, EngineError> {
        Err(self.not_sql("query"))
    }

    fn query_scalar(&mut self, _sql: &str) -> Result<Option<String>, EngineError> {
        Err(self.not_sql("query"))
    }

    fn families(&self) -> &'static [Family] {
        &[Family::KeyValue, Family::RawKeyValue]
    }

    fn kv(&mut self, op: &KvOp<'_>) -> Result<Outcome, EngineError> {
        // The level is the thread's, and a connection may move to another thread: checked
        // here rather than set once at connect.
        self.db.set_perf_level(self.perf_level);
        let mut out = Outcome::default();
        match op.kind {
            KvKind::Read => {
                out.rows = self.read(op)?;
                out.has_result = true;
            }
            KvKind::Scan => {
                out.rows = self.scan(op);
                out.has_result = true;
            }
            KvKind::Insert => {
                self.record.clear();
                record::encode(op.fields, op.values, &mut self.record);
                self.db
                    .put(&self.write, op.key, &self.record)
                    .map_err(error::statement)?;
                out.affected = 1;
            }
            KvKind::Update => {
                self.update(op)?;
                out.affected = 1;
            }
            KvKind::ReadModifyWrite => {
                // YCSB reads the whole record, then updates the named fields.
                let all = KvOp { fields: &[], ..*op };
                out.rows = self.read(&all)?;
                out.has_result = true;
                self.update(op)?;
                out.affected = 1;
            }
            KvKind::Delete => {
                self.db
                    .delete(&self.write, op.key)
                    .map_err(error::statement)?;
                out.affected = 1;
            }
            KvKind::Put | KvKind::PutNoWal => {
                let w = if op.kind == KvKind::PutNoWal {
                    &self.write_no_wal
                } else {
                    &self.write
                };
                let value = op.values.first().copied().unwrap_or_default();
                // db_bench writes through one reused batch (DB::Put would build a new one,
                // with an allocation, for every key).
                self.batch.clear();
                self.batch.put(op.key, value);
                self.db.write(w, &self.batch).map_err(error::statement)?;
                out.affected = 1;
            }
            KvKind::Get => {
                let found = self
                    .db
                    .get_pinned(&self.read, op.key, |v| {
                        std::hint::black_box(v);
                        v.is_some()
                    })
                    .map_err(error::statement)?;
                out.rows = u64::from(found);
                out.has_result = true;
            }
            KvKind::SeekNext | KvKind::SeekPrev => {
                out.rows = self.seek(op);
                out.has_result = true;
            }
            KvKind::MultiGet => {
                let found = self
                    .db
                    .multi_get(&self.read, op.values, |_, v| {
                        std::hint::black_box(v);
                    })
                    .map_err(error::statement)?;
                out.rows = found as u64;
                out.has_result = true;
            }
        }
        Ok(out)
    }

    /// Empties the database: one range deletion over every key, then a full compaction so
    /// the next load starts from an empty tree.
    fn kv_clear(&mut self) -> Result<(), EngineError> {
        self.batch.clear();
        self.batch.delete_range(&[], &[0xff; 64]);
        self.db
            .write(&self.write, &self.batch)
            .map_err(error::statement)?;
        self.batch.clear();
        self.db.compact_all();
        Ok(())
    }

    /// Loads usertable rows (key, field values) as records, 1000 to a write batch.
    fn bulk_insert(&mut self, _table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        let mut row = Vec::new();
        let mut n = 0u64;
        self.batch.clear();
        loop {
            row.clear();
            if !rows.next_row(&mut row) {
                break;
            }
            let Some((OwnedValue::Text(key), values)) = row.split_first() else {
                return Err(EngineError::statement(
                    "a usertable row starts with its text key",
                ));
            };
            self.record.clear();
            for (f, v) in values.iter().enumerate() {
                match v {
                    OwnedValue::Text(t) => {
                        record::put_field(&mut self.record, f as u16, t.as_bytes())
                    }
                    OwnedValue::Int(i) => {
                        record::put_field(&mut self.record, f as u16, i.to_string().as_bytes())
                    }
                    // YCSB records have no NULL fields: an absent value is an empty one.
                    OwnedValue::Null => record::put_field(&mut self.record, f as u16, b""),
                }
            }
            self.batch.put(key.as_bytes(), &self.record);
            n += 1;
            if self.batch.len() >= 1000 {
                self.db
                    .write(&self.write, &self.batch)
                    .map_err(error::statement)?;
                self.batch.clear();
            }
        }
        if self.batch.len() > 0 {
            self.db
                .write(&self.write, &self.batch)
                .map_err(error::statement)?;
            self.batch.clear();
        }
        Ok(n)
    }

    fn into_session(self: Box<Self>) -> Result<dbdelta_engine::SessionParts, Box<dyn Connection>> {
        Err(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine::ops::KvOp;
    use dbdelta_model::testing::require;

    const DEBIAN_LIB: &str = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8";

    /// The calling thread's `user_key_comparison_count` (metric 0 of c.h's perf context);
    /// with `reset`, zeroed instead. dlopen of the same path gives the engine's library
    /// (one instance, one thread-local perf context).
    fn comparisons(reset: bool) -> u64 {
        type Create = unsafe extern "C" fn() -> ffi::Handle;
        type Reset = unsafe extern "C" fn(ffi::Handle);
        type Metric = unsafe extern "C" fn(ffi::Handle, std::ffi::c_int) -> u64;
        // SAFETY: c.h's signatures; the context handle is created and destroyed here.
        unsafe {
            let lib = libloading::Library::new(DEBIAN_LIB).unwrap();
            let create = *lib.get::<Create>(b"rocksdb_perfcontext_create\0").unwrap();
            let destroy = *lib.get::<Reset>(b"rocksdb_perfcontext_destroy\0").unwrap();
            let p = create();
            let v = if reset {
                (*lib.get::<Reset>(b"rocksdb_perfcontext_reset\0").unwrap())(p);
                0
            } else {
                (*lib.get::<Metric>(b"rocksdb_perfcontext_metric\0").unwrap())(p, 0)
            };
            destroy(p);
            v
        }
    }

    /// Key comparisons one get counted in its thread's perf context, at `perf_level`.
    fn comparisons_counted(perf_level: &str) -> u64 {
        let d = tempfile::tempdir().unwrap();
        let spec = TargetSpec::parse(&format!(
            "p=rocksdb:{}/p?lib={DEBIAN_LIB}&statistics=false&perf_level={perf_level}",
            d.path().display()
        ))
        .unwrap();
        let engine = RocksdbEngine::open(&spec, d.path(), &OpenOptions::default()).unwrap();
        // A new thread starts at the library's own level (kEnableCount): the connection
        // sets the target's on the thread that runs its operations.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut conn = engine.connect().unwrap();
                let op = |kind, key: &'static [u8], values: &'static [&'static [u8]]| KvOp {
                    kind,
                    key,
                    fields: &[],
                    values,
                    count: 0,
                };
                for k in [&b"k1"[..], b"k2", b"k3", b"k4"] {
                    conn.kv(&op(KvKind::Put, k, &[b"v"])).unwrap();
                }
                comparisons(true);
                let found = conn.kv(&op(KvKind::Get, b"k3", &[])).unwrap();
                assert_eq!(found.rows, 1);
                comparisons(false)
            })
            .join()
            .unwrap()
        })
    }

    #[test]
    fn perf_level_is_set_on_the_thread_that_runs_the_operations() {
        if !require(&[DEBIAN_LIB], "apt-get install librocksdb-dev") {
            return;
        }
        // db_bench's default (kDisable): the get counts nothing.
        assert_eq!(comparisons_counted("1"), 0);
        // The library's own default (kEnableCount): the memtable lookup's comparisons.
        assert!(comparisons_counted("2") > 0);
    }
}
