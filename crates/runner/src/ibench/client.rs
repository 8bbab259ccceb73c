//! The threads of one Insert Benchmark client (iibench.py's processes): a statement maker that paces the
//! inserts, an inserter, a deleter (FIFO) and a query thread (range or point queries).

use dbdelta_engine::{Connection, EngineError, Value};
use dbdelta_stats::{new_histogram, record_ns};
use dbdelta_workload::ibench::rows::RowGen;
use dbdelta_workload::ibench::statements::{delete_sql, point_query, range_queries, POINT_IDS};
use dbdelta_workload::ibench::QueryKind;
use dbdelta_workload::rng::Rng;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

/// Statements the maker may run ahead of the inserter and deleter (`multiprocessing.Queue(8)`).
pub const QUEUE_DEPTH: usize = 8;
/// Rounds between re-reads of `min(transactionid)` by the deleter (`resync_get_min`).
const RESYNC_MIN_EVERY: u64 = 1000;
/// Queries between re-reads of `max(transactionid)` by the query thread.
const REFRESH_MAX_EVERY: u64 = 100;
/// Retries of one statement after retryable errors (lock waits, deadlocks) before giving up.
const MAX_RETRIES: u32 = 10_000;

/// What one client does in a step.
#[derive(Debug, Clone)]
pub struct ClientPlan {
    /// Its table.
    pub table: String,
    /// Insert statements (batches) to run.
    pub rounds: u64,
    /// Rows per insert (and per delete).
    pub rows_per_commit: u64,
    /// Background insert rate, rows/s, when paced.
    pub rate: Option<u32>,
    /// One delete per insert.
    pub deletes: bool,
    /// The query thread's statements, when it has one.
    pub queries: Option<QueryKind>,
    /// Seed and stream of the row and key generators.
    pub seed: u64,
    /// Random stream of this client and step.
    pub stream: u64,
}

impl ClientPlan {
    /// Writer threads of the client: the maker and the inserter, and the deleter if any.
    pub fn writers(&self) -> usize {
        2 + usize::from(self.deletes)
    }
}

/// State shared by one client's threads.
#[derive(Debug, Default)]
pub struct ClientShared {
    /// Smallest live id, published by the deleter for the point queries.
    pub min_id: AtomicI64,
    /// The maker, inserter and deleter have finished (the step's done flag).
    pub done: AtomicBool,
    /// Writer threads (maker, inserter, deleter) still running.
    pub writers: std::sync::atomic::AtomicUsize,
}

impl ClientShared {
    /// State for a client with `writers` writer threads.
    pub fn new(writers: usize) -> Self {
        ClientShared {
            writers: std::sync::atomic::AtomicUsize::new(writers),
            ..ClientShared::default()
        }
    }

    /// Called by each writer thread as it ends; the last one raises the done flag.
    pub fn writer_done(&self) {
        if self.writers.fetch_sub(1, Ordering::SeqCst) <= 1 {
            self.done.store(true, Ordering::SeqCst);
        }
    }
}

/// What one thread measured.
#[derive(Debug)]
pub struct ThreadOut {
    /// Statement latencies, ns.
    pub hist: Histogram<u64>,
    /// Statements completed.
    pub statements: u64,
    /// Rows inserted, deleted or returned.
    pub rows: u64,
    /// Retryable errors that were retried.
    pub retries: u64,
    /// When the thread's last statement completed.
    pub finished: Option<Instant>,
}

impl ThreadOut {
    fn new() -> Self {
        ThreadOut {
            hist: new_histogram(),
            statements: 0,
            rows: 0,
            retries: 0,
            finished: None,
        }
    }
}

