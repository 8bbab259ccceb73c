//! Load once, run many (sysbench's `prepare`/`run`): [`prepare`] loads every target of a
//! plan and records what it loaded in a table `dbdelta_prepared` of the target's own
//! database (schema, row count and a checksum of every table); a run with `--use-existing`
//! checks the tables against that record before it skips the load ([`check`]) and records
//! what its write steps left afterwards ([`record_after_run`]), so the next run checks
//! against that.
//!
//! The checksum is cheap on any size: `min(id)`, `max(id)` (index lookups) and `sum(k)`
//! (one scan), which a deleted, inserted or updated row changes.

use crate::error::LabError;
use crate::plan::RunPlan;
use crate::progress::LabProgress;
use dbdelta_engine::{Connection, Engine, EngineError};
use dbdelta_model::{Dialect, RunOptions};
use dbdelta_workload::suite::Dataset;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The table holding the record, in the target's database.
pub const RECORD_TABLE: &str = "dbdelta_prepared";

/// What `prepare` loaded into one target, and what the last run left there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The suite whose data set was loaded.
    pub suite: String,
    /// Tables loaded (`--tables`).
    pub tables: u32,
    /// Rows loaded per table (`--table-size`).
    pub table_size: u64,
    /// The seed the rows were generated with (`--seed`).
    pub seed: u64,
    /// The tables as they are now: after the load, or after the last run on them.
    pub state: Vec<TableState>,
    /// Run directories that ran on this data since the load, oldest first.
    #[serde(default)]
    pub runs: Vec<String>,
}

/// One table's schema, row count and checksum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableState {
    /// Table name.
    pub table: String,
    /// Columns and types as the engine reports them.
    pub schema: String,
    /// Rows in the table.
    pub rows: u64,
    /// `min(id)`, `max(id)` and `sum(k)`.
    pub checksum: String,
}

/// What `prepare` did for one target.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The target.
    pub target: String,
    /// Rows loaded, all tables together.
    pub rows: u64,
    /// Seconds the load took.
    pub secs: f64,
    /// Where its data is (SQLite file's or server's data directory), when on this machine.
    pub data: Option<PathBuf>,
}

pub use crate::plan::prepared_dir as target_dir;

/// Whether a plan can load once and run many; the reason when not.
pub fn supported(plan: &RunPlan) -> Result<(), LabError> {
    let refuse = |why: String| Err(LabError::Input(why));
    if plan.ibench.is_some() || plan.queryset.is_some() || plan.suite.dataset != Dataset::Sbtest {
        return refuse(format!(
            "--use-existing and `dbdelta prepare` work with the sysbench suite only (suite {} \
             loads its data in every run): drop --use-existing, or give --suite sysbench",
            plan.options.suite
        ));
    }
    Ok(())
}

/// Loads every target of `plan` (its data under `data_dir/<target>`) and records what was
/// loaded. Each target is stopped afterwards, its data kept.
pub fn prepare(
    plan: &RunPlan,
    data_dir: &Path,
    progress: &dyn LabProgress,
) -> Result<Vec<Prepared>, LabError> {
    supported(plan)?;
    let bench = dbdelta_workload::registry::benchmark(plan.suite.dataset);
    let mut done = Vec::new();
    for spec in &plan.targets {
        let mut engine = open(plan, spec, data_dir)?;
        progress.message(&match bench.load_summary(&plan.options) {
            Some(what) => format!("[{}] load: {what}", spec.name),
            None => format!("[{}] load", spec.name),
        });
        let start = Instant::now();
        let loaded = bench.load(engine.as_ref(), &plan.options);
        let secs = start.elapsed().as_secs_f64();
        let result = loaded
            .map_err(|e| LabError::Input(format!("target {}: load failed: {e}", spec.name)))
            .and_then(|rows| {
                let mut conn = connect(engine.as_ref(), &spec.name)?;
                let tables = bench.tables(&plan.options);
                let state = measure(conn.as_mut(), &tables).map_err(|e| sql_err(&spec.name, e))?;
                let record = Record {
                    suite: plan.options.suite.clone(),
                    tables: plan.options.tables,
                    table_size: plan.options.table_size,
                    seed: plan.options.seed,
                    state,
                    runs: Vec::new(),
                };
                write_record(conn.as_mut(), &record).map_err(|e| sql_err(&spec.name, e))?;
                Ok(rows)
            });
        let data = engine.data_dir();
        let _ = engine.shutdown();
        let rows = result?;
        progress.note(&format!(
            "[{}] prepared: {rows} rows in {secs:.1} s, recorded in table {RECORD_TABLE}",
            spec.name
        ));
        done.push(Prepared {
            target: spec.name.clone(),
            rows,
            secs,
            data,
        });
    }
    Ok(done)
}

