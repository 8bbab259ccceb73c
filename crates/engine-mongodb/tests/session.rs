//! The query-phase state machine from captured byte streams: replies split into single
//! bytes and coalesced into one read, an error reply, a cursor over several batches
//! (getMore sent mid-response), killCursors for a cursor left open, a read-modify-write's
//! pipelined replies, and a message larger than the server's maximum refused.

use bson::raw::{cstr, RawArrayBuf, RawDocument, RawDocumentBuf};
use dbdelta_engine::ops::{KvKind, KvOp};
use dbdelta_engine::{Decoded, EngineError, ErrorKind, Op, Outcome, Session};
use dbdelta_engine_mongodb::cmd::Commands;
use dbdelta_engine_mongodb::msg::{self, Limits};
use dbdelta_engine_mongodb::spec::{WriteConcern, W};
use dbdelta_engine_mongodb::MongoSession;

const FIRST: i32 = 100;

fn session(limits: Limits) -> MongoSession {
    let wc = WriteConcern {
        w: Some(W::Nodes(1)),
        j: Some(false),
        wtimeout_ms: None,
    };
    MongoSession::new(
        Commands::new("ycsb", "usertable", &wc, "primary"),
        limits,
        FIRST,
    )
}

fn op(kind: KvKind, count: u32) -> KvOp<'static> {
    static FIELDS: [u16; 1] = [3];
    static VALUES: [&[u8]; 1] = [b"0123456789"];
    let write = matches!(
        kind,
        KvKind::Update | KvKind::ReadModifyWrite | KvKind::Insert
    );
    KvOp {
        kind,
        key: b"user6284781860667377211",
        fields: if write { &FIELDS } else { &[] },
        values: if write { &VALUES } else { &[] },
        count,
    }
}

fn cursor_reply(id: i64, docs: usize, first: bool) -> Vec<u8> {
    let mut batch = RawArrayBuf::new();
    for i in 0..docs {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("_id"), format!("user{i}"));
        batch.push(&d);
    }
    let mut c = RawDocumentBuf::new();
    c.append(cstr!("id"), id);
    c.append(cstr!("ns"), "ycsb.usertable");
    c.append(
        if first {
            cstr!("firstBatch")
        } else {
            cstr!("nextBatch")
        },
        &batch,
    );
    let mut r = RawDocumentBuf::new();
    r.append(cstr!("cursor"), &c);
    r.append(cstr!("ok"), 1.0);
    r.into_bytes()
}

fn write_reply(n: i32) -> Vec<u8> {
    let mut r = RawDocumentBuf::new();
    r.append(cstr!("n"), n);
    r.append(cstr!("ok"), 1.0);
    r.into_bytes()
}

fn error_reply(code: i32, name: &str) -> Vec<u8> {
    let mut r = RawDocumentBuf::new();
    r.append(cstr!("ok"), 0.0);
    r.append(
        cstr!("errmsg"),
        "E11000 duplicate key error collection: ycsb.usertable",
    );
    r.append(cstr!("code"), code);
    r.append(cstr!("codeName"), name);
    r.into_bytes()
}

/// The body documents of the messages in `bytes`.
fn bodies(mut bytes: &[u8]) -> Vec<RawDocumentBuf> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = i32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        // Header, flag bits, section kind 0.
        let body = &bytes[msg::HEADER + 5..];
        let blen = i32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
        out.push(RawDocument::from_bytes(&body[..blen]).unwrap().to_owned());
        bytes = &bytes[len..];
    }
    out
}

/// The results of a feed and the follow-up requests sent meanwhile.
type Fed = (Vec<Result<Outcome, EngineError>>, Vec<u8>);

/// Feeds `stream` in pieces of `chunk` bytes as the event loop does; returns the results
/// and every follow-up request the session sent.
fn feed(s: &mut MongoSession, stream: &[u8], chunk: usize) -> Result<Fed, EngineError> {
    let mut buf = Vec::new();
    let mut done = Vec::new();
    let mut sent = Vec::new();
    for piece in stream.chunks(chunk) {
        buf.extend_from_slice(piece);
        loop {
            match s.decode(&buf)? {
                Decoded::Partial { consumed } => {
                    buf.drain(..consumed);
                    s.follow_up(&mut sent);
                    break;
                }
                Decoded::Complete { consumed, result } => {
                    buf.drain(..consumed);
                    done.push(result);
                }
            }
        }
    }
    assert!(buf.is_empty(), "bytes left over");
    Ok((done, sent))
}

