//! Statement counters with sysbench's classification (its db_driver.c).

use dbdelta_engine::Outcome;

/// Per-worker statement counters; every executed statement counts once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// All statements (sysbench's `queries`).
    pub queries: u64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements that changed rows.
    pub writes: u64,
    /// The rest: BEGIN, COMMIT, DML that matched nothing.
    pub others: u64,
    /// Rows returned.
    pub rows: u64,
    /// Rows changed.
    pub affected: u64,
}

impl Counters {
    /// Counts one executed statement.
    #[inline]
    pub fn add(&mut self, o: Outcome) {
        self.queries += 1;
        if o.has_result {
            self.reads += 1;
        } else if o.affected > 0 {
            self.writes += 1;
        } else {
            self.others += 1;
        }
        self.rows += o.rows;
        self.affected += o.affected;
    }

    /// Adds another worker's counters.
    pub fn merge(&mut self, other: &Counters) {
        self.queries += other.queries;
        self.reads += other.reads;
        self.writes += other.writes;
        self.others += other.others;
        self.rows += other.rows;
        self.affected += other.affected;
    }
}
