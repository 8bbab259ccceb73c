//! pgbench's built-in scripts (PostgreSQL's pgbench.c): the four `pgbench_*`
//! tables at a scale factor, loaded as `pgbench -i` does, and the `tpcb-like`,
//! `simple-update` and `select-only` transactions with their statement texts.

use crate::benchmark::{
    load_parallel, Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup,
};
use crate::rng::Rng;
use crate::schema::{drop_if_owned, ensure_ledger, record_owned};
use crate::suite::{Dataset, WorkloadKind};
use crate::Workload;
use dbdelta_engine::{
    Connection, Dialect, Engine, EngineError, OpBatch, OwnedValue, RowSource, StmtId,
};
use dbdelta_model::RunOptions;
use std::sync::Arc;

/// The tables, in pgbench's drop order.
pub const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// Accounts per branch (`naccounts`).
pub const ACCOUNTS_PER_BRANCH: i64 = 100_000;
/// Tellers per branch (`ntellers`).
pub const TELLERS_PER_BRANCH: i64 = 10;
/// From this scale on `aid` is a bigint (`SCALE_32BIT_THRESHOLD`).
const SCALE_32BIT_THRESHOLD: u32 = 20_000;

/// One of pgbench's built-in scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// `-b tpcb-like` (the default): three updates, a select and an insert.
    TpcbLike,
    /// `-N` / `-b simple-update`: the accounts update, the select and the insert.
    SimpleUpdate,
    /// `-S` / `-b select-only`: one select, no transaction block.
    SelectOnly,
}

impl Script {
    /// pgbench's built-in script of a kind; `None` for the others.
    pub fn of(kind: WorkloadKind) -> Option<Script> {
        Some(match kind {
            WorkloadKind::TpcbLike => Script::TpcbLike,
            WorkloadKind::SimpleUpdate => Script::SimpleUpdate,
            WorkloadKind::SelectOnly => Script::SelectOnly,
            _ => return None,
        })
    }

    /// pgbench's name of the script (`transaction type: <builtin: …>`).
    pub fn builtin_name(self) -> &'static str {
        match self {
            Script::TpcbLike => "TPC-B (sort of)",
            Script::SimpleUpdate => "simple update",
            Script::SelectOnly => "select only",
        }
    }
}

/// What every terminal of a pgbench step shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TpcbConfig {
    /// The script.
    pub script: Script,
    /// Scale factor: branches.
    pub scale: u32,
    /// Transactions per terminal (pgbench's `-t`); `None` = run for the step's duration.
    pub transactions: Option<u64>,
}

const UPDATE_ACCOUNTS: &str = "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?";
const SELECT_BALANCE: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = ?";
const UPDATE_TELLERS: &str = "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?";
const UPDATE_BRANCHES: &str = "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?";
const INSERT_HISTORY: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)";

/// One terminal of a pgbench step.
#[derive(Debug)]
pub struct Tpcb {
    config: TpcbConfig,
    rng: Rng,
    /// Statements in order: accounts update, select, tellers update, branches update,
    /// history insert.
    stmts: [StmtId; 5],
    /// `END` (PostgreSQL, SQLite) or `COMMIT` (MySQL has no END).
    end: &'static str,
    done: u64,
}

impl Tpcb {
    /// A terminal drawing from its own stream of the run's seed.
    pub fn new(config: TpcbConfig, seed: u64, stream: u64) -> Self {
        Tpcb {
            config,
            rng: Rng::new(seed, stream),
            stmts: [StmtId(0); 5],
            end: "END",
            done: 0,
        }
    }
}

