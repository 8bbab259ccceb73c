//! RocksDB's C API (`rocksdb/c.h`), resolved at run time from a librocksdb shared library.
//!
//! Loading instead of linking keeps dbdelta buildable where librocksdb is not installed,
//! and lets one process compare several library builds (`rocksdb:?lib=/opt/rx-8.10/…`),
//! as db_bench comparisons do with one binary per version. The functions every target needs
//! are in RocksDB 7.8's C API; newer ones ([`Newer`]) are probed, and an option needing a
//! missing one is refused naming the library's version.

use crate::error::RocksError;
use libloading::Library;
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;

/// Opaque C handles.
pub(crate) type Handle = *mut c_void;

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The library and the functions dbdelta calls (C names, hence `disable_WAL`).
        #[allow(non_snake_case)]
        pub(crate) struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            /// Functions that only some versions' C API has.
            pub newer: Newer,
            /// The library file that loaded (as given or found).
            pub path: std::ffi::OsString,
            // Kept last: dropped after the pointers above are gone.
            _lib: Library,
        }

        impl Api {
            /// Resolves every function; the first missing one is named in the error.
            fn resolve(lib: Library, path: std::ffi::OsString) -> Result<Api, RocksError> {
                $(
                    #[allow(non_snake_case)]
                    // SAFETY: the symbol has the C signature declared here (c.h of 7.8+).
                    let $name = unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                            concat!("rocksdb_", stringify!($name), "\0").as_bytes(),
                        )
                        .map_err(|source| RocksError::Symbol {
                            name: stringify!($name),
                            source,
                        })?
                    };
                )*
                let newer = Newer::resolve(&lib);
                Ok(Api { $($name,)* newer, path, _lib: lib })
            }
        }
    };
}

api! {
    options_create: fn() -> Handle;
    options_destroy: fn(Handle);
    options_set_create_if_missing: fn(Handle, u8);
    options_set_write_buffer_size: fn(Handle, usize);
    options_set_max_write_buffer_number: fn(Handle, c_int);
    options_set_compression: fn(Handle, c_int);
    options_set_bytes_per_sync: fn(Handle, u64);
    options_set_use_direct_reads: fn(Handle, u8);
    options_set_use_direct_io_for_flush_and_compaction: fn(Handle, u8);
    options_set_max_background_jobs: fn(Handle, c_int);
    options_set_target_file_size_base: fn(Handle, u64);
    options_set_max_bytes_for_level_base: fn(Handle, u64);
    options_set_level_compaction_dynamic_level_bytes: fn(Handle, u8);
    options_set_num_levels: fn(Handle, c_int);
    options_set_max_open_files: fn(Handle, c_int);
    options_set_level0_file_num_compaction_trigger: fn(Handle, c_int);
    options_set_level0_slowdown_writes_trigger: fn(Handle, c_int);
    options_set_level0_stop_writes_trigger: fn(Handle, c_int);
    options_set_block_based_table_factory: fn(Handle, Handle);
    options_set_enable_pipelined_write: fn(Handle, u8);
    options_set_table_cache_numshardbits: fn(Handle, c_int);
    options_enable_statistics: fn(Handle);
    options_statistics_get_string: fn(Handle) -> *mut c_char;
    block_based_options_create: fn() -> Handle;
    block_based_options_destroy: fn(Handle);
    block_based_options_set_block_cache: fn(Handle, Handle);
    block_based_options_set_block_size: fn(Handle, usize);
    block_based_options_set_filter_policy: fn(Handle, Handle);
    block_based_options_set_cache_index_and_filter_blocks: fn(Handle, u8);
    filterpolicy_create_bloom_full: fn(f64) -> Handle;
    cache_create_lru: fn(usize) -> Handle;
    cache_destroy: fn(Handle);
    open: fn(Handle, *const c_char, *mut *mut c_char) -> Handle;
    close: fn(Handle);
    put: fn(Handle, Handle, *const c_char, usize, *const c_char, usize, *mut *mut c_char);
    get_pinned: fn(Handle, Handle, *const c_char, usize, *mut *mut c_char) -> Handle;
    pinnableslice_value: fn(Handle, *mut usize) -> *const c_char;
    pinnableslice_destroy: fn(Handle);
    delete: fn(Handle, Handle, *const c_char, usize, *mut *mut c_char);
    write: fn(Handle, Handle, Handle, *mut *mut c_char);
    multi_get: fn(Handle, Handle, usize, *const *const c_char, *const usize, *mut *mut c_char, *mut usize, *mut *mut c_char);
    writebatch_create: fn() -> Handle;
    writebatch_destroy: fn(Handle);
    writebatch_clear: fn(Handle);
    writebatch_count: fn(Handle) -> c_int;
    writebatch_put: fn(Handle, *const c_char, usize, *const c_char, usize);
    writebatch_delete_range: fn(Handle, *const c_char, usize, *const c_char, usize);
    writeoptions_create: fn() -> Handle;
    writeoptions_destroy: fn(Handle);
    writeoptions_set_sync: fn(Handle, u8);
    writeoptions_disable_WAL: fn(Handle, c_int);
    readoptions_create: fn() -> Handle;
    readoptions_destroy: fn(Handle);
    readoptions_set_verify_checksums: fn(Handle, u8);
    create_iterator: fn(Handle, Handle) -> Handle;
    iter_destroy: fn(Handle);
    iter_seek: fn(Handle, *const c_char, usize);
    iter_seek_for_prev: fn(Handle, *const c_char, usize);
    iter_valid: fn(Handle) -> u8;
    iter_next: fn(Handle);
    iter_prev: fn(Handle);
    iter_value: fn(Handle, *mut usize) -> *const c_char;
    property_value: fn(Handle, *const c_char) -> *mut c_char;
    property_int: fn(Handle, *const c_char, *mut u64) -> c_int;
    flushoptions_create: fn() -> Handle;
    flushoptions_destroy: fn(Handle);
    flushoptions_set_wait: fn(Handle, u8);
    flush: fn(Handle, Handle, *mut *mut c_char);
    compact_range: fn(Handle, *const c_char, usize, *const c_char, usize);
    free: fn(*mut c_void);
    set_perf_level: fn(c_int);
}

