//! The ADBC 1.0 C interface of chDB's `_chdb.abi3.so`, resolved at run time.
//!
//! The shared object is a CPython extension: besides `AdbcDriverInit` it references
//! CPython's symbols (`_Py_NoneStruct`, `PyBool_Type`, `Py_GetVersion`, …) and the dynamic
//! loader refuses it unless they are defined. dbdelta therefore loads a `libpython3.X.so`
//! first, with `RTLD_GLOBAL`, for its symbols only: no interpreter is initialized
//! (`Py_IsInitialized()` stays 0) and the ADBC path never calls into Python.

use super::error::ChdbError;
use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_LOCAL, RTLD_NOW};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// ADBC status code; 0 is success.
pub(crate) type Status = u8;

/// `struct AdbcError` (1.0 layout, with room for 1.1's fields).
#[repr(C)]
pub(crate) struct AdbcError {
    pub(crate) message: *mut c_char,
    pub(crate) vendor_code: i32,
    pub(crate) sqlstate: [c_char; 5],
    pub(crate) release: Option<unsafe extern "C" fn(*mut AdbcError)>,
    private_data: *mut c_void,
    private_driver: *mut c_void,
}

impl AdbcError {
    pub(crate) fn new() -> Self {
        AdbcError {
            message: std::ptr::null_mut(),
            vendor_code: 0,
            sqlstate: [0; 5],
            release: None,
            private_data: std::ptr::null_mut(),
            private_driver: std::ptr::null_mut(),
        }
    }

    /// The message (if any), releasing the error's resources.
    pub(crate) fn take(&mut self) -> String {
        let msg = if self.message.is_null() {
            "no message".to_string()
        } else {
            // SAFETY: the driver sets a NUL-terminated message or leaves it null.
            unsafe { CStr::from_ptr(self.message) }
                .to_string_lossy()
                .into_owned()
        };
        if let Some(release) = self.release {
            // SAFETY: the driver's own release for this error.
            unsafe { release(self) };
        }
        *self = AdbcError::new();
        msg
    }
}

/// `struct AdbcDatabase` / `AdbcConnection` / `AdbcStatement`: two driver pointers.
#[repr(C)]
pub(crate) struct Handle {
    pub(crate) private_data: *mut c_void,
    pub(crate) private_driver: *mut c_void,
}

impl Handle {
    pub(crate) fn new() -> Self {
        Handle {
            private_data: std::ptr::null_mut(),
            private_driver: std::ptr::null_mut(),
        }
    }
}

/// `struct ArrowSchema` (Arrow C data interface).
#[repr(C)]
pub(crate) struct ArrowSchema {
    pub(crate) format: *const c_char,
    pub(crate) name: *const c_char,
    pub(crate) metadata: *const c_char,
    pub(crate) flags: i64,
    pub(crate) n_children: i64,
    pub(crate) children: *mut *mut ArrowSchema,
    pub(crate) dictionary: *mut ArrowSchema,
    pub(crate) release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub(crate) private_data: *mut c_void,
}

/// `struct ArrowArray` (Arrow C data interface).
#[repr(C)]
pub(crate) struct ArrowArray {
    pub(crate) length: i64,
    pub(crate) null_count: i64,
    pub(crate) offset: i64,
    pub(crate) n_buffers: i64,
    pub(crate) n_children: i64,
    pub(crate) buffers: *mut *const c_void,
    pub(crate) children: *mut *mut ArrowArray,
    pub(crate) dictionary: *mut ArrowArray,
    pub(crate) release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub(crate) private_data: *mut c_void,
}

/// `struct ArrowArrayStream` (Arrow C stream interface).
#[repr(C)]
pub(crate) struct ArrowArrayStream {
    pub(crate) get_schema:
        Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    pub(crate) get_next:
        Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    pub(crate) get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    pub(crate) release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    pub(crate) private_data: *mut c_void,
}

macro_rules! zeroed {
    ($($t:ty),*) => {$(
        impl $t {
            /// All fields null (released state).
            pub(crate) fn empty() -> Self {
                // SAFETY: a repr(C) struct of raw pointers, integers and Option<fn>, for
                // which all-zero bytes are valid (null / 0 / None).
                unsafe { std::mem::zeroed() }
            }
        }
    )*};
}
zeroed!(ArrowSchema, ArrowArray, ArrowArrayStream);

type E = *mut AdbcError;
type H = *mut Handle;

