//! The sans-IO query phase of a MySQL/MariaDB connection: the result-set state machine
//! shared with the blocking client, packet framing with sequence-id checks, the
//! multiplexed [`MysqlSession`], and `KILL QUERY` as the cancel side channel.

use crate::client::{encode_execute, is_eof, parse_err, parse_ok, ClientError, ServerStmt};
use crate::connection::Endpoint;
use crate::errors::statement_error;
use dbdelta_engine::text::interpolate;
use dbdelta_engine::{
    Canceller, Decoded, Dialect, EngineError, Family, Op, Outcome, Session, StmtId,
};
use std::sync::Arc;

/// A packet this long continues in the next one; sessions refuse such payloads (no
/// benchmark statement or response row comes near 16 MiB) instead of joining them.
pub(crate) const MAX_CHUNK: usize = 0xFF_FFFF;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const COM_QUERY: u8 = 0x03;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// The first packet of a result: OK, ERR, LOCAL INFILE request or a column count.
    #[default]
    Start,
    /// Column definitions still to come.
    Columns(u64),
    /// The EOF after the column definitions (no CLIENT_DEPRECATE_EOF).
    ColumnsEof,
    /// Rows until EOF (or an OK with 0xFE under CLIENT_DEPRECATE_EOF).
    Rows,
}

/// What one packet meant for the response.
#[derive(Debug)]
pub(crate) enum Step {
    /// More packets follow.
    More,
    /// The response is complete.
    Done(Result<Outcome, ClientError>),
    /// The server asks for a local file (LOAD DATA LOCAL): the caller must refuse it.
    LocalInfile,
}

/// One response in progress: result sets (several with SERVER_MORE_RESULTS_EXISTS) and OKs.
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    state: State,
    out: Outcome,
    /// The connection negotiated CLIENT_DEPRECATE_EOF (rows end with an OK packet).
    deprecate_eof: bool,
}

impl ResponseDecoder {
    /// A decoder for a connection with or without CLIENT_DEPRECATE_EOF.
    pub(crate) fn new(deprecate_eof: bool) -> Self {
        ResponseDecoder {
            deprecate_eof,
            ..Default::default()
        }
    }

    /// Rows counted so far in this response (the blocking client hands each new row to its
    /// callback).
    pub(crate) fn rows(&self) -> u64 {
        self.out.rows
    }

    fn finish(&mut self, status: u16) -> Step {
        if status & SERVER_MORE_RESULTS_EXISTS != 0 {
            self.state = State::Start;
            return Step::More;
        }
        self.state = State::Start;
        Step::Done(Ok(std::mem::take(&mut self.out)))
    }

    fn fail(&mut self, p: &[u8]) -> Step {
        self.state = State::Start;
        self.out = Outcome::default();
        Step::Done(Err(parse_err(p)))
    }

    /// Takes one packet payload. `Err` means the stream cannot be trusted any more.
    #[inline]
    pub(crate) fn packet(&mut self, p: &[u8]) -> Result<Step, ClientError> {
        match self.state {
            State::Start => match p.first() {
                Some(0x00) => {
                    let (affected, status) = parse_ok(p)?;
                    self.out.affected += affected;
                    Ok(self.finish(status))
                }
                Some(0xFF) => Ok(self.fail(p)),
                Some(0xFB) => Ok(Step::LocalInfile),
                Some(_) => {
                    let cols = crate::wire::Cur::new(p)
                        .lenenc()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| ClientError::Protocol("malformed column count".into()))?;
                    self.out.has_result = true;
                    self.state = State::Columns(cols);
                    Ok(Step::More)
                }
                None => Err(ClientError::Protocol("empty packet".into())),
            },
            State::Columns(n) => {
                if p.first() == Some(&0xFF) {
                    return Ok(self.fail(p));
                }
                self.state = match (n - 1, self.deprecate_eof) {
                    (0, true) => State::Rows,
                    (0, false) => State::ColumnsEof,
                    (left, _) => State::Columns(left),
                };
                Ok(Step::More)
            }
            State::ColumnsEof => {
                if !is_eof(p) {
                    return Err(ClientError::Protocol(
                        "expected EOF after the column definitions".into(),
                    ));
                }
                self.state = State::Rows;
                Ok(Step::More)
            }
            State::Rows => match p.first() {
                Some(0xFF) => Ok(self.fail(p)),
                Some(0xFE) if !self.deprecate_eof && is_eof(p) => {
                    let status = if p.len() >= 5 {
                        u16::from_le_bytes([p[3], p[4]])
                    } else {
                        0
                    };
                    Ok(self.finish(status))
                }
                Some(0xFE) if self.deprecate_eof && p.len() < MAX_CHUNK => {
                    let (_, status) = parse_ok(p)?;
                    Ok(self.finish(status))
                }
                _ => {
                    self.out.rows += 1;
                    Ok(Step::More)
                }
            },
        }
    }
}

