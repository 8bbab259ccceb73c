//! Safe owners of RocksDB's C handles: the database with its options, cache and table
//! options; per-connection read and write options; write batches and iterators.

use crate::error::RocksError;
use crate::ffi::{Api, Handle};
use crate::options::{CacheType, RocksOptions};
use std::cell::Cell;
use std::ffi::{c_char, CString};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The most keys [`Db::multi_get`] takes in one call.
pub(crate) const MAX_MULTI_GET: usize = 64;

/// Numbers the open databases, so that a thread knows which one it set the perf level for.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The database (its number) and the perf level this thread last set: RocksDB's
    /// `perf_level` is thread-local, and every library loaded has its own.
    static PERF_LEVEL: Cell<(u64, i32)> = const { Cell::new((0, 0)) };
}

/// An open database and everything it was opened with (kept until close: the statistics
/// object lives in the options).
pub(crate) struct Db {
    pub api: Arc<Api>,
    id: u64,
    db: Handle,
    options: Handle,
    table: Handle,
    cache: Handle,
}

// SAFETY: a RocksDB DB handle is safe to use from many threads at once (c.h, DB docs); the
// option handles are only read after open.
unsafe impl Send for Db {}
unsafe impl Sync for Db {}

fn cstr(s: &str) -> Result<CString, RocksError> {
    CString::new(s).map_err(|_| RocksError::Nul {
        text: s.to_string(),
    })
}

impl Db {
    /// Opens (creating if missing) the database at `path` with `o`.
    pub fn open(api: Arc<Api>, path: &Path, o: &RocksOptions) -> Result<Db, RocksError> {
        let c_path = cstr(&path.to_string_lossy())?;
        // SAFETY: every handle is created here, configured, and owned by the returned Db
        // (or destroyed on the error path).
        unsafe {
            let options = (api.options_create)();
            (api.options_set_create_if_missing)(options, 1);
            (api.options_set_write_buffer_size)(options, o.write_buffer_size as usize);
            (api.options_set_max_write_buffer_number)(options, o.max_write_buffer_number);
            (api.options_set_compression)(options, o.compression);
            (api.options_set_bytes_per_sync)(options, o.bytes_per_sync);
            (api.options_set_use_direct_reads)(options, u8::from(o.use_direct_reads));
            (api.options_set_use_direct_io_for_flush_and_compaction)(
                options,
                u8::from(o.use_direct_io_for_flush_and_compaction),
            );
            (api.options_set_max_background_jobs)(options, o.max_background_jobs);
            (api.options_set_target_file_size_base)(options, o.target_file_size_base);
            (api.options_set_max_bytes_for_level_base)(options, o.max_bytes_for_level_base);
            (api.options_set_level_compaction_dynamic_level_bytes)(options, 1);
            (api.options_set_num_levels)(options, 8);
            (api.options_set_max_open_files)(options, -1);
            (api.options_set_level0_file_num_compaction_trigger)(options, 4);
            (api.options_set_level0_slowdown_writes_trigger)(options, 20);
            (api.options_set_level0_stop_writes_trigger)(options, 30);
            (api.options_set_enable_pipelined_write)(options, u8::from(o.enable_pipelined_write));
            (api.options_set_table_cache_numshardbits)(options, o.table_cache_numshardbits);
            if o.statistics {
                (api.options_enable_statistics)(options);
            }
            let table = (api.block_based_options_create)();
            let cache = match o.cache_type {
                CacheType::Lru => (api.cache_create_lru)(o.cache_size as usize),
                // The estimated entry charge db_bench gave HyperClockCache before it could
                // size itself (`--block_size`): the same on every version that has it.
                CacheType::HyperClock => match api.newer.cache_create_hyper_clock {
                    Some(f) => f(o.cache_size as usize, o.block_size as usize),
                    None => {
                        (api.block_based_options_destroy)(table);
                        (api.options_destroy)(options);
                        return Err(RocksError::Unsupported {
                            option: "cache_type=hyper_clock",
                            symbol: "rocksdb_cache_create_hyper_clock",
                            version: api.version_hint(),
                            since: "RocksDB's C API has it from 8.0",
                            fix: "use cache_type=lru, or a library of 8.0 or later (lib=, or a rocksdb-build: target)",
                        });
                    }
                },
            };
            (api.block_based_options_set_block_cache)(table, cache);
            (api.block_based_options_set_block_size)(table, o.block_size as usize);
            if o.bloom_bits > 0.0 {
                // The table options take ownership of the policy.
                // The full filter db_bench builds (--bloom_bits).
                let bloom = (api.filterpolicy_create_bloom_full)(o.bloom_bits);
                (api.block_based_options_set_filter_policy)(table, bloom);
            }
            (api.block_based_options_set_cache_index_and_filter_blocks)(
                table,
                u8::from(o.cache_index_and_filter_blocks),
            );
            (api.options_set_block_based_table_factory)(options, table);
            let mut err: *mut c_char = ptr::null_mut();
            let db = (api.open)(options, c_path.as_ptr(), &mut err);
            if let Err(e) = api.check(err) {
                (api.block_based_options_destroy)(table);
                (api.cache_destroy)(cache);
                (api.options_destroy)(options);
                return Err(e);
            }
            Ok(Db {
                api,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                db,
                options,
                table,
                cache,
            })
        }
    }

