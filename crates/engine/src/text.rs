//! Statement text helpers shared by engines: placeholder rewriting, literal rendering
//! (for `--no-prepared` and multi-row INSERT loads).
//!
//! dbdelta's own statements never contain `?` inside string literals, so a plain scan for
//! `?` is exact for them.

use crate::{Connection, Dialect, EngineError, OwnedValue, RowSource, Value};
use std::fmt::Write;

/// Rewrites `?` placeholders to PostgreSQL's `$1, $2, …`.
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            let _ = write!(out, "${n}");
        } else {
            out.push(ch);
        }
    }
    out
}

/// Counts `?` placeholders.
pub fn placeholder_count(sql: &str) -> usize {
    sql.bytes().filter(|b| *b == b'?').count()
}

/// Appends `value` as an SQL literal of `dialect` to `out`.
pub fn push_literal(out: &mut String, value: Value<'_>, dialect: Dialect) {
    match value {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Null => out.push_str("NULL"),
        Value::Text(s) => {
            out.push('\'');
            for ch in s.chars() {
                match ch {
                    '\'' => out.push_str("''"),
                    '\\' if matches!(dialect, Dialect::Mysql | Dialect::Clickhouse) => {
                        out.push_str("\\\\")
                    }
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

/// Renders `sql` with each `?` replaced by the literal of the next parameter into `out`
/// (cleared first). Errors when the counts differ.
pub fn interpolate(
    sql: &str,
    params: &[Value<'_>],
    dialect: Dialect,
    out: &mut String,
) -> Result<(), EngineError> {
    out.clear();
    let mut it = params.iter();
    for ch in sql.chars() {
        if ch == '?' {
            let v = it.next().ok_or_else(|| {
                EngineError::statement(format!("statement needs more parameters: {sql}"))
            })?;
            push_literal(out, *v, dialect);
        } else {
            out.push(ch);
        }
    }
    if it.next().is_some() {
        return Err(EngineError::statement(format!(
            "statement got more parameters than placeholders: {sql}"
        )));
    }
    Ok(())
}

/// Loads rows with multi-row `INSERT INTO table(cols) VALUES (…),(…)` statements of at most
/// `max_bytes` each, sent as plain text, as sysbench's bulk insert does.
pub fn bulk_insert_multirow<C: Connection + ?Sized>(
    conn: &mut C,
    table: &str,
    rows: &mut dyn RowSource,
    max_bytes: usize,
) -> Result<u64, EngineError> {
    let dialect = conn.dialect();
    let head = format!("INSERT INTO {table}({}) VALUES ", rows.columns().join(", "));
    let mut sql = String::with_capacity(max_bytes + 1024);
    let mut tuple = String::with_capacity(512);
    let mut row: Vec<OwnedValue> = Vec::new();
    let mut total = 0u64;
    let mut in_batch = 0u64;
    loop {
        row.clear();
        let more = rows.next_row(&mut row);
        if more {
            tuple.clear();
            tuple.push('(');
            for (i, v) in row.iter().enumerate() {
                if i > 0 {
                    tuple.push(',');
                }
                push_literal(&mut tuple, v.as_value(), dialect);
            }
            tuple.push(')');
        }
        let flush = !more || (in_batch > 0 && sql.len() + tuple.len() + 1 > max_bytes);
        if flush && in_batch > 0 {
            conn.query(&sql)?;
            total += in_batch;
            in_batch = 0;
        }
        if !more {
            return Ok(total);
        }
        if in_batch == 0 {
            sql.clear();
            sql.push_str(&head);
        } else {
            sql.push(',');
        }
        sql.push_str(&tuple);
        in_batch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering() {
        assert_eq!(
            numbered_placeholders("SELECT c FROM t WHERE id IN (?, ?, ?)"),
            "SELECT c FROM t WHERE id IN ($1, $2, $3)"
        );
    }

    #[test]
    fn literals_escape() {
        let mut out = String::new();
        interpolate(
            "SELECT ? , ?",
            &[Value::Int(-3), Value::Text("a'b\\")],
            Dialect::Mysql,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "SELECT -3 , 'a''b\\\\'");
        interpolate("?", &[Value::Text("x\\")], Dialect::Postgres, &mut out).unwrap();
        assert_eq!(out, "'x\\'");
        assert!(interpolate("? ?", &[Value::Int(1)], Dialect::Sqlite, &mut out).is_err());
        assert!(interpolate(
            "?",
            &[Value::Int(1), Value::Int(2)],
            Dialect::Sqlite,
            &mut out
        )
        .is_err());
    }
}