/// `rocksdb_cache_create_hyper_clock(capacity, estimated_entry_charge)`.
pub(crate) type HyperClockFn = unsafe extern "C" fn(usize, usize) -> Handle;

/// Functions of newer C APIs, probed in the loaded library: an option that needs one is
/// refused, naming the library's version, when it is missing.
#[derive(Clone, Copy)]
pub(crate) struct Newer {
    /// HyperClockCache (C API from RocksDB 8.x; absent in 7.x).
    pub cache_create_hyper_clock: Option<HyperClockFn>,
}

impl Newer {
    fn resolve(lib: &Library) -> Newer {
        // SAFETY: the symbol, when present, has the signature of c.h (8.0 and later).
        let cache_create_hyper_clock = unsafe {
            lib.get::<HyperClockFn>(b"rocksdb_cache_create_hyper_clock\0")
                .ok()
                .map(|s| *s)
        };
        Newer {
            cache_create_hyper_clock,
        }
    }
}

impl Api {
    /// The loaded library's version as its real file name says (`librocksdb.so.9.9.3`
    /// after following links), else the file name itself, for messages.
    pub(crate) fn version_hint(&self) -> String {
        let p = Path::new(&self.path);
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match name.strip_prefix("librocksdb.so.") {
            Some(v) if v.split('.').count() == 3 => format!("RocksDB {v} ({})", p.display()),
            _ => format!("the librocksdb at {}", p.display()),
        }
    }
}

// SAFETY: the API is a table of function pointers into a loaded library; RocksDB's C API is
// thread-safe for a DB handle and for distinct option/iterator objects per thread.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}
// SAFETY: plain function pointers into the loaded library, which outlives them (Api).
unsafe impl Send for Newer {}
unsafe impl Sync for Newer {}

/// Where librocksdb is looked for when the target names none: the development symlink,
/// then Debian's runtime library of 7.8.
pub const DEFAULT_LIBS: &[&str] = &[
    "librocksdb.so",
    "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8",
    "/usr/lib/aarch64-linux-gnu/librocksdb.so.7.8",
];

impl Api {
    /// Loads `path`, or the first of [`DEFAULT_LIBS`] that loads.
    pub(crate) fn load(path: Option<&Path>) -> Result<Api, RocksError> {
        let candidates: Vec<std::ffi::OsString> = match path {
            Some(p) => vec![p.as_os_str().to_owned()],
            None => DEFAULT_LIBS.iter().map(|s| (*s).into()).collect(),
        };
        let mut errors = Vec::new();
        for c in &candidates {
            // SAFETY: loading runs the library's initialisers; librocksdb's are plain C++
            // static constructors.
            match unsafe { Library::new(c) } {
                Ok(lib) => return Api::resolve(lib, c.clone()),
                Err(e) => errors.push(e),
            }
        }
        Err(RocksError::Load { tried: errors })
    }

    /// Takes a C error string (freeing it): `Err(text)` when RocksDB reported one.
    pub(crate) fn check(&self, err: *mut c_char) -> Result<(), RocksError> {
        if err.is_null() {
            return Ok(());
        }
        Err(RocksError::Rocks(self.take_string(err).unwrap_or_default()))
    }

    /// Copies and frees a C string the library allocated.
    pub(crate) fn take_string(&self, s: *mut c_char) -> Option<String> {
        if s.is_null() {
            return None;
        }
        // SAFETY: the library returned a NUL-terminated malloc'ed string; we free it once.
        unsafe {
            let text = std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned();
            (self.free)(s.cast());
            Some(text)
        }
    }
}
