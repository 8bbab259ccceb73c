//! Key-value operations on SQL engines: YCSB's JDBC binding layout (`usertable` with
//! `YCSB_KEY` and `FIELD0…`), prepared once per connection, and a translation of each
//! [`KvOp`] into the SQL operations that perform it. Translating at the operation level
//! means the same workload runs on a blocking connection and on a multiplexed session.
//!
//! [`KvRoute`] is what a key-value workload holds: native operations for engines that
//! serve the family themselves, the translation for SQL engines.

use crate::ops::{Family, KvKind, KvOp, OpBatch};
use crate::{Connection, EngineError, OwnedValue, RowSource, StmtId};

/// The table dbdelta creates for key-value workloads on SQL engines.
pub const TABLE: &str = "usertable";
/// YCSB's default number of fields per record.
pub const DEFAULT_FIELDS: u16 = 10;

/// `CREATE TABLE usertable (…)` for a dialect: the JDBC binding's layout.
pub fn create_sql(fields: u16) -> String {
    let cols: Vec<String> = (0..fields).map(|i| format!("FIELD{i} TEXT")).collect();
    format!(
        "CREATE TABLE {TABLE} (YCSB_KEY VARCHAR(255) PRIMARY KEY, {})",
        cols.join(", ")
    )
}

/// The usertable statements prepared on one connection.
#[derive(Debug, Clone)]
pub struct Usertable {
    fields: u16,
    read_all: StmtId,
    read_one: Vec<StmtId>,
    update_one: Vec<StmtId>,
    update_all: StmtId,
    insert: StmtId,
    delete: StmtId,
    scan: StmtId,
}