impl Workload for Tpcb {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError> {
        self.end = if conn.dialect() == Dialect::Mysql {
            "COMMIT"
        } else {
            "END"
        };
        let texts = [
            UPDATE_ACCOUNTS,
            SELECT_BALANCE,
            UPDATE_TELLERS,
            UPDATE_BRANCHES,
            INSERT_HISTORY,
        ];
        for (slot, sql) in self.stmts.iter_mut().zip(texts) {
            *slot = conn.prepare(sql)?;
        }
        Ok(())
    }

    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        let scale = i64::from(self.config.scale);
        // The `\set` lines, in the script's order: aid, bid, tid, delta.
        let aid = self.rng.uniform(1, ACCOUNTS_PER_BRANCH * scale);
        let [upd_acc, sel, upd_tel, upd_br, ins] = self.stmts;
        self.done += 1;
        if self.config.script == Script::SelectOnly {
            ops.execute(sel).int(aid);
            return Ok(());
        }
        let bid = self.rng.uniform(1, scale);
        let tid = self.rng.uniform(1, TELLERS_PER_BRANCH * scale);
        let delta = self.rng.uniform(-5000, 5000);
        ops.query("BEGIN");
        ops.execute(upd_acc).int(delta).int(aid);
        ops.execute(sel).int(aid);
        if self.config.script == Script::TpcbLike {
            ops.execute(upd_tel).int(delta).int(tid);
            ops.execute(upd_br).int(delta).int(bid);
        }
        ops.execute(ins).int(tid).int(bid).int(aid).int(delta);
        ops.query(self.end);
        Ok(())
    }

    fn uses_transactions(&self) -> bool {
        self.config.script != Script::SelectOnly
    }

    fn finished(&self) -> bool {
        self.config.transactions.is_some_and(|n| self.done >= n)
    }
}

/// `CREATE TABLE` of one of the tables, pgbench's columns (`initCreateTables`); MySQL's
/// in `engine` (the target's table engine), else InnoDB.
pub fn create_table_sql(dialect: Dialect, engine: Option<&str>, table: &str, scale: u32) -> String {
    let aid = if scale >= SCALE_32BIT_THRESHOLD {
        "bigint"
    } else {
        "int"
    };
    let cols = match table {
        "pgbench_history" => {
            format!("tid int,bid int,aid {aid},delta int,mtime timestamp,filler char(22)")
        }
        "pgbench_tellers" => "tid int not null,bid int,tbalance int,filler char(84)".into(),
        "pgbench_accounts" => format!("aid {aid} not null,bid int,abalance int,filler char(84)"),
        _ => "bid int not null,bbalance int,filler char(88)".into(),
    };
    let with = match dialect {
        Dialect::Postgres if table != "pgbench_history" => " with (fillfactor=100)",
        Dialect::Mysql => &format!(" ENGINE={}", engine.unwrap_or("InnoDB")),
        _ => "",
    };
    format!("create table {table}({cols}){with}")
}

/// The statements that add the primary keys after the load (`p` step); SQLite cannot add
/// a primary key to a table, so it gets the equivalent unique index.
fn primary_keys(dialect: Dialect) -> [String; 3] {
    let keys = [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
    ];
    keys.map(|(t, c)| match dialect {
        Dialect::Sqlite => format!("create unique index {t}_pkey on {t} ({c})"),
        _ => format!("alter table {t} add primary key ({c})"),
    })
}

/// Rows of one table, as `pgbench -i`'s client-side generation writes them: branches
/// `k+1, 0, NULL`, tellers `k+1, k/10+1, 0, NULL`, accounts `k+1, k/100000+1, 0, ''`.
#[derive(Debug)]
pub struct TableRows {
    table: &'static str,
    next: i64,
    end: i64,
}

impl TableRows {
    /// Rows `from..to` (0-based `k`) of `table`.
    pub fn new(table: &'static str, from: i64, to: i64) -> Self {
        TableRows {
            table,
            next: from,
            end: to,
        }
    }
}

impl RowSource for TableRows {
    fn columns(&self) -> &[&'static str] {
        match self.table {
            "pgbench_branches" => &["bid", "bbalance", "filler"],
            "pgbench_tellers" => &["tid", "bid", "tbalance", "filler"],
            _ => &["aid", "bid", "abalance", "filler"],
        }
    }

    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.next >= self.end {
            return false;
        }
        let k = self.next;
        self.next += 1;
        out.push(OwnedValue::Int(k + 1));
        match self.table {
            "pgbench_branches" => {
                out.push(OwnedValue::Int(0));
                out.push(OwnedValue::Null);
            }
            "pgbench_tellers" => {
                out.push(OwnedValue::Int(k / TELLERS_PER_BRANCH + 1));
                out.push(OwnedValue::Int(0));
                out.push(OwnedValue::Null);
            }
            _ => {
                out.push(OwnedValue::Int(k / ACCOUNTS_PER_BRANCH + 1));
                out.push(OwnedValue::Int(0));
                out.push(OwnedValue::Text(String::new()));
            }
        }
        true
    }
}

