//! SQL text helpers shared by both ClickHouse engines: statement splitting, `SET`
//! statements, literals, server error texts and the catalog queries.

use dbdelta_engine::{EngineError, ErrorKind, TableSize};

/// Splits a script into statements at `;` outside quotes and comments; empty statements
/// (and statements that are only comments) are dropped.
pub(crate) fn split_statements(script: &str) -> Vec<&str> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut has_code = false;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                has_code = true;
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b';' => {
                if has_code {
                    out.push(script[start..i].trim());
                }
                start = i + 1;
                has_code = false;
            }
            c if !c.is_ascii_whitespace() => has_code = true,
            _ => {}
        }
        i += 1;
    }
    if has_code && start < b.len() {
        out.push(script[start..].trim());
    }
    out
}

/// The settings of a `SET a = 1, b = 'x'` statement; `None` when `sql` is not a `SET`.
/// Over HTTP every request is its own session, so the engine keeps them and sends them
/// with each later request of the connection.
pub(crate) fn parse_set(sql: &str) -> Option<Result<Vec<(String, String)>, EngineError>> {
    let t = sql.trim().trim_end_matches(';').trim();
    let head = t.get(..4)?;
    if !head.eq_ignore_ascii_case("set ") {
        return None;
    }
    let mut out = Vec::new();
    for part in split_outside_quotes(&t[4..], b',') {
        let Some((k, v)) = part.split_once('=') else {
            return Some(Err(EngineError::statement(format!(
                "cannot read '{part}' in '{t}': write SET name = value"
            ))));
        };
        let k = k.trim();
        if k.is_empty() || !k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Some(Err(EngineError::statement(format!(
                "'{k}' in '{t}' is not a setting name"
            ))));
        }
        let v = v.trim();
        let v = v
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .map(|v| v.replace("\\'", "'").replace("''", "'"))
            .unwrap_or_else(|| v.to_string());
        out.push((k.to_string(), v));
    }
    Some(Ok(out))
}

/// The database of a `USE name` statement; `None` when `sql` is not a `USE`.
pub(crate) fn parse_use(sql: &str) -> Option<String> {
    let t = sql.trim().trim_end_matches(';').trim();
    let head = t.get(..4)?;
    if !head.eq_ignore_ascii_case("use ") {
        return None;
    }
    let name = t[4..].trim().trim_matches('`').trim_matches('"');
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_string())
}

fn split_outside_quotes(s: &str, sep: u8) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i, mut quote) = (0, 0, None);
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, c) if c == sep => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(s[start..].trim());
    out
}

/// A ClickHouse string literal (backslash and quote escaped).
pub(crate) fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// The first words of statements that return a result set (empty or not).
pub(crate) const RESULT_WORDS: &[&str] = &[
    "SELECT", "WITH", "(", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "EXISTS",
];