/// A packet at the front of a buffer: its payload and its total length with the header.
pub(crate) type Framed<'a> = (&'a [u8], usize);

/// Splits the next whole packet off `input`, checking its sequence id against `expected`
/// (and advancing it); `None` when more bytes are needed.
#[inline]
pub(crate) fn frame<'a>(
    input: &'a [u8],
    expected: &mut u8,
) -> Result<Option<Framed<'a>>, ClientError> {
    let Some(h) = input.get(..4) else {
        return Ok(None);
    };
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    if h[3] != *expected {
        return Err(ClientError::Protocol(format!(
            "packet sequence id {} where {} was due",
            h[3], *expected
        )));
    }
    if len >= MAX_CHUNK {
        return Err(ClientError::Protocol(
            "a packet of 16 MiB or more (multi-packet payload) on a multiplexed connection".into(),
        ));
    }
    match input.get(4..4 + len) {
        Some(payload) => {
            *expected = expected.wrapping_add(1);
            Ok(Some((payload, 4 + len)))
        }
        None => Ok(None),
    }
}

/// A statement of a session: its text and, in prepared mode, its server handle.
#[derive(Debug, Clone)]
pub(crate) struct SessionStmt {
    pub sql: String,
    pub server: Option<ServerStmt>,
}

/// Kills the running statement of one connection from a new connection.
#[derive(Debug)]
pub(crate) struct KillQuery {
    pub endpoint: Arc<Endpoint>,
    pub connection_id: u32,
}

impl Canceller for KillQuery {
    fn cancel(&self) -> Result<(), EngineError> {
        let mut raw = self.endpoint.connect_raw()?;
        let sql = format!("KILL QUERY {}", self.connection_id);
        raw.query(sql.as_bytes())
            .map(|_| ())
            .map_err(|e| statement_error(e, &sql))
    }
}

/// The query phase of one connection in session form.
pub struct MysqlSession {
    stmts: Vec<SessionStmt>,
    decoder: ResponseDecoder,
    seq: u8,
    cancel: Option<Arc<KillQuery>>,
    payload: Vec<u8>,
    text: String,
    /// What the outstanding request ran, for error messages: a statement or a text.
    last: Last,
}

#[derive(Debug, Clone, Copy)]
enum Last {
    Stmt(usize),
    Text,
}

impl MysqlSession {
    pub(crate) fn new(
        stmts: Vec<SessionStmt>,
        deprecate_eof: bool,
        cancel: Option<KillQuery>,
    ) -> Self {
        MysqlSession {
            stmts,
            decoder: ResponseDecoder::new(deprecate_eof),
            seq: 0,
            cancel: cancel.map(Arc::new),
            payload: Vec::new(),
            text: String::new(),
            last: Last::Text,
        }
    }

    fn error(&self, e: ClientError) -> EngineError {
        match self.last {
            Last::Stmt(i) => statement_error(e, &self.stmts[i].sql),
            Last::Text => statement_error(e, &self.text),
        }
    }
}

impl Session for MysqlSession {
    fn encode(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        self.payload.clear();
        match op {
            Op::Execute { stmt, params } => {
                let i = stmt.0 as usize;
                let st = self.stmts.get_mut(i).ok_or_else(|| unknown(*stmt))?;
                match &mut st.server {
                    Some(server) => {
                        check_params(server, params, &st.sql)?;
                        encode_execute(&mut self.payload, server, params);
                        self.last = Last::Stmt(i);
                    }
                    None => {
                        interpolate(&st.sql, params, Dialect::Mysql, &mut self.text)?;
                        self.payload.push(COM_QUERY);
                        self.payload.extend_from_slice(self.text.as_bytes());
                        self.last = Last::Text;
                    }
                }
            }
            Op::Query(sql) => {
                self.text.clear();
                self.text.push_str(sql);
                self.payload.push(COM_QUERY);
                self.payload.extend_from_slice(sql.as_bytes());
                self.last = Last::Text;
            }
            Op::Kv(kv) => return Err(EngineError::unsupported(Family::KeyValue, kv.kind.name())),
        }
        if self.payload.len() >= MAX_CHUNK {
            return Err(EngineError::statement(
                "a statement of 16 MiB or more cannot be sent on a multiplexed connection",
            ));
        }
        out.extend_from_slice(&(self.payload.len() as u32).to_le_bytes()[..3]);
        out.push(0);
        out.extend_from_slice(&self.payload);
        // The response's packets are numbered from 1.
        self.seq = 1;
        Ok(())
    }