/// Checks every target's tables against its record before a `--use-existing` run: the
/// record must exist, be of this plan (suite, tables, rows per table, seed), and the tables
/// must be as recorded. The first mismatch is refused, naming the target, table and values.
pub fn check(plan: &RunPlan, data_dir: &Path, progress: &dyn LabProgress) -> Result<(), LabError> {
    supported(plan)?;
    let bench = dbdelta_workload::registry::benchmark(plan.suite.dataset);
    for spec in &plan.targets {
        let mut engine = open(plan, spec, data_dir)?;
        let checked = (|| -> Result<(), LabError> {
            let mut conn = connect(engine.as_ref(), &spec.name)?;
            let record = read_record(conn.as_mut())
                .map_err(|e| sql_err(&spec.name, e))?
                .ok_or_else(|| {
                    LabError::Input(format!(
                        "--use-existing: target {} has no data prepared by dbdelta (no table \
                         {RECORD_TABLE}{}): run `dbdelta prepare` with the same flags first",
                        spec.name,
                        where_(data_dir, spec)
                    ))
                })?;
            plan_difference(&record, &plan.options).map_err(|d| {
                LabError::Input(format!("--use-existing: target {}: {d}", spec.name))
            })?;
            let found = measure(conn.as_mut(), &bench.tables(&plan.options))
                .map_err(|e| sql_err(&spec.name, e))?;
            state_difference(&record.state, &found).map_err(|d| {
                LabError::Input(format!(
                    "--use-existing: target {}: {d}; run `dbdelta prepare` again",
                    spec.name
                ))
            })?;
            if !record.runs.is_empty() {
                progress.note(&format!(
                    "[{}] the prepared data was changed by {} earlier run(s), last {}",
                    spec.name,
                    record.runs.len(),
                    record.runs.last().map(String::as_str).unwrap_or_default()
                ));
            }
            Ok(())
        })();
        let _ = engine.shutdown();
        checked?;
        progress.note(&format!(
            "[{}] prepared data matches its record: skipping the load",
            spec.name
        ));
    }
    Ok(())
}

/// After a `--use-existing` run: records what its write steps left in every target, so the
/// next run checks against that (a table changed by anything else is then refused).
pub fn record_after_run(
    plan: &RunPlan,
    data_dir: &Path,
    run_dir: &Path,
    progress: &dyn LabProgress,
) {
    let bench = dbdelta_workload::registry::benchmark(plan.suite.dataset);
    for spec in &plan.targets {
        let updated = open(plan, spec, data_dir).and_then(|mut engine| {
            let r = (|| -> Result<(), LabError> {
                let mut conn = connect(engine.as_ref(), &spec.name)?;
                let mut record = read_record(conn.as_mut())
                    .map_err(|e| sql_err(&spec.name, e))?
                    .ok_or_else(|| LabError::Input(format!("table {RECORD_TABLE} is gone")))?;
                record.state = measure(conn.as_mut(), &bench.tables(&plan.options))
                    .map_err(|e| sql_err(&spec.name, e))?;
                record.runs.push(run_dir.display().to_string());
                write_record(conn.as_mut(), &record).map_err(|e| sql_err(&spec.name, e))
            })();
            let _ = engine.shutdown();
            r
        });
        if let Err(e) = updated {
            progress.warning(&format!(
                "[{}] could not record the data this run left ({}): the next --use-existing \
                 run will refuse it; run `dbdelta prepare` again",
                spec.name,
                crate::error::chain(&e)
            ));
        }
    }
}