/// True when `sql` starts (after comments) with one of `words` (a keyword in capitals, or
/// `"("` for a parenthesized query).
pub(crate) fn starts_with_word(sql: &str, words: &[&str]) -> bool {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    if s.starts_with('(') {
        return words.contains(&"(");
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    words.contains(&word.as_str())
}

/// A server exception: `Code: 60, e.displayText() = DB::Exception: …` (18.x) or
/// `Code: 60. DB::Exception: … (UNKNOWN_TABLE) (version …)` (newer servers and chDB).
pub(crate) fn parse_exception(text: &str) -> Option<(u32, String)> {
    let at = text.find("Code: ")?;
    let rest = &text[at + 6..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let code = digits.parse().ok()?;
    let rest = &rest[digits.len()..];
    if !(rest.starts_with(',') || rest.starts_with('.')) || !rest.contains("DB::Exception") {
        return None;
    }
    let msg = rest
        .split_once("DB::Exception: ")
        .map_or(rest, |(_, m)| m)
        .trim();
    let msg = msg
        .strip_suffix(", e.what() = DB::Exception")
        .unwrap_or(msg);
    Some((code, msg.trim().to_string()))
}

/// An exception the server wrote after the rows it had already sent (the HTTP status was
/// already 200): the last non-empty line of the body, or the line before newer servers'
/// `__exception__` marker.
pub(crate) fn trailing_exception(tail: &[u8]) -> Option<(u32, String)> {
    let text = String::from_utf8_lossy(tail);
    let mut lines = text.lines().rev().filter(|l| !l.trim().is_empty());
    let mut last = lines.next()?;
    if last.contains("__exception__") {
        last = lines.find(|l| !l.contains("__exception__"))?;
    }
    if !last.starts_with("Code: ") {
        return None;
    }
    parse_exception(last)
}

/// The engine error for server exception `code` with `message`, classified by code.
pub(crate) fn server_error(target: &str, code: u32, message: &str) -> EngineError {
    let kind = match code {
        // TIMEOUT_EXCEEDED
        159 => ErrorKind::Timeout,
        // UNKNOWN_USER, WRONG_PASSWORD, REQUIRED_PASSWORD, AUTHENTICATION_FAILED
        192 | 193 | 194 | 516 => ErrorKind::Config,
        _ => ErrorKind::Statement,
    };
    let fix = if kind == ErrorKind::Config {
        " (check the user and password of the target URL, clickhouse://user:password@host:port)"
    } else {
        ""
    };
    EngineError::new(
        kind,
        format!("target '{target}': ClickHouse error {code}: {message}{fix}"),
    )
    .with_code(format!("ClickHouse {code}"))
}

/// The settings query behind `EngineInfo::settings`.
pub(crate) const CHANGED_SETTINGS: &str =
    "SELECT name, value FROM system.settings WHERE changed ORDER BY name";

/// `database.table` split; a bare name is in `current`.
pub(crate) fn qualified<'a>(table: &'a str, current: &'a str) -> (&'a str, &'a str) {
    match table.split_once('.') {
        Some((d, t)) => (d.trim_matches('`'), t.trim_matches('`')),
        None => (current, table.trim_matches('`')),
    }
}

/// The catalog query for a table's size: active parts' bytes on disk, compressed and
/// uncompressed column bytes, and the part count (columns present since ClickHouse 18).
pub(crate) fn parts_query(database: &str, table: &str) -> String {
    format!(
        "SELECT sum(bytes_on_disk), sum(data_uncompressed_bytes), count() FROM system.parts \
         WHERE active AND database = {} AND table = {}",
        literal(database),
        literal(table)
    )
}

/// The table's engine, to tell "no parts yet" from "not a MergeTree table".
pub(crate) fn engine_query(database: &str, table: &str) -> String {
    format!(
        "SELECT engine FROM system.tables WHERE database = {} AND name = {}",
        literal(database),
        literal(table)
    )
}

/// Turns the answers of [`parts_query`] and [`engine_query`] into a size.
pub(crate) fn table_size(
    database: &str,
    table: &str,
    parts: [Option<&str>; 3],
    engine: Option<&str>,
) -> Result<Option<TableSize>, EngineError> {
    let num = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let Some(engine) = engine else {
        return Err(EngineError::statement(format!(
            "no table {table} in database {database}"
        )));
    };
    if num(parts[2]) == 0 && !engine.contains("MergeTree") {
        // Memory, Log, … tables keep no parts; their size is not in the catalog.
        return Ok(None);
    }
    Ok(Some(TableSize {
        data_bytes: num(parts[0]),
        index_bytes: None,
        uncompressed_bytes: Some(num(parts[1])),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_and_comments() {
        let s = "CREATE TABLE t (a String); -- a; comment\nINSERT INTO t VALUES ('x;y'), ('it\\'s;');\n/* ; */ SELECT 1;;";
        assert_eq!(
            split_statements(s),
            vec![
                "CREATE TABLE t (a String)",
                "-- a; comment\nINSERT INTO t VALUES ('x;y'), ('it\\'s;')",
                "/* ; */ SELECT 1"
            ]
        );
        assert!(split_statements(" -- only a comment\n").is_empty());
        assert_eq!(split_statements("SELECT 2"), vec!["SELECT 2"]);
    }

    #[test]
    fn set_statements() {
        let s = parse_set("SET max_threads = 2, join_use_nulls='1' ;")
            .unwrap()
            .unwrap();
        assert_eq!(
            s,
            vec![
                ("max_threads".to_string(), "2".to_string()),
                ("join_use_nulls".to_string(), "1".to_string())
            ]
        );
        assert!(parse_set("SELECT 1").is_none());
        assert!(parse_set("SETTINGS").is_none());
        assert!(parse_set("set x").unwrap().is_err());
        assert!(parse_set("set a-b = 1").unwrap().is_err());
        assert_eq!(parse_use("USE `other`;"), Some("other".into()));
        assert_eq!(parse_use("user"), None);
        assert_eq!(parse_use("USE a b"), None);
    }

    #[test]
    fn exceptions_of_old_and_new_servers() {
        let old = "Code: 44, e.displayText() = DB::Exception: LowCardinality type is not allowed., e.what() = DB::Exception\n";
        assert_eq!(
            parse_exception(old),
            Some((44, "LowCardinality type is not allowed.".into()))
        );
        let new = "[chdb] Code: 47. DB::Exception: Unknown expression identifier `bogus`. (UNKNOWN_IDENTIFIER)";
        let (code, msg) = parse_exception(new).unwrap();
        assert_eq!(code, 47);
        assert!(msg.starts_with("Unknown expression identifier"), "{msg}");
        assert_eq!(parse_exception("Code: 12 without exception"), None);

        let body = b"0\n0\nCode: 395, e.displayText() = DB::Exception: Value passed to 'throwIf' function is non zero, e.what() = DB::Exception\n\n";
        assert_eq!(trailing_exception(body).unwrap().0, 395);
        let marked = b"1\n__exception__\nCode: 395. DB::Exception: boom. (FUNCTION_THROW_IF_VALUE_IS_NON_ZERO)\n123 __exception__\n";
        assert_eq!(trailing_exception(marked).unwrap().0, 395);
        assert_eq!(trailing_exception(b"1\n2\n"), None);
        assert_eq!(trailing_exception(b""), None);
    }

    #[test]
    fn errors_are_classified() {
        let e = server_error("ch", 516, "bad password");
        assert_eq!(e.kind, ErrorKind::Config);
        assert_eq!(e.code.as_deref(), Some("ClickHouse 516"));
        assert!(e.message.contains("clickhouse://user:password@"), "{e}");
        assert_eq!(server_error("ch", 60, "x").kind, ErrorKind::Statement);
        assert_eq!(server_error("ch", 159, "x").kind, ErrorKind::Timeout);
    }

    #[test]
    fn literals_and_names() {
        assert_eq!(literal("it's a \\ test"), "'it\\'s a \\\\ test'");
        assert_eq!(qualified("db.t", "cur"), ("db", "t"));
        assert_eq!(qualified("t", "cur"), ("cur", "t"));
        assert!(starts_with_word(
            "-- c\n /* x */ select 1",
            &["SELECT", "WITH"]
        ));
        assert!(!starts_with_word("SHOW TABLES", &["SELECT", "WITH"]));
    }

    #[test]
    fn sizes() {
        let s = table_size(
            "d",
            "t",
            [Some("100"), Some("400"), Some("2")],
            Some("MergeTree"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.data_bytes, 100);
        assert_eq!(s.uncompressed_bytes, Some(400));
        assert_eq!(
            table_size("d", "t", [None, None, Some("0")], Some("Memory")).unwrap(),
            None
        );
        assert!(table_size("d", "t", [None, None, Some("0")], None).is_err());
    }
}
