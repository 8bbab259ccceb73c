//! The entry of the `mysql_packets` fuzz target (`fuzz/` at the repository root) and of its
//! corpus regression test: server bytes through every client path that reads them. Not
//! part of the engine API.

use crate::client::{Addr, ConnectParams, RawConn};
use crate::errors::ClientError;
use crate::proto::response::{ResponseDecoder, Step};
use crate::proto::split_packet;
use crate::session::{MysqlSession, SessionStmt};
use crate::wire::{Stream, Wire};
use dbdelta_engine::{Decoded, Op, Rows, Session, StmtId, Value};
use dbdelta_model::Secret;
use std::time::Duration;

/// Feeding chunk sizes, picked by the low 4 bits of the control byte.
const CHUNKS: [usize; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 64, 255, 1024, 65536];

/// Takes `[control byte, server bytes…]` and runs the server bytes through:
///
/// 1. the sans-IO [`MysqlSession::decode`] (text protocol) fed whole and in chunks (the
///    control byte's low 4 bits pick the size); both must give the same responses, rows
///    and final error;
/// 2. the response decoder in binary (COM_STMT_EXECUTE) mode, keeping rows, so binary
///    values are rendered from their column types;
/// 3. a blocking client whose server plays the bytes back: the greeting, authentication
///    (native, caching_sha2, auth switch), then a sequence of commands (bits 6–7 pick where
///    it starts) over the packet framing; with bit 5 set it asks for compression;
/// 4. with bit 5 set, the bytes as compressed-protocol frames (stored and zlib) read as
///    packets, joining those of 16 MiB or more. (A real server sends nothing between its
///    authentication OK and the first compressed command, so step 3 cannot reach the frames
///    with everything sent at once.)
///
/// Bit 4 selects CLIENT_DEPRECATE_EOF for the decoders. Panics only on a bug.
pub fn mysql_packets(data: &[u8]) {
    let Some((&ctrl, bytes)) = data.split_first() else {
        return;
    };
    let deprecate_eof = ctrl & 0x10 != 0;
    let whole = decode_session(bytes, usize::MAX, deprecate_eof);
    let chunked = decode_session(bytes, CHUNKS[usize::from(ctrl & 0x0f)], deprecate_eof);
    assert_eq!(whole, chunked, "whole and chunked feeding disagree");
    decode_binary(bytes, deprecate_eof);
    let compress = ctrl & 0x20 != 0;
    let _ = blocking(bytes, compress, ctrl >> 6);
    if compress {
        let _ = compressed_packets(bytes);
    }
}

/// Reads `bytes` as compressed-protocol frames, packet by packet, through the response
/// decoder; how many packets were read.
fn compressed_packets(bytes: &[u8]) -> usize {
    dbdelta_kit::fuzzing::replay_server(bytes, |path| {
        let Ok(sock) = std::os::unix::net::UnixStream::connect(path) else {
            return 0;
        };
        let mut wire = Wire::new(Stream::Unix(sock));
        wire.enable_compression();
        let mut dec = ResponseDecoder::new(false);
        dec.begin(false);
        let mut n = 0;
        while let Ok(p) = wire.read_packet() {
            n += 1;
            if !matches!(dec.packet(p), Ok(Step::More)) {
                dec.begin(false);
            }
        }
        n
    })
}

/// Everything a driver sees from a session: each response (rows kept, or the error), then
/// the error that ended the stream or the bytes left over.
#[derive(Debug, PartialEq)]
struct Transcript {
    responses: Vec<Response>,
    end: End,
}

/// One response as a driver sees it: its outcome and kept rows, or its error's text.
#[derive(Debug, PartialEq)]
enum Response {
    Done(dbdelta_engine::Outcome, Rows),
    Failed(String),
}

/// How a transcript ends: bytes left over (a partial packet), or the error that broke
/// the stream.
#[derive(Debug, PartialEq)]
enum End {
    Left(usize),
    Broken(String),
}

fn decode_session(bytes: &[u8], chunk: usize, deprecate_eof: bool) -> Transcript {
    let stmt = SessionStmt {
        sql: "SELECT c FROM sbtest1 WHERE id=?".into(),
        server: None,
    };
    let mut s = MysqlSession::new(vec![stmt], deprecate_eof, None);
    let mut t = Transcript {
        responses: Vec::new(),
        end: End::Left(0),
    };
    let mut out = Vec::new();
    let mut n = 0usize;
    let mut request = |s: &mut MysqlSession, n: &mut usize| {
        out.clear();
        // Alternate an (interpolated) execute and a plain query, keeping every other
        // response's rows.
        let op = if n.is_multiple_of(2) {
            Op::Execute {
                stmt: StmtId(0),
                params: &[Value::Int(7)],
            }
        } else {
            Op::Query("SELECT id, k, c, pad FROM sbtest1 WHERE id BETWEEN 1 AND 9")
        };
        if *n % 4 < 2 {
            s.capture_next().expect("capture");
        }
        *n += 1;
        s.encode(&op, &mut out).expect("encode");
    };
    request(&mut s, &mut n);
    let mut buf = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match s.decode(&buf) {
                Err(e) => {
                    t.end = End::Broken(e.to_string());
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
                    t.responses.push(match result {
                        Ok(o) => Response::Done(o, rows),
                        Err(e) => Response::Failed(e.to_string()),
                    });
                    request(&mut s, &mut n);
                }
            }
        }
    }
    t.end = End::Left(buf.len());
    t
}