    fn decode(&mut self, input: &[u8]) -> Result<Decoded, EngineError> {
        let mut at = 0;
        loop {
            let framed = frame(&input[at..], &mut self.seq).map_err(|e| self.error(e))?;
            let Some((payload, len)) = framed else {
                return Ok(Decoded::Partial { consumed: at });
            };
            at += len;
            match self.decoder.packet(payload).map_err(|e| self.error(e))? {
                Step::More => {}
                Step::Done(result) => {
                    if result.is_err() {
                        if let Last::Stmt(i) = self.last {
                            // The server may not have stored the types: resend them.
                            if let Some(s) = &mut self.stmts[i].server {
                                s.forget_types();
                            }
                        }
                    }
                    let result = result.map_err(|e| self.error(e));
                    return Ok(Decoded::Complete {
                        consumed: at,
                        result,
                    });
                }
                Step::LocalInfile => {
                    return Err(EngineError::connection(
                        "the server asked for a local file (LOAD DATA LOCAL), which dbdelta never sends",
                    ))
                }
            }
        }
    }

    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        self.cancel
            .clone()
            .map(|k| Box::new(SharedKill(k)) as Box<dyn Canceller>)
    }
}

/// A canceller handle sharing the session's endpoint.
struct SharedKill(Arc<KillQuery>);

impl Canceller for SharedKill {
    fn cancel(&self) -> Result<(), EngineError> {
        self.0.cancel()
    }
}

