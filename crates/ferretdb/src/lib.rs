//! A managed FerretDB (`NAME=ferretdb:?backend=sqlite`): the MongoDB wire protocol served by
//! FerretDB in front of SQLite or PostgreSQL, for YCSB on documents.
//!
//! - [`binary`]: FerretDB built from the Go module proxy into dbdelta's build cache, keyed by
//!   version and Go toolchain.
//! - [`spec`]: the target's parameters (version, backend, authentication, port).
//! - [`managed`]: the running server (and a managed PostgreSQL backend) under the kit's
//!   lifecycle rules.
//! - [`engine`]: the engine the lab runs: the MongoDB engine's client plus the managed
//!   server's processes, log and name ("FerretDB v1.24.2 on SQLite 3.46.0").
#![deny(missing_docs)]

pub mod binary;
pub mod engine;
pub mod kind;
pub mod managed;
pub mod spec;

pub use binary::{ensure, FerretBuild, DEFAULT_VERSION};
pub use engine::FerretEngine;
pub use spec::FerretSpec;
