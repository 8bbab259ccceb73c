//! The sans-IO session against a managed MariaDB: statements prepared on a blocking
//! connection, the connection split with `into_session`, and the session driven by hand
//! over its socket (blocking reads in small and large pieces). Outcomes must equal the
//! blocking path's; `KILL QUERY` through the canceller must end a long statement quickly;
//! `connect_with` must honour the source address.

mod common;

use common::{have_mariadb, start};
use dbdelta_engine::{
    ConnectOptions, Connection, Decoded, Engine, EngineError, ErrorKind, Op, OpenOptions, Outcome,
    SessionParts, Socket, StmtId, Value,
};
use dbdelta_engine_mysql::MysqlEngine;
use dbdelta_model::TargetSpec;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

const SETUP: [&str; 3] = [
    "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(100) NOT NULL)",
    "INSERT INTO t SELECT seq, seq % 7, CONCAT('c-', seq) FROM seq_1_to_50",
    "CREATE PROCEDURE two_results() BEGIN
        SELECT id FROM t WHERE id <= 3;
        UPDATE t SET k = k + 1 WHERE id <= 2;
    END",
];

/// Statements prepared on each connection, in this order (handles 0..).
const PREPARED: [&str; 7] = [
    "SELECT c FROM t WHERE id = ?",
    "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE t SET k = k + 1 WHERE id = ?",
    "INSERT INTO t (id, k, c) VALUES (?, ?, ?)",
    "DELETE FROM t WHERE id = ?",
    "SELECT id FROM t WHERE c = ?",
    "SELECT SLEEP(?)",
];

/// One operation of the comparison, owning its parameters.
enum Step {
    Exec(u32, Vec<Param>),
    Query(&'static str),
}

enum Param {
    I(i64),
    S(&'static str),
}

fn steps() -> Vec<Step> {
    use Param::{I, S};
    vec![
        Step::Exec(0, vec![I(5)]),
        Step::Exec(0, vec![I(5000)]),
        Step::Exec(1, vec![I(10), I(29)]),
        Step::Exec(2, vec![I(7)]),
        Step::Query("BEGIN"),
        Step::Exec(3, vec![I(1000), I(1), S("new row")]),
        // Duplicate key: retryable, the connection goes on.
        Step::Exec(3, vec![I(1000), I(2), S("again")]),
        Step::Query("ROLLBACK"),
        Step::Exec(3, vec![I(1000), I(1), S("new row")]),
        Step::Exec(5, vec![S("new row")]),
        Step::Exec(4, vec![I(1000)]),
        Step::Exec(4, vec![I(1000)]),
        Step::Query("SELECT * FROM no_such_table"),
        Step::Query("SELECT id, c FROM t ORDER BY id"),
        // Rows, then an error from the fourth row on ("Subquery returns more than 1 row").
        Step::Query("SELECT id, IF(id > 3, (SELECT id FROM t), 1) FROM t ORDER BY id"),
        Step::Query("CALL two_results()"),
        Step::Query("SELECT 1; broken syntax"),
        Step::Query("DO 1"),
        Step::Exec(0, vec![I(6)]),
    ]
}

fn run_step(step: &Step, f: &mut dyn FnMut(Op<'_>) -> Result<Outcome, EngineError>) -> String {
    let params: Vec<Value<'_>> = match step {
        Step::Exec(_, ps) => ps
            .iter()
            .map(|p| match p {
                Param::I(i) => Value::Int(*i),
                Param::S(s) => Value::Text(s),
            })
            .collect(),
        Step::Query(_) => Vec::new(),
    };
    let op = match step {
        Step::Exec(i, _) => Op::Execute {
            stmt: StmtId(*i),
            params: &params,
        },
        Step::Query(sql) => Op::Query(sql),
    };
    match f(op) {
        Ok(o) => format!("ok {o:?}"),
        Err(e) => format!("err {:?}: {}", e.kind, e.message),
    }
}

/// A connection with the statements prepared.
fn prepared_conn(engine: &dyn Engine) -> Box<dyn Connection> {
    let mut c = engine.connect().unwrap();
    for (i, sql) in PREPARED.iter().enumerate() {
        assert_eq!(c.prepare(sql).unwrap(), StmtId(i as u32));
    }
    c
}

/// Drives a session by hand over its blocking socket: reads of `piece` bytes at most, so
/// small pieces split packets across reads.
struct Driver {
    parts: SessionParts,
    piece: usize,
    buf: Vec<u8>,
    /// Bytes of the last response.
    received: usize,
}

impl Driver {
    fn new(conn: Box<dyn Connection>, piece: usize) -> Self {
        let parts = conn
            .into_session()
            .unwrap_or_else(|_| panic!("a plain TCP connection did not split"));
        // A decoder that waits for bytes that never come fails the test instead of hanging.
        match &parts.socket {
            Socket::Tcp(s) => s.set_read_timeout(Some(Duration::from_secs(60))).unwrap(),
            Socket::Unix(s) => s.set_read_timeout(Some(Duration::from_secs(60))).unwrap(),
        }
        Driver {
            parts,
            piece,
            buf: Vec::new(),
            received: 0,
        }
    }