/// Refuses an execute whose parameter count differs from the statement's placeholders.
pub(crate) fn check_params(
    server: &ServerStmt,
    params: &[dbdelta_engine::Value<'_>],
    sql: &str,
) -> Result<(), EngineError> {
    if usize::from(server.params) != params.len() {
        return Err(EngineError::statement(format!(
            "statement has {} placeholders but got {} parameters: {sql}",
            server.params,
            params.len()
        )));
    }
    Ok(())
}

fn unknown(id: StmtId) -> EngineError {
    EngineError::statement(format!("unknown statement handle {}", id.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine::Value;

    fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    fn ok(affected: u8, status: u16) -> Vec<u8> {
        let mut p = vec![0x00, affected, 0];
        p.extend_from_slice(&status.to_le_bytes());
        p.extend_from_slice(&[0, 0]);
        p
    }

    fn eof(status: u16) -> Vec<u8> {
        let mut p = vec![0xFE, 0, 0];
        p.extend_from_slice(&status.to_le_bytes());
        p
    }

    fn err(code: u16) -> Vec<u8> {
        let mut p = vec![0xFF];
        p.extend_from_slice(&code.to_le_bytes());
        p.extend_from_slice(b"#40001Deadlock found");
        p
    }

    fn column() -> Vec<u8> {
        // A column definition's content is never decoded.
        b"\x03def\x00\x00\x00\x01c\x00\x0c\x08\x00\x78\x00\x00\x00\xfe\x00\x00\x00\x00\x00".to_vec()
    }

    fn row(c: &str) -> Vec<u8> {
        let mut p = vec![c.len() as u8];
        p.extend_from_slice(c.as_bytes());
        p
    }

    /// A text result of one column and two rows, numbered from 1.
    fn result_set(deprecate_eof: bool) -> Vec<u8> {
        let mut payloads = vec![vec![1u8], column()];
        if !deprecate_eof {
            payloads.push(eof(2));
        }
        payloads.push(row("a"));
        payloads.push(row("bb"));
        payloads.push(if deprecate_eof {
            let mut p = ok(0, 2);
            p[0] = 0xFE;
            p
        } else {
            eof(2)
        });
        payloads
            .iter()
            .enumerate()
            .flat_map(|(i, p)| pkt(i as u8 + 1, p))
            .collect()
    }

    fn session(deprecate_eof: bool) -> MysqlSession {
        let st = SessionStmt {
            sql: "SELECT c FROM t WHERE id=?".into(),
            server: Some(ServerStmt::new(7, 1)),
        };
        MysqlSession::new(vec![st], deprecate_eof, None)
    }

    fn send_point(s: &mut MysqlSession) -> Vec<u8> {
        let mut out = Vec::new();
        s.encode(
            &Op::Execute {
                stmt: StmtId(0),
                params: &[Value::Int(42)],
            },
            &mut out,
        )
        .unwrap();
        out
    }

    fn feed(s: &mut MysqlSession, bytes: &[u8], chunk: usize) -> Vec<Result<Outcome, EngineError>> {
        dbdelta_engine::session::decode_in_chunks(s, bytes, chunk).unwrap()
    }

    #[test]
    fn encodes_com_stmt_execute_with_sequence_zero() {
        let mut s = session(false);
        let out = send_point(&mut s);
        assert_eq!(out[3], 0, "a command starts at sequence 0");
        assert_eq!(out[4], 0x17, "COM_STMT_EXECUTE");
        assert_eq!(&out[5..9], &7u32.to_le_bytes());
        assert!(out.ends_with(&42i64.to_le_bytes()));
    }

    #[test]
    fn result_sets_with_and_without_deprecate_eof_whole_split_and_coalesced() {
        for deprecate in [false, true] {
            for chunk in [1usize, 2, 5, 1 << 20] {
                let mut s = session(deprecate);
                send_point(&mut s);
                let r = feed(&mut s, &result_set(deprecate), chunk);
                let o = r[0].as_ref().unwrap();
                assert_eq!(
                    (o.rows, o.has_result),
                    (2, true),
                    "eof={deprecate} chunk={chunk}"
                );
            }
        }
    }

    #[test]
    fn ok_and_err_responses() {
        let mut s = session(false);
        send_point(&mut s);
        let r = feed(&mut s, &pkt(1, &ok(3, 2)), 3);
        assert_eq!(r[0].as_ref().unwrap().affected, 3);
        send_point(&mut s);
        let r = feed(&mut s, &pkt(1, &err(1213)), 1);
        assert!(r[0].as_ref().unwrap_err().is_retryable());
    }

    #[test]
    fn an_error_in_the_middle_of_rows_completes_and_the_session_goes_on() {
        let mut s = session(false);
        send_point(&mut s);
        let payloads = [vec![1u8], column(), eof(2), row("a"), err(1317)];
        let bytes: Vec<u8> = payloads
            .iter()
            .enumerate()
            .flat_map(|(i, p)| pkt(i as u8 + 1, p))
            .collect();
        let r = feed(&mut s, &bytes, 4);
        assert!(r[0].is_err());
        send_point(&mut s);
        let r = feed(&mut s, &result_set(false), 7);
        assert_eq!(r[0].as_ref().unwrap().rows, 2);
    }

    #[test]
    fn more_results_continue_the_response() {
        let mut s = session(false);
        send_point(&mut s);
        let bytes = [
            pkt(1, &ok(1, SERVER_MORE_RESULTS_EXISTS | 2)),
            pkt(2, &ok(2, 2)),
        ]
        .concat();
        let r = feed(&mut s, &bytes, 1 << 10);
        assert_eq!(r[0].as_ref().unwrap().affected, 3);
    }

    #[test]
    fn broken_streams_are_errors() {
        let mut s = session(false);
        send_point(&mut s);
        assert!(s.decode(&pkt(5, &ok(0, 2))).is_err(), "wrong sequence id");
        let mut s = session(false);
        send_point(&mut s);
        assert!(s.decode(&[0xff, 0xff, 0xff, 1]).is_err(), "16 MiB packet");
        let mut s = session(false);
        send_point(&mut s);
        let bad = [pkt(1, &[1u8]), pkt(2, &column()), pkt(3, &row("x"))].concat();
        assert!(
            s.decode(&bad).is_err(),
            "no EOF after the column definitions"
        );
        let mut s = session(false);
        send_point(&mut s);
        assert!(
            s.decode(&pkt(1, &[0xFB, b'f'])).is_err(),
            "LOCAL INFILE request"
        );
    }
}
