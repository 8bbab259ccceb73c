//! Operations: what workloads produce and engines execute.
//!
//! A workload fills an [`OpBatch`] with the operations of one event (a statement, a
//! transaction, a YCSB operation); a driver executes them in order, either on a blocking
//! [`Connection`](crate::Connection) ([`run_batch`]) or through a sans-IO
//! [`Session`](crate::session::Session) on an event loop. Parameters live in the batch's own
//! reused buffers, so producing an event allocates nothing once the buffers have grown.

pub use crate::family::Family;
use crate::{Connection, EngineError, Outcome, StmtId, Value};
use std::ops::Range;

/// The kind of a key-value operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KvKind {
    /// Read one record (all fields, or the named ones).
    Read,
    /// Overwrite the given fields of one record.
    Update,
    /// Insert one new record with every field.
    Insert,
    /// Delete one record.
    Delete,
    /// Read `count` records in key order from `key` on.
    Scan,
    /// Read one record, then update the given fields (one operation in YCSB's counting).
    ReadModifyWrite,
    /// Write `values[0]` under `key` as it is (db_bench's put).
    Put,
    /// [`KvKind::Put`] with the write-ahead log disabled (db_bench's fillseq).
    PutNoWal,
    /// Read the value of `key` as it is (db_bench's get).
    Get,
    /// Seek to `key`, then step forward `count` times, reading each value (seekrandom).
    SeekNext,
    /// Seek to the last key ≤ `key`, then step backward `count` times (reverse seekrandom).
    SeekPrev,
    /// Read every key in `values` in one call (db_bench's multireadrandom).
    MultiGet,
}

impl KvKind {
    /// YCSB's name of the operation (the report's per-type rows).
    pub fn name(self) -> &'static str {
        match self {
            KvKind::Read => "READ",
            KvKind::Update => "UPDATE",
            KvKind::Insert => "INSERT",
            KvKind::Delete => "DELETE",
            KvKind::Scan => "SCAN",
            KvKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            KvKind::Put => "PUT",
            KvKind::PutNoWal => "PUT-NO-WAL",
            KvKind::Get => "GET",
            KvKind::SeekNext => "SEEK-NEXT",
            KvKind::SeekPrev => "SEEK-PREV",
            KvKind::MultiGet => "MULTIGET",
        }
    }
}

impl KvKind {
    /// The family the kind belongs to: YCSB's record operations, or db_bench's raw ones.
    pub fn family(self) -> Family {
        match self {
            KvKind::Read
            | KvKind::Update
            | KvKind::Insert
            | KvKind::Delete
            | KvKind::Scan
            | KvKind::ReadModifyWrite => Family::KeyValue,
            KvKind::Put
            | KvKind::PutNoWal
            | KvKind::Get
            | KvKind::SeekNext
            | KvKind::SeekPrev
            | KvKind::MultiGet => Family::RawKeyValue,
        }
    }
}

/// One key-value operation, borrowing its key and values from an [`OpBatch`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvOp<'a> {
    /// What to do.
    pub kind: KvKind,
    /// The record key (YCSB's `user…`, db_bench's 8 big-endian bytes and padding), or the
    /// start key of a scan.
    pub key: &'a [u8],
    /// Field numbers to read, update or insert (0-based: `field0`…); empty = all fields on a
    /// read or scan.
    pub fields: &'a [u16],
    /// Values of `fields`, in the same order (update, insert, read-modify-write).
    pub values: &'a [&'a [u8]],
    /// Records to scan (scan only).
    pub count: u32,
}

/// One operation, borrowing its parameters from an [`OpBatch`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op<'a> {
    /// Execute a statement prepared on this connection.
    Execute {
        /// The prepared statement.
        stmt: StmtId,
        /// Its parameters.
        params: &'a [Value<'a>],
    },
    /// Execute plain SQL text (not prepared).
    Query(&'a str),
    /// A key-value operation.
    Kv(KvOp<'a>),
}

impl Op<'_> {
    /// The family the operation belongs to.
    pub fn family(&self) -> Family {
        match self {
            Op::Execute { .. } | Op::Query(_) => Family::Sql,
            Op::Kv(kv) => kv.kind.family(),
        }
    }
}

/// A parameter stored in a batch: text lives in the batch's text buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    Int(i64),
    Text(u32, u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rec {
    Execute {
        stmt: StmtId,
        params: Range<u32>,
    },
    Query {
        text: Range<u32>,
    },
    Kv {
        kind: KvKind,
        key: Range<u32>,
        fields: Range<u32>,
        /// Ranges of the values (in `values`), one per field.
        values: Range<u32>,
        count: u32,
    },
}

/// The operations of one event, in order, with their parameters in reused buffers.
#[derive(Debug, Default, Clone)]
pub struct OpBatch {
    recs: Vec<Rec>,
    params: Vec<Param>,
    text: String,
    bytes: Vec<u8>,
    fields: Vec<u16>,
    values: Vec<Range<u32>>,
    /// Indexes (ascending) of the operations whose result the workload reads before the
    /// event goes on ([`OpBatch::inspect_last`]).
    inspected: Vec<u32>,
}

/// Appends the parameters of one `Execute` to a batch; dropped when the statement is done.
#[derive(Debug)]
pub struct ParamWriter<'b> {
    batch: &'b mut OpBatch,
}