    /// Sets RocksDB's perf level (`SetPerfLevel`) on the calling thread, unless this thread
    /// set that level for this database already: a check of a thread-local an operation.
    #[inline]
    pub fn set_perf_level(&self, level: i32) {
        PERF_LEVEL.with(|set| {
            if set.get() != (self.id, level) {
                // SAFETY: a plain setter of the library's thread-local; level is 1..=5
                // (checked when the options were parsed).
                unsafe { (self.api.set_perf_level)(level) };
                set.set((self.id, level));
            }
        });
    }

    /// Writes one key.
    pub fn put(&self, w: &WriteOpts, key: &[u8], value: &[u8]) -> Result<(), RocksError> {
        let mut err = ptr::null_mut();
        // SAFETY: valid handles; slices outlive the call.
        unsafe {
            (self.api.put)(
                self.db,
                w.0,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            )
        };
        self.api.check(err)
    }

    /// Reads one key without copying its value (db_bench's `PinnableSlice`): `f` sees the
    /// value, or `None` when the key is absent.
    pub fn get_pinned<R>(
        &self,
        r: &ReadOpts,
        key: &[u8],
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R, RocksError> {
        let mut err = ptr::null_mut();
        // SAFETY: valid handles; the pinned slice is destroyed after `f` has used it.
        unsafe {
            let p = (self.api.get_pinned)(self.db, r.0, key.as_ptr().cast(), key.len(), &mut err);
            self.api.check(err)?;
            if p.is_null() {
                return Ok(f(None));
            }
            let mut len = 0usize;
            let v = (self.api.pinnableslice_value)(p, &mut len);
            let out = f(Some(if v.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(v.cast::<u8>(), len)
            }));
            (self.api.pinnableslice_destroy)(p);
            Ok(out)
        }
    }

    /// Deletes one key.
    pub fn delete(&self, w: &WriteOpts, key: &[u8]) -> Result<(), RocksError> {
        let mut err = ptr::null_mut();
        // SAFETY: valid handles; the key outlives the call.
        unsafe { (self.api.delete)(self.db, w.0, key.as_ptr().cast(), key.len(), &mut err) };
        self.api.check(err)
    }

    /// Applies a batch atomically.
    pub fn write(&self, w: &WriteOpts, batch: &Batch) -> Result<(), RocksError> {
        let mut err = ptr::null_mut();
        // SAFETY: valid handles.
        unsafe { (self.api.write)(self.db, w.0, batch.handle, &mut err) };
        self.api.check(err)
    }

