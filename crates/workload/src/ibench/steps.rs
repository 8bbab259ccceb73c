//! The step list of `suites/ibench.toml` (iq.sh), read and validated once.

use crate::suite::SuiteError;
use dbdelta_model::QuickPreset;
use serde::Deserialize;

/// The built-in step list.
pub const BUILTIN: &str = include_str!("../../../../suites/ibench.toml");

/// Where a step's per-client row count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowsFrom {
    /// `--rows-load` (l.i0).
    Load,
    /// One batch of `rows_per_commit` rows (l.x).
    Index,
    /// 4/5 of `--rows-write` (l.i1).
    Write1,
    /// 1/5 of `--rows-write` (l.i2).
    Write2,
    /// `--query-secs` × `rate` (read+write steps).
    Rate,
}

/// The query thread's statements in a read+write step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// One of the three covering-index range queries at random (iibench.py's range queries).
    Range,
    /// 10 ids in the live id range (iibench.py's --query_pk_only).
    Point,
}

/// One `[[step]]` of the ibench suite.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IbenchStep {
    /// Step name as published (`l.i0`, `qr100`, …).
    pub name: String,
    /// Section title of the report.
    #[serde(default)]
    pub title: String,
    /// The settle ("vac") action instead of a measured step.
    #[serde(default)]
    pub settle: bool,
    /// Where the row count comes from (measured steps).
    pub rows: Option<RowsFrom>,
    /// Rows per insert statement (= per transaction).
    #[serde(default)]
    pub rows_per_commit: u64,
    /// One delete of the oldest `rows_per_commit` rows per insert (FIFO, iibench.py's --delete_per_insert).
    #[serde(default)]
    pub deletes: bool,
    /// Create the 3 secondary indexes after the inserts (l.x).
    #[serde(default)]
    pub create_indexes: bool,
    /// Background insert rate, rows/s per client (read+write steps).
    pub rate: Option<u32>,
    /// Query thread statements (read+write steps).
    pub queries: Option<QueryKind>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    #[serde(default)]
    description: String,
    /// `[quick]`: the rounds a step splits into at `--scale quick`.
    #[serde(default)]
    quick: Option<QuickPreset>,
    #[serde(rename = "step")]
    steps: Vec<IbenchStep>,
}

/// Parses an ibench step list's `[quick]` preset: only `rounds` applies (a step's length is
/// its rows, not seconds).
pub fn parse_quick(text: &str) -> Result<Option<QuickPreset>, SuiteError> {
    let file: File = toml::from_str(text).map_err(|e| SuiteError::Parse {
        origin: "ibench".to_string(),
        message: e.to_string(),
    })?;
    if let Some(q) = &file.quick {
        let secs = [
            q.read_secs,
            q.write_secs,
            q.insert_secs,
            q.warmup_secs,
            q.round_warmup_secs,
        ];
        if q.rounds == Some(0) || secs.iter().any(Option::is_some) {
            return Err(SuiteError::Parse {
                origin: "ibench".to_string(),
                message: "[quick]: only rounds (at least 1) applies to the Insert Benchmark".into(),
            });
        }
    }
    Ok(file.quick)
}

/// The built-in `[quick]` preset (interleaved rounds per step).
pub fn builtin_quick() -> Option<QuickPreset> {
    parse_quick(BUILTIN).ok().flatten()
}

/// Parses and validates an ibench step list.
pub fn parse(text: &str) -> Result<Vec<IbenchStep>, SuiteError> {
    let origin = "ibench".to_string();
    let file: File = toml::from_str(text).map_err(|e| SuiteError::Parse {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    for (i, s) in file.steps.iter().enumerate() {
        let err = |m: &str| SuiteError::Step {
            origin: origin.clone(),
            index: i + 1,
            name: s.name.clone(),
            message: m.to_string(),
        };
        if s.settle {
            continue;
        }
        if s.rows.is_none() || s.rows_per_commit == 0 {
            return Err(err("a measured step needs rows and rows_per_commit >= 1"));
        }
        if (s.rows == Some(RowsFrom::Rate)) != s.rate.is_some() {
            return Err(err("rows = \"rate\" and rate = N go together"));
        }
        if s.queries.is_some() && s.rate.is_none() {
            return Err(err("query steps need a background insert rate"));
        }
    }
    Ok(file.steps)
}

/// The built-in ibench steps.
pub fn builtin() -> Vec<IbenchStep> {
    parse(BUILTIN).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_has_the_published_sequence() {
        let steps = parse(BUILTIN).unwrap();
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "l.i0", "l.x", "l.i1", "l.i2", "settle", "qr100", "qp100", "qr500", "qp500",
                "qr1000", "qp1000"
            ]
        );
        assert_eq!(steps[0].rows_per_commit, 100);
        assert_eq!(steps[2].rows_per_commit, 50);
        assert_eq!(steps[3].rows_per_commit, 5);
        assert!(steps[1].create_indexes);
        assert_eq!(steps[9].rate, Some(1000));
        assert_eq!(steps[10].queries, Some(QueryKind::Point));
    }

    #[test]
    fn builtin_splits_steps_into_ten_rounds_at_the_quick_scale() {
        assert_eq!(builtin_quick().and_then(|q| q.rounds), Some(10));
        let e = parse_quick("name='x'\n[quick]\nread_secs=1\n[[step]]\nname='s'\nsettle=true\n");
        assert!(e.unwrap_err().to_string().contains("only rounds"));
    }

    #[test]
    fn inconsistent_steps_are_rejected() {
        let e = parse("name='x'\n[[step]]\nname='a'\nrows='rate'\nrows_per_commit=5\n");
        assert!(e.unwrap_err().to_string().contains("rate"));
    }
}
