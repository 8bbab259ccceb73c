//! The sans-IO query phase of a MySQL/MariaDB connection: the multiplexed
//! [`MysqlSession`], which encodes requests into the driver's buffer and decodes responses
//! from its bytes with the protocol layer ([`crate::proto`]), checking sequence ids. The
//! connection above it gives it its statements and its canceller.

use crate::errors::{statement_error, ClientError};
use crate::proto::command::{self, ServerStmt};
use crate::proto::response::{ResponseDecoder, Step};
use crate::proto::{header, split_packet, HEADER, MAX_CHUNK};
use dbdelta_engine::text::interpolate;
use dbdelta_engine::{
    Canceller, Decoded, Dialect, EngineError, ErrorKind, Family, Op, Session, StmtId,
};
use std::sync::Arc;

/// A session's statement text buffer is released after a response when it grew past this,
/// so one large statement does not stay resident in each of 100,000 connections.
const KEEP_TEXT: usize = 16 * 1024;

/// A statement of a session: its text and, in prepared mode, its server handle.
#[derive(Debug, Clone)]
pub(crate) struct SessionStmt {
    pub sql: String,
    pub server: Option<ServerStmt>,
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
    cancel: Option<Arc<dyn Canceller>>,
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
    /// A session over `stmts` (prepared on the connection it came from), for a connection
    /// with or without CLIENT_DEPRECATE_EOF, cancelled by `cancel`.
    pub(crate) fn new(
        stmts: Vec<SessionStmt>,
        deprecate_eof: bool,
        cancel: Option<Arc<dyn Canceller>>,
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
                        command::com_stmt_execute(out, server, params);
                        self.last = Last::Stmt(i);
                        Ok(true)
                    }
                    None => {
                        // --no-prepared: literals interpolated, as the blocking client does.
                        interpolate(&st.sql, params, Dialect::Mysql, &mut self.text)?;
                        command::com_query(out, self.text.as_bytes());
                        self.last = Last::Text;
                        Ok(false)
                    }
                }
            }
            Op::Query(sql) => {
                self.text.clear();
                self.text.push_str(sql);
                command::com_query(out, sql.as_bytes());
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
        out.extend_from_slice(&[0; HEADER]);
        let binary = match self.payload(op, out) {
            Ok(b) => b,
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        };
        let len = out.len() - start - HEADER;
        if len >= MAX_CHUNK {
            out.truncate(start);
            self.forget_types();
            return Err(EngineError::statement(
                "a statement of 16 MiB or more cannot be sent on a multiplexed connection",
            ));
        }
        // Sequence id 0: a command starts a new exchange.
        out[start..start + HEADER].copy_from_slice(&header(len, 0));
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
            let framed = split_packet(&input[at..], &mut self.seq).map_err(|e| self.error(e))?;
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
            .as_ref()
            .map(|c| Box::new(Shared(Arc::clone(c))) as Box<dyn Canceller>)
    }
}

/// The session's canceller, handed out once per call of [`Session::canceller`].
struct Shared(Arc<dyn Canceller>);

impl Canceller for Shared {
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
    dbdelta_kit::params::check_param_count(usize::from(server.params), params, sql)
}

fn unknown(id: StmtId) -> EngineError {
    EngineError::statement(format!("unknown statement handle {}", id.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::response::SERVER_MORE_RESULTS_EXISTS;
    use dbdelta_engine::{KvKind, KvOp, Outcome, Value};

    use crate::proto::testing::packet as pkt;

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
}
