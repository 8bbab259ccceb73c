//! The barrier's table, `dbdelta_segments`, in the target database (or a SQLite file): its
//! statements per dialect and one connection that runs them. One row per segment and
//! point: point 0 is the segment's join row (its plan, its heartbeat), every later point a
//! load, settle, window start or window end it reached.

use dbdelta_engine::{Connection, Dialect, EngineError, Op, Rows, StmtId, Value};

/// Microseconds since the Unix epoch on this host's clock.
pub fn unix_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The barrier's table.
pub const TABLE: &str = "dbdelta_segments";

/// The database's clock in microseconds since the Unix epoch, per dialect.
fn now_us(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "CAST(extract(epoch from clock_timestamp()) * 1000000 AS BIGINT)",
        Dialect::Mysql => "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)",
        _ => "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)",
    }
}

fn create_sql(d: Dialect) -> String {
    let text = if d == Dialect::Mysql {
        "LONGTEXT"
    } else {
        "TEXT"
    };
    format!(
        "CREATE TABLE IF NOT EXISTS {TABLE} (run VARCHAR(200) NOT NULL, segment BIGINT NOT NULL, \
         point BIGINT NOT NULL, what VARCHAR(400) NOT NULL, session BIGINT NOT NULL, \
         host VARCHAR(200) NOT NULL, at_us BIGINT NOT NULL, offset_us BIGINT NOT NULL, \
         seen_us BIGINT NOT NULL, state VARCHAR(20) NOT NULL, value {text} NOT NULL, \
         PRIMARY KEY (run, segment, point))"
    )
}

/// A row of the barrier: one segment at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The segment (1-based).
    pub segment: u32,
    /// Its join's random number: rows of an earlier process of that segment differ.
    pub session: i64,
    /// What the point is (`load`, `start of …`, `end of …`).
    pub what: String,
    /// When the segment reached the point, its own clock, µs since the epoch.
    pub at_us: i64,
    /// Its clock minus the database's, µs.
    pub offset_us: i64,
    /// `joined`, `left`, `lead`, `follow`, `ready`, `done`.
    pub state: String,
    /// The plan (join), an outcome (lead) or a carry (window end).
    pub value: String,
    /// The host it runs on.
    pub host: String,
    /// How long ago the database last heard of it (join rows), µs.
    pub age_us: i64,
}

/// What a segment writes at a point.
#[derive(Debug, Clone)]
pub struct Mark<'a> {
    /// The run's name.
    pub run: &'a str,
    /// The segment.
    pub segment: u32,
    /// The point.
    pub point: u32,
    /// What the point is.
    pub what: &'a str,
    /// The segment's session.
    pub session: i64,
    /// Its host.
    pub host: &'a str,
    /// Its clock, µs.
    pub at_us: i64,
    /// Its clock's offset, µs.
    pub offset_us: i64,
    /// Its state at the point.
    pub state: &'a str,
    /// What it says there.
    pub value: &'a str,
}

/// One connection to the barrier's table with its statements prepared.
pub struct Store {
    conn: Box<dyn Connection>,
    insert: StmtId,
    beat: StmtId,
    leave: StmtId,
    joins: StmtId,
    at_point: StmtId,
    clear: StmtId,
    now: StmtId,
    rows: Rows,
}