/// `struct AdbcDriver`, ADBC 1.0.0 layout (function pointers the driver fills in), plus
/// room for the 1.1.0 additions a driver might write.
#[repr(C)]
pub(crate) struct AdbcDriver {
    private_data: *mut c_void,
    private_manager: *mut c_void,
    pub(crate) release: Option<unsafe extern "C" fn(*mut AdbcDriver, E) -> Status>,
    pub(crate) database_init: Option<unsafe extern "C" fn(H, E) -> Status>,
    pub(crate) database_new: Option<unsafe extern "C" fn(H, E) -> Status>,
    pub(crate) database_set_option:
        Option<unsafe extern "C" fn(H, *const c_char, *const c_char, E) -> Status>,
    pub(crate) database_release: Option<unsafe extern "C" fn(H, E) -> Status>,
    connection_commit: *const c_void,
    connection_get_info: *const c_void,
    connection_get_objects: *const c_void,
    connection_get_table_schema: *const c_void,
    connection_get_table_types: *const c_void,
    pub(crate) connection_init: Option<unsafe extern "C" fn(H, H, E) -> Status>,
    pub(crate) connection_new: Option<unsafe extern "C" fn(H, E) -> Status>,
    connection_set_option: *const c_void,
    connection_read_partition: *const c_void,
    pub(crate) connection_release: Option<unsafe extern "C" fn(H, E) -> Status>,
    connection_rollback: *const c_void,
    statement_bind: *const c_void,
    statement_bind_stream: *const c_void,
    pub(crate) statement_execute_query:
        Option<unsafe extern "C" fn(H, *mut ArrowArrayStream, *mut i64, E) -> Status>,
    statement_execute_partitions: *const c_void,
    statement_get_parameter_schema: *const c_void,
    pub(crate) statement_new: Option<unsafe extern "C" fn(H, H, E) -> Status>,
    statement_prepare: *const c_void,
    pub(crate) statement_release: Option<unsafe extern "C" fn(H, E) -> Status>,
    statement_set_option: *const c_void,
    pub(crate) statement_set_sql_query: Option<unsafe extern "C" fn(H, *const c_char, E) -> Status>,
    statement_set_substrait_plan: *const c_void,
    _room_for_1_1: [*const c_void; 32],
}

/// ADBC_VERSION_1_0_0.
const ADBC_VERSION_1_0_0: c_int = 1_000_000;

/// A loaded chDB: the driver's function table. Libraries are never unloaded (chDB's
/// static destructors and threads outlive any handle), so this lives for the process.
pub(crate) struct Driver {
    pub(crate) table: AdbcDriver,
    /// The `_chdb.abi3.so` it came from.
    pub(crate) path: PathBuf,
    /// The libpython that provided CPython's symbols.
    pub(crate) libpython: PathBuf,
}

// SAFETY: the function table is immutable after init; ADBC drivers may be called from any
// thread (each connection is used by one thread at a time).
unsafe impl Send for Driver {}
// SAFETY: as above; the table is only read.
unsafe impl Sync for Driver {}

static LOADED: Mutex<Option<HashMap<PathBuf, &'static Driver>>> = Mutex::new(None);

/// Loads `libpython` (symbols only) and then chDB at `path`, and initializes its ADBC
/// driver; each path is loaded once per process.
pub(crate) fn load(path: &Path, libpython: &Path) -> Result<&'static Driver, ChdbError> {
    let mut loaded = LOADED
        .lock()
        .map_err(|_| ChdbError::Poisoned("chDB loader"))?;
    let map = loaded.get_or_insert_with(HashMap::new);
    if let Some(d) = map.get(path) {
        return Ok(d);
    }
    // SAFETY: loading a shared library runs its initializers; libpython's only set up
    // static data (the interpreter starts in Py_Initialize, which nobody calls).
    let py =
        unsafe { Library::open(Some(libpython), RTLD_NOW | RTLD_GLOBAL) }.map_err(|source| {
            ChdbError::Load {
                path: libpython.to_path_buf(),
                source,
            }
        })?;
    // SAFETY: as above for chDB, whose CPython references libpython now satisfies.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|source| {
        ChdbError::Load {
            path: path.to_path_buf(),
            source,
        }
    })?;
    // SAFETY: AdbcDriverInit has the ADBC signature (int, void*, AdbcError*) -> status.
    let init = unsafe {
        lib.get::<unsafe extern "C" fn(c_int, *mut c_void, E) -> Status>(b"AdbcDriverInit\0")
    }
    .map_err(|source| ChdbError::NoEntryPoint {
        path: path.to_path_buf(),
        source,
    })?;
    // SAFETY: an all-zero driver table is the state ADBC expects before init.
    let mut table: AdbcDriver = unsafe { std::mem::zeroed() };
    let mut err = AdbcError::new();
    // SAFETY: table and err are valid for writes; version 1.0.0 fills the 1.0 layout.
    let st = unsafe {
        init(
            ADBC_VERSION_1_0_0,
            (&mut table as *mut AdbcDriver).cast(),
            &mut err,
        )
    };
    if st != 0 {
        return Err(ChdbError::Init {
            status: st,
            message: err.take(),
        });
    }
    let missing = [
        table.database_new.is_none(),
        table.database_set_option.is_none(),
        table.database_init.is_none(),
        table.connection_new.is_none(),
        table.connection_init.is_none(),
        table.statement_new.is_none(),
        table.statement_set_sql_query.is_none(),
        table.statement_execute_query.is_none(),
    ];
    if missing.iter().any(|m| *m) {
        return Err(ChdbError::Incomplete);
    }
    // Never unloaded: see `Driver`.
    std::mem::forget(py);
    std::mem::forget(lib);
    let d: &'static Driver = Box::leak(Box::new(Driver {
        table,
        path: path.to_path_buf(),
        libpython: libpython.to_path_buf(),
    }));
    map.insert(path.to_path_buf(), d);
    Ok(d)
}

/// True when a CPython interpreter runs in this process (it must not: dbdelta only
/// borrows libpython's symbols). `None` when libpython is not loaded.
pub(crate) fn python_initialized() -> Option<bool> {
    // SAFETY: dlsym on the global namespace; Py_IsInitialized takes no arguments and may
    // be called before Py_Initialize.
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"Py_IsInitialized".as_ptr());
        if f.is_null() {
            return None;
        }
        let f: unsafe extern "C" fn() -> c_int = std::mem::transmute(f);
        Some(f() != 0)
    }
}
