//! RocksDB from source: a release found in crates.io's `librocksdb-sys` crates (or a crate
//! named exactly, or a tree), built with a recipe into `librocksdb.so` and the same
//! version's `db_bench`, cached like the PostgreSQL builds.
//!
//! - [`crates_io`]: the sparse index, the `.crate` download checked by its sha256, unpacking.
//! - [`spec`]: the source as written (`9.9`, `crate:NAME@VERSION`, a path) and its resolution.
//! - [`driver`]: make in a copy of the tree, install into the cache, version check.
//! - [`version`]: the version each artifact reports, and their agreement.

pub mod crates_io;
pub mod driver;
pub mod spec;
pub mod version;

pub use driver::{build, lookup, RocksBuildRequest, RocksBuilt};
pub use spec::RocksSourceSpec;
