//! What a reply document says: success or the server's error (`code`, `codeName`,
//! `errmsg`, including per-document `writeErrors` and `writeConcernError`), write counts,
//! and a cursor's id and batch size. Errors carry the code as `MongoDB <code> <codeName>`,
//! the key results count them under.

use bson::raw::{RawBsonRef, RawDocument};
use dbdelta_engine::{EngineError, ErrorKind};

/// A reply's cursor: its id (0 = exhausted, closed by the server) and the documents of
/// this batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The cursor id for `getMore`; 0 when the server closed it.
    pub id: i64,
    /// Documents in `firstBatch` or `nextBatch`.
    pub docs: u64,
}

fn broken(what: &str) -> EngineError {
    EngineError::connection(format!("MongoDB protocol error: malformed reply ({what})"))
}

/// Parses a body section into a document.
pub fn document(body: &[u8]) -> Result<&RawDocument, EngineError> {
    RawDocument::from_bytes(body).map_err(|e| broken(&e.to_string()))
}

/// A number field of any BSON numeric type.
pub fn number(doc: &RawDocument, key: &str) -> Option<f64> {
    match doc.get(key).ok().flatten()? {
        RawBsonRef::Double(v) => Some(v),
        RawBsonRef::Int32(v) => Some(f64::from(v)),
        RawBsonRef::Int64(v) => Some(v as f64),
        RawBsonRef::Boolean(b) => Some(if b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// A string field.
pub fn string<'a>(doc: &'a RawDocument, key: &str) -> Option<&'a str> {
    match doc.get(key).ok().flatten()? {
        RawBsonRef::String(s) => Some(s),
        _ => None,
    }
}

/// How the runner treats a server error code (MongoDB's `error_codes.yml`): write
/// conflicts and duplicate keys are retried, like the SQL engines' deadlocks and unique
/// violations; time limits are timeouts; a server going away or stepping down is a lost
/// connection; the rest fail the statement.
pub fn kind_of(code: i32) -> ErrorKind {
    match code {
        112 | 11000 | 24 | 251 => ErrorKind::Retryable,
        50 | 262 => ErrorKind::Timeout,
        6 | 7 | 89 | 91 | 189 | 10107 | 11600 | 11602 | 13435 | 13436 => ErrorKind::Connection,
        13 | 18 => ErrorKind::Config,
        _ => ErrorKind::Statement,
    }
}

/// The error of one `{code, codeName, errmsg}` document (a reply, a write error).
pub fn error_of(doc: &RawDocument, what: &str) -> EngineError {
    let code = number(doc, "code").map_or(0, |c| c as i32);
    let name = string(doc, "codeName").unwrap_or("");
    let msg = string(doc, "errmsg").unwrap_or("(no message)");
    let key = if name.is_empty() {
        format!("MongoDB {code}")
    } else {
        format!("MongoDB {code} {name}")
    };
    EngineError::new(kind_of(code), format!("{what}: {key}: {msg}")).with_code(key)
}

/// `Ok(doc)` when the reply says `ok: 1` without write errors, else the server's error.
pub fn check<'a>(doc: &'a RawDocument, what: &str) -> Result<&'a RawDocument, EngineError> {
    if number(doc, "ok") != Some(1.0) {
        return Err(error_of(doc, what));
    }
    if let Ok(errs) = doc.get_array("writeErrors") {
        if let Some(Ok(RawBsonRef::Document(first))) = errs.into_iter().next() {
            return Err(error_of(first, what));
        }
    }
    if let Ok(wc) = doc.get_document("writeConcernError") {
        return Err(error_of(wc, what));
    }
    Ok(doc)
}

/// The `n` of a write reply (documents inserted, matched or deleted).
pub fn written(doc: &RawDocument) -> u64 {
    number(doc, "n").map_or(0, |n| n.max(0.0) as u64)
}

/// The `cursor` of a `find` or `getMore` reply.
pub fn cursor(doc: &RawDocument) -> Result<Cursor, EngineError> {
    let c = doc
        .get_document("cursor")
        .map_err(|_| broken("no cursor"))?;
    let id = match c.get("id").ok().flatten() {
        Some(RawBsonRef::Int64(v)) => v,
        Some(RawBsonRef::Int32(v)) => i64::from(v),
        _ => return Err(broken("cursor without an id")),
    };
    let batch = c
        .get_array("firstBatch")
        .or_else(|_| c.get_array("nextBatch"))
        .map_err(|_| broken("cursor without a batch"))?;
    let mut docs = 0;
    for d in batch {
        d.map_err(|e| broken(&e.to_string()))?;
        docs += 1;
    }
    Ok(Cursor { id, docs })
}
