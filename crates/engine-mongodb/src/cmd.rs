//! The command documents of YCSB's MongoDB binding (`MongoDbClient.java`, YCSB 0.17.0):
//! one document per record, `_id` the key, `field0…fieldN` binary values. Read is
//! `find({_id}).projection().limit(1)`, scan `find({_id: {$gte: k}}).sort({_id: 1})
//! .limit(n)`, update `updateOne({_id}, {$set})`, insert `insertOne` (or `insertMany`
//! unordered for a batch), delete `deleteOne({_id})`; every write carries the target's
//! write concern.

use crate::spec::{WriteConcern, W};
use bson::raw::{cstr, CStr, CString, RawArrayBuf, RawBinaryRef, RawDocumentBuf};
use bson::spec::BinarySubtype;
use dbdelta_engine::EngineError;

/// The fixed parts of every command of one connection.
#[derive(Debug, Clone)]
pub struct Commands {
    /// The database (`$db`).
    pub db: String,
    /// The collection.
    pub coll: String,
    write_concern: Option<RawDocumentBuf>,
    read_preference: Option<RawDocumentBuf>,
    /// `field0`, `field1`, … as BSON keys, grown on demand.
    fields: Vec<CString>,
}

fn key_text(key: &[u8]) -> Result<&str, EngineError> {
    std::str::from_utf8(key).map_err(|_| EngineError::statement("a record key must be UTF-8 text"))
}

fn binary(v: &[u8]) -> RawBinaryRef<'_> {
    RawBinaryRef {
        subtype: BinarySubtype::Generic,
        bytes: v,
    }
}

impl Commands {
    /// Commands on `db.coll` with `wc` on writes and `read_preference` on reads.
    pub fn new(db: &str, coll: &str, wc: &WriteConcern, read_preference: &str) -> Self {
        let write_concern = (!wc.is_default()).then(|| {
            let mut d = RawDocumentBuf::new();
            match &wc.w {
                Some(W::Nodes(n)) => d.append(cstr!("w"), *n),
                Some(W::Majority) => d.append(cstr!("w"), "majority"),
                None => {}
            }
            if let Some(j) = wc.j {
                d.append(cstr!("j"), j);
            }
            if let Some(t) = wc.wtimeout_ms {
                d.append(cstr!("wtimeout"), t);
            }
            d
        });
        let read_preference = (read_preference != "primary").then(|| {
            let mut d = RawDocumentBuf::new();
            d.append(cstr!("mode"), read_preference);
            d
        });
        Commands {
            db: db.to_string(),
            coll: coll.to_string(),
            write_concern,
            read_preference,
            fields: Vec::new(),
        }
    }

    fn field(&mut self, f: u16) -> &CStr {
        while self.fields.len() <= usize::from(f) {
            let name = format!("field{}", self.fields.len());
            // "fieldN" has no NUL byte, so it is always a valid key.
            if let Ok(c) = CString::try_from(name) {
                self.fields.push(c);
            }
        }
        self.fields[usize::from(f)].as_ref()
    }

    fn finish(&self, d: &mut RawDocumentBuf, write: bool) {
        if write {
            if let Some(wc) = &self.write_concern {
                d.append(cstr!("writeConcern"), wc);
            }
        } else if let Some(rp) = &self.read_preference {
            d.append(cstr!("$readPreference"), rp);
        }
        d.append(cstr!("$db"), self.db.as_str());
    }

    fn id_filter(key: &str) -> RawDocumentBuf {
        let mut q = RawDocumentBuf::new();
        q.append(cstr!("_id"), key);
        q
    }