impl ParamWriter<'_> {
    /// Appends an integer parameter.
    #[inline]
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.batch.params.push(Param::Int(v));
        self.bump();
        self
    }

    /// Appends a text parameter.
    #[inline]
    pub fn text(&mut self, v: &str) -> &mut Self {
        let start = self.batch.text.len() as u32;
        self.batch.text.push_str(v);
        self.batch.params.push(Param::Text(start, v.len() as u32));
        self.bump();
        self
    }

    /// Appends a text parameter written by `fill` straight into the batch's buffer.
    #[inline]
    pub fn text_with(&mut self, fill: impl FnOnce(&mut String)) -> &mut Self {
        let start = self.batch.text.len();
        fill(&mut self.batch.text);
        let len = self.batch.text.len() - start;
        self.batch
            .params
            .push(Param::Text(start as u32, len as u32));
        self.bump();
        self
    }

    #[inline]
    fn bump(&mut self) {
        let n = self.batch.params.len() as u32;
        if let Some(Rec::Execute { params, .. }) = self.batch.recs.last_mut() {
            params.end = n;
        }
    }
}

impl OpBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch, keeping its buffers.
    #[inline]
    pub fn clear(&mut self) {
        self.recs.clear();
        self.params.clear();
        self.text.clear();
        self.bytes.clear();
        self.fields.clear();
        self.values.clear();
        self.inspected.clear();
    }

    /// Marks the last operation added: when it completes, the driver hands its outcome and
    /// rows to the workload (`Workload::inspect`), which may add the operations that
    /// depend on them. Only SQL operations can be inspected.
    pub fn inspect_last(&mut self) {
        if let Some(i) = self.recs.len().checked_sub(1) {
            self.inspected.push(i as u32);
        }
    }

    /// True when operation `i` was marked with [`OpBatch::inspect_last`].
    #[inline]
    pub fn inspects(&self, i: usize) -> bool {
        !self.inspected.is_empty() && self.inspected.binary_search(&(i as u32)).is_ok()
    }

    /// Drops the operations from `len` on (a transaction retried from its start forgets
    /// what its results added); their parameters stay in the buffers until `clear`.
    pub fn truncate(&mut self, len: usize) {
        self.recs.truncate(len);
        self.inspected.retain(|&i| (i as usize) < len);
    }

    /// Number of operations.
    #[inline]
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True when the batch holds no operation.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Adds an `Execute` of `stmt`; its parameters follow through the returned writer.
    #[inline]
    pub fn execute(&mut self, stmt: StmtId) -> ParamWriter<'_> {
        let n = self.params.len() as u32;
        self.recs.push(Rec::Execute { stmt, params: n..n });
        ParamWriter { batch: self }
    }

    /// Adds plain SQL text.
    #[inline]
    pub fn query(&mut self, sql: &str) {
        self.query_with(|t| t.push_str(sql));
    }

    /// Adds plain SQL text written by `fill` straight into the batch's buffer.
    #[inline]
    pub fn query_with(&mut self, fill: impl FnOnce(&mut String)) {
        let start = self.text.len();
        fill(&mut self.text);
        let end = self.text.len();
        self.recs.push(Rec::Query {
            text: start as u32..end as u32,
        });
    }

    /// Adds a key-value operation. `values[i]` is the value of `fields[i]`.
    pub fn kv(&mut self, kind: KvKind, key: &[u8], fields: &[u16], values: &[&[u8]], count: u32) {
        let k0 = self.bytes.len() as u32;
        self.bytes.extend_from_slice(key);
        let key = k0..self.bytes.len() as u32;
        let f0 = self.fields.len() as u32;
        self.fields.extend_from_slice(fields);
        let v0 = self.values.len() as u32;
        for v in values {
            let at = self.bytes.len() as u32;
            self.bytes.extend_from_slice(v);
            self.values.push(at..self.bytes.len() as u32);
        }
        self.recs.push(Rec::Kv {
            kind,
            key,
            fields: f0..self.fields.len() as u32,
            values: v0..self.values.len() as u32,
            count,
        });
    }

    /// Families used by the batch's operations.
    pub fn uses(&self, family: Family) -> bool {
        self.recs.iter().any(|r| match r {
            Rec::Execute { .. } | Rec::Query { .. } => family == Family::Sql,
            Rec::Kv { kind, .. } => family == kind.family(),
        })
    }

    /// Calls `f` with operation `i`. `scratch` is reused across calls so that building the
    /// borrowed parameter slices allocates nothing once it has grown.
    pub fn with_op<R>(&self, i: usize, scratch: &mut Scratch, f: impl FnOnce(Op<'_>) -> R) -> R {
        let Some(rec) = self.recs.get(i) else {
            return f(Op::Query(""));
        };
        match rec {
            Rec::Execute { stmt, params } => {
                let mut vals = scratch.values();
                for p in &self.params[params.start as usize..params.end as usize] {
                    vals.push(match *p {
                        Param::Int(v) => Value::Int(v),
                        Param::Text(at, len) => {
                            Value::Text(&self.text[at as usize..(at + len) as usize])
                        }
                    });
                }
                let r = f(Op::Execute {
                    stmt: *stmt,
                    params: &vals,
                });
                scratch.keep_values(vals);
                r
            }
            Rec::Query { text } => f(Op::Query(
                &self.text[text.start as usize..text.end as usize],
            )),
            Rec::Kv {
                kind,
                key,
                fields,
                values,
                count,
            } => {
                let mut vals = scratch.slices();
                for r in &self.values[values.start as usize..values.end as usize] {
                    vals.push(&self.bytes[r.start as usize..r.end as usize]);
                }
                let key = &self.bytes[key.start as usize..key.end as usize];
                let r = f(Op::Kv(KvOp {
                    kind: *kind,
                    key,
                    fields: &self.fields[fields.start as usize..fields.end as usize],
                    values: &vals,
                    count: *count,
                }));
                scratch.keep_slices(vals);
                r
            }
        }
    }
}

