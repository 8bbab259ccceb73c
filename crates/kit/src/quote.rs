//! SQL quoting for the statements engines write themselves (catalog lookups, `CREATE
//! DATABASE`, `ANALYZE TABLE`): string literals and identifiers per dialect.

use dbdelta_engine::text::push_literal;
use dbdelta_engine::{Dialect, Value};

/// `text` as a string literal of `dialect`: single quotes doubled (the SQL standard's
/// `<quote symbol>`), and backslashes doubled where the server reads them as escapes
/// (MySQL without `NO_BACKSLASH_ESCAPES`, ClickHouse). Not for postgresql.conf, whose
/// quoted values read backslash escapes (PostgreSQL's docs, 20.1.2): the PostgreSQL engine
/// keeps its own quoting for that file.
pub fn literal(text: &str, dialect: Dialect) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    // One implementation with the parameter interpolation of plain-text statements.
    push_literal(&mut out, Value::Text(text), dialect);
    out
}

/// `name` as a quoted identifier of `dialect`: double quotes (the SQL standard's
/// `<delimited identifier>`, PostgreSQL and SQLite) or backticks (MySQL, ClickHouse), the
/// quote character doubled inside.
pub fn ident(name: &str, dialect: Dialect) -> String {
    let q = match dialect {
        Dialect::Mysql | Dialect::Clickhouse => '`',
        _ => '"',
    };
    let mut out = String::with_capacity(name.len() + 2);
    out.push(q);
    for c in name.chars() {
        if c == q {
            out.push(q);
        }
        out.push(c);
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(literal("it's", Dialect::Postgres), "'it''s'");
        assert_eq!(literal("a\\b", Dialect::Postgres), "'a\\b'");
        assert_eq!(literal("it's a\\b", Dialect::Mysql), "'it''s a\\\\b'");
        assert_eq!(literal("", Dialect::Sqlite), "''");
    }

    #[test]
    fn identifiers() {
        assert_eq!(ident("db\"x", Dialect::Postgres), "\"db\"\"x\"");
        assert_eq!(ident("t`x", Dialect::Mysql), "`t``x`");
        assert_eq!(ident("plain", Dialect::Sqlite), "\"plain\"");
    }
}
