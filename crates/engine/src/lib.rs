//! The seam between dbdelta's runner and the databases it drives.
//!
//! An [`Engine`] is one provisioned target (an open SQLite file, a started managed server, a
//! reachable external server). It hands out [`Connection`]s, one per worker thread. Workloads
//! prepare statements once per connection and then execute them with parameters that they
//! generate into reused buffers, so the per-statement path allocates nothing.
//!
//! This crate holds the traits, operations, rows, errors and the sans-IO session interface
//! only; every engine (SQLite, the mock, the servers) lives in its own crate and implements
//! them, and what engines share beyond the traits is in `dbdelta-kit`.
#![deny(missing_docs)]

pub mod error;
mod family;
pub mod ops;
pub mod rows;
pub mod server_thread;
pub mod session;
pub mod stats_conn;
pub mod text;
pub mod usertable;

pub use dbdelta_model::{Dialect, DB_COUNTER_PREFIX};
pub use error::{EngineError, ErrorKind};
pub use ops::{Family, KvKind, KvOp, Op, OpBatch, Scratch};
pub use rows::Rows;
pub use server_thread::ServerThread;
pub use session::{Canceller, Decoded, Session, SessionParts, Socket};
pub use stats_conn::StatsConnection;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How dbdelta opens every target; filled from the run's flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions {
    /// Server-side prepared statements (sysbench's default); false = plain text with literals
    /// (sysbench's `--db-ps-mode=disable`).
    pub prepared: bool,
    /// Use TLS to the server (server engines only).
    pub tls: bool,
    /// MySQL protocol compression.
    pub compress: bool,
    /// Allow dropping tables dbdelta did not create (external targets).
    pub i_own_this_database: bool,
    /// Database (schema) dbdelta creates on managed servers and uses by default.
    pub database: String,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            prepared: true,
            tls: false,
            compress: false,
            i_own_this_database: false,
            database: "dbdelta".to_string(),
        }
    }
}

/// A statement parameter. Text borrows from the workload's reused buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// A 64-bit integer.
    Int(i64),
    /// A text value.
    Text(&'a str),
    /// SQL NULL (loads of columns the data leaves empty: TPC-C's undelivered orders).
    Null,
}

/// Handle of a statement prepared on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StmtId(pub u32);

/// The statement texts of one connection, by handle: for engines (and wrappers) that keep
/// the SQL themselves rather than a server-side handle.
#[derive(Debug, Clone, Default)]
pub struct StatementTexts(Vec<String>);

impl StatementTexts {
    /// Stores `sql` and returns its handle.
    pub fn add(&mut self, sql: &str) -> StmtId {
        self.0.push(sql.to_string());
        StmtId(self.0.len() as u32 - 1)
    }

    /// The text behind a handle.
    pub fn get(&self, id: StmtId) -> Result<&str, EngineError> {
        self.0
            .get(id.0 as usize)
            .map(String::as_str)
            .ok_or_else(|| EngineError::statement(format!("unknown statement handle {}", id.0)))
    }
}

/// What one executed statement did; used for sysbench's read/write/other counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Rows in the result set (0 when none).
    pub rows: u64,
    /// Rows changed (0 for SELECT).
    pub affected: u64,
    /// True when the statement produced a result set (even an empty one).
    pub has_result: bool,
}

/// A bulk-load row source: the load writes `count` rows, asking for each in turn.
pub trait RowSource {
    /// Column names, in the order [`RowSource::next_row`] fills values.
    fn columns(&self) -> &[&'static str];
    /// Fills the next row into `out` (cleared by the caller); false when exhausted.
    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool;
}

/// An owned parameter value, for bulk loads.
#[derive(Debug, Clone, PartialEq)]
pub enum OwnedValue {
    /// A 64-bit integer.
    Int(i64),
    /// A text value.
    Text(String),
    /// SQL NULL.
    Null,
}

impl OwnedValue {
    /// Borrows as a [`Value`].
    pub fn as_value(&self) -> Value<'_> {
        match self {
            OwnedValue::Int(i) => Value::Int(*i),
            OwnedValue::Text(s) => Value::Text(s),
            OwnedValue::Null => Value::Null,
        }
    }
}

/// One client connection, used by exactly one worker thread.
pub trait Connection: Send {
    /// The dialect this connection speaks.
    fn dialect(&self) -> Dialect;

    /// Prepares a statement with `?` placeholders (engines rewrite them to their own syntax).
    /// With prepared statements disabled the engine keeps the text and interpolates.
    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError>;