#[test]
fn a_read_completes_from_split_and_coalesced_reads() {
    for chunk in [1, 7, 1 << 20] {
        let mut s = session(Limits::default());
        let mut out = Vec::new();
        s.encode(&Op::Kv(op(KvKind::Read, 0)), &mut out).unwrap();
        let sent = bodies(&out);
        assert_eq!(sent.len(), 1);
        let find = &sent[0];
        assert_eq!(find.get_str("find").unwrap(), "usertable");
        assert_eq!(
            find.get_document("filter").unwrap().get_str("_id").unwrap(),
            "user6284781860667377211"
        );
        assert_eq!(find.get_i64("limit").unwrap(), 1);
        assert_eq!(find.get_str("$db").unwrap(), "ycsb");
        let (done, follow) =
            feed(&mut s, &msg::reply(FIRST, &cursor_reply(0, 1, true)), chunk).unwrap();
        assert!(follow.is_empty());
        let o = done.into_iter().next().unwrap().unwrap();
        assert_eq!((o.rows, o.has_result), (1, true), "chunk {chunk}");
    }
}

#[test]
fn writes_use_document_sequences_and_the_write_concern() {
    let mut s = session(Limits::default());
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Update, 0)), &mut out).unwrap();
    let body = &bodies(&out)[0];
    assert_eq!(body.get_str("update").unwrap(), "usertable");
    let wc = body.get_document("writeConcern").unwrap();
    assert_eq!(
        (wc.get_i32("w").unwrap(), wc.get_bool("j").unwrap()),
        (1, false)
    );
    // The `updates` sequence follows the body section.
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("updates\0") && text.contains("$set") && text.contains("field3"),
        "{text}"
    );
    let (done, _) = feed(&mut s, &msg::reply(FIRST, &write_reply(1)), 3).unwrap();
    assert_eq!(done[0].as_ref().unwrap().affected, 1);

    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Insert, 0)), &mut out).unwrap();
    assert!(String::from_utf8_lossy(&out).contains("documents\0"));
    let mut out2 = Vec::new();
    assert!(
        s.encode(&Op::Kv(op(KvKind::Delete, 0)), &mut out2).is_err(),
        "one request at a time"
    );
    feed(&mut s, &msg::reply(FIRST + 1, &write_reply(1)), 1).unwrap();
    s.encode(&Op::Kv(op(KvKind::Delete, 0)), &mut out2).unwrap();
    assert!(String::from_utf8_lossy(&out2).contains("deletes\0"));
}

#[test]
fn an_error_reply_keeps_code_and_name_and_the_session_goes_on() {
    let mut s = session(Limits::default());
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Insert, 0)), &mut out).unwrap();
    let (done, _) = feed(
        &mut s,
        &msg::reply(FIRST, &error_reply(11000, "DuplicateKey")),
        5,
    )
    .unwrap();
    let e = done.into_iter().next().unwrap().unwrap_err();
    assert_eq!(e.code.as_deref(), Some("MongoDB 11000 DuplicateKey"));
    assert_eq!(e.kind, ErrorKind::Retryable);
    // A write error inside an ok reply counts the same way.
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Insert, 0)), &mut out).unwrap();
    let mut we = RawDocumentBuf::new();
    we.append(cstr!("index"), 0i32);
    we.append(cstr!("code"), 11000i32);
    we.append(cstr!("errmsg"), "dup");
    let mut arr = RawArrayBuf::new();
    arr.push(&we);
    let mut r = RawDocumentBuf::new();
    r.append(cstr!("n"), 0i32);
    r.append(cstr!("writeErrors"), &arr);
    r.append(cstr!("ok"), 1i32);
    let (done, _) = feed(&mut s, &msg::reply(FIRST + 1, r.as_bytes()), 1 << 20).unwrap();
    assert_eq!(
        done[0].as_ref().unwrap_err().code.as_deref(),
        Some("MongoDB 11000")
    );
    // Then a read works.
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Read, 0)), &mut out).unwrap();
    let (done, _) = feed(&mut s, &msg::reply(FIRST + 2, &cursor_reply(0, 0, true)), 2).unwrap();
    assert_eq!(done[0].as_ref().unwrap().rows, 0);
}

#[test]
fn a_scan_cursor_over_several_batches_sends_get_more() {
    for chunk in [1, 1 << 20] {
        let mut s = session(Limits::default());
        let mut out = Vec::new();
        s.encode(&Op::Kv(op(KvKind::Scan, 5)), &mut out).unwrap();
        let find = &bodies(&out)[0];
        assert_eq!(
            find.get_document("sort").unwrap().get_i32("_id").unwrap(),
            1
        );
        assert_eq!(find.get_i64("limit").unwrap(), 5);
        // The first batch holds 2 of 5 records and leaves cursor 42 open.
        let (done, follow) = feed(
            &mut s,
            &msg::reply(FIRST, &cursor_reply(42, 2, true)),
            chunk,
        )
        .unwrap();
        assert!(done.is_empty());
        let gm = &bodies(&follow)[0];
        assert_eq!(gm.get_i64("getMore").unwrap(), 42);
        assert_eq!(gm.get_i64("batchSize").unwrap(), 3);
        assert_eq!(gm.get_str("collection").unwrap(), "usertable");
        let id = msg::request_id(&follow).unwrap();
        let (done, follow) =
            feed(&mut s, &msg::reply(id, &cursor_reply(0, 3, false)), chunk).unwrap();
        assert!(follow.is_empty());
        assert_eq!(done[0].as_ref().unwrap().rows, 5);
    }
}

