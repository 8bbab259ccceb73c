//! Servers that are not ClickHouse, or misbehave, behind a `clickhouse://` URL: an HTML page,
//! an answer whose body never ends, a port that accepts and never answers. Each is a clean
//! error naming the target, in bounded time and memory.

use dbdelta_engine::{ErrorKind, OpenOptions};
use dbdelta_engine_clickhouse::ClickhouseEngine;
use dbdelta_model::TargetSpec;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// A server that answers every request on every connection with `head`, then writes
/// `body` once, or forever when `endless`; with `silent` it accepts and never answers.
fn serve(head: &'static [u8], body: &'static [u8], endless: bool, silent: bool) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut r = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                if silent {
                    std::thread::sleep(Duration::from_secs(120));
                    return;
                }
                let _ = conn.write_all(head).and_then(|_| conn.write_all(body));
                let block: Vec<u8> = body.iter().copied().cycle().take(64 * 1024).collect();
                while endless && !block.is_empty() && conn.write_all(&block).is_ok() {}
            });
        }
    });
    port
}

fn open(port: u16) -> (dbdelta_engine::EngineError, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!(
        "ch=clickhouse://127.0.0.1:{port}?connect_timeout=3"
    ))
    .unwrap();
    let started = Instant::now();
    let e = ClickhouseEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    (e, started.elapsed())
}

#[test]
fn an_html_page_is_not_clickhouse() {
    let port = serve(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 26\r\n\r\n",
        b"<html><b>hello</b></html>\n",
        false,
        false,
    );
    let (e, _) = open(port);
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(
        e.message.contains("target 'ch'") && e.message.contains("is not ClickHouse"),
        "{e}"
    );
}

#[test]
fn headers_alone_do_not_make_a_version() {
    // A server that copies ClickHouse's header but answers with a page.
    let port = serve(
        b"HTTP/1.1 200 OK\r\nX-ClickHouse-Server-Display-Name: x\r\nContent-Length: 7\r\n\r\n",
        b"<html>\n",
        false,
        false,
    );
    let (e, _) = open(port);
    assert!(e.message.contains("SELECT version() returned"), "{e}");
}

#[test]
fn an_endless_answer_ends_at_a_limit() {
    let port = serve(
        b"HTTP/1.1 200 OK\r\nX-ClickHouse-Server-Display-Name: x\r\n\r\n",
        b"18.16.1\n18.16.1\n18.16.1\n18.16.1\n",
        true,
        false,
    );
    let (e, took) = open(port);
    assert!(e.message.contains("larger than 1 MiB"), "{e}");
    // The start's admin connection holds at most 1 MiB: well within a second, with a wide
    // margin for a loaded two-core machine.
    assert!(took < Duration::from_secs(120), "{took:?}");
}

#[test]
fn a_port_that_never_answers_times_out() {
    let port = serve(b"", b"", false, true);
    let (e, took) = open(port);
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    assert!(
        e.message.contains("target 'ch'") && e.message.contains("nothing read within 3.0 s"),
        "{e}"
    );
    // connect_timeout=3 bounds the wait for the first answer.
    assert!(took < Duration::from_secs(30), "{took:?}");
}