/// `pgbench -i`'s steps `dtg` on one connection: drop (only tables dbdelta created),
/// create, and generate branches and tellers. Accounts follow with [`load_accounts`] (in
/// parallel by branch ranges), then [`finish_load`].
pub fn create_and_load_small(
    conn: &mut dyn Connection,
    scale: u32,
    i_own_this_database: bool,
) -> Result<u64, EngineError> {
    if scale == 0 {
        return Err(EngineError::config(
            "--scale-factor must be at least 1 (pgbench's -s)",
        ));
    }
    // Every table is checked (and dropped) before the ledger is written: a refused
    // database keeps no trace of dbdelta.
    for t in TABLES {
        drop_if_owned(conn, t, i_own_this_database)?;
    }
    ensure_ledger(conn)?;
    let dialect = conn.dialect();
    for t in TABLES {
        conn.query(&create_table_sql(dialect, conn.table_engine(), t, scale))?;
        record_owned(conn, t)?;
    }
    let s = i64::from(scale);
    let b = conn.bulk_insert(
        "pgbench_branches",
        &mut TableRows::new("pgbench_branches", 0, s),
    )?;
    let t = conn.bulk_insert(
        "pgbench_tellers",
        &mut TableRows::new("pgbench_tellers", 0, s * TELLERS_PER_BRANCH),
    )?;
    Ok(b + t)
}

/// Loads the accounts of branches `from..to` (0-based).
pub fn load_accounts(conn: &mut dyn Connection, from: i64, to: i64) -> Result<u64, EngineError> {
    conn.bulk_insert(
        "pgbench_accounts",
        &mut TableRows::new(
            "pgbench_accounts",
            from * ACCOUNTS_PER_BRANCH,
            to * ACCOUNTS_PER_BRANCH,
        ),
    )
}

/// `pgbench -i`'s steps `vp`: vacuum analyze (analyze where there is no vacuum), then the
/// primary keys.
pub fn finish_load(conn: &mut dyn Connection) -> Result<(), EngineError> {
    let dialect = conn.dialect();
    for t in [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ] {
        match dialect {
            Dialect::Postgres => conn.query(&format!("vacuum analyze {t}"))?,
            Dialect::Mysql => conn.query(&format!("analyze table {t}"))?,
            _ => conn.query(&format!("analyze {t}"))?,
        };
    }
    for sql in primary_keys(dialect) {
        conn.query(&sql)?;
    }
    Ok(())
}

/// The sums that must agree after any number of transactions: branches', tellers' and
/// accounts' balances and the history's deltas (each transaction adds the same delta to
/// one of each), and the history's row count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balances {
    /// `sum(bbalance)`.
    pub branches: i64,
    /// `sum(tbalance)`.
    pub tellers: i64,
    /// `sum(abalance)`.
    pub accounts: i64,
    /// `sum(delta)` of the history.
    pub history: i64,
    /// Rows in the history.
    pub history_rows: i64,
}

impl Balances {
    /// Reads the sums.
    pub fn read(conn: &mut dyn Connection) -> Result<Self, EngineError> {
        let mut one = |sql: &str| -> Result<i64, EngineError> {
            let v = conn.query_scalar(sql)?;
            Ok(v.and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) as i64)
        };
        Ok(Balances {
            branches: one("select coalesce(sum(bbalance), 0) from pgbench_branches")?,
            tellers: one("select coalesce(sum(tbalance), 0) from pgbench_tellers")?,
            accounts: one("select coalesce(sum(abalance), 0) from pgbench_accounts")?,
            history: one("select coalesce(sum(delta), 0) from pgbench_history")?,
            history_rows: one("select count(*) from pgbench_history")?,
        })
    }

    /// True when the tpcb-like invariant holds (every balance sum equals the deltas').
    pub fn agree(&self) -> bool {
        self.branches == self.tellers
            && self.tellers == self.accounts
            && self.accounts == self.history
    }
}

/// pgbench's benchmark: `pgbench -i`'s four tables at `--scale-factor`, and one [`Tpcb`]
/// terminal per worker running the step's built-in script.
#[derive(Debug, Clone, Copy)]
pub struct PgbenchBenchmark;

