//! The entry of the `pg_messages` fuzz target (`fuzz/` at the repository root) and of its
//! corpus regression test: server bytes through every client path that reads them. Not
//! part of the engine API.

use crate::conn::{connect, Addr, ConnParams};
use crate::session::{PgSession, Stmt};
use dbdelta_engine::{Connection, Decoded, EngineError, ErrorKind, Op, Rows, Session, Value};
use dbdelta_model::Secret;
use std::time::Duration;

/// Feeding chunk sizes, picked by the low 4 bits of the control byte.
const CHUNKS: [usize; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 64, 255, 1024, 65536];

/// Takes `[control byte, server bytes…]` and runs the server bytes through:
///
/// 1. the sans-IO [`PgSession::decode`] fed whole and in chunks (the control byte's low 4
///    bits pick the size); both must give the same responses, rows and final error;
/// 2. a blocking [`crate::PgConnection`] whose server plays the bytes back: startup,
///    authentication (cleartext, MD5, SASL), then a sequence of statements (bits 6–7 pick
///    where it starts) over `Wire::next`, the response decoder and the DataRow decoder.
///
/// Bit 4 turns prepared statements on, bit 5 keeps rows. Panics only on a bug.
pub fn pg_messages(data: &[u8]) {
    let Some((&ctrl, bytes)) = data.split_first() else {
        return;
    };
    let prepared = ctrl & 0x10 != 0;
    let capture = ctrl & 0x20 != 0;
    let whole = decode_session(bytes, usize::MAX, prepared, capture);
    let chunked = decode_session(bytes, CHUNKS[usize::from(ctrl & 0x0f)], prepared, capture);
    assert_eq!(whole, chunked, "whole and chunked feeding disagree");
    let _ = blocking(bytes, prepared, ctrl >> 6);
}

/// Everything a driver sees from a session: each response (rows kept, or the error), then
/// the error that ended the stream or the bytes left over.
#[derive(Debug, PartialEq)]
struct Transcript {
    responses: Vec<Result<(dbdelta_engine::Outcome, Rows), Failure>>,
    end: Result<usize, Failure>,
}

/// An error as the transcript compares it: its kind and its text.
#[derive(Debug, PartialEq)]
struct Failure {
    kind: ErrorKind,
    text: String,
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        Failure {
            kind: e.kind,
            text: e.to_string(),
        }
    }
}

fn decode_session(bytes: &[u8], chunk: usize, prepared: bool, capture: bool) -> Transcript {
    let stmt = Stmt {
        name: if prepared { "s0".into() } else { String::new() },
        sql: "SELECT c FROM sbtest1 WHERE id=?".into(),
        params: 1,
        returns_rows: true,
    };
    let mut s = PgSession::new(vec![stmt], prepared, None);
    let mut t = Transcript {
        responses: Vec::new(),
        end: Ok(0),
    };
    let mut out = Vec::new();
    let mut n = 0usize;
    let mut request = |s: &mut PgSession, n: &mut usize| {
        out.clear();
        // Alternate an execute and a simple query, as a workload's mix does.
        let op = if n.is_multiple_of(2) {
            Op::Execute {
                stmt: dbdelta_engine::StmtId(0),
                params: &[Value::Int(7)],
            }
        } else {
            Op::Query("UPDATE sbtest1 SET k=k+1 WHERE id=7")
        };
        *n += 1;
        if capture {
            s.capture_next().expect("capture");
        }
        s.encode(&op, &mut out).expect("encode");
    };
    request(&mut s, &mut n);
    let mut buf = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match s.decode(&buf) {
                Err(e) => {
                    t.end = Err(e.into());
                    return t;
                }
                Ok(Decoded::Partial { consumed }) => {
                    buf.drain(..consumed);
                    break;
                }
                Ok(Decoded::Complete { consumed, result }) => {
                    assert!(consumed > 0, "a response completed without consuming bytes");
                    buf.drain(..consumed);
                    let mut rows = Rows::new();
                    s.take_rows(&mut rows);
                    t.responses
                        .push(result.map(|o| (o, rows)).map_err(Failure::from));
                    request(&mut s, &mut n);
                }
            }
        }
    }
    t.end = Ok(buf.len());
    t
}