/// Runs `f` again after retryable errors; any other error (or too many retries) is returned.
fn with_retry<T>(
    out: &mut ThreadOut,
    abort: &AtomicBool,
    mut f: impl FnMut() -> Result<T, EngineError>,
) -> Result<T, EngineError> {
    let mut tries = 0;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if e.is_retryable() && tries < MAX_RETRIES && !abort.load(Ordering::Relaxed) => {
                tries += 1;
                out.retries += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The statement maker: generates the inserts (and one delete token per insert) and enforces
/// the rate in 1-second windows on the generator side exactly as iibench.py's statement_maker does.
pub fn maker(
    plan: &ClientPlan,
    mut gen: RowGen,
    inserts: SyncSender<String>,
    deletes: Option<SyncSender<()>>,
    abort: &AtomicBool,
) {
    let rounds_per_second = plan
        .rate
        .map(|r| (u64::from(r).div_ceil(plan.rows_per_commit)).max(1));
    let mut last_check = Instant::now();
    for round in 1..=plan.rounds {
        if abort.load(Ordering::Relaxed) {
            return;
        }
        let mut sql = String::with_capacity(64 + 80 * plan.rows_per_commit as usize);
        gen.insert_sql(&plan.table, plan.rows_per_commit, &mut sql);
        if inserts.send(sql).is_err() {
            return;
        }
        if let Some(d) = &deletes {
            if d.send(()).is_err() {
                return;
            }
        }
        if let Some(rps) = rounds_per_second {
            if round.is_multiple_of(rps) {
                let elapsed = last_check.elapsed();
                if elapsed < Duration::from_secs_f64(0.95) {
                    std::thread::sleep(Duration::from_secs(1) - elapsed);
                }
                last_check = Instant::now();
            }
        }
    }
}

/// The inserter: runs each insert as one autocommit statement.
pub fn inserter(
    conn: &mut dyn Connection,
    plan: &ClientPlan,
    rx: Receiver<String>,
    abort: &AtomicBool,
) -> Result<ThreadOut, EngineError> {
    let mut out = ThreadOut::new();
    for sql in rx {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        let start = Instant::now();
        with_retry(&mut out, abort, || conn.query(&sql))?;
        let done = Instant::now();
        record_ns(&mut out.hist, (done - start).as_nanos() as u64);
        out.statements += 1;
        out.rows += plan.rows_per_commit;
        out.finished = Some(done);
    }
    Ok(out)
}

fn scalar_i64(conn: &mut dyn Connection, sql: &str) -> Result<Option<i64>, EngineError> {
    Ok(conn
        .query_scalar(sql)?
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as i64))
}

/// The smallest live id of `table` (0 when empty).
pub fn min_id(conn: &mut dyn Connection, table: &str) -> Result<i64, EngineError> {
    Ok(scalar_i64(conn, &format!("select min(transactionid) from {table}"))?.unwrap_or(0))
}

/// The largest id of `table` (0 when empty).
pub fn max_id(conn: &mut dyn Connection, table: &str) -> Result<i64, EngineError> {
    Ok(scalar_i64(conn, &format!("select max(transactionid) from {table}"))?.unwrap_or(0))
}

/// The deleter: one delete of the oldest `rows_per_commit` rows per insert, advancing
/// `min_trxid` by `rows_per_commit` and re-reading it every 1000 rounds.
pub fn deleter(
    conn: &mut dyn Connection,
    plan: &ClientPlan,
    rx: Receiver<()>,
    shared: &ClientShared,
    abort: &AtomicBool,
) -> Result<ThreadOut, EngineError> {
    let mut out = ThreadOut::new();
    let dialect = conn.dialect();
    let mut min = min_id(conn, &plan.table)?;
    shared.min_id.store(min, Ordering::Relaxed);
    let mut round = 0u64;
    for () in rx {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        round += 1;
        if round.is_multiple_of(RESYNC_MIN_EVERY) {
            min = min_id(conn, &plan.table)?;
        }
        let sql = delete_sql(dialect, &plan.table, min, plan.rows_per_commit);
        let start = Instant::now();
        let o = with_retry(&mut out, abort, || conn.query(&sql))?;
        let done = Instant::now();
        record_ns(&mut out.hist, (done - start).as_nanos() as u64);
        out.statements += 1;
        out.rows += o.affected;
        out.finished = Some(done);
        min += plan.rows_per_commit as i64;
        shared.min_id.store(min, Ordering::Relaxed);
    }
    Ok(out)
}

/// The query thread: runs queries back to back until the client's writers are done.
pub fn querier(
    conn: &mut dyn Connection,
    plan: &ClientPlan,
    kind: QueryKind,
    shared: &ClientShared,
    abort: &AtomicBool,
) -> Result<ThreadOut, EngineError> {
    let mut out = ThreadOut::new();
    let mut rng = Rng::new(plan.seed, plan.stream ^ 0x5155_4552_5900_0000);
    let dialect = conn.dialect();
    let ranges = range_queries(dialect, &plan.table);
    let range_ids = [
        conn.prepare(&ranges[0].0)?,
        conn.prepare(&ranges[1].0)?,
        conn.prepare(&ranges[2].0)?,
    ];
    let point = conn.prepare(&point_query(&plan.table))?;
    let mut max = max_id(conn, &plan.table)?;
    let mut ids = [0i64; POINT_IDS];
    let mut n = 0u64;
    while !shared.done.load(Ordering::Relaxed) && !abort.load(Ordering::Relaxed) {
        let start = Instant::now();
        let o = match kind {
            QueryKind::Range => {
                let which = rng.uniform(0, 2) as usize;
                let v = rng.uniform(0, ranges[which].1 - 1);
                with_retry(&mut out, abort, || {
                    conn.execute(range_ids[which], &[Value::Int(v)])
                })?
            }
            QueryKind::Point => {
                if n.is_multiple_of(REFRESH_MAX_EVERY) && n > 0 {
                    max = max_id(conn, &plan.table)?;
                }
                let min = shared.min_id.load(Ordering::Relaxed);
                for id in ids.iter_mut() {
                    // randrange(min, max): [min, max).
                    *id = if max > min {
                        rng.uniform(min, max - 1)
                    } else {
                        min
                    };
                }
                let params: [Value<'_>; POINT_IDS] = ids.map(Value::Int);
                with_retry(&mut out, abort, || conn.execute(point, &params))?
            }
        };
        let done = Instant::now();
        record_ns(&mut out.hist, (done - start).as_nanos() as u64);
        out.statements += 1;
        out.rows += o.rows;
        out.finished = Some(done);
        n += 1;
    }
    Ok(out)
}