#[test]
fn a_cursor_left_open_after_its_records_is_killed() {
    let mut s = session(Limits::default());
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Scan, 2)), &mut out).unwrap();
    let (done, follow) = feed(&mut s, &msg::reply(FIRST, &cursor_reply(7, 2, true)), 4).unwrap();
    assert!(done.is_empty());
    let kc = &bodies(&follow)[0];
    assert_eq!(kc.get_str("killCursors").unwrap(), "usertable");
    let mut r = RawDocumentBuf::new();
    r.append(cstr!("ok"), 1.0);
    let (done, _) = feed(
        &mut s,
        &msg::reply(msg::request_id(&follow).unwrap(), r.as_bytes()),
        4,
    )
    .unwrap();
    assert_eq!(done[0].as_ref().unwrap().rows, 2);
}

#[test]
fn a_read_modify_write_pipelines_its_read_and_update() {
    let mut s = session(Limits::default());
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::ReadModifyWrite, 0)), &mut out)
        .unwrap();
    let sent = bodies(&out);
    assert_eq!(sent.len(), 2);
    assert!(sent[0].get_str("find").is_ok() && sent[1].get_str("update").is_ok());
    let mut stream = msg::reply(FIRST, &cursor_reply(0, 1, true));
    stream.extend(msg::reply(FIRST + 1, &write_reply(1)));
    for chunk in [1, 1 << 20] {
        let mut s2 = session(Limits::default());
        s2.encode(&Op::Kv(op(KvKind::ReadModifyWrite, 0)), &mut Vec::new())
            .unwrap();
        let (done, _) = feed(&mut s2, &stream, chunk).unwrap();
        assert_eq!(done.len(), 1, "one operation, one result");
        let o = done[0].as_ref().unwrap();
        assert_eq!((o.rows, o.affected), (1, 1));
    }
    // The read failing still consumes the update's reply before reporting.
    let mut stream = msg::reply(FIRST, &error_reply(2, "BadValue"));
    stream.extend(msg::reply(FIRST + 1, &write_reply(1)));
    let (done, _) = feed(&mut s, &stream, 3).unwrap();
    assert_eq!(
        done[0].as_ref().unwrap_err().code.as_deref(),
        Some("MongoDB 2 BadValue")
    );
}

#[test]
fn a_message_larger_than_the_servers_maximum_is_refused() {
    let small = Limits {
        max_bson: 2048,
        max_message: 4096,
        max_batch: 10,
    };
    let mut s = session(small);
    let mut out = Vec::new();
    s.encode(&Op::Kv(op(KvKind::Read, 0)), &mut out).unwrap();
    // Only the length of the header has arrived: refused before the rest is read.
    let e = s.decode(&5_000_000i32.to_le_bytes()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Connection);
    assert!(e.message.contains("maxMessageSizeBytes (4096)"), "{e}");
    // A record over maxBsonObjectSize is refused before anything is sent.
    let mut s = session(small);
    let big = vec![b'x'; 3000];
    let values: [&[u8]; 1] = [&big];
    let mut out = Vec::new();
    let e = s
        .encode(
            &Op::Kv(KvOp {
                kind: KvKind::Insert,
                key: b"user1",
                fields: &[0],
                values: &values,
                count: 0,
            }),
            &mut out,
        )
        .unwrap_err();
    assert!(e.message.contains("maxBsonObjectSize (2048)"), "{e}");
    assert!(out.is_empty());
    // The session is still usable.
    s.encode(&Op::Kv(op(KvKind::Read, 0)), &mut out).unwrap();
}

#[test]
fn a_reply_to_another_request_breaks_the_stream() {
    let mut s = session(Limits::default());
    s.encode(&Op::Kv(op(KvKind::Read, 0)), &mut Vec::new())
        .unwrap();
    let e = s
        .decode(&msg::reply(FIRST + 9, &cursor_reply(0, 1, true)))
        .unwrap_err();
    assert!(e.message.contains("awaited"), "{e}");
    assert!(s.encode(&Op::Query("SELECT 1"), &mut Vec::new()).is_err());
}