impl Benchmark for PgbenchBenchmark {
    fn name(&self) -> &'static str {
        "pgbench"
    }

    fn dataset(&self) -> Dataset {
        Dataset::Pgbench
    }

    fn load_summary(&self, opts: &RunOptions) -> Option<String> {
        Some(format!("pgbench tables at scale {}", opts.tpc.scale_factor))
    }

    fn tables(&self, _: &RunOptions) -> Vec<String> {
        TABLES.iter().map(|t| t.to_string()).collect()
    }

    /// `pgbench -i`: the small tables on one connection, the accounts in parallel by
    /// ranges of branches, then vacuum, analyze and the primary keys.
    fn load(&self, engine: &dyn Engine, opts: &RunOptions) -> Result<u64, LoadError> {
        let scale = opts.tpc.scale_factor;
        let mut conn = engine.connect()?;
        let mut rows = create_and_load_small(&mut *conn, scale, opts.i_own_this_database)?;
        // Ranges of about ten branches (a million accounts) per COPY.
        let per = 10i64;
        let parts = (i64::from(scale) + per - 1) / per;
        rows += load_parallel(engine, parts as u64, &|c, part| {
            let from = part as i64 * per;
            load_accounts(c, from, (from + per).min(i64::from(scale)))
        })?;
        finish_load(&mut *conn)?;
        Ok(rows)
    }

    /// pgbench's scripts are paced with Poisson arrivals under `--rate`.
    fn poisson_arrivals(&self) -> bool {
        true
    }

    fn step(&self, setup: &StepSetup<'_>, _: &Carry) -> Arc<dyn StepWorkload> {
        let opts = setup.opts;
        Arc::new(TpcbStep(TpcbConfig {
            // A validated suite's steps on dataset = "pgbench" are all pgbench scripts.
            script: Script::of(setup.step.params.kind).unwrap_or(Script::TpcbLike),
            scale: opts.tpc.scale_factor,
            transactions: opts.tpc.transactions,
        }))
    }
}

/// What a pgbench step's terminals share: the script, scale and transaction count.
#[derive(Debug)]
struct TpcbStep(TpcbConfig);

impl StepWorkload for TpcbStep {
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload> {
        Box::new(Tpcb::new(self.0, t.seed, t.stream))
    }

    fn counted(&self) -> bool {
        self.0.transactions.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_pgbench_init() {
        let mut r = TableRows::new("pgbench_tellers", 9, 11);
        let mut out = Vec::new();
        assert!(r.next_row(&mut out));
        assert_eq!(
            out,
            [
                OwnedValue::Int(10),
                OwnedValue::Int(1),
                OwnedValue::Int(0),
                OwnedValue::Null
            ]
        );
        out.clear();
        assert!(r.next_row(&mut out));
        assert_eq!(out[1], OwnedValue::Int(2), "teller 11 is in branch 2");
        out.clear();
        assert!(!r.next_row(&mut out));
        let mut a = TableRows::new("pgbench_accounts", 99_999, 100_001);
        assert!(a.next_row(&mut out));
        assert_eq!(out[..2], [OwnedValue::Int(100_000), OwnedValue::Int(1)]);
        out.clear();
        assert!(a.next_row(&mut out));
        assert_eq!(out[..2], [OwnedValue::Int(100_001), OwnedValue::Int(2)]);
    }

    #[test]
    fn scripts_send_pgbench_statements_in_order() {
        let mut w = Tpcb::new(
            TpcbConfig {
                script: Script::TpcbLike,
                scale: 2,
                transactions: Some(2),
            },
            1,
            1,
        );
        w.stmts = [StmtId(0), StmtId(1), StmtId(2), StmtId(3), StmtId(4)];
        let mut ops = OpBatch::new();
        w.next_event(&mut ops).unwrap();
        assert_eq!(ops.len(), 7, "BEGIN, 3 updates, select, insert, END");
        assert!(!w.finished());
        ops.clear();
        w.next_event(&mut ops).unwrap();
        assert!(w.finished(), "-t 2 ends after two transactions");
        let mut s = Tpcb::new(
            TpcbConfig {
                script: Script::SelectOnly,
                scale: 1,
                transactions: None,
            },
            1,
            1,
        );
        ops.clear();
        s.next_event(&mut ops).unwrap();
        assert_eq!(ops.len(), 1);
        assert!(!s.uses_transactions());
    }

    #[test]
    fn ddl_matches_pgbench() {
        assert_eq!(
            create_table_sql(Dialect::Postgres, None, "pgbench_accounts", 1),
            "create table pgbench_accounts(aid int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)"
        );
        assert!(
            create_table_sql(Dialect::Postgres, None, "pgbench_accounts", 20_000)
                .contains("aid bigint")
        );
        assert!(
            !create_table_sql(Dialect::Postgres, None, "pgbench_history", 1).contains("fillfactor")
        );
        assert!(
            create_table_sql(Dialect::Mysql, None, "pgbench_branches", 1)
                .ends_with("ENGINE=InnoDB")
        );
    }
}
