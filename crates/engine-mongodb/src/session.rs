//! The sans-IO query phase of a MongoDB connection: key-value operations in, `OP_MSG`
//! bytes out, replies consumed into outcomes. One operation may take several messages: a
//! read-modify-write pipelines its `find` and its `update` (the update does not depend on
//! what the read returns, as in YCSB), and a scan whose cursor outlives its first batch
//! asks for the rest with `getMore` (or closes it with `killCursors` once it has its
//! records) through [`Session::follow_up`]. Errors keep the server's `code` and `codeName`.

use crate::cmd::Commands;
use crate::msg::{self, Limits};
use crate::reply;
use bson::raw::RawDocumentBuf;
use dbdelta_engine::ops::{KvKind, KvOp};
use dbdelta_engine::{Canceller, Decoded, EngineError, Family, Op, Outcome, Session};
use std::collections::VecDeque;

/// What a sent message's reply means to the operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A `find` or `getMore`: count the batch; `want` records in all, `got` so far.
    Cursor { want: u64 },
    /// A `killCursors` after the records were in: only its arrival matters.
    Kill,
    /// An insert, update or delete: count `n`.
    Write,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    id: i32,
    what: Expect,
}

/// The protocol state of one connection's query phase.
#[derive(Debug)]
pub struct MongoSession {
    cmds: Commands,
    limits: Limits,
    next_id: i32,
    pending: VecDeque<Pending>,
    outcome: Outcome,
    error: Option<EngineError>,
    /// Messages to send before the response can complete (getMore, killCursors).
    follow: Vec<u8>,
    /// Reused encoding buffer of a write's one-document sequence.
    seq: Vec<u8>,
}

impl MongoSession {
    /// A session sending `cmds` within the server's `limits`; request ids start at `first_id`.
    pub fn new(cmds: Commands, limits: Limits, first_id: i32) -> Self {
        MongoSession {
            cmds,
            limits,
            next_id: first_id,
            pending: VecDeque::new(),
            outcome: Outcome::default(),
            error: None,
            follow: Vec::new(),
            seq: Vec::new(),
        }
    }

    /// The server's limits this session respects.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The commands of this session (collection, database, write concern).
    pub fn commands(&mut self) -> &mut Commands {
        &mut self.cmds
    }

    fn send(
        &mut self,
        out: &mut Vec<u8>,
        body: &RawDocumentBuf,
        seq: Option<(&str, &[u8])>,
        what: Expect,
    ) -> Result<(), EngineError> {
        let id = self.next_id;
        msg::encode(out, id, body.as_bytes(), seq, &self.limits)?;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.pending.push_back(Pending { id, what });
        Ok(())
    }

    fn check_doc(&self, doc: &RawDocumentBuf) -> Result<(), EngineError> {
        if doc.as_bytes().len() > self.limits.max_bson {
            return Err(EngineError::statement(format!(
                "a record of {} bytes is larger than the server's maxBsonObjectSize ({})",
                doc.as_bytes().len(),
                self.limits.max_bson
            )));
        }
        Ok(())
    }

    /// Appends an `insert` of `count` records whose documents are concatenated in `docs`
    /// (the caller keeps the batch within the limits: [`MongoSession::fits`]).
    pub fn encode_insert_many(
        &mut self,
        docs: &[u8],
        ordered: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), EngineError> {
        let body = self.cmds.insert(ordered);
        self.send(out, &body, Some(("documents", docs)), Expect::Write)
    }

    /// True when a batch of `count` documents of `bytes` bytes in all fits one message.
    pub fn fits(&self, count: usize, bytes: usize) -> bool {
        // The insert command's own fields take far less than 1 KiB.
        count <= self.limits.max_batch && bytes + 1024 <= self.limits.max_message
    }

    fn encode_kv(&mut self, op: &KvOp<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let start = out.len();
        let r = self.encode_kv_inner(op, out);
        if r.is_err() {
            // Nothing of a refused operation goes out.
            out.truncate(start);
            self.pending.clear();
        }
        r
    }

