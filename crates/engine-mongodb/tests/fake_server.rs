//! The connection's handshake against a scripted server on a real socket: the `hello`
//! limits are taken, PLAIN is refused over plain TCP to a non-loopback address (and sent
//! on loopback), and a SCRAM server whose final signature is forged is refused.

use bson::raw::{cstr, RawBinaryRef, RawBsonRef, RawDocument, RawDocumentBuf};
use bson::spec::BinarySubtype;
use dbdelta_engine::{ConnectOptions, ErrorKind};
use dbdelta_engine_mongodb::conn;
use dbdelta_engine_mongodb::msg;
use dbdelta_engine_mongodb::spec::params;
use dbdelta_model::TargetSpec;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};

/// Reads one request and returns its id and body.
fn request(s: &mut TcpStream) -> Option<(i32, RawDocumentBuf)> {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).ok()?;
    let len = i32::from_le_bytes(head) as usize;
    let mut rest = vec![0u8; len - 4];
    s.read_exact(&mut rest).ok()?;
    let id = i32::from_le_bytes(rest[0..4].try_into().unwrap());
    let body = &rest[msg::HEADER - 4 + 5..];
    let blen = i32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
    Some((
        id,
        RawDocument::from_bytes(&body[..blen]).unwrap().to_owned(),
    ))
}

fn answer(s: &mut TcpStream, id: i32, d: &RawDocumentBuf) {
    s.write_all(&msg::reply(id, d.as_bytes())).unwrap();
}

fn hello_reply(mechs: &[&str]) -> RawDocumentBuf {
    let mut d = RawDocumentBuf::new();
    d.append(cstr!("isWritablePrimary"), true);
    d.append(cstr!("maxBsonObjectSize"), 16_777_216i32);
    d.append(cstr!("maxMessageSizeBytes"), 48_000_000i32);
    d.append(cstr!("maxWriteBatchSize"), 100_000i32);
    d.append(cstr!("maxWireVersion"), 21i32);
    let mut a = bson::raw::RawArrayBuf::new();
    for m in mechs {
        a.push(*m);
    }
    d.append(cstr!("saslSupportedMechs"), &a);
    d.append(cstr!("ok"), 1.0);
    d
}

/// A server that answers hello, then plays `script` on each further request: it gets the
/// request body and returns the reply. Returns its port.
fn serve(
    bind: IpAddr,
    mechs: &'static [&'static str],
    script: fn(usize, &RawDocumentBuf) -> RawDocumentBuf,
) -> u16 {
    let l = TcpListener::bind((bind, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let Some((id, _)) = request(&mut s) else {
                return;
            };
            answer(&mut s, id, &hello_reply(mechs));
            let mut n = 0;
            while let Some((id, body)) = request(&mut s) {
                answer(&mut s, id, &script(n, &body));
                n += 1;
            }
        }
    });
    port
}

fn payload(b: &RawDocumentBuf) -> Vec<u8> {
    match b.get("payload").unwrap() {
        Some(RawBsonRef::Binary(p)) => p.bytes.to_vec(),
        other => panic!("no payload: {other:?}"),
    }
}

fn sasl_reply(payload: &[u8], done: bool) -> RawDocumentBuf {
    let mut d = RawDocumentBuf::new();
    d.append(cstr!("conversationId"), 1i32);
    d.append(cstr!("done"), done);
    d.append(
        cstr!("payload"),
        RawBinaryRef {
            subtype: BinarySubtype::Generic,
            bytes: payload,
        },
    );
    d.append(cstr!("ok"), 1.0);
    d
}

/// A non-loopback address of this machine, found by routing (no packet is sent).
fn outward_ip() -> Option<IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn plain_is_refused_over_plain_tcp_to_a_non_loopback_address() {
    let Some(ip) = outward_ip() else {
        // Without a non-loopback interface, the refusal itself is checked by auth's unit test.
        assert!(dbdelta_engine_mongodb::auth::check_plain(false, "db1").is_err());
        return;
    };
    let port = serve(IpAddr::from([0, 0, 0, 0]), &["PLAIN"], |_, _| {
        panic!("PLAIN was sent")
    });
    let spec = TargetSpec::parse(&format!(
        "m=mongodb://bob:pw@{ip}:{port}/ycsb?authMechanism=PLAIN"
    ))
    .unwrap();
    let p = params(&spec, false, "dbdelta").unwrap();
    let e = conn::connect(&p, None, &ConnectOptions::default())
        .err()
        .expect("refused");
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("in clear"), "{e}");
    assert!(!e.message.contains("pw@"), "{e}");
}

#[test]
fn plain_goes_over_loopback_and_the_limits_are_read() {
    let port = serve(IpAddr::from([127, 0, 0, 1]), &["PLAIN"], |n, b| {
        assert_eq!(n, 0);
        assert_eq!(b.get_str("mechanism").unwrap(), "PLAIN");
        assert_eq!(b.get_str("$db").unwrap(), "$external");
        assert_eq!(payload(b), b"\0bob\0pw");
        sasl_reply(b"", true)
    });
    let spec = TargetSpec::parse(&format!("m=mongodb://bob:pw@127.0.0.1:{port}/ycsb")).unwrap();
    let p = params(&spec, false, "dbdelta").unwrap();
    let c = conn::connect(&p, None, &ConnectOptions::default()).unwrap();
    assert_eq!(c.hello().limits.max_batch, 100_000);
    assert_eq!(c.hello().max_wire_version, 21);
}

#[test]
fn a_forged_scram_server_signature_is_refused() {
    let port = serve(IpAddr::from([127, 0, 0, 1]), &["SCRAM-SHA-256"], |n, b| {
        match n {
            0 => {
                assert_eq!(b.get_str("mechanism").unwrap(), "SCRAM-SHA-256");
                assert_eq!(b.get_str("$db").unwrap(), "ycsb");
                let first = String::from_utf8(payload(b)).unwrap();
                let nonce = first.split("r=").nth(1).unwrap().to_string();
                sasl_reply(
                    format!("r={nonce}srv,s=QSXCR+Q6sek8bf92,i=4096").as_bytes(),
                    false,
                )
            }
            // A server that does not know the password cannot sign; it makes one up.
            _ => sasl_reply(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", true),
        }
    });
    let spec = TargetSpec::parse(&format!("m=mongodb://bob:pencil@127.0.0.1:{port}/ycsb")).unwrap();
    let p = params(&spec, false, "dbdelta").unwrap();
    let e = conn::connect(&p, None, &ConnectOptions::default())
        .err()
        .expect("refused");
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("signature is wrong"), "{e}");
    assert!(!e.message.contains("pencil"), "{e}");
}
