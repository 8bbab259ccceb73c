//! The sans-IO query phase of a MySQL/MariaDB connection: the result-set state machine
//! shared with the blocking client, packet framing with sequence-id checks, the
//! multiplexed [`MysqlSession`], and `KILL QUERY` as the cancel side channel.

use crate::client::{encode_execute, is_eof, parse_err, parse_ok, ClientError, ServerStmt};
use crate::connection::Endpoint;
use crate::errors::statement_error;
use dbdelta_engine::text::interpolate;
use dbdelta_engine::{
    Canceller, ConnectOptions, Decoded, Dialect, EngineError, ErrorKind, Family, Op, Outcome,
    Session, StmtId,
};
use std::sync::Arc;
use std::time::Duration;

/// A packet this long continues in the next one; sessions refuse such payloads (no
/// benchmark statement or response row comes near 16 MiB) instead of joining them, so the
/// largest message a driver ever buffers for a session is one packet of 16 MiB − 1.
pub(crate) const MAX_CHUNK: usize = 0xFF_FFFF;
/// Most columns a result may announce (a prepared statement counts them in 16 bits); a
/// larger count is a corrupt stream, not a wide table.
const MAX_COLUMNS: u64 = u16::MAX as u64;
/// A session's statement text buffer is released after a response when it grew past this,
/// so one large statement does not stay resident in each of 100,000 connections.
const KEEP_TEXT: usize = 16 * 1024;
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
/// Rows are counted, never decoded.
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    state: State,
    out: Outcome,
    /// The connection negotiated CLIENT_DEPRECATE_EOF (rows end with an OK packet).
    deprecate_eof: bool,
    /// The response is to COM_STMT_EXECUTE: rows are binary and start with 0x00.
    binary: bool,
    /// Keep the values of this response's rows in `rows` (decoding binary rows needs the
    /// columns' types, read from their definitions).
    pub(crate) capture: bool,
    pub(crate) kept: dbdelta_engine::Rows,
    /// Type and flags of each column of the current result set (when capturing).
    columns: Vec<(u8, u16)>,
}

fn malformed(what: &str) -> ClientError {
    ClientError::Protocol(what.to_string())
}

impl ResponseDecoder {
    /// A decoder for a connection with or without CLIENT_DEPRECATE_EOF.
    pub(crate) fn new(deprecate_eof: bool) -> Self {
        ResponseDecoder {
            deprecate_eof,
            ..Default::default()
        }
    }

    /// Starts the response to a new command; `binary` for COM_STMT_EXECUTE.
    pub(crate) fn begin(&mut self, binary: bool) {
        self.state = State::Start;
        self.out = Outcome::default();
        self.binary = binary;
    }

    /// Rows counted so far in this response (the blocking client hands each new row to its
    /// callback).
    pub(crate) fn rows(&self) -> u64 {
        self.out.rows
    }

    fn finish(&mut self, status: u16) -> Step {
        self.state = State::Start;
        if status & SERVER_MORE_RESULTS_EXISTS != 0 {
            return Step::More;
        }
        self.capture = false;
        Step::Done(Ok(std::mem::take(&mut self.out)))
    }

    fn fail(&mut self, p: &[u8]) -> Step {
        self.state = State::Start;
        self.capture = false;
        self.out = Outcome::default();
        Step::Done(Err(parse_err(p)))
    }