/// Responses to COM_STMT_EXECUTE, rows kept: the binary row decoder.
fn decode_binary(mut bytes: &[u8], deprecate_eof: bool) {
    let mut dec = ResponseDecoder::new(deprecate_eof);
    dec.begin(true);
    dec.capture = true;
    let mut seq = 1u8;
    while let Ok(Some((payload, len))) = split_packet(bytes, &mut seq) {
        bytes = &bytes[len..];
        match dec.packet(payload) {
            Ok(Step::More) => {}
            Ok(Step::Done(_)) => {
                let _ = dec.kept.len();
                dec.kept.clear();
                dec.begin(true);
                dec.capture = true;
                seq = 1;
            }
            Ok(Step::LocalInfile) | Err(_) => return,
        }
    }
}

/// The blocking client against a server that plays `bytes` back; how many commands
/// succeeded (`None`: the connection failed).
fn blocking(bytes: &[u8], compress: bool, first_op: u8) -> Option<usize> {
    dbdelta_kit::fuzzing::replay_server(bytes, |path| {
        let p = ConnectParams {
            addr: Addr::Unix {
                path: path.to_path_buf(),
            },
            user: "bench".into(),
            password: Some(Secret::new("secret")),
            database: Some("bench".into()),
            tls: None,
            compress,
            key_exchange: Default::default(),
        };
        let limit = Duration::from_secs(10);
        let mut c = RawConn::connect(&p, limit, None, Some(limit)).ok()?;
        let _ = (c.connection_id, c.server_version.len());
        let mut rows = Rows::new();
        let mut ok = 0;
        for i in 0..8 {
            // Errors are expected; after a lost connection every command fails at once.
            let r = match (usize::from(first_op) + i) % 5 {
                0 => c.query_rows("SELECT @@version").map(drop),
                1 => c.query(b"UPDATE sbtest1 SET k=k+1 WHERE id=7").map(drop),
                2 => c
                    .prepare("SELECT c FROM sbtest1 WHERE id=?")
                    .and_then(|mut st| {
                        let params = vec![Value::Int(7); usize::from(st.params)];
                        c.execute(&mut st, &params, Some(&mut rows)).map(drop)
                    }),
                3 => c
                    .query_keeping(b"SELECT id, k, c, pad FROM sbtest1", Some(&mut rows))
                    .map(drop),
                _ => c
                    .load_local("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", b"1\t2\n")
                    .map(drop),
            };
            if matches!(r, Err(ClientError::Io(_))) {
                break;
            }
            ok += usize::from(r.is_ok());
        }
        Some(ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::proto::testing::packet as pkt;

    fn greeting() -> Vec<u8> {
        let caps: u32 = 0x1 | 0x8 | 0x20 | 0x200 | 0x2000 | 0x8000 | 0x8_0000 | 0x20_0000;
        crate::proto::testing::greeting(
            "8.0.36",
            caps,
            b"abcdefghijklmnopqrst",
            "mysql_native_password",
        )
    }

    const OK: &[u8] = &[0, 1, 0, 2, 0, 0, 0];

    /// A text result of one column and one row, from sequence 1.
    fn result() -> Vec<u8> {
        let col =
            b"\x03def\x00\x00\x00\x01c\x00\x0c\x2d\x00\x10\x00\x00\x00\xfe\x00\x00\x00\x00\x00";
        let eof = [0xfe, 0, 0, 2, 0];
        [
            pkt(1, &[1]),
            pkt(2, col),
            pkt(3, &eof),
            pkt(4, b"\x03abc"),
            pkt(5, &eof),
        ]
        .concat()
    }

    #[test]
    fn a_whole_conversation_reaches_every_command() {
        let start = [pkt(0, &greeting()), pkt(2, OK)].concat();
        let prepare = pkt(1, &[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let local = [pkt(1, b"\xfbx"), pkt(4, OK)].concat();
        let ops = [result(), pkt(1, OK), prepare, pkt(1, OK), result(), local].concat();
        assert_eq!(blocking(&[start.clone(), ops].concat(), false, 0), Some(5));
        assert_eq!(blocking(&start, false, 0), Some(0));
        assert_eq!(blocking(b"", false, 0), None);
    }

    #[test]
    fn compressed_frames_are_read_as_packets() {
        let packets = [result(), pkt(1, OK)].concat();
        // One stored frame with the first 5 bytes, one with the rest.
        let mut frames = Vec::new();
        // Compressed frames carry their own sequence ids, checked in order.
        for (seq, part) in [&packets[..5], &packets[5..]].into_iter().enumerate() {
            frames.extend_from_slice(&(part.len() as u32).to_le_bytes()[..3]);
            frames.extend_from_slice(&[seq as u8, 0, 0, 0]);
            frames.extend_from_slice(part);
        }
        assert_eq!(compressed_packets(&frames), 6);
    }

    #[test]
    fn the_session_decodes_whole_and_split_alike() {
        let bytes = [result(), pkt(1, OK)].concat();
        let t = decode_session(&bytes, 3, false);
        assert_eq!(t, decode_session(&bytes, usize::MAX, false));
        assert_eq!((t.responses.len(), t.end), (2, End::Left(0)));
        mysql_packets(&[[0x05].as_slice(), &bytes].concat());
    }
}
