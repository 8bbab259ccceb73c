//! The store's schema versions and the SQL that takes each version to the next, in the
//! dialects of both stores.
//!
//! The version is the one row of `dbdelta_schema_version`. A store without that table but with
//! `dbdelta_history` was written before the schema was versioned: version 1. An empty
//! database is version 0. Opening a store applies the missing steps in one transaction.

/// The schema this build writes.
pub const CURRENT: u32 = 2;

/// Which SQL a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// The table that holds the version.
pub(crate) const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS dbdelta_schema_version (version INTEGER NOT NULL)";

/// The statements that take schema `from` to `from + 1`.
pub(crate) fn step(from: u32, dialect: Dialect) -> Vec<&'static str> {
    match (from, dialect) {
        // 1: one row per point, its id and its JSON document.
        (0, _) => vec![
            "CREATE TABLE IF NOT EXISTS dbdelta_history (id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
        ],
        // 2: the run, its start, host and target as columns beside the document, so that
        // `history prune` lists and removes runs without decoding every document.
        (1, d) => {
            let mut sql = vec![
                "ALTER TABLE dbdelta_history ADD COLUMN run_id TEXT",
                "ALTER TABLE dbdelta_history ADD COLUMN run_started TEXT",
                "ALTER TABLE dbdelta_history ADD COLUMN host TEXT",
                "ALTER TABLE dbdelta_history ADD COLUMN target TEXT",
            ];
            sql.push(match d {
                Dialect::Sqlite => {
                    "UPDATE dbdelta_history SET run_id = json_extract(doc, '$.run_id'), \
                     run_started = json_extract(doc, '$.run_started'), \
                     host = json_extract(doc, '$.host'), target = json_extract(doc, '$.target')"
                }
                Dialect::Postgres => {
                    "UPDATE dbdelta_history SET run_id = doc::json->>'run_id', \
                     run_started = doc::json->>'run_started', \
                     host = doc::json->>'host', target = doc::json->>'target'"
                }
            });
            sql.push("CREATE INDEX dbdelta_history_run ON dbdelta_history (run_id, target)");
            sql
        }
        _ => Vec::new(),
    }
}

/// Every statement from schema `found` to [`CURRENT`], then the new version recorded.
pub(crate) fn migration(found: u32, dialect: Dialect) -> Vec<String> {
    let mut sql: Vec<String> = (found..CURRENT)
        .flat_map(|v| step(v, dialect))
        .map(str::to_string)
        .collect();
    sql.push(VERSION_TABLE.to_string());
    sql.push("DELETE FROM dbdelta_schema_version".to_string());
    sql.push(format!(
        "INSERT INTO dbdelta_schema_version (version) VALUES ({CURRENT})"
    ));
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_below_current_has_a_step() {
        for d in [Dialect::Sqlite, Dialect::Postgres] {
            for v in 0..CURRENT {
                assert!(!step(v, d).is_empty(), "no step from {v} in {d:?}");
            }
            assert!(step(CURRENT, d).is_empty());
        }
    }
}