/// Reusable storage for the borrowed slices an [`Op`] is built from. The vectors are
/// recycled across lifetimes by in-place collection (same layout), so no allocation recurs.
#[derive(Debug, Default)]
pub struct Scratch {
    values: Vec<Value<'static>>,
    slices: Vec<&'static [u8]>,
}

impl Scratch {
    fn values<'a>(&mut self) -> Vec<Value<'a>> {
        recycle(std::mem::take(&mut self.values))
    }
    fn keep_values(&mut self, v: Vec<Value<'_>>) {
        self.values = recycle(v);
    }
    fn slices<'a>(&mut self) -> Vec<&'a [u8]> {
        recycle(std::mem::take(&mut self.slices))
    }
    fn keep_slices(&mut self, v: Vec<&[u8]>) {
        self.slices = recycle(v);
    }
}

/// Empties `v` and reuses its allocation for a vector of another lifetime of the same type.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable_item()).collect()
}

#[cold]
fn unreachable_item<U>() -> U {
    // The vector is empty, so the closure of `recycle` never runs.
    unreachable!("recycled vector was not empty")
}

/// Runs every operation of `batch` in order on a blocking connection, handing each outcome
/// to `each`; stops at the first error.
pub fn run_batch(
    conn: &mut dyn Connection,
    batch: &OpBatch,
    scratch: &mut Scratch,
    mut each: impl FnMut(Outcome),
) -> Result<(), EngineError> {
    for i in 0..batch.len() {
        let out = batch.with_op(i, scratch, |op| conn.run(&op))?;
        each(out);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_round_trips_operations_and_reuses_buffers() {
        let mut b = OpBatch::new();
        let mut s = Scratch::default();
        for round in 0..3 {
            b.clear();
            b.query("BEGIN");
            b.execute(StmtId(2)).int(7 + round).text("abc");
            b.kv(KvKind::Update, b"user42", &[1, 3], &[b"x", b"yz"], 0);
            assert_eq!(b.len(), 3);
            b.with_op(0, &mut s, |op| assert_eq!(op, Op::Query("BEGIN")));
            b.with_op(1, &mut s, |op| {
                assert_eq!(
                    op,
                    Op::Execute {
                        stmt: StmtId(2),
                        params: &[Value::Int(7 + round), Value::Text("abc")]
                    }
                )
            });
            b.with_op(2, &mut s, |op| {
                let Op::Kv(kv) = op else { panic!("not kv") };
                assert_eq!(kv.key, b"user42");
                assert_eq!(kv.fields, &[1, 3]);
                assert_eq!(kv.values, &[&b"x"[..], &b"yz"[..]]);
                assert_eq!(op.family(), Family::KeyValue);
            });
            assert!(b.uses(Family::Sql) && b.uses(Family::KeyValue));
        }
        let cap = s.values.capacity();
        b.with_op(1, &mut s, |_| ());
        assert_eq!(s.values.capacity(), cap, "scratch keeps its allocation");
    }
}