    /// Executes a prepared statement, consuming any result set.
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError>;

    /// Executes plain text (not prepared), consuming any result set.
    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError>;

    /// The storage engine the workloads' `CREATE TABLE` names where the dialect has one
    /// (MySQL's `ENGINE=`): the target's choice (`engine=rocksdb` on a mysql target), or
    /// `None` for the workload's own (InnoDB, as sysbench and the Insert Benchmark write).
    fn table_engine(&self) -> Option<&str> {
        None
    }

    /// Executes several statements separated by `;` (DDL, settle). No result sets.
    fn batch(&mut self, sql: &str) -> Result<(), EngineError> {
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            self.query(stmt)?;
        }
        Ok(())
    }

    /// Returns the first column of the first row of a query as text (`None` for no row/NULL).
    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError>;

    /// Loads rows into `table` by the fastest correct path of the engine. The default sends
    /// multi-row INSERTs of at most 512 KiB each (sysbench's `BULK_PACKET_SIZE`).
    fn bulk_insert(&mut self, table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        text::bulk_insert_multirow(self, table, rows, 512 * 1024)
    }

    /// Cumulative count of lock waits that were retried inside the engine (SQLITE_BUSY).
    fn busy_retries(&self) -> u64 {
        0
    }

    /// Rolls back an open transaction after an error; errors here are ignored by callers.
    fn rollback(&mut self) -> Result<(), EngineError> {
        self.query("ROLLBACK").map(|_| ())
    }

    /// The operation families this connection executes itself ([`Connection::run`]).
    /// Key-value workloads on a connection without [`Family::KeyValue`] translate their
    /// operations to SQL ([`usertable::KvRoute`]).
    fn families(&self) -> &'static [Family] {
        &[Family::Sql]
    }

    /// Executes a key-value operation natively; the default says the engine does not serve
    /// the family (SQL engines get key-value operations translated instead).
    fn kv(&mut self, op: &KvOp<'_>) -> Result<Outcome, EngineError> {
        Err(EngineError::unsupported(Family::KeyValue, op.kind.name()))
    }

    /// Removes every record of a native key-value store before a load (SQL engines drop
    /// and recreate their table instead).
    fn kv_clear(&mut self) -> Result<(), EngineError> {
        Err(EngineError::unsupported(Family::KeyValue, "clear"))
    }

    /// Executes a SQL operation and keeps its rows' values in `rows` (cleared first), for
    /// workloads that read results. The default refuses: the engine only counts rows.
    fn run_rows(&mut self, op: &Op<'_>, rows: &mut Rows) -> Result<Outcome, EngineError> {
        let _ = (op, rows);
        Err(EngineError::new(
            ErrorKind::Unsupported,
            format!("{:?} connections do not return row values", self.dialect()),
        ))
    }

    /// The on-disk size of `table` from the engine's catalog, for query-set reports;
    /// `Ok(None)` when the engine cannot tell.
    fn table_size(&mut self, table: &str) -> Result<Option<TableSize>, EngineError> {
        let _ = table;
        Ok(None)
    }

    /// Executes one operation of any family.
    #[inline]
    fn run(&mut self, op: &Op<'_>) -> Result<Outcome, EngineError> {
        match op {
            Op::Execute { stmt, params } => self.execute(*stmt, params),
            Op::Query(sql) => self.query(sql),
            Op::Kv(kv) => self.kv(kv),
        }
    }

    /// The thread that serves this connection in a server process on this host, whose
    /// run-queue wait a driver reads beside its own (a server target's work runs there);
    /// `None` when the engine cannot name one (embedded engines, a remote server, a proxy
    /// in between, a thread pool). Asked once, right after the connection is prepared.
    fn server_thread(&mut self) -> Option<ServerThread> {
        None
    }

    /// Splits a server connection into its socket and sans-IO protocol state, for drivers
    /// that multiplex many connections per thread. Embedded engines (and connections that
    /// cannot be split, such as TLS ones) give themselves back.
    fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>>;
}

/// The size of one table as its engine's catalog reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableSize {
    /// Bytes of the table's data (heap, clustered index, column files), compressed as stored.
    pub data_bytes: u64,
    /// Bytes of its secondary indexes (full-text indexes included); `None` when the engine
    /// does not split them out.
    pub index_bytes: Option<u64>,
    /// Bytes of the data before compression, where the engine keeps them (ClickHouse).
    pub uncompressed_bytes: Option<u64>,
}