impl Store {
    /// Creates the table when it is missing and prepares the statements.
    pub fn open(mut conn: Box<dyn Connection>) -> Result<Store, EngineError> {
        let d = conn.dialect();
        // Segments that start together race to create the table (PostgreSQL's catalog can
        // refuse the second CREATE … IF NOT EXISTS): try again after a moment.
        let mut tries = 0;
        while let Err(e) = conn.batch(&create_sql(d)) {
            tries += 1;
            if tries >= 5 {
                return Err(e);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let now = now_us(d);
        let cols = "segment, session, what, at_us, offset_us, state, value, host";
        let insert = conn.prepare(&format!(
            "INSERT INTO {TABLE} (run, segment, point, what, session, host, at_us, offset_us, \
             seen_us, state, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {now}, ?, ?)"
        ))?;
        let beat = conn.prepare(&format!(
            "UPDATE {TABLE} SET seen_us = {now} WHERE run = ? AND segment = ? AND point = 0 \
             AND session = ?"
        ))?;
        let leave = conn.prepare(&format!(
            "UPDATE {TABLE} SET state = 'left', seen_us = {now} WHERE run = ? AND segment = ? \
             AND point = 0 AND session = ?"
        ))?;
        let joins = conn.prepare(&format!(
            "SELECT {cols}, {now} - seen_us FROM {TABLE} WHERE run = ? AND point = 0 ORDER BY segment"
        ))?;
        let at_point = conn.prepare(&format!(
            "SELECT {cols}, 0 FROM {TABLE} WHERE run = ? AND point = ? ORDER BY segment"
        ))?;
        let clear = conn.prepare(&format!(
            "DELETE FROM {TABLE} WHERE run = ? AND segment = ?"
        ))?;
        let now = conn.prepare(&format!("SELECT {now}"))?;
        Ok(Store {
            conn,
            insert,
            beat,
            leave,
            joins,
            at_point,
            clear,
            now,
            rows: Rows::new(),
        })
    }

    /// Forgets every row of `segment` in `run` (an earlier process's).
    pub fn clear(&mut self, run: &str, segment: u32) -> Result<(), EngineError> {
        self.conn.execute(
            self.clear,
            &[Value::Text(run), Value::Int(i64::from(segment))],
        )?;
        Ok(())
    }

    /// Writes a segment's row at a point.
    pub fn mark(&mut self, m: &Mark<'_>) -> Result<(), EngineError> {
        self.conn.execute(
            self.insert,
            &[
                Value::Text(m.run),
                Value::Int(i64::from(m.segment)),
                Value::Int(i64::from(m.point)),
                Value::Text(m.what),
                Value::Int(m.session),
                Value::Text(m.host),
                Value::Int(m.at_us),
                Value::Int(m.offset_us),
                Value::Text(m.state),
                Value::Text(m.value),
            ],
        )?;
        Ok(())
    }

    /// The database heard of the segment now (its join row's heartbeat).
    pub fn beat(&mut self, run: &str, segment: u32, session: i64) -> Result<(), EngineError> {
        let params = [
            Value::Text(run),
            Value::Int(i64::from(segment)),
            Value::Int(session),
        ];
        self.conn.execute(self.beat, &params)?;
        Ok(())
    }

    /// The segment left the run (its join row says so).
    pub fn leave(&mut self, run: &str, segment: u32, session: i64) -> Result<(), EngineError> {
        let params = [
            Value::Text(run),
            Value::Int(i64::from(segment)),
            Value::Int(session),
        ];
        self.conn.execute(self.leave, &params)?;
        Ok(())
    }

    /// Every segment's join row, with how long ago each was heard of.
    pub fn joins(&mut self, run: &str) -> Result<Vec<Row>, EngineError> {
        let stmt = self.joins;
        self.read(stmt, &[Value::Text(run)])
    }

    /// Every segment's row at `point`.
    pub fn at(&mut self, run: &str, point: u32) -> Result<Vec<Row>, EngineError> {
        let stmt = self.at_point;
        self.read(stmt, &[Value::Text(run), Value::Int(i64::from(point))])
    }

    /// This host's clock minus the database's, µs: the query's midpoint against the
    /// database's answer (as NTP estimates an offset), the best of three by round trip.
    pub fn offset_us(&mut self) -> Result<i64, EngineError> {
        let mut best: Option<(i64, i64)> = None;
        for _ in 0..3 {
            let before = unix_us();
            let stmt = self.now;
            let rows = self.read_raw(stmt, &[])?;
            let after = unix_us();
            let db = rows.int(0, 0)?;
            let (rtt, offset) = (after - before, (before + after) / 2 - db);
            if best.is_none_or(|(r, _)| rtt < r) {
                best = Some((rtt, offset));
            }
        }
        Ok(best.map_or(0, |(_, o)| o))
    }

    fn read_raw(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<&Rows, EngineError> {
        self.conn
            .run_rows(&Op::Execute { stmt, params }, &mut self.rows)?;
        Ok(&self.rows)
    }

    fn read(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Vec<Row>, EngineError> {
        let rows = self.read_raw(stmt, params)?;
        (0..rows.len())
            .map(|i| {
                Ok(Row {
                    segment: u32::try_from(rows.int(i, 0)?).unwrap_or(0),
                    session: rows.int(i, 1)?,
                    what: rows.get(i, 2).unwrap_or_default().to_string(),
                    at_us: rows.int(i, 3)?,
                    offset_us: rows.int(i, 4)?,
                    state: rows.get(i, 5).unwrap_or_default().to_string(),
                    value: rows.get(i, 6).unwrap_or_default().to_string(),
                    host: rows.get(i, 7).unwrap_or_default().to_string(),
                    age_us: rows.int(i, 8)?,
                })
            })
            .collect()
    }
}
