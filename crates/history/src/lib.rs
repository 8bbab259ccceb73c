//! The results history: every measured step of every run as a [`Point`], kept in a [`Store`]
//! (an embedded SQLite file by default, or a shared PostgreSQL database), and read back as
//! per-run series for `dbdelta history` and change-point detection (`dbdelta detect`).
//!
//! A point is keyed by its run, target, step label, thread count and repeat, and carries the
//! target's lineage (engine, version, build, settings hash), the suite and the host. A
//! *series* is one (host, suite, target name, step label, threads): the target name is what
//! stays the same while versions, builds and settings change underneath it.
//!
//! The store's schema is versioned ([`SCHEMA_VERSION`]); opening a store written by an older
//! dbdelta migrates it in place. `history prune` removes runs chosen by [`PruneRule`] and
//! [`export`] writes the series as CSV or JSON.
#![deny(missing_docs)]

pub mod export;
mod open;
mod pg;
mod point;
mod prune;
mod schema;
mod series;
mod sqlite;
mod store;

pub use open::{default_store_path, open_store};
pub use pg::PgConnector;
pub use point::{points_of_run, Metric, Point};
pub use prune::{epoch_seconds, parse_age, select, PruneRule, RunEntry};
pub use schema::CURRENT as SCHEMA_VERSION;
pub use series::{series, Filter, Series, SeriesKey, SeriesPoint};
pub use store::{HistoryError, Store};