/// How one connection is opened; the defaults are the engine's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// Bind the client side of a TCP connection to this loopback address (port chosen at
    /// connect time, `IP_BIND_ADDRESS_NO_PORT`), to spread many connections over
    /// 127.0.0.0/8 so ephemeral ports never run out.
    pub source: Option<std::net::Ipv4Addr>,
    /// Limit on TCP connect plus startup and authentication; `None` = the engine's default.
    pub timeout: Option<std::time::Duration>,
    /// After the handshake, every blocking read and write of the connection is bounded by
    /// this (statement preparation, and the blocking path of TLS connections), so a server
    /// that stops answering fails the step instead of hanging it; `None` = unbounded, for
    /// long admin work such as loads and VACUUM.
    pub io_timeout: Option<std::time::Duration>,
}

/// Facts about a provisioned target, saved in the run manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineInfo {
    /// Version string (`SELECT version()`, `sqlite_version()`).
    pub version: String,
    /// Effective non-default settings.
    pub settings: BTreeMap<String, String>,
}

/// Engine-internal counters sampled at the start and the end of a step's window
/// (RocksDB's statistics tickers and properties; a server's own statistics, read over SQL,
/// under names that start with [`DB_COUNTER_PREFIX`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineCounters {
    /// Counters that only grow (bytes written, stall µs, process CPU s): the step gets
    /// their difference.
    pub cumulative: BTreeMap<String, f64>,
    /// Levels (LSM size, resident memory): the step gets their value at its end.
    pub current: BTreeMap<String, f64>,
}

impl EngineCounters {
    /// The step's view: `end`'s cumulative counters minus `start`'s, and `end`'s levels.
    pub fn step(start: &EngineCounters, end: &EngineCounters) -> BTreeMap<String, f64> {
        let mut m: BTreeMap<String, f64> = end
            .cumulative
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v - start.cumulative.get(k).copied().unwrap_or(0.0),
                )
            })
            .collect();
        m.extend(end.current.iter().map(|(k, v)| (k.clone(), *v)));
        m
    }
}

/// What a settle action did, for the result file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettleReport {
    /// The statements or actions performed, in order; a server engine's last one says how
    /// long it waited and why.
    pub actions: Vec<String>,
}

/// How long a settle point lasts at least, and why: the published benchmark scripts'
/// `sleep_secs` after their vacuum, analyze and flush. Server engines wait out what
/// remains of it after their maintenance (MySQL with InnoDB's dirty-page flushing raised);
/// embedded engines have no server working in the background and do not wait.
#[derive(Clone, Copy)]
pub struct SettleWait<'a> {
    /// The settle point lasts at least this long from its start.
    pub at_least: Duration,
    /// Where the length comes from, for the report (the spec's bound, a flag, a preset).
    pub why: &'a str,
    /// True once the run is being stopped: the wait ends early.
    pub stopping: &'a (dyn Fn() -> bool + Sync),
}

impl std::fmt::Debug for SettleWait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettleWait")
            .field("at_least", &self.at_least)
            .field("why", &self.why)
            .finish_non_exhaustive()
    }
}

fn never() -> bool {
    false
}

impl SettleWait<'static> {
    /// No wait at all (tests, engines' own checks).
    pub fn none() -> Self {
        SettleWait {
            at_least: Duration::ZERO,
            why: "no wait asked for",
            stopping: &never,
        }
    }
}

impl SettleWait<'_> {
    /// The report line of an embedded engine, which does not wait (`None` when no wait was
    /// asked for).
    pub fn skipped(&self) -> Option<String> {
        (!self.at_least.is_zero()).then(|| {
            format!(
                "no wait for the {:.1} s asked ({}): an embedded engine has no server working in the background",
                self.at_least.as_secs_f64(),
                self.why
            )
        })
    }

    /// Sleeps until `started` + [`SettleWait::at_least`] or a stop, whichever comes first,
    /// and says for the report how long it waited and why.
    pub fn wait_out(&self, started: Instant) -> String {
        if self.at_least.is_zero() {
            return format!("no wait ({})", self.why);
        }
        let until = started + self.at_least;
        let from = Instant::now();
        let mut now = from;
        // Short sleeps: a stop request ends the wait within a poll.
        while now < until && !(self.stopping)() {
            std::thread::sleep((until - now).min(Duration::from_millis(100)));
            now = Instant::now();
        }
        let waited = now - from;
        let stopped = if now < until {
            ", cut short by a stop"
        } else {
            ""
        };
        format!(
            "waited {:.1} s so the settle lasted {:.1} s ({}){stopped}",
            waited.as_secs_f64(),
            self.at_least.as_secs_f64(),
            self.why
        )
    }
}

