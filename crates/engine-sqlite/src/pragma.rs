//! Checking that a PRAGMA given as a target parameter took effect. SQLite ignores a value it
//! does not know (`journal_mode=BANANA` leaves the journal as it was) and some settings apply
//! only to a new database (`page_size`), so the value is read back and compared.

use rusqlite::types::Value;

/// A PRAGMA SQLite accepted but did not apply: what it reads instead, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PRAGMA {name}={value} did not take effect: SQLite reports {shown}{hint}")]
pub(crate) struct PragmaIgnored {
    name: String,
    value: String,
    shown: String,
    hint: String,
}

/// Words SQLite accepts for PRAGMAs that read back as numbers or as one of a few words.
fn words(name: &str) -> Option<&'static [(&'static str, i64)]> {
    const BOOL: &[(&str, i64)] = &[
        ("on", 1),
        ("true", 1),
        ("yes", 1),
        ("off", 0),
        ("false", 0),
        ("no", 0),
    ];
    Some(match name {
        "synchronous" => &[("off", 0), ("normal", 1), ("full", 2), ("extra", 3)],
        "temp_store" => &[("default", 0), ("file", 1), ("memory", 2)],
        "auto_vacuum" => &[("none", 0), ("full", 1), ("incremental", 2)],
        "secure_delete" => &[
            ("on", 1),
            ("true", 1),
            ("off", 0),
            ("false", 0),
            ("fast", 2),
        ],
        "journal_mode" => &[
            ("delete", 0),
            ("truncate", 0),
            ("persist", 0),
            ("memory", 0),
            ("wal", 0),
            ("off", 0),
        ],
        "locking_mode" => &[("normal", 0), ("exclusive", 0)],
        _ => BOOL,
    })
}

/// `Ok` when `PRAGMA name` now reads `value` (or reads nothing: a PRAGMA that is an action,
/// such as `optimize`); otherwise why not, with the valid words where SQLite has a fixed set.
pub(crate) fn check_took_effect(
    conn: &rusqlite::Connection,
    name: &str,
    value: &str,
) -> Result<(), PragmaIgnored> {
    let name = name.to_ascii_lowercase();
    let Ok(now) = conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, Value>(0)) else {
        return Ok(());
    };
    let wanted = value.to_ascii_lowercase();
    let table = words(&name).unwrap_or(&[]);
    let matches = match &now {
        Value::Integer(n) => match wanted.parse::<i64>() {
            Ok(w) => w == *n,
            Err(_) => table.iter().any(|(w, v)| *w == wanted && v == n),
        },
        Value::Text(t) => t.eq_ignore_ascii_case(&wanted),
        Value::Real(x) => wanted.parse::<f64>().is_ok_and(|w| w == *x),
        Value::Null | Value::Blob(_) => true,
    };
    if matches {
        return Ok(());
    }
    let shown = match &now {
        Value::Integer(n) => n.to_string(),
        Value::Text(t) => t.clone(),
        Value::Real(x) => x.to_string(),
        Value::Null | Value::Blob(_) => String::new(),
    };
    let hint = if name == "page_size" || name == "encoding" || name == "auto_vacuum" {
        " (it applies only to a new database file: remove the file or give a new path)".to_string()
    } else if words(&name).is_some_and(|t| !t.is_empty()) && wanted.parse::<i64>().is_err() {
        let valid: Vec<String> = table.iter().map(|(w, _)| w.to_ascii_uppercase()).collect();
        format!("; valid values: {}", valid.join(", "))
    } else {
        String::new()
    };
    Err(PragmaIgnored {
        name,
        value: value.to_string(),
        shown,
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::{check_took_effect, PragmaIgnored};

    /// A fresh database file per test (tests run in parallel).
    fn conn(name: &str) -> rusqlite::Connection {
        let dir = std::env::temp_dir().join(format!("dbdelta-pragma-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}.db"));
        let _ = std::fs::remove_file(&file);
        rusqlite::Connection::open(file).unwrap()
    }

    fn apply(c: &rusqlite::Connection, k: &str, v: &str) -> Result<(), PragmaIgnored> {
        let mut s = c.prepare(&format!("PRAGMA {k}={v}")).unwrap();
        let mut rows = s.raw_query();
        while rows.next().unwrap().is_some() {}
        check_took_effect(c, k, v)
    }

    #[test]
    fn values_sqlite_took_are_accepted() {
        let c = conn("accepted");
        for (k, v) in [
            ("journal_mode", "WAL"),
            ("synchronous", "NORMAL"),
            ("synchronous", "2"),
            ("foreign_keys", "ON"),
            ("cache_size", "-4000"),
            ("temp_store", "memory"),
            ("optimize", "0x10002"),
        ] {
            assert_eq!(apply(&c, k, v), Ok(()), "{k}={v}");
        }
    }

    #[test]
    fn ignored_values_are_refused_with_the_valid_ones() {
        let c = conn("refused");
        let e = apply(&c, "journal_mode", "BANANA").unwrap_err().to_string();
        assert!(
            e.contains("journal_mode=BANANA") && e.contains("WAL"),
            "{e}"
        );
        let e = apply(&c, "synchronous", "SOMETIMES")
            .unwrap_err()
            .to_string();
        assert!(e.contains("NORMAL"), "{e}");
    }
}