    /// Reads several keys (at most [`MAX_MULTI_GET`]); each found value is handed to
    /// `each` (index, value). The C arrays live on the stack: nothing is allocated a call.
    pub fn multi_get(
        &self,
        r: &ReadOpts,
        keys: &[&[u8]],
        mut each: impl FnMut(usize, &[u8]),
    ) -> Result<usize, RocksError> {
        let n = keys.len();
        if n > MAX_MULTI_GET {
            return Err(RocksError::TooManyKeys {
                max: MAX_MULTI_GET,
                n,
            });
        }
        let mut ptrs: [*const c_char; MAX_MULTI_GET] = [ptr::null(); MAX_MULTI_GET];
        let mut lens = [0usize; MAX_MULTI_GET];
        for (i, k) in keys.iter().enumerate() {
            ptrs[i] = k.as_ptr().cast();
            lens[i] = k.len();
        }
        let mut vals: [*mut c_char; MAX_MULTI_GET] = [ptr::null_mut(); MAX_MULTI_GET];
        let mut vlens = [0usize; MAX_MULTI_GET];
        let mut errs: [*mut c_char; MAX_MULTI_GET] = [ptr::null_mut(); MAX_MULTI_GET];
        // SAFETY: arrays of at least n elements each, valid for the call; results freed below.
        unsafe {
            (self.api.multi_get)(
                self.db,
                r.0,
                n,
                ptrs.as_ptr(),
                lens.as_ptr(),
                vals.as_mut_ptr(),
                vlens.as_mut_ptr(),
                errs.as_mut_ptr(),
            );
        }
        let mut found = 0;
        let mut first_err = None;
        for i in 0..n {
            if let Err(e) = self.api.check(errs[i]) {
                first_err.get_or_insert(e);
            }
            if !vals[i].is_null() {
                found += 1;
                // SAFETY: the value has vlens[i] bytes and is freed once.
                unsafe {
                    each(
                        i,
                        std::slice::from_raw_parts(vals[i].cast::<u8>(), vlens[i]),
                    );
                    (self.api.free)(vals[i].cast());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// An iterator over the database.
    pub fn iter(&self, r: &ReadOpts) -> Iter<'_> {
        // SAFETY: valid handles; the iterator is destroyed before the DB (borrow).
        Iter {
            db: self,
            handle: unsafe { (self.api.create_iterator)(self.db, r.0) },
        }
    }

    /// A string property (`rocksdb.stats`, `rocksdb.levelstats`, …).
    pub fn property(&self, name: &str) -> Option<String> {
        let c = cstr(name).ok()?;
        // SAFETY: valid handle; the returned string is freed by take_string.
        let v = unsafe { (self.api.property_value)(self.db, c.as_ptr()) };
        self.api.take_string(v)
    }

    /// An integer property (`rocksdb.estimate-num-keys`, …).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        let c = cstr(name).ok()?;
        let mut v = 0u64;
        // SAFETY: valid handle and out pointer.
        let rc = unsafe { (self.api.property_int)(self.db, c.as_ptr(), &mut v) };
        (rc == 0).then_some(v)
    }

    /// The statistics dump (`rocksdb.block.cache.miss COUNT : …` lines).
    pub fn statistics(&self) -> Option<String> {
        // SAFETY: the options handle lives as long as the DB.
        let v = unsafe { (self.api.options_statistics_get_string)(self.options) };
        self.api.take_string(v)
    }

    /// Flushes the memtables to L0 and waits for it.
    pub fn flush(&self) -> Result<(), RocksError> {
        let mut err = ptr::null_mut();
        // SAFETY: flush options are created and destroyed here.
        unsafe {
            let f = (self.api.flushoptions_create)();
            (self.api.flushoptions_set_wait)(f, 1);
            (self.api.flush)(self.db, f, &mut err);
            (self.api.flushoptions_destroy)(f);
        }
        self.api.check(err)
    }

    /// Compacts the whole key range.
    pub fn compact_all(&self) {
        // SAFETY: null bounds mean the whole range.
        unsafe { (self.api.compact_range)(self.db, ptr::null(), 0, ptr::null(), 0) }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: each handle is destroyed once; the DB first, so nothing uses the rest.
        unsafe {
            (self.api.close)(self.db);
            (self.api.block_based_options_destroy)(self.table);
            (self.api.cache_destroy)(self.cache);
            (self.api.options_destroy)(self.options);
        }
    }
}

/// Read options of one connection.
pub(crate) struct ReadOpts(Handle, Arc<Api>);

impl ReadOpts {
    pub fn new(api: &Arc<Api>) -> Self {
        // SAFETY: created here, destroyed in Drop.
        let h = unsafe { (api.readoptions_create)() };
        // db_bench's --verify_checksum=1.
        unsafe { (api.readoptions_set_verify_checksums)(h, 1) };
        ReadOpts(h, api.clone())
    }
}

impl Drop for ReadOpts {
    fn drop(&mut self) {
        // SAFETY: destroyed once.
        unsafe { (self.1.readoptions_destroy)(self.0) }
    }
}

// SAFETY: used by one connection (thread) at a time.
unsafe impl Send for ReadOpts {}

/// Write options of one connection.
pub(crate) struct WriteOpts(Handle, Arc<Api>);

impl WriteOpts {
    pub fn new(api: &Arc<Api>, sync: bool, disable_wal: bool) -> Self {
        // SAFETY: created here, destroyed in Drop.
        unsafe {
            let h = (api.writeoptions_create)();
            (api.writeoptions_set_sync)(h, u8::from(sync));
            (api.writeoptions_disable_WAL)(h, i32::from(disable_wal));
            WriteOpts(h, api.clone())
        }
    }
}

impl Drop for WriteOpts {
    fn drop(&mut self) {
        // SAFETY: destroyed once.
        unsafe { (self.1.writeoptions_destroy)(self.0) }
    }
}

// SAFETY: used by one connection (thread) at a time.
unsafe impl Send for WriteOpts {}

/// A write batch.
pub(crate) struct Batch {
    api: Arc<Api>,
    handle: Handle,
}

impl Batch {
    pub fn new(api: &Arc<Api>) -> Self {
        // SAFETY: created here, destroyed in Drop.
        Batch {
            api: api.clone(),
            handle: unsafe { (api.writebatch_create)() },
        }
    }

    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        // SAFETY: the batch copies key and value.
        unsafe {
            (self.api.writebatch_put)(
                self.handle,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        }
    }

    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        // SAFETY: the batch copies the bounds.
        unsafe {
            (self.api.writebatch_delete_range)(
                self.handle,
                start.as_ptr().cast(),
                start.len(),
                end.as_ptr().cast(),
                end.len(),
            )
        }
    }

    pub fn len(&self) -> usize {
        // SAFETY: valid handle.
        unsafe { (self.api.writebatch_count)(self.handle) }.max(0) as usize
    }

    pub fn clear(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.api.writebatch_clear)(self.handle) }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // SAFETY: destroyed once.
        unsafe { (self.api.writebatch_destroy)(self.handle) }
    }
}