    /// `find({_id: key}).projection(fields).limit(1)` in one batch.
    pub fn read(&mut self, key: &[u8], fields: &[u16]) -> Result<RawDocumentBuf, EngineError> {
        let key = key_text(key)?;
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("find"), self.coll.as_str());
        d.append(cstr!("filter"), Self::id_filter(key));
        if !fields.is_empty() {
            let mut p = RawDocumentBuf::new();
            for f in fields {
                p.append(self.field(*f), 1i32);
            }
            d.append(cstr!("projection"), &p);
        }
        d.append(cstr!("limit"), 1i64);
        d.append(cstr!("singleBatch"), true);
        self.finish(&mut d, false);
        Ok(d)
    }

    /// `find({_id: {$gte: key}}).sort({_id: 1}).limit(count)`, asking the whole limit in
    /// the first batch (the server may still cut it at its 16 MiB batch size).
    pub fn scan(
        &mut self,
        key: &[u8],
        fields: &[u16],
        count: u32,
    ) -> Result<RawDocumentBuf, EngineError> {
        let key = key_text(key)?;
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("find"), self.coll.as_str());
        let mut gte = RawDocumentBuf::new();
        gte.append(cstr!("$gte"), key);
        let mut filter = RawDocumentBuf::new();
        filter.append(cstr!("_id"), &gte);
        d.append(cstr!("filter"), &filter);
        let mut sort = RawDocumentBuf::new();
        sort.append(cstr!("_id"), 1i32);
        d.append(cstr!("sort"), &sort);
        if !fields.is_empty() {
            let mut p = RawDocumentBuf::new();
            for f in fields {
                p.append(self.field(*f), 1i32);
            }
            d.append(cstr!("projection"), &p);
        }
        d.append(cstr!("limit"), i64::from(count.max(1)));
        d.append(cstr!("batchSize"), i64::from(count.max(1)));
        self.finish(&mut d, false);
        Ok(d)
    }

    /// `getMore` of cursor `id` for at most `left` more documents.
    pub fn get_more(&self, id: i64, left: u64) -> RawDocumentBuf {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("getMore"), id);
        d.append(cstr!("collection"), self.coll.as_str());
        d.append(cstr!("batchSize"), left.min(i64::MAX as u64) as i64);
        d.append(cstr!("$db"), self.db.as_str());
        d
    }

    /// `killCursors` of cursor `id` (a scan that had its documents before the cursor ended).
    pub fn kill_cursors(&self, id: i64) -> RawDocumentBuf {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("killCursors"), self.coll.as_str());
        let mut ids = RawArrayBuf::new();
        ids.push(id);
        d.append(cstr!("cursors"), &ids);
        d.append(cstr!("$db"), self.db.as_str());
        d
    }

    /// The `update` command and its `updates` sequence: `updateOne({_id}, {$set: …})`.
    pub fn update(
        &mut self,
        key: &[u8],
        fields: &[u16],
        values: &[&[u8]],
    ) -> Result<(RawDocumentBuf, Vec<u8>), EngineError> {
        if fields.is_empty() || fields.len() != values.len() {
            return Err(EngineError::statement(
                "an update names each field it sets, with a value",
            ));
        }
        let key = key_text(key)?;
        let mut set = RawDocumentBuf::new();
        for (f, v) in fields.iter().zip(values) {
            set.append(self.field(*f), binary(v));
        }
        let mut u = RawDocumentBuf::new();
        u.append(cstr!("$set"), &set);
        let mut one = RawDocumentBuf::new();
        one.append(cstr!("q"), Self::id_filter(key));
        one.append(cstr!("u"), &u);
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("update"), self.coll.as_str());
        d.append(cstr!("ordered"), true);
        self.finish(&mut d, true);
        Ok((d, one.into_bytes()))
    }

    /// One record's document: `{_id: key, fieldN: binary, …}`.
    pub fn record(
        &mut self,
        key: &[u8],
        fields: &[u16],
        values: &[&[u8]],
    ) -> Result<RawDocumentBuf, EngineError> {
        if fields.len() != values.len() {
            return Err(EngineError::statement(
                "an insert gives a value for each field",
            ));
        }
        let mut doc = RawDocumentBuf::new();
        doc.append(cstr!("_id"), key_text(key)?);
        for (f, v) in fields.iter().zip(values) {
            doc.append(self.field(*f), binary(v));
        }
        Ok(doc)
    }

    /// The `insert` command for the records of its `documents` sequence; `ordered=false`
    /// for a batch (YCSB's `insertMany` with `ordered(false)`).
    pub fn insert(&self, ordered: bool) -> RawDocumentBuf {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("insert"), self.coll.as_str());
        d.append(cstr!("ordered"), ordered);
        self.finish(&mut d, true);
        d
    }

    /// The `delete` command and its `deletes` sequence: `deleteOne({_id})`.
    pub fn delete(&self, key: &[u8]) -> Result<(RawDocumentBuf, Vec<u8>), EngineError> {
        let mut one = RawDocumentBuf::new();
        one.append(cstr!("q"), Self::id_filter(key_text(key)?));
        one.append(cstr!("limit"), 1i32);
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("delete"), self.coll.as_str());
        d.append(cstr!("ordered"), true);
        self.finish(&mut d, true);
        Ok((d, one.into_bytes()))
    }

    /// `drop` of the collection (a key-value load starts empty).
    pub fn drop_collection(&self) -> RawDocumentBuf {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("drop"), self.coll.as_str());
        self.finish(&mut d, true);
        d
    }

    /// `ping`: a round trip that does nothing.
    pub fn ping(&self) -> RawDocumentBuf {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("ping"), 1i32);
        d.append(cstr!("$db"), self.db.as_str());
        d
    }
}