    /// Takes one packet payload. `Err` means the stream cannot be trusted any more.
    #[inline]
    pub(crate) fn packet(&mut self, p: &[u8]) -> Result<Step, ClientError> {
        let Some(&first) = p.first() else {
            return Err(malformed("an empty packet in a response"));
        };
        match self.state {
            State::Start => match first {
                0x00 => {
                    let (affected, status) = parse_ok(p)?;
                    self.out.affected += affected;
                    Ok(self.finish(status))
                }
                0xFF => Ok(self.fail(p)),
                0xFB => Ok(Step::LocalInfile),
                0xFE => Err(malformed("an EOF packet where a response was due")),
                _ => {
                    let cols = crate::wire::Cur::new(p)
                        .lenenc()
                        .filter(|n| (1..=MAX_COLUMNS).contains(n))
                        .ok_or_else(|| malformed("malformed column count"))?;
                    self.out.has_result = true;
                    self.columns.clear();
                    self.state = State::Columns(cols);
                    Ok(Step::More)
                }
            },
            State::Columns(n) => {
                if first == 0xFF {
                    return Ok(self.fail(p));
                }
                if self.capture {
                    self.columns.push(
                        column_type(p).ok_or_else(|| malformed("malformed column definition"))?,
                    );
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
                    return Err(malformed("expected EOF after the column definitions"));
                }
                self.state = State::Rows;
                Ok(Step::More)
            }
            State::Rows => match first {
                0xFF => Ok(self.fail(p)),
                0xFE if !self.deprecate_eof && is_eof(p) => {
                    let status = if p.len() >= 5 {
                        u16::from_le_bytes([p[3], p[4]])
                    } else {
                        0
                    };
                    Ok(self.finish(status))
                }
                // A text row starting with 0xFE has a first value of 16 MiB or more: it is
                // a joined multi-packet payload, never this short.
                0xFE if self.deprecate_eof && p.len() < MAX_CHUNK => {
                    let (_, status) = parse_ok(p)?;
                    Ok(self.finish(status))
                }
                b if self.binary && b != 0x00 => Err(ClientError::Protocol(format!(
                    "a binary result row starting with {b:#04x}"
                ))),
                _ => {
                    self.out.rows += 1;
                    if self.capture {
                        let kept = if self.binary {
                            keep_binary_row(p, &self.columns, &mut self.kept)
                        } else {
                            keep_text_row(p, self.columns.len(), &mut self.kept)
                        };
                        kept.ok_or_else(|| malformed("malformed result row"))?;
                    }
                    Ok(Step::More)
                }
            },
        }
    }
}

/// The type and flags of a column definition (Protocol::ColumnDefinition41).
fn column_type(p: &[u8]) -> Option<(u8, u16)> {
    let mut c = crate::wire::Cur::new(p);
    for _ in 0..6 {
        // catalog, schema, table, org_table, name, org_name
        c.lenenc_bytes().ok()?;
    }
    c.lenenc()?; // length of the fixed fields (0x0c)
    c.u16()?; // character set
    c.u32()?; // column length
    let ty = c.u8()?;
    let flags = c.u16()?;
    Some((ty, flags))
}

/// Appends a text-protocol row: every value a length-encoded string, 0xFB for NULL.
fn keep_text_row(p: &[u8], width: usize, rows: &mut dbdelta_engine::Rows) -> Option<()> {
    let mut c = crate::wire::Cur::new(p);
    rows.start_row();
    for _ in 0..width {
        rows.push(c.lenenc_bytes().ok()?);
    }
    Some(())
}