// SAFETY: used by one connection (thread) at a time.
unsafe impl Send for Batch {}

/// An iterator borrowing its database.
pub(crate) struct Iter<'a> {
    db: &'a Db,
    handle: Handle,
}

impl Iter<'_> {
    pub fn seek(&mut self, key: &[u8]) {
        // SAFETY: valid iterator; the key is copied.
        unsafe { (self.db.api.iter_seek)(self.handle, key.as_ptr().cast(), key.len()) }
    }

    pub fn seek_for_prev(&mut self, key: &[u8]) {
        // SAFETY: valid iterator; the key is copied.
        unsafe { (self.db.api.iter_seek_for_prev)(self.handle, key.as_ptr().cast(), key.len()) }
    }

    pub fn valid(&self) -> bool {
        // SAFETY: valid iterator.
        unsafe { (self.db.api.iter_valid)(self.handle) != 0 }
    }

    pub fn next(&mut self) {
        // SAFETY: only called while valid.
        unsafe { (self.db.api.iter_next)(self.handle) }
    }

    pub fn prev(&mut self) {
        // SAFETY: only called while valid.
        unsafe { (self.db.api.iter_prev)(self.handle) }
    }

    /// The current value (valid until the iterator moves).
    pub fn value(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: only called while valid; the slice lives until the next move (&self).
        unsafe {
            let p = (self.db.api.iter_value)(self.handle, &mut len);
            if p.is_null() {
                return &[];
            }
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
}

impl Drop for Iter<'_> {
    fn drop(&mut self) {
        // SAFETY: destroyed once, before its DB.
        unsafe { (self.db.api.iter_destroy)(self.handle) }
    }
}
