//! The families of operations engines serve and suites need.

/// A family of operations. A suite declares the families it needs; an engine declares the
/// families it serves, and a target whose engine lacks one is reported as not supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// SQL statements: prepare / execute and plain text.
    Sql,
    /// Key-value operations on a YCSB-style `usertable` (read, update, insert, delete, scan,
    /// read-modify-write).
    KeyValue,
    /// Raw key-value operations of an ordered store (db_bench's puts, gets, seeks and
    /// multi-gets on binary keys); only engines that serve them natively run them.
    RawKeyValue,
}

impl Family {
    /// The name used in reports and suite files.
    pub fn name(self) -> &'static str {
        match self {
            Family::Sql => "sql",
            Family::KeyValue => "key-value",
            Family::RawKeyValue => "raw key-value",
        }
    }
}