/// Where a target's prepared data is looked for, for messages.
fn where_(data_dir: &Path, spec: &crate::plan::Target) -> String {
    match spec.location {
        dbdelta_model::Location::Url { .. } => String::new(),
        _ => format!(" under {}", target_dir(data_dir, &spec.name).display()),
    }
}

fn open(
    plan: &RunPlan,
    spec: &crate::plan::Target,
    data_dir: &Path,
) -> Result<Box<dyn Engine>, LabError> {
    let scratch = target_dir(data_dir, &spec.name);
    std::fs::create_dir_all(&scratch).map_err(|source| LabError::Io {
        context: format!("--data-dir: cannot create {}", scratch.display()),
        source,
    })?;
    spec.open(&scratch, &plan.open).map_err(|e| {
        LabError::Input(match e.to_string() {
            m if m.contains(&format!("target '{}'", spec.name)) => m,
            m => format!("target {}: {m}", spec.name),
        })
    })
}

fn connect(engine: &dyn Engine, target: &str) -> Result<Box<dyn Connection>, LabError> {
    engine.connect().map_err(|e| sql_err(target, e))
}

fn sql_err(target: &str, e: EngineError) -> LabError {
    LabError::Input(format!("target {target}: {e}"))
}

/// The difference between the plan a record was loaded for and this run's, if any.
pub fn plan_difference(record: &Record, opts: &RunOptions) -> Result<(), String> {
    let mut diffs = Vec::new();
    if record.suite != opts.suite {
        diffs.push(format!("suite {} (run: {})", record.suite, opts.suite));
    }
    if record.tables != opts.tables {
        diffs.push(format!("--tables {} (run: {})", record.tables, opts.tables));
    }
    if record.table_size != opts.table_size {
        diffs.push(format!(
            "--table-size {} (run: {})",
            record.table_size, opts.table_size
        ));
    }
    if record.seed != opts.seed {
        diffs.push(format!("--seed {} (run: {})", record.seed, opts.seed));
    }
    match diffs.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the data was prepared with {}: give the same flags, or run `dbdelta prepare` again",
            diffs.join(", ")
        )),
    }
}

/// The first difference between the recorded tables and those found, naming the table.
pub fn state_difference(recorded: &[TableState], found: &[TableState]) -> Result<(), String> {
    for r in recorded {
        let Some(f) = found
            .iter()
            .find(|f| f.table == r.table && !f.schema.is_empty())
        else {
            return Err(format!("table {} is missing", r.table));
        };
        if f.schema != r.schema {
            return Err(format!(
                "table {} has schema ({}), recorded ({})",
                r.table, f.schema, r.schema
            ));
        }
        if f.rows != r.rows {
            return Err(format!(
                "table {} has {} rows, recorded {} ({:+})",
                r.table,
                f.rows,
                r.rows,
                f.rows as i128 - r.rows as i128
            ));
        }
        if f.checksum != r.checksum {
            return Err(format!(
                "table {} has {} rows as recorded but its checksum is {}, recorded {} (rows were changed)",
                r.table, f.rows, f.checksum, r.checksum
            ));
        }
    }
    if let Some(extra) = found
        .iter()
        .find(|f| !f.schema.is_empty() && !recorded.iter().any(|r| r.table == f.table))
    {
        return Err(format!("table {} is not in the record", extra.table));
    }
    Ok(())
}

/// The schema, row count and checksum of each table; a missing table reads as no columns.
pub fn measure(
    conn: &mut dyn Connection,
    tables: &[String],
) -> Result<Vec<TableState>, EngineError> {
    let dialect = conn.dialect();
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let schema = conn
            .query_scalar(&schema_sql(dialect, table))?
            .unwrap_or_default();
        if schema.is_empty() {
            out.push(TableState {
                table: table.clone(),
                schema,
                rows: 0,
                checksum: String::new(),
            });
            continue;
        }
        let scalar = |conn: &mut dyn Connection, sql: String| -> Result<String, EngineError> {
            Ok(conn
                .query_scalar(&sql)?
                .unwrap_or_else(|| "NULL".to_string()))
        };
        let rows = scalar(&mut *conn, format!("SELECT count(*) FROM {table}"))?;
        let checksum = format!(
            "min(id)={} max(id)={} sum(k)={}",
            scalar(&mut *conn, format!("SELECT min(id) FROM {table}"))?,
            scalar(&mut *conn, format!("SELECT max(id) FROM {table}"))?,
            scalar(&mut *conn, format!("SELECT sum(k) FROM {table}"))?
        );
        out.push(TableState {
            table: table.clone(),
            schema,
            rows: rows.trim().parse().unwrap_or(0),
            checksum,
        });
    }
    Ok(out)
}