    fn encode_kv_inner(&mut self, op: &KvOp<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        match op.kind {
            KvKind::Read => {
                let body = self.cmds.read(op.key, op.fields)?;
                self.send(out, &body, None, Expect::Cursor { want: 1 })
            }
            KvKind::Scan => {
                let body = self.cmds.scan(op.key, &[], op.count)?;
                self.send(
                    out,
                    &body,
                    None,
                    Expect::Cursor {
                        want: u64::from(op.count.max(1)),
                    },
                )
            }
            KvKind::Update => self.encode_update(op, out),
            KvKind::ReadModifyWrite => {
                // YCSB reads the whole record, then writes the named fields.
                let body = self.cmds.read(op.key, &[])?;
                self.send(out, &body, None, Expect::Cursor { want: 1 })?;
                self.encode_update(op, out)
            }
            KvKind::Insert => {
                let doc = self.cmds.record(op.key, op.fields, op.values)?;
                self.check_doc(&doc)?;
                let body = self.cmds.insert(true);
                self.send(
                    out,
                    &body,
                    Some(("documents", doc.as_bytes())),
                    Expect::Write,
                )
            }
            KvKind::Delete => {
                let (body, one) = self.cmds.delete(op.key)?;
                self.send(out, &body, Some(("deletes", &one)), Expect::Write)
            }
            kind => Err(EngineError::unsupported(Family::RawKeyValue, kind.name())),
        }
    }

    fn encode_update(&mut self, op: &KvOp<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let (body, one) = self.cmds.update(op.key, op.fields, op.values)?;
        self.seq.clear();
        self.seq.extend_from_slice(&one);
        let seq = std::mem::take(&mut self.seq);
        let r = self.send(out, &body, Some(("updates", &seq)), Expect::Write);
        self.seq = seq;
        r
    }

    /// Applies one reply to the operation in flight.
    fn apply(&mut self, what: Expect, body: &[u8]) -> Result<(), EngineError> {
        let doc = reply::document(body)?;
        let doc = match reply::check(doc, "MongoDB") {
            Ok(d) => d,
            Err(e) => {
                if e.kind == dbdelta_engine::ErrorKind::Connection {
                    return Err(e);
                }
                // The first error of the operation is its result; later replies of a
                // pipeline are still consumed.
                if self.error.is_none() && what != Expect::Kill {
                    self.error = Some(e);
                }
                return Ok(());
            }
        };
        match what {
            Expect::Cursor { want } => {
                let c = reply::cursor(doc)?;
                self.outcome.has_result = true;
                self.outcome.rows += c.docs;
                if c.id != 0 {
                    let left = want.saturating_sub(self.outcome.rows);
                    let mut out = std::mem::take(&mut self.follow);
                    let r = if left > 0 {
                        let body = self.cmds.get_more(c.id, left);
                        self.send(&mut out, &body, None, Expect::Cursor { want })
                    } else {
                        let body = self.cmds.kill_cursors(c.id);
                        self.send(&mut out, &body, None, Expect::Kill)
                    };
                    self.follow = out;
                    r?;
                }
            }
            Expect::Write => self.outcome.affected += reply::written(doc),
            Expect::Kill => {}
        }
        Ok(())
    }
}

impl Session for MongoSession {
    fn encode(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        if !self.pending.is_empty() {
            return Err(EngineError::connection(
                "a request is still outstanding on this connection",
            ));
        }
        self.outcome = Outcome::default();
        self.error = None;
        match op {
            Op::Kv(kv) => self.encode_kv(kv, out),
            Op::Execute { .. } | Op::Query(_) => {
                Err(EngineError::unsupported(Family::Sql, "SQL statement"))
            }
        }
    }

    fn decode(&mut self, input: &[u8]) -> Result<Decoded, EngineError> {
        let mut consumed = 0;
        loop {
            let Some((m, used)) = msg::split(&input[consumed..], &self.limits)? else {
                return Ok(Decoded::Partial { consumed });
            };
            let Some(p) = self.pending.pop_front() else {
                return Err(EngineError::connection(
                    "MongoDB sent a reply to no request",
                ));
            };
            if m.response_to != p.id {
                return Err(EngineError::connection(format!(
                    "MongoDB protocol error: a reply to request {} while {} was awaited",
                    m.response_to, p.id
                )));
            }
            consumed += used;
            self.apply(p.what, m.body)?;
            if self.pending.is_empty() {
                let result = match self.error.take() {
                    Some(e) => Err(e),
                    None => Ok(std::mem::take(&mut self.outcome)),
                };
                return Ok(Decoded::Complete { consumed, result });
            }
            if !self.follow.is_empty() {
                return Ok(Decoded::Partial { consumed });
            }
        }
    }

    fn follow_up(&mut self, out: &mut Vec<u8>) -> bool {
        if self.follow.is_empty() {
            return false;
        }
        out.append(&mut self.follow);
        true
    }

    /// Single-document writes open no transaction: a `ping` stands in for the rollback so
    /// the driver's request/response step still happens.
    fn encode_rollback(&mut self, out: &mut Vec<u8>) -> Result<(), EngineError> {
        self.outcome = Outcome::default();
        self.error = None;
        let body = self.cmds.ping();
        self.send(out, &body, None, Expect::Kill)
    }

    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        None
    }
}