/// Appends a binary-protocol row, rendering each value as the text protocol would.
fn keep_binary_row(p: &[u8], columns: &[(u8, u16)], rows: &mut dbdelta_engine::Rows) -> Option<()> {
    use std::fmt::Write as _;
    const UNSIGNED: u16 = 0x20;
    let n = columns.len();
    let bitmap = p.get(1..1 + (n + 9) / 8)?;
    let mut c = crate::wire::Cur::new(p.get(1 + (n + 9) / 8..)?);
    rows.start_row();
    for (i, &(ty, flags)) in columns.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            rows.push(None);
            continue;
        }
        let unsigned = flags & UNSIGNED != 0;
        let int = |b: &[u8]| -> i128 {
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            let u = u64::from_le_bytes(a);
            if unsigned {
                i128::from(u)
            } else {
                let shift = 64 - 8 * b.len() as u32;
                i128::from(((u << shift) as i64) >> shift)
            }
        };
        match ty {
            0x01 => {
                let v = int(c.take(1)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x02 | 0x0d => {
                let v = int(c.take(2)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x03 | 0x09 => {
                let v = int(c.take(4)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x08 => {
                let v = int(c.take(8)?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x04 => {
                let v = f32::from_le_bytes(c.take(4)?.try_into().ok()?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            0x05 => {
                let v = f64::from_le_bytes(c.take(8)?.try_into().ok()?);
                rows.push_with(|t| {
                    let _ = write!(t, "{v}");
                })
            }
            // DATE, DATETIME, TIMESTAMP: a length, then year, month, day, h, m, s, µs.
            0x07 | 0x0a | 0x0c => {
                let len = c.u8()? as usize;
                let b = c.take(len)?;
                let g = |i: usize| b.get(i).copied().unwrap_or(0);
                let year = u16::from_le_bytes([g(0), g(1)]);
                rows.push_with(|t| {
                    let _ = write!(t, "{year:04}-{:02}-{:02}", g(2), g(3));
                    if ty != 0x0a {
                        let _ = write!(t, " {:02}:{:02}:{:02}", g(4), g(5), g(6));
                    }
                });
            }
            // TIME: a length, then sign, days, h, m, s, µs.
            0x0b => {
                let len = c.u8()? as usize;
                let b = c.take(len)?;
                let g = |i: usize| b.get(i).copied().unwrap_or(0);
                let days = u32::from_le_bytes([g(1), g(2), g(3), g(4)]);
                let sign = if g(0) == 1 { "-" } else { "" };
                rows.push_with(|t| {
                    let _ = write!(
                        t,
                        "{sign}{:02}:{:02}:{:02}",
                        // u64: the server's days fit in u32, its hours may not.
                        u64::from(days) * 24 + u64::from(g(5)),
                        g(6),
                        g(7)
                    );
                });
            }
            // Strings, decimals, blobs, enums, JSON: a length-encoded string.
            _ => rows.push(c.lenenc_bytes().ok()?),
        }
    }
    Some(())
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

/// Kills the running statement of one connection from a new connection with the same
/// parameters (the password stays a `Secret`: `Debug` shows it masked).
#[derive(Debug, Clone)]
pub(crate) struct KillQuery {
    pub endpoint: Arc<Endpoint>,
    pub connection_id: u32,
    /// Bounds the side connection's handshake and the `KILL QUERY` itself, so a stalled
    /// server does not keep the cancelling thread forever.
    pub timeout: Duration,
}

impl Canceller for KillQuery {
    fn cancel(&self) -> Result<(), EngineError> {
        let opts = ConnectOptions {
            source: None,
            timeout: Some(self.timeout),
            io_timeout: Some(self.timeout),
        };
        let mut raw = self.endpoint.connect_raw_with(&opts)?;
        let sql = format!("KILL QUERY {}", self.connection_id);
        raw.query(sql.as_bytes())
            .map(|_| ())
            .map_err(|e| statement_error(e, &sql))
    }
}

/// The query phase of one connection in session form. It keeps the statements and a few
/// bytes of state; requests are encoded straight into the driver's buffer.
pub struct MysqlSession {
    stmts: Vec<SessionStmt>,
    decoder: ResponseDecoder,
    /// Sequence id of the next response packet.
    seq: u8,
    /// A request was sent and its response is not complete yet.
    waiting: bool,
    cancel: Option<KillQuery>,
    /// The text of the outstanding text request (interpolated or plain), for errors.
    text: String,
    /// What the outstanding request ran, for error messages: a statement or a text.
    last: Last,
}

impl std::fmt::Debug for MysqlSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MysqlSession")
            .field("statements", &self.stmts.len())
            .field("waiting", &self.waiting)
            .finish_non_exhaustive()
    }
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
            waiting: false,
            cancel,
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

    /// After a failed or unsent execute the server may not have stored the parameter
    /// types: the next execute sends them again (as the blocking client does).
    fn forget_types(&mut self) {
        if let Last::Stmt(i) = self.last {
            if let Some(s) = &mut self.stmts[i].server {
                s.forget_types();
            }
        }
    }

    /// Appends the command payload of `op` to `out`; true for COM_STMT_EXECUTE.
    fn payload(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<bool, EngineError> {
        match op {
            Op::Execute { stmt, params } => {
                let i = stmt.0 as usize;
                let st = self.stmts.get_mut(i).ok_or_else(|| unknown(*stmt))?;
                match &mut st.server {
                    Some(server) => {
                        check_params(server, params, &st.sql)?;
                        encode_execute(out, server, params);
                        self.last = Last::Stmt(i);
                        Ok(true)
                    }
                    None => {
                        // --no-prepared: literals interpolated, as the blocking client does.
                        interpolate(&st.sql, params, Dialect::Mysql, &mut self.text)?;
                        out.push(COM_QUERY);
                        out.extend_from_slice(self.text.as_bytes());
                        self.last = Last::Text;
                        Ok(false)
                    }
                }
            }
            Op::Query(sql) => {
                self.text.clear();
                self.text.push_str(sql);
                out.push(COM_QUERY);
                out.extend_from_slice(sql.as_bytes());
                self.last = Last::Text;
                Ok(false)
            }
            Op::Kv(kv) => Err(EngineError::unsupported(Family::KeyValue, kv.kind.name())),
        }
    }
}

impl Session for MysqlSession {
    fn encode(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        if self.waiting {
            return Err(EngineError::statement(
                "a request was encoded before the previous response completed",
            ));
        }
        let start = out.len();
        // The header is filled in once the payload's length is known.
        out.extend_from_slice(&[0; 4]);
        let binary = match self.payload(op, out) {
            Ok(b) => b,
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        };
        let len = out.len() - start - 4;
        if len >= MAX_CHUNK {
            out.truncate(start);
            self.forget_types();
            return Err(EngineError::statement(
                "a statement of 16 MiB or more cannot be sent on a multiplexed connection",
            ));
        }
        // Sequence id 0: a command starts a new exchange.
        out[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        // The response's packets are numbered from 1.
        self.seq = 1;
        self.waiting = true;
        self.decoder.begin(binary);
        Ok(())
    }

    fn capture_next(&mut self) -> Result<(), EngineError> {
        self.decoder.capture = true;
        self.decoder.kept.clear();
        Ok(())
    }

    fn take_rows(&mut self, into: &mut dbdelta_engine::Rows) {
        std::mem::swap(&mut self.decoder.kept, into);
        self.decoder.kept.clear();
    }

    fn decode(&mut self, input: &[u8]) -> Result<Decoded, EngineError> {
        if !self.waiting {
            if input.is_empty() {
                return Ok(Decoded::Partial { consumed: 0 });
            }
            return Err(EngineError::connection(format!(
                "the server sent {} bytes with no request outstanding",
                input.len()
            )));
        }
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
                    self.waiting = false;
                    let result = match result {
                        Ok(o) => Ok(o),
                        Err(e) => {
                            self.forget_types();
                            let e = self.error(e);
                            if e.kind == ErrorKind::Connection {
                                // Server shutdown, connection killed: the stream ends here.
                                return Err(e);
                            }
                            Err(e)
                        }
                    };
                    if self.text.capacity() > KEEP_TEXT {
                        self.text = String::new();
                    }
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
            .map(|k| Box::new(k) as Box<dyn Canceller>)
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
    use crate::client::{Addr, ConnectParams};
    use dbdelta_engine::{KvKind, KvOp, Value};
    use dbdelta_model::Secret;

    fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    /// Packets numbered from 1, as a response is.
    fn response(payloads: &[Vec<u8>]) -> Vec<u8> {
        payloads
            .iter()
            .enumerate()
            .flat_map(|(i, p)| pkt(i as u8 + 1, p))
            .collect()
    }

    fn ok(affected: u8, status: u16) -> Vec<u8> {
        let mut p = vec![0x00, affected, 0];
        p.extend_from_slice(&status.to_le_bytes());
        p.extend_from_slice(&[0, 0]);
        p
    }

    /// The OK that ends rows under CLIENT_DEPRECATE_EOF.
    fn ok_eof(status: u16) -> Vec<u8> {
        let mut p = ok(0, status);
        p[0] = 0xFE;
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

    /// A one-column row: binary (COM_STMT_EXECUTE) or text (COM_QUERY).
    fn row(c: &str, binary: bool) -> Vec<u8> {
        // Binary rows: a 0x00 header and a NULL bitmap of (1 + 7 + 2) / 8 bytes.
        let mut p = if binary { vec![0, 0] } else { Vec::new() };
        p.push(c.len() as u8);
        p.extend_from_slice(c.as_bytes());
        p
    }

    /// Payloads of a result of one column and two rows ending with `status`.
    fn result_payloads(deprecate_eof: bool, binary: bool, status: u16) -> Vec<Vec<u8>> {
        let mut payloads = vec![vec![1u8], column()];
        if !deprecate_eof {
            payloads.push(eof(2));
        }
        payloads.push(row("a", binary));
        payloads.push(row("bb", binary));
        payloads.push(if deprecate_eof {
            ok_eof(status)
        } else {
            eof(status)
        });
        payloads
    }

    fn result_set(deprecate_eof: bool, binary: bool) -> Vec<u8> {
        response(&result_payloads(deprecate_eof, binary, 2))
    }

    fn session_with(deprecate_eof: bool, prepared: bool) -> MysqlSession {
        let st = SessionStmt {
            sql: "SELECT c FROM t WHERE id=?".into(),
            server: prepared.then(|| ServerStmt::new(7, 1)),
        };
        MysqlSession::new(vec![st], deprecate_eof, None)
    }

    fn session(deprecate_eof: bool) -> MysqlSession {
        session_with(deprecate_eof, true)
    }

    fn send(s: &mut MysqlSession, op: Op<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        s.encode(&op, &mut out).unwrap();
        out
    }

    fn point(id: i64) -> [Value<'static>; 1] {
        [Value::Int(id)]
    }

    fn send_point(s: &mut MysqlSession) -> Vec<u8> {
        let params = point(42);
        send(
            s,
            Op::Execute {
                stmt: StmtId(0),
                params: &params,
            },
        )
    }

    fn feed(s: &mut MysqlSession, bytes: &[u8], chunk: usize) -> Vec<Result<Outcome, EngineError>> {
        dbdelta_engine::session::decode_in_chunks(s, bytes, chunk).unwrap()
    }

    /// Whole (one read per response), byte by byte, small splits, and coalesced.
    const CHUNKS: [usize; 5] = [1, 2, 5, 64, 1 << 20];

    /// A column definition of type `ty` (the capture reads its type and flags).
    fn typed_column(ty: u8) -> Vec<u8> {
        let mut c = column();
        c[17] = ty;
        c
    }

    #[test]
    fn captured_rows_are_decoded_by_column_type_in_any_split() {
        for chunk in CHUNKS {
            // Binary: a BIGINT and a string; the second row's string is NULL (bitmap bit 3).
            let mut s = session(false);
            s.capture_next().unwrap();
            let _ = send(
                &mut s,
                Op::Execute {
                    stmt: StmtId(0),
                    params: &point(1),
                },
            );
            let mut r1 = vec![0u8, 0];
            r1.extend_from_slice(&(-7i64).to_le_bytes());
            r1.extend_from_slice(b"\x02ab");
            let mut r2 = vec![0u8, 0x08];
            r2.extend_from_slice(&42i64.to_le_bytes());
            let bytes = response(&[
                vec![2u8],
                typed_column(0x08),
                typed_column(0xFE),
                eof(2),
                r1,
                r2,
                eof(2),
            ]);
            let out = feed(&mut s, &bytes, chunk);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].as_ref().unwrap().rows, 2);
            let mut rows = dbdelta_engine::Rows::new();
            s.take_rows(&mut rows);
            assert_eq!(rows.len(), 2, "chunk {chunk}");
            assert_eq!(rows.int(0, 0).unwrap(), -7);
            assert_eq!(rows.get(0, 1), Some("ab"));
            assert_eq!((rows.int(1, 0).unwrap(), rows.get(1, 1)), (42, None));
            // Text rows of a plain query, 0xFB for NULL; the next response is not captured.
            s.capture_next().unwrap();
            let _ = send(&mut s, Op::Query("SELECT"));
            let bytes = response(&[
                vec![2u8],
                column(),
                column(),
                eof(2),
                b"\x013\xfb".to_vec(),
                eof(2),
            ]);
            feed(&mut s, &bytes, chunk);
            s.take_rows(&mut rows);
            assert_eq!(
                (rows.len(), rows.get(0, 0), rows.get(0, 1)),
                (1, Some("3"), None)
            );
            let _ = send(&mut s, Op::Query("SELECT"));
            feed(&mut s, &result_set(false, false), chunk);
            s.take_rows(&mut rows);
            assert!(rows.is_empty(), "capture is for one response only");
        }
    }

    #[test]
    fn a_time_of_many_days_renders_without_overflow() {
        // Found by fuzzing (fuzz/regressions/mysql_packets): days * 24 overflowed u32.
        let mut rows = dbdelta_engine::Rows::new();
        let p = [0, 0, 8, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3];
        keep_binary_row(&p, &[(0x0b, 0)], &mut rows).unwrap();
        assert_eq!(rows.get(0, 0), Some("103079215081:02:03"));
    }

    #[test]
    fn encodes_com_stmt_execute_with_sequence_zero() {
        let mut s = session(false);
        let out = send_point(&mut s);
        assert_eq!(
            &out[..4],
            &[out.len() as u8 - 4, 0, 0, 0],
            "length, sequence 0"
        );
        assert_eq!(out[4], 0x17, "COM_STMT_EXECUTE");
        assert_eq!(&out[5..9], &7u32.to_le_bytes());
        assert_eq!(out[15], 1, "types sent with the first execution");
        assert!(out.ends_with(&42i64.to_le_bytes()));
        feed(&mut s, &response(&[ok(1, 2)]), 64);
        let again = send_point(&mut s);
        assert_eq!(again[15], 0, "types not resent while they stay the same");
    }

    #[test]
    fn without_prepared_statements_execute_sends_interpolated_text() {
        let mut s = session_with(false, false);
        let out = send_point(&mut s);
        assert_eq!(out[3], 0);
        assert_eq!(out[4], 0x03, "COM_QUERY");
        assert_eq!(&out[5..], b"SELECT c FROM t WHERE id=42");
        let r = feed(&mut s, &result_set(false, false), 3);
        assert_eq!(r[0].as_ref().unwrap().rows, 2);
        let out = send(&mut s, Op::Query("ROLLBACK"));
        assert_eq!(&out[..5], &[9, 0, 0, 0, 0x03]);
        assert_eq!(&out[5..], b"ROLLBACK");
    }

    #[test]
    fn refused_requests_append_nothing() {
        let mut s = session(false);
        let mut out = b"keep".to_vec();
        let kv = KvOp {
            kind: KvKind::Read,
            key: b"user1",
            fields: &[],
            values: &[],
            count: 0,
        };
        let e = s.encode(&Op::Kv(kv), &mut out).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        let e = s
            .encode(
                &Op::Execute {
                    stmt: StmtId(0),
                    params: &[],
                },
                &mut out,
            )
            .unwrap_err();
        assert!(e.message.contains("placeholders"), "{e}");
        assert!(s
            .encode(
                &Op::Execute {
                    stmt: StmtId(9),
                    params: &[]
                },
                &mut out
            )
            .is_err());
        let huge = "x".repeat(MAX_CHUNK);
        let params = [Value::Text(&huge)];
        let e = s
            .encode(
                &Op::Execute {
                    stmt: StmtId(0),
                    params: &params,
                },
                &mut out,
            )
            .unwrap_err();
        assert!(e.message.contains("16 MiB"), "{e}");
        assert_eq!(out, b"keep");
        // The refused execute never reached the server: its types go with the next one.
        let next = send_point(&mut s);
        assert_eq!(next[15], 1);
    }

    #[test]
    fn result_sets_with_and_without_deprecate_eof_whole_split_and_coalesced() {
        for deprecate in [false, true] {
            for chunk in CHUNKS {
                let mut s = session(deprecate);
                send_point(&mut s);
                let r = feed(&mut s, &result_set(deprecate, true), chunk);
                let o = r[0].as_ref().unwrap();
                assert_eq!(
                    (o.rows, o.affected, o.has_result),
                    (2, 0, true),
                    "eof={deprecate} chunk={chunk}"
                );
                // A text result on the same session.
                send(&mut s, Op::Query("SELECT c FROM t"));
                let r = feed(&mut s, &result_set(deprecate, false), chunk);
                assert_eq!(r[0].as_ref().unwrap().rows, 2);
            }
        }
    }

    #[test]
    fn ok_and_err_responses() {
        for chunk in CHUNKS {
            let mut s = session(false);
            send_point(&mut s);
            let r = feed(&mut s, &pkt(1, &ok(3, 2)), chunk);
            assert_eq!(
                r[0].as_ref().unwrap(),
                &Outcome {
                    rows: 0,
                    affected: 3,
                    has_result: false
                }
            );
            for (code, kind) in [
                (1213, ErrorKind::Retryable),
                (1205, ErrorKind::Retryable),
                (1062, ErrorKind::Retryable),
                (1146, ErrorKind::Statement),
            ] {
                send_point(&mut s);
                let r = feed(&mut s, &pkt(1, &err(code)), chunk);
                let e = r[0].as_ref().unwrap_err();
                assert_eq!(e.kind, kind, "{code}");
                assert!(e.message.contains("SELECT c FROM t WHERE id=?"), "{e}");
            }
            // Still usable after the errors.
            send_point(&mut s);
            assert_eq!(feed(&mut s, &pkt(1, &ok(1, 2)), chunk).len(), 1);
        }
    }

    #[test]
    fn an_error_in_the_middle_of_rows_completes_and_the_session_goes_on() {
        for chunk in CHUNKS {
            let mut s = session(false);
            send_point(&mut s);
            let bytes = response(&[vec![1u8], column(), eof(2), row("a", true), err(1317)]);
            let r = feed(&mut s, &bytes, chunk);
            assert_eq!(r.len(), 1);
            assert_eq!(r[0].as_ref().unwrap_err().kind, ErrorKind::Statement);
            send_point(&mut s);
            let r = feed(&mut s, &result_set(false, true), chunk);
            assert_eq!(r[0].as_ref().unwrap().rows, 2);
        }
    }

    #[test]
    fn more_results_continue_the_response() {
        for deprecate in [false, true] {
            let mut payloads = vec![ok(1, SERVER_MORE_RESULTS_EXISTS | 2)];
            payloads.extend(result_payloads(
                deprecate,
                false,
                SERVER_MORE_RESULTS_EXISTS | 2,
            ));
            payloads.push(ok(2, 2));
            let bytes = response(&payloads);
            for chunk in CHUNKS {
                let mut s = session(deprecate);
                send(&mut s, Op::Query("CALL p()"));
                let r = feed(&mut s, &bytes, chunk);
                assert_eq!(r.len(), 1, "one response, chunk={chunk}");
                let o = r[0].as_ref().unwrap();
                assert_eq!((o.rows, o.affected, o.has_result), (2, 3, true));
            }
        }
    }

    #[test]
    fn a_partial_packet_stays_unconsumed() {
        let mut s = session(false);
        send_point(&mut s);
        let bytes = result_set(false, true);
        // The column count and definition are whole; the EOF is cut after its header.
        let first_two = pkt(1, &[1]).len() + pkt(2, &column()).len();
        match s.decode(&bytes[..first_two + 5]).unwrap() {
            Decoded::Partial { consumed } => assert_eq!(consumed, first_two),
            other => panic!("{other:?}"),
        }
        match s.decode(&bytes[first_two..]).unwrap() {
            Decoded::Complete { consumed, result } => {
                assert_eq!(consumed, bytes.len() - first_two);
                assert_eq!(result.unwrap().rows, 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn broken_streams_are_errors() {
        let broken = |payloads: Vec<u8>, what: &str| {
            let mut s = session(false);
            send_point(&mut s);
            let e = s.decode(&payloads).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Connection, "{what}: {e}");
        };
        broken(pkt(5, &ok(0, 2)), "wrong sequence id");
        broken(
            [pkt(1, &[1u8]), pkt(3, &column())].concat(),
            "sequence id skipped mid-response",
        );
        broken(vec![0xff, 0xff, 0xff, 1], "16 MiB packet");
        broken(pkt(1, &eof(2)), "EOF as the first packet");
        broken(pkt(1, &[]), "empty packet");
        broken(pkt(1, &[0xFC, 0xFF]), "truncated column count");
        broken(
            pkt(1, &[0xFE, 0, 0, 0, 0, 0, 0, 1, 0]),
            "absurd column count",
        );
        broken(
            response(&[vec![1u8], column(), row("x", true)]),
            "no EOF after the column definitions",
        );
        broken(
            response(&[vec![1u8], column(), eof(2), row("x", false)]),
            "a text row in a binary result",
        );
        broken(pkt(1, &[0xFB, b'f']), "LOCAL INFILE request");
        let mut shutdown = vec![0xFF];
        shutdown.extend_from_slice(&1053u16.to_le_bytes());
        shutdown.extend_from_slice(b"#08S01Server shutdown in progress");
        broken(pkt(1, &shutdown), "server shutdown");
    }

    #[test]
    fn bytes_without_a_request_are_an_error() {
        let mut s = session(false);
        assert!(matches!(
            s.decode(&[]).unwrap(),
            Decoded::Partial { consumed: 0 }
        ));
        assert!(s.decode(&pkt(0, &ok(0, 2))).is_err());
        let mut s = session(false);
        send_point(&mut s);
        let bytes = [pkt(1, &ok(0, 2)), pkt(2, &ok(0, 2))].concat();
        let e = dbdelta_engine::session::decode_in_chunks(&mut s, &bytes, 1 << 10).unwrap_err();
        assert!(e.message.contains("no request outstanding"), "{e}");
        let mut s = session(false);
        send_point(&mut s);
        let mut out = Vec::new();
        assert!(
            s.encode(&Op::Query("SELECT 1"), &mut out).is_err(),
            "one request at a time"
        );
        assert!(out.is_empty());
    }

    #[test]
    fn the_canceller_never_shows_the_password() {
        let endpoint = Endpoint {
            target: "prod".into(),
            params: ConnectParams {
                addr: Addr::Tcp("127.0.0.1".into(), 3306),
                user: "bench".into(),
                password: Some(Secret::new("hunter2-secret".to_string())),
                database: None,
                tls: None,
                compress: false,
                key_exchange: crate::auth::KeyExchange::default(),
            },
        };
        let kill = KillQuery {
            endpoint: Arc::new(endpoint),
            connection_id: 12,
            timeout: Duration::from_secs(1),
        };
        let s = MysqlSession::new(Vec::new(), false, Some(kill.clone()));
        assert!(s.canceller().is_some());
        let shown = format!("{kill:?} {s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("12"), "{shown}");
    }
}