    fn send(&mut self, op: &Op<'_>) -> Result<(), EngineError> {
        let mut out = Vec::new();
        self.parts.session.encode(op, &mut out)?;
        self.parts.socket.write_all(&out).unwrap();
        self.received = 0;
        Ok(())
    }

    fn receive(&mut self) -> Result<Outcome, EngineError> {
        let mut chunk = vec![0u8; self.piece];
        loop {
            match self.parts.session.decode(&self.buf).expect("stream broken") {
                Decoded::Partial { consumed } => {
                    self.buf.drain(..consumed);
                }
                Decoded::Complete { consumed, result } => {
                    self.buf.drain(..consumed);
                    assert!(self.buf.is_empty(), "bytes after a complete response");
                    return result;
                }
            }
            let n = self.parts.socket.read(&mut chunk).unwrap();
            assert!(n > 0, "server closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
            self.received += n;
        }
    }

    fn run(&mut self, op: Op<'_>) -> Result<Outcome, EngineError> {
        self.send(&op)?;
        self.receive()
    }
}

fn compare(engine: &dyn Engine, label: &str) {
    let mut blocking = prepared_conn(engine);
    let want: Vec<String> = steps()
        .iter()
        .map(|s| run_step(s, &mut |op| blocking.run(&op)))
        .collect();
    // Sanity: the script covers what it claims.
    assert!(want[0].contains("rows: 1"), "{}", want[0]);
    assert!(want[6].starts_with("err Retryable"), "{}", want[6]);
    assert!(want[12].starts_with("err Statement"), "{}", want[12]);
    assert!(want[13].contains("rows: 50"), "{}", want[13]);
    assert!(want[14].starts_with("err Statement"), "{}", want[14]);
    for piece in [7, 64 * 1024] {
        let mut d = Driver::new(prepared_conn(engine), piece);
        for (i, s) in steps().iter().enumerate() {
            let got = run_step(s, &mut |op| d.run(op));
            assert_eq!(got, want[i], "{label}, step {i}, reads of {piece} bytes");
            if i == 14 {
                // Column definitions and rows came before the ERR (a bare ERR is 45 bytes).
                assert!(d.received > 120, "{label}: {} bytes", d.received);
            }
        }
    }
}

fn engines(dir: &std::path::Path) -> (MysqlEngine, MysqlEngine) {
    let managed = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M",
        dir,
        &OpenOptions::default(),
    );
    let mut c = managed.connect().unwrap();
    for stmt in SETUP {
        c.query(stmt).unwrap();
    }
    // The same server through the text protocol (--no-prepared), as an external target.
    let spec = TargetSpec::parse(&format!(
        "text=mysql://root@127.0.0.1:{}/dbdelta",
        managed.port().unwrap()
    ))
    .unwrap();
    let text = dbdelta_engine_mysql::open(
        &spec,
        dir,
        &OpenOptions {
            prepared: false,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    (managed, text)
}

#[test]
fn session_outcomes_equal_the_blocking_path_and_cancel_and_source_work() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (managed, text) = engines(dir.path());
    compare(&managed, "prepared");
    compare(&text, "text protocol");
    for engine in [&managed, &text] {
        cancel_a_sleep(engine);
    }
    source_address(&managed);
    key_value_is_refused(&managed);
}

/// `SELECT SLEEP(30)` on the session, `KILL QUERY` from the canceller: the response comes
/// within seconds and the session goes on.
fn cancel_a_sleep(engine: &MysqlEngine) {
    let mut d = Driver::new(prepared_conn(engine), 64 * 1024);
    let canceller = d.parts.session.canceller().expect("a canceller");
    for op in [
        Op::Query("SELECT SLEEP(30)"),
        Op::Execute {
            stmt: StmtId(6),
            params: &[Value::Int(30)],
        },
    ] {
        d.send(&op).unwrap();
        // Give the statement time to start; a KILL QUERY before it would be lost.
        std::thread::sleep(Duration::from_millis(500));
        let t = Instant::now();
        canceller.cancel().unwrap();
        let r = d.receive();
        let took = t.elapsed();
        assert!(took < Duration::from_secs(10), "cancel took {took:?}");
        eprintln!("cancelled {op:?} after {took:?}: {r:?}");
        // MariaDB 10.11 ends an interrupted SLEEP() with "Query execution was interrupted".
        let e = r.expect_err("an interrupted SLEEP");
        assert!(e.message.contains("MySQL error 1317"), "{e}");
        assert_eq!(e.kind, ErrorKind::Statement);
    }
    assert_eq!(d.run(Op::Query("SELECT 1")).unwrap().rows, 1);
    // A statement that is not a SLEEP is interrupted with error 1317 and the session
    // stays usable.
    d.send(&Op::Query(
        "SELECT COUNT(*) FROM seq_1_to_1000000000 a WHERE a.seq % 3 = 7",
    ))
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    canceller.cancel().unwrap();
    let e = d.receive().expect_err("an interrupted scan");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(e.message.contains("1317"), "{e}");
    assert_eq!(e.kind, ErrorKind::Statement);
    assert_eq!(d.run(Op::Query("SELECT 1")).unwrap().rows, 1);
}

/// `connect_with` from 127.0.0.6: the server sees that host, in blocking and session form.
fn source_address(engine: &MysqlEngine) {
    const WHO: &str = "SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()";
    let opts = ConnectOptions {
        source: Some(Ipv4Addr::new(127, 0, 0, 6)),
        timeout: Some(Duration::from_secs(5)),
        io_timeout: None,
    };
    let mut c = engine.connect_with(&opts).unwrap();
    let host = c.query_scalar(WHO).unwrap().unwrap_or_default();
    assert!(host.starts_with("127.0.0.6:"), "{host}");
    let mut plain = engine.connect().unwrap();
    let host = plain.query_scalar(WHO).unwrap().unwrap_or_default();
    assert!(host.starts_with("127.0.0.1:"), "{host}");
    let st = c.prepare("SELECT ?").unwrap();
    let mut d = Driver::new(c, 64 * 1024);
    let o = d
        .run(Op::Execute {
            stmt: st,
            params: &[Value::Int(1)],
        })
        .unwrap();
    assert_eq!(o.rows, 1);
}

fn key_value_is_refused(engine: &MysqlEngine) {
    let mut d = Driver::new(engine.connect().unwrap(), 1024);
    let kv = dbdelta_engine::KvOp {
        kind: dbdelta_engine::KvKind::Read,
        key: b"user1",
        fields: &[],
        values: &[],
        count: 0,
    };
    let e = d.run(Op::Kv(kv)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(d.run(Op::Query("SELECT 1")).unwrap().rows, 1);
}
