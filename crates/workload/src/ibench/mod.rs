//! The Insert Benchmark (Mark Callaghan's iibench.py): its step list ([`steps`]), schema
//! ([`schema`]), row generation ([`rows`]) and statements ([`statements`]).

pub mod rows;
pub mod schema;
pub mod statements;
pub mod steps;

pub use steps::{IbenchStep, QueryKind, RowsFrom};
