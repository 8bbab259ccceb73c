//! The sans-IO query phase of a PostgreSQL connection: statements, request encoding and
//! response decoding (over `proto`) shared by the blocking connection and the multiplexed
//! [`PgSession`].

use crate::cancel::CancelKey;
use crate::pgerror::protocol_error;
use crate::proto::backend::{self, ServerError};
use crate::proto::{frontend, ProtoError};
use dbdelta_engine::text::interpolate;
use dbdelta_engine::{
    Canceller, Decoded, Dialect, EngineError, Family, Op, Outcome, Session, StmtId, Value,
};

/// A statement registered on a connection.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    /// Server-side name (`s<N>`); empty when prepared statements are off.
    pub name: String,
    /// Original text with `?` (used for `--no-prepared` interpolation).
    pub sql: String,
    pub params: usize,
    pub returns_rows: bool,
}

/// Appends Bind (text parameters) + Execute + Sync of a prepared statement.
#[inline]
pub(crate) fn encode_execute(
    w: &mut Vec<u8>,
    st: &Stmt,
    params: &[Value<'_>],
) -> Result<(), EngineError> {
    let start = w.len();
    frontend::bind_text("", &st.name, params, w)
        .and_then(|()| frontend::execute("", 0, w)) // the unnamed portal, all rows
        .map_err(|e| {
            w.truncate(start);
            statement_error(e, &st.sql)
        })?;
    frontend::sync(w);
    Ok(())
}

/// Appends a Simple Query.
#[inline]
pub(crate) fn encode_simple(w: &mut Vec<u8>, sql: &str) -> Result<(), EngineError> {
    frontend::query(sql, w).map_err(|e| statement_error(e, sql))
}

/// A statement that cannot be sent as written.
#[cold]
fn statement_error(e: ProtoError, sql: &str) -> EngineError {
    match e {
        ProtoError::EmbeddedNul => EngineError::statement("statement text contains a NUL byte"),
        e => EngineError::statement(format!("cannot send {sql}: {e}")),
    }
}

/// Checks the parameter count of an execute.
pub(crate) fn check_params(st: &Stmt, params: &[Value<'_>]) -> Result<(), EngineError> {
    dbdelta_kit::params::check_param_count(st.params, params, &st.sql)
}

/// One response in progress, up to ReadyForQuery: rows counted, affected rows summed, the
/// first non-fatal error kept.
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    out: Outcome,
    err: Option<ServerError>,
    /// Keep the values of this response's rows in `rows`.
    pub(crate) capture: bool,
    pub(crate) rows: dbdelta_engine::Rows,
}

/// What one backend message meant for the response.
pub(crate) enum Step {
    /// More messages follow.
    More,
    /// ReadyForQuery: the response is complete.
    Done(Result<Outcome, EngineError>),
    /// CopyInResponse / CopyBothResponse: the caller must refuse the copy.
    CopyIn,
}

impl ResponseDecoder {
    /// Takes one message. `Err` means the connection is unusable (fatal error, protocol
    /// violation).
    #[inline]
    pub(crate) fn message(&mut self, tag: u8, body: &[u8]) -> Result<Step, EngineError> {
        match tag {
            b'D' => {
                self.out.rows += 1;
                if self.capture {
                    keep_data_row(body, &mut self.rows)?;
                }
            }
            b'C' => self.out.affected += backend::command_rows(body),
            b'T' => self.out.has_result = true,
            b'2' | b'1' | b'n' | b'I' | b'N' | b'S' | b'A' | b't' | b'd' | b'c' | b'H' => {}
            b'Z' => {
                let done = match self.err.take() {
                    Some(e) => Err(e.into_engine_error()),
                    None => Ok(self.out),
                };
                self.out = Outcome::default();
                self.capture = false;
                return Ok(Step::Done(done));
            }
            b'E' => {
                let e = ServerError::parse(body);
                if e.is_fatal() {
                    return Err(e.into_engine_error());
                }
                self.err.get_or_insert(e);
            }
            b'G' | b'W' => return Ok(Step::CopyIn),
            t => {
                return Err(protocol_error(&format!(
                    "unexpected message '{}'",
                    t as char
                )))
            }
        }
        Ok(Step::More)
    }
}

/// Appends the values of a text-format DataRow.
fn keep_data_row(body: &[u8], rows: &mut dbdelta_engine::Rows) -> Result<(), ProtoError> {
    let cols = backend::data_row(body)?;
    rows.start_row();
    for col in cols {
        rows.push(col?);
    }
    Ok(())
}

/// The query phase of one connection in session form.
pub struct PgSession {
    pub(crate) stmts: Vec<Stmt>,
    pub(crate) prepared: bool,
    pub(crate) cancel: Option<CancelKey>,
    text: String,
    decoder: ResponseDecoder,
    /// `has_result` of the outstanding execute (from Describe, as the blocking path does).
    returns_rows: Option<bool>,
}

impl PgSession {
    pub(crate) fn new(stmts: Vec<Stmt>, prepared: bool, cancel: Option<CancelKey>) -> Self {
        PgSession {
            stmts,
            prepared,
            cancel,
            text: String::new(),
            decoder: ResponseDecoder::default(),
            returns_rows: None,
        }
    }
}

fn unknown(id: StmtId) -> EngineError {
    EngineError::statement(format!("unknown statement handle {}", id.0))
}

impl Session for PgSession {
    fn encode(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        match op {
            Op::Execute { stmt, params } => {
                let st = self
                    .stmts
                    .get(stmt.0 as usize)
                    .ok_or_else(|| unknown(*stmt))?;
                check_params(st, params)?;
                let returns_rows = st.returns_rows;
                if self.prepared {
                    encode_execute(out, st, params)?;
                    self.returns_rows = Some(returns_rows);
                } else {
                    let mut text = std::mem::take(&mut self.text);
                    let sql = &self.stmts[stmt.0 as usize].sql;
                    let r = interpolate(sql, params, Dialect::Postgres, &mut text)
                        .and_then(|()| encode_simple(out, &text));
                    self.text = text;
                    r?;
                    self.returns_rows = None;
                }
            }
            Op::Query(sql) => {
                encode_simple(out, sql)?;
                self.returns_rows = None;
            }
            Op::Kv(kv) => return Err(EngineError::unsupported(Family::KeyValue, kv.kind.name())),
        }
        Ok(())
    }

    fn capture_next(&mut self) -> Result<(), EngineError> {
        self.decoder.capture = true;
        self.decoder.rows.clear();
        Ok(())
    }

    fn take_rows(&mut self, into: &mut dbdelta_engine::Rows) {
        std::mem::swap(&mut self.decoder.rows, into);
        self.decoder.rows.clear();
    }

    fn decode(&mut self, input: &[u8]) -> Result<Decoded, EngineError> {
        let mut at = 0;
        while let Some(backend::Framed { tag, body, len }) = backend::frame(&input[at..])? {
            at += len;
            match self.decoder.message(tag, body)? {
                Step::More => {}
                Step::Done(mut result) => {
                    if let (Ok(o), Some(rows)) = (&mut result, self.returns_rows.take()) {
                        o.has_result = rows;
                    }
                    return Ok(Decoded::Complete {
                        consumed: at,
                        result,
                    });
                }
                Step::CopyIn => {
                    return Err(protocol_error(
                        "COPY FROM STDIN is not an operation a workload may send",
                    ))
                }
            }
        }
        Ok(Decoded::Partial { consumed: at })
    }

    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        self.cancel
            .clone()
            .map(|k| Box::new(k) as Box<dyn Canceller>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::server::{fields, message as msg, one_column_row as data_row};

    fn error(severity: &str, code: &str) -> Vec<u8> {
        let body = fields(&[
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', "boom"),
        ]);
        msg(b'E', &body)
    }

    /// BindComplete, two DataRows, CommandComplete, ReadyForQuery.
    fn select_response() -> Vec<u8> {
        [
            msg(b'2', b""),
            data_row("a"),
            data_row("bb"),
            msg(b'C', b"SELECT 2\0"),
            msg(b'Z', b"I"),
        ]
        .concat()
    }

    fn session() -> PgSession {
        let st = Stmt {
            name: "s0".into(),
            sql: "SELECT c FROM t WHERE id=?".into(),
            params: 1,
            returns_rows: true,
        };
        PgSession::new(vec![st], true, None)
    }

    /// Feeds `bytes` in chunks of `chunk`, as a driver would: unconsumed bytes stay buffered.
    fn feed(s: &mut PgSession, bytes: &[u8], chunk: usize) -> Vec<Result<Outcome, EngineError>> {
        dbdelta_engine::session::decode_in_chunks(s, bytes, chunk).unwrap()
    }

    fn encode_point(s: &mut PgSession) -> Vec<u8> {
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

    #[test]
    fn captured_rows_keep_values_and_nulls_in_any_split_for_one_response() {
        for chunk in [1, 3, 7, 1 << 20] {
            let mut s = session();
            s.capture_next().unwrap();
            encode_point(&mut s);
            // A two-column row with a NULL (length -1), then the plain response.
            let mut b = 2i16.to_be_bytes().to_vec();
            b.extend_from_slice(&2i32.to_be_bytes());
            b.extend_from_slice(b"12");
            b.extend_from_slice(&(-1i32).to_be_bytes());
            let bytes = [
                msg(b'2', b""),
                msg(b'D', &b),
                msg(b'C', b"SELECT 1\0"),
                msg(b'Z', b"T"),
            ]
            .concat();
            assert_eq!(feed(&mut s, &bytes, chunk).len(), 1);
            let mut rows = dbdelta_engine::Rows::new();
            s.take_rows(&mut rows);
            assert_eq!(
                (rows.len(), rows.int(0, 0).unwrap(), rows.get(0, 1)),
                (1, 12, None)
            );
            encode_point(&mut s);
            feed(&mut s, &select_response(), chunk);
            s.take_rows(&mut rows);
            assert!(rows.is_empty(), "capture is for one response only");
        }
    }

    #[test]
    fn encodes_bind_execute_sync() {
        let mut s = session();
        let out = encode_point(&mut s);
        assert_eq!(out[0], b'B');
        assert!(out.ends_with(b"E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04"));
        assert!(out.windows(2).any(|w| w == b"42"));
    }

    #[test]
    fn whole_split_and_coalesced_reads_agree() {
        for chunk in [usize::MAX, 1, 3, 7] {
            let mut s = session();
            encode_point(&mut s);
            let r = feed(&mut s, &select_response(), chunk.min(1 << 20));
            assert_eq!(r.len(), 1);
            let o = r[0].as_ref().unwrap();
            assert_eq!(
                (o.rows, o.affected, o.has_result),
                (2, 0, true),
                "chunk {chunk}"
            );
        }
        // Two responses in one read (a driver never pipelines, but a read may coalesce).
        let mut s = session();
        encode_point(&mut s);
        let both = [select_response(), msg(b'C', b"UPDATE 3\0"), msg(b'Z', b"I")].concat();
        let r = feed(&mut s, &both, usize::MAX >> 1);
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].as_ref().unwrap().affected, 3);
    }

    #[test]
    fn an_error_in_the_middle_completes_with_err_and_the_session_goes_on() {
        let mut s = session();
        encode_point(&mut s);
        let bytes = [
            msg(b'2', b""),
            data_row("a"),
            msg(b'N', b"Snotice\0\0"),
            data_row("b"),
            error("ERROR", "40001"),
            msg(b'Z', b"E"),
        ]
        .concat();
        let r = feed(&mut s, &bytes, 5);
        let e = r[0].as_ref().unwrap_err();
        assert!(e.is_retryable(), "{e}");
        encode_point(&mut s);
        let r = feed(&mut s, &select_response(), 4);
        assert_eq!(r[0].as_ref().unwrap().rows, 2);
    }

    #[test]
    fn broken_streams_are_errors() {
        let mut s = session();
        assert!(s.decode(&msg(b'X', b"")).is_err(), "unexpected message");
        let mut huge = vec![b'D'];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(s.decode(&huge).is_err(), "oversized length");
        assert!(s.decode(&[b'D', 0, 0, 0, 2]).is_err(), "length below 4");
        let fatal = [error("FATAL", "57P01"), msg(b'Z', b"I")].concat();
        assert!(
            s.decode(&fatal).is_err(),
            "a FATAL error ends the connection"
        );
    }

    #[test]
    fn key_value_operations_are_not_served() {
        let mut s = session();
        let op = Op::Kv(dbdelta_engine::KvOp {
            kind: dbdelta_engine::KvKind::Read,
            key: b"user1",
            fields: &[],
            values: &[],
            count: 0,
        });
        let e = s.encode(&op, &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind, dbdelta_engine::ErrorKind::Unsupported);
    }
}