fn field_list(fields: u16) -> String {
    (0..fields)
        .map(|i| format!("FIELD{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Usertable {
    /// Prepares every statement on `conn` (a point read and an update per field, so a
    /// one-field operation never sends the other nine).
    pub fn prepare(conn: &mut dyn Connection, fields: u16) -> Result<Self, EngineError> {
        if fields == 0 {
            return Err(EngineError::config("a usertable needs at least one field"));
        }
        let all = field_list(fields);
        let marks = vec!["?"; usize::from(fields) + 1].join(", ");
        let sets = (0..fields)
            .map(|i| format!("FIELD{i}=?"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut read_one = Vec::with_capacity(usize::from(fields));
        let mut update_one = Vec::with_capacity(usize::from(fields));
        for i in 0..fields {
            read_one.push(conn.prepare(&format!("SELECT FIELD{i} FROM {TABLE} WHERE YCSB_KEY=?"))?);
            update_one
                .push(conn.prepare(&format!("UPDATE {TABLE} SET FIELD{i}=? WHERE YCSB_KEY=?"))?);
        }
        // The JDBC binding's scan; every dialect's prepared LIMIT takes an integer parameter.
        let scan_sql = format!(
            "SELECT YCSB_KEY, {all} FROM {TABLE} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
        );
        Ok(Usertable {
            fields,
            read_all: conn.prepare(&format!("SELECT {all} FROM {TABLE} WHERE YCSB_KEY=?"))?,
            read_one,
            update_one,
            update_all: conn.prepare(&format!("UPDATE {TABLE} SET {sets} WHERE YCSB_KEY=?"))?,
            insert: conn.prepare(&format!(
                "INSERT INTO {TABLE} (YCSB_KEY, {all}) VALUES ({marks})"
            ))?,
            delete: conn.prepare(&format!("DELETE FROM {TABLE} WHERE YCSB_KEY=?"))?,
            scan: conn.prepare(&scan_sql)?,
        })
    }

    fn field(&self, f: u16) -> Result<usize, EngineError> {
        if f < self.fields {
            Ok(usize::from(f))
        } else {
            Err(EngineError::statement(format!(
                "field {f} does not exist: the usertable has {} fields",
                self.fields
            )))
        }
    }

    /// Appends the SQL operations that perform `op` to `ops`: one statement, or a read and
    /// an update for a read-modify-write (still one key-value operation to the workload).
    pub fn translate(&self, op: &KvOp<'_>, ops: &mut OpBatch) -> Result<(), EngineError> {
        let text = |v: &[u8]| -> Result<String, EngineError> {
            String::from_utf8(v.to_vec())
                .map_err(|_| EngineError::statement("a usertable value must be UTF-8 text"))
        };
        let key = std::str::from_utf8(op.key)
            .map_err(|_| EngineError::statement("a usertable key must be UTF-8 text"))?;
        match op.kind {
            KvKind::Read => self.read(op, key, ops)?,
            KvKind::Scan => {
                ops.execute(self.scan).text(key).int(i64::from(op.count));
            }
            KvKind::Delete => {
                ops.execute(self.delete).text(key);
            }
            KvKind::Insert => {
                if op.fields.len() != usize::from(self.fields) || op.values.len() != op.fields.len()
                {
                    return Err(EngineError::statement(format!(
                        "an insert sets all {} fields, got {}",
                        self.fields,
                        op.fields.len()
                    )));
                }
                let mut ordered: Vec<Option<&[u8]>> = vec![None; usize::from(self.fields)];
                for (f, v) in op.fields.iter().zip(op.values) {
                    ordered[self.field(*f)?] = Some(v);
                }
                let mut w = ops.execute(self.insert);
                w.text(key);
                for v in ordered {
                    w.text(&text(v.unwrap_or_default())?);
                }
            }
            KvKind::Update => self.update(op, key, ops, &text)?,
            KvKind::ReadModifyWrite => {
                // YCSB reads the whole record (readallfields) and writes the named fields.
                ops.execute(self.read_all).text(key);
                self.update(op, key, ops, &text)?;
            }
            kind => {
                return Err(EngineError::unsupported(
                    crate::Family::RawKeyValue,
                    kind.name(),
                ))
            }
        }
        Ok(())
    }

    fn read(&self, op: &KvOp<'_>, key: &str, ops: &mut OpBatch) -> Result<(), EngineError> {
        let stmt = match op.fields {
            [one] => self.read_one[self.field(*one)?],
            // YCSB reads all fields by default; a subset of several reads them all too.
            _ => self.read_all,
        };
        ops.execute(stmt).text(key);
        Ok(())
    }

    fn update(
        &self,
        op: &KvOp<'_>,
        key: &str,
        ops: &mut OpBatch,
        text: &dyn Fn(&[u8]) -> Result<String, EngineError>,
    ) -> Result<(), EngineError> {
        if op.values.len() != op.fields.len() || op.fields.is_empty() {
            return Err(EngineError::statement(
                "an update names each field it sets, with a value",
            ));
        }
        if op.fields.len() == usize::from(self.fields) {
            let mut ordered: Vec<&[u8]> = vec![&[]; usize::from(self.fields)];
            for (f, v) in op.fields.iter().zip(op.values) {
                ordered[self.field(*f)?] = v;
            }
            let mut w = ops.execute(self.update_all);
            for v in ordered {
                w.text(&text(v)?);
            }
            w.text(key);
            return Ok(());
        }
        for (f, v) in op.fields.iter().zip(op.values) {
            ops.execute(self.update_one[self.field(*f)?])
                .text(&text(v)?)
                .text(key);
        }
        Ok(())
    }
}

/// How a key-value workload sends its operations on one connection.
#[derive(Debug, Clone)]
pub enum KvRoute {
    /// The engine serves key-value operations itself.
    Native,
    /// An SQL engine: operations become usertable statements.
    Sql(Usertable),
}

impl KvRoute {
    /// Chooses the route for `conn`; `None` when the engine serves neither key-value nor
    /// SQL operations ("not supported by <engine>").
    pub fn prepare(conn: &mut dyn Connection, fields: u16) -> Result<Option<Self>, EngineError> {
        let served = conn.families();
        if served.contains(&Family::KeyValue) {
            Ok(Some(KvRoute::Native))
        } else if served.contains(&Family::Sql) {
            Ok(Some(KvRoute::Sql(Usertable::prepare(conn, fields)?)))
        } else {
            Ok(None)
        }
    }

    /// Appends `op` to `ops` in the form this connection takes.
    pub fn push(&self, op: &KvOp<'_>, ops: &mut OpBatch) -> Result<(), EngineError> {
        match self {
            KvRoute::Native => {
                ops.kv(op.kind, op.key, op.fields, op.values, op.count);
                Ok(())
            }
            KvRoute::Sql(t) => t.translate(op, ops),
        }
    }
}

/// Records to load into the usertable: `next(i, key, values)` fills record `i`'s key and
/// its field values (the workload decides keys and values: YCSB hashes its keys).
pub struct UsertableRows<F> {
    columns: Vec<&'static str>,
    count: u64,
    next: u64,
    fill: F,
    key: String,
    values: Vec<String>,
}

/// Column names `YCSB_KEY, FIELD0, …` (static: a field count is at most a few dozen).
fn columns(fields: u16) -> Vec<&'static str> {
    const NAMES: [&str; 33] = [
        "YCSB_KEY", "FIELD0", "FIELD1", "FIELD2", "FIELD3", "FIELD4", "FIELD5", "FIELD6", "FIELD7",
        "FIELD8", "FIELD9", "FIELD10", "FIELD11", "FIELD12", "FIELD13", "FIELD14", "FIELD15",
        "FIELD16", "FIELD17", "FIELD18", "FIELD19", "FIELD20", "FIELD21", "FIELD22", "FIELD23",
        "FIELD24", "FIELD25", "FIELD26", "FIELD27", "FIELD28", "FIELD29", "FIELD30", "FIELD31",
    ];
    NAMES[..=usize::from(fields).min(NAMES.len() - 1)].to_vec()
}

/// The most fields [`UsertableRows`] can name.
pub const MAX_FIELDS: u16 = 32;

impl<F: FnMut(u64, &mut String, &mut [String])> UsertableRows<F> {
    /// `count` records of `fields` fields (at most [`MAX_FIELDS`]).
    pub fn new(count: u64, fields: u16, fill: F) -> Result<Self, EngineError> {
        if fields == 0 || fields > MAX_FIELDS {
            return Err(EngineError::config(format!(
                "fieldcount {fields} is out of range: use 1 to {MAX_FIELDS}"
            )));
        }
        Ok(UsertableRows {
            columns: columns(fields),
            count,
            next: 0,
            fill,
            key: String::new(),
            values: vec![String::new(); usize::from(fields)],
        })
    }
}

impl<F: FnMut(u64, &mut String, &mut [String])> RowSource for UsertableRows<F> {
    fn columns(&self) -> &[&'static str] {
        &self.columns
    }

    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.next >= self.count {
            return false;
        }
        self.key.clear();
        for v in &mut self.values {
            v.clear();
        }
        (self.fill)(self.next, &mut self.key, &mut self.values);
        self.next += 1;
        out.push(OwnedValue::Text(self.key.clone()));
        out.extend(self.values.iter().map(|v| OwnedValue::Text(v.clone())));
        true
    }
}