/// One provisioned target: hands out connections and knows how to maintain itself.
pub trait Engine: Send + Sync {
    /// The dialect of this engine's connections.
    fn dialect(&self) -> Dialect;

    /// Opens a new connection (one per worker).
    fn connect(&self) -> Result<Box<dyn Connection>, EngineError>;

    /// Opens a new connection with per-connection options; engines without sockets ignore
    /// them.
    fn connect_with(&self, opts: &ConnectOptions) -> Result<Box<dyn Connection>, EngineError> {
        let _ = opts;
        self.connect()
    }

    /// How many client connections the target accepts at once (the server's
    /// `max_connections`, a proxy's `max_client_conn`, less what superusers keep), so a step
    /// that needs more is refused before it starts; `None` when unknown or unlimited.
    fn connection_limit(&self) -> Option<u64> {
        None
    }

    /// The operation families this engine serves.
    fn families(&self) -> &'static [Family] {
        &[Family::Sql]
    }

    /// Version and effective settings.
    fn info(&self) -> Result<EngineInfo, EngineError>;

    /// The post-write maintenance the published benchmark scripts run on the given tables
    /// (analyze, vacuum, checkpoint, flush), then, for server engines, the rest of `wait`. Runs on its own
    /// connection.
    fn settle(&self, tables: &[String], wait: &SettleWait<'_>)
        -> Result<SettleReport, EngineError>;

    /// Process ids of the server (for OS sampling and profiles); empty for embedded engines.
    fn server_pids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Process ids of a proxy dbdelta runs in front of the server (a managed pgbouncer);
    /// counted with the server in the memory each connection costs.
    fn proxy_pids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Where the data lives (to find the block device); `None` when unknown.
    fn data_dir(&self) -> Option<PathBuf> {
        None
    }

    /// The managed server's log file, copied into the run directory; `None` otherwise.
    fn server_log(&self) -> Option<PathBuf> {
        None
    }

    /// Stops a managed server and releases resources. Called once at the end of a target;
    /// managed engines also stop in `Drop` so that errors and panics never orphan a server.
    fn shutdown(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    /// Persists buffered writes before a step, as db_bench's reopen of the database
    /// between its jobs does (RocksDB: flushes the memtables, not waiting for compaction).
    /// Engines without such buffers do nothing.
    fn flush_writes(&self) -> Result<(), EngineError> {
        Ok(())
    }

    /// Runs before every measured write step (updates, deletes, inserts, read-write):
    /// housekeeping a target asked for, such as MySQL's binary-log reset
    /// (`binlog_reset=true`). Says what it did for the step's result; the default does
    /// nothing.
    fn before_write_step(&self) -> Result<Option<String>, EngineError> {
        Ok(None)
    }

    /// Engine-internal counters, sampled around each step's window; `Ok(None)` when the
    /// engine has none. An error (the server refused the statistics query) costs the step
    /// its counters, never the step itself.
    fn counters(&self) -> Result<Option<EngineCounters>, EngineError> {
        Ok(None)
    }

    /// Name prefixes of the engine's own background threads inside the dbdelta process
    /// (embedded engines: RocksDB's `rocksdb:low`, …), counted as server CPU with the
    /// worker threads.
    fn background_thread_prefixes(&self) -> &'static [&'static str] {
        &[]
    }

    /// True when the engine runs inside the dbdelta process (client and server share CPU).
    fn embedded(&self) -> bool {
        false
    }

    /// True when a write costs the engine work after the statement returned (a server's
    /// writers and checkpoints, RocksDB's flushes and compactions). Targets that take turns
    /// in one window would pay part of each other's such work, so their write steps keep a
    /// window each; an engine that does all its work in the statement returns false.
    fn background_work(&self) -> bool {
        true
    }

    /// True when the engine's rate in turns of a few milliseconds is close to its rate in a
    /// window of its own, so that its read steps may share one window in turns. An engine
    /// whose turns measured far slower and noisier than its own windows returns false and
    /// keeps a window per target in every round. A fact of the engine's kind: an engine that
    /// is not fit answers with [`EngineKind::fit_for_turns`], where the dry run reads it.
    fn fit_for_turns(&self) -> bool {
        true
    }
}

// Engine kinds and their typed configurations (kept apart from the module list above).
pub mod kind;
pub use kind::{check_server, server_data_parent, EngineConfig, EngineKind, SpecError};