/// The statement reading a table's columns and types as one line.
fn schema_sql(dialect: Dialect, table: &str) -> String {
    match dialect {
        Dialect::Postgres => format!(
            "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) \
             FROM information_schema.columns WHERE table_schema = current_schema() AND \
             table_name = '{table}'"
        ),
        Dialect::Mysql => format!(
            "SELECT GROUP_CONCAT(CONCAT(column_name, ' ', column_type) ORDER BY \
             ordinal_position SEPARATOR ', ') FROM information_schema.columns WHERE \
             table_schema = DATABASE() AND table_name = '{table}'"
        ),
        // SQLite, and any other SQL engine that has its table_info.
        _ => format!(
            "SELECT group_concat(name || ' ' || type, ', ') FROM \
             (SELECT name, type FROM pragma_table_info('{table}') ORDER BY cid)"
        ),
    }
}

/// The record, when the table holds one.
fn read_record(conn: &mut dyn Connection) -> Result<Option<Record>, EngineError> {
    let exists = conn
        .query_scalar(&schema_sql(conn.dialect(), RECORD_TABLE))?
        .is_some_and(|s| !s.is_empty());
    if !exists {
        return Ok(None);
    }
    let text = conn.query_scalar(&format!("SELECT record FROM {RECORD_TABLE}"))?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

/// Replaces the record.
fn write_record(conn: &mut dyn Connection, record: &Record) -> Result<(), EngineError> {
    let json = serde_json::to_string(record).unwrap_or_default();
    // A string literal: quotes doubled (SQL), backslashes too (MySQL's default escapes).
    let mut literal = json.replace('\'', "''");
    if conn.dialect() == Dialect::Mysql {
        literal = literal.replace('\\', "\\\\");
    }
    conn.batch(&format!(
        "CREATE TABLE IF NOT EXISTS {RECORD_TABLE} (record TEXT NOT NULL)"
    ))?;
    conn.batch(&format!("DELETE FROM {RECORD_TABLE}"))?;
    conn.batch(&format!(
        "INSERT INTO {RECORD_TABLE} (record) VALUES ('{literal}')"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(table: &str, rows: u64, sum: u64) -> TableState {
        TableState {
            table: table.to_string(),
            schema: "id INTEGER, k INTEGER".to_string(),
            rows,
            checksum: format!("min(id)=1 max(id)={rows} sum(k)={sum}"),
        }
    }

    #[test]
    fn a_deleted_row_is_named_with_table_and_counts() {
        let rec = [state("sbtest1", 100, 5000)];
        let err = state_difference(&rec, &[state("sbtest1", 99, 4950)]).unwrap_err();
        assert!(
            err.contains("sbtest1") && err.contains("99") && err.contains("100"),
            "{err}"
        );
    }

    #[test]
    fn a_changed_row_is_caught_by_the_checksum() {
        let rec = [state("sbtest1", 100, 5000)];
        let err = state_difference(&rec, &[state("sbtest1", 100, 5001)]).unwrap_err();
        assert!(err.contains("checksum") && err.contains("sbtest1"), "{err}");
        assert!(state_difference(&rec, &rec).is_ok());
    }

    #[test]
    fn a_missing_or_extra_table_is_named() {
        let rec = [state("sbtest1", 10, 1), state("sbtest2", 10, 1)];
        let err = state_difference(&rec, &rec[..1]).unwrap_err();
        assert!(err.contains("sbtest2 is missing"), "{err}");
        let err = state_difference(&rec[..1], &rec).unwrap_err();
        assert!(err.contains("sbtest2 is not in the record"), "{err}");
    }
}