/// The blocking client against a server that plays `bytes` back; how many operations
/// succeeded (`None`: the connection failed).
fn blocking(bytes: &[u8], prepared: bool, first_op: u8) -> Option<usize> {
    dbdelta_kit::fuzzing::replay_server(bytes, |path| {
        let p = ConnParams {
            addr: Addr::Unix {
                path: path.to_path_buf(),
            },
            user: "bench".into(),
            password: Some(Secret::new("secret")),
            database: "bench".into(),
            prepared,
            connect_timeout: Duration::from_secs(10),
            tls: None,
            channel_binding: Default::default(),
        };
        let mut c = connect(&p).ok()?;
        let _ = (c.backend_pid(), c.server_version());
        let mut rows = Rows::new();
        let mut ok = 0;
        for i in 0..8 {
            // Errors are expected; a broken connection refuses the rest without I/O.
            let r = match (usize::from(first_op) + i) % 5 {
                0 => c.query_rows("SELECT version()").map(drop),
                1 => c.query("UPDATE sbtest1 SET k=k+1 WHERE id=7").map(drop),
                2 => c
                    .prepare("SELECT c FROM sbtest1 WHERE id=?")
                    .and_then(|id| c.execute(id, &[Value::Int(7)]))
                    .map(drop),
                3 => c
                    .run_rows(&Op::Query("SELECT c FROM sbtest1"), &mut rows)
                    .map(drop),
                _ => c.rollback(),
            };
            ok += usize::from(r.is_ok());
        }
        Some(ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::server::{message as msg, one_column_row as row};

    /// The answers to one round of the blocking client's operations, prepared mode.
    fn conversation() -> Vec<u8> {
        let done = |tag: &str| [msg(b'C', format!("{tag}\0").as_bytes()), msg(b'Z', b"I")].concat();
        let select = [msg(b'T', b"\0\0"), row("x"), done("SELECT 1")].concat();
        let ops = [
            select.clone(),
            done("UPDATE 1"),
            [
                msg(b'1', b""),
                msg(b't', &[0, 1, 0, 0, 0, 23]),
                msg(b'Z', b"I"),
            ]
            .concat(),
            [msg(b'2', b""), row("c"), done("SELECT 1")].concat(),
            select,
            done("ROLLBACK"),
        ];
        let startup = [
            msg(
                b'R',
                &5i32
                    .to_be_bytes()
                    .iter()
                    .chain(b"salt")
                    .copied()
                    .collect::<Vec<_>>(),
            ),
            msg(b'R', &0i32.to_be_bytes()),
            msg(b'S', b"server_version\x0015.4\0"),
            msg(b'K', &[0, 0, 0, 9, 0, 0, 0, 1]),
            msg(b'Z', b"I"),
        ];
        [startup.concat(), ops.concat()].concat()
    }

    #[test]
    fn a_whole_conversation_reaches_every_operation() {
        // Operations 0-4 then 0-2: the third round's answers are missing (end of file).
        assert_eq!(blocking(&conversation(), true, 0), Some(5));
        assert_eq!(blocking(b"", true, 0), None);
    }

    #[test]
    fn the_session_decodes_whole_and_split_alike() {
        let bytes = [row("a"), msg(b'C', b"SELECT 1\0"), msg(b'Z', b"I")].concat();
        let t = decode_session(&bytes, 3, true, true);
        assert_eq!(t, decode_session(&bytes, usize::MAX, true, true));
        assert_eq!((t.responses.len(), t.end), (1, Ok(0)));
        pg_messages(&[[0x35].as_slice(), &conversation()].concat());
    }
}
