//! The authentication exchanges against a scripted server on 127.0.0.1 (plain TCP, so not a
//! secure channel): Oracle MySQL is not installable here, so each test plays the server's
//! side of MySQL's documented exchange, checks what the client sends as a server would (the
//! scramble against the stored hash, the RSA-encrypted password after decrypting it with
//! its private key) and answers as the server does.

use super::rsa_key::tests::{server_decrypt, test_pem};
use super::{KeyExchange, ServerKey};
use crate::client::{Addr, ConnectParams, RawConn};
use crate::errors::ClientError;
use crate::proto::{testing, Cur};
use dbdelta_model::Secret;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const PASSWORD: &str = "Pa55-w0rd, longer than twenty bytes";
const SCRAMBLE: [u8; 20] = *b"0123456789abcdefghij";

/// A socket the scripted server speaks over (TCP, or a Unix socket for a secure channel).
trait Io: Read + Write + Send {}
impl<T: Read + Write + Send> Io for T {}

/// The server's end of one connection.
struct Peer(Box<dyn Io>);

impl Peer {
    fn send(&mut self, seq: u8, payload: &[u8]) {
        self.0.write_all(&testing::packet(seq, payload)).unwrap();
    }

    /// The next client packet, which must carry sequence id `seq`.
    fn recv(&mut self, seq: u8) -> Vec<u8> {
        let mut h = [0u8; 4];
        self.0.read_exact(&mut h).unwrap();
        assert_eq!(h[3], seq, "client packet sequence id");
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let mut p = vec![0; len];
        self.0.read_exact(&mut p).unwrap();
        p
    }

    /// Everything the client sends until it closes the connection.
    fn rest(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        let _ = self.0.read_to_end(&mut all);
        all
    }

    /// A protocol-10 greeting offering `plugin` with [`SCRAMBLE`].
    fn greet(&mut self, plugin: &str) {
        let caps: u32 = 0x200 | 0x8000 | 0x8_0000 | 0x20_0000 | 0x2000 | 0x2_0000;
        self.send(0, &testing::greeting("8.4.3", caps, &SCRAMBLE, plugin));
    }

    /// The handshake response: (plugin named, its auth data).
    fn response(&mut self) -> (String, Vec<u8>) {
        let p = self.recv(1);
        let mut c = Cur::new(&p);
        c.skip(32);
        assert_eq!(c.cstr(), b"bench");
        let n = c.lenenc().unwrap() as usize;
        let data = c.take(n).unwrap().to_vec();
        let plugin = String::from_utf8(c.cstr().to_vec()).unwrap();
        (plugin, data)
    }

    /// An auth switch request to `plugin` with [`SCRAMBLE`] and its NUL.
    fn switch(&mut self, seq: u8, plugin: &str) {
        let mut p = vec![0xFE];
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p.extend_from_slice(&SCRAMBLE);
        p.push(0);
        self.send(seq, &p);
    }

    fn ok(&mut self, seq: u8) {
        self.send(seq, &[0, 0, 0, 2, 0, 0, 0]);
    }

    /// The client's COM_QUIT after a successful login.
    fn quit(&mut self) {
        assert_eq!(self.recv(0), [0x01]);
    }
}

/// Starts a scripted server for one connection; `script` plays its side.
fn serve<T: Send + 'static>(
    script: impl FnOnce(&mut Peer) -> T + Send + 'static,
) -> (u16, JoinHandle<T>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        script(&mut Peer(Box::new(s)))
    });
    (port, h)
}

/// Like [`serve`] on a Unix socket at `path`.
fn serve_unix<T: Send + 'static>(
    path: &std::path::Path,
    script: impl FnOnce(&mut Peer) -> T + Send + 'static,
) -> JoinHandle<T> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        script(&mut Peer(Box::new(s)))
    })
}

fn connect(port: u16, password: &str, kx: KeyExchange) -> Result<RawConn, ClientError> {
    let p = ConnectParams {
        addr: Addr::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        user: "bench".into(),
        password: Some(Secret::new(password.to_string())),
        database: None,
        tls: None,
        compress: false,
        key_exchange: kx,
    };
    RawConn::connect(&p, Duration::from_secs(20), None, None)
}

fn asking() -> KeyExchange {
    KeyExchange {
        get_server_public_key: true,
        server_public_key: None,
    }
}

fn with_file() -> KeyExchange {
    KeyExchange {
        get_server_public_key: false,
        server_public_key: Some(Arc::new(
            ServerKey::from_pem(test_pem().as_bytes()).unwrap(),
        )),
    }
}

/// The server's check of a caching_sha2_password scramble: it keeps SHA256(SHA256(pw)).
fn server_accepts_sha2(data: &[u8], password: &str) -> bool {
    let stored = Sha256::digest(Sha256::digest(password.as_bytes()));
    let mut h = Sha256::new();
    h.update(stored);
    h.update(SCRAMBLE);
    let mix = h.finalize();
    let stage1: Vec<u8> = data.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect();
    data.len() == 32 && Sha256::digest(&stage1) == stored
}

fn password_nul() -> Vec<u8> {
    [PASSWORD.as_bytes(), b"\0"].concat()
}

#[test]
fn caching_sha2_fast_auth_success() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        let (plugin, data) = s.response();
        assert_eq!(plugin, "caching_sha2_password");
        assert!(server_accepts_sha2(&data, PASSWORD));
        s.send(2, &[1, 3]); // fast_auth_success
        s.ok(3);
        s.quit();
    });
    let conn = connect(port, PASSWORD, KeyExchange::default()).unwrap();
    assert_eq!(conn.server_version, "8.4.3");
    drop(conn);
    server.join().unwrap();
}

/// "perform full authentication" over TCP with get-server-public-key=true: the client asks
/// for the key (0x02), the server sends its PEM, the client sends the encrypted password.
#[test]
fn caching_sha2_full_auth_asks_for_the_key_and_encrypts() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        let (_, data) = s.response();
        assert!(server_accepts_sha2(&data, PASSWORD));
        s.send(2, &[1, 4]); // perform_full_authentication
        assert_eq!(
            s.recv(3),
            [2],
            "request_public_key of caching_sha2_password"
        );
        s.send(4, &[&[1][..], test_pem().as_bytes()].concat());
        let cipher = s.recv(5);
        assert_eq!(cipher.len(), 256);
        assert_eq!(server_decrypt(&cipher, &SCRAMBLE), password_nul());
        s.ok(6);
        s.quit();
    });
    connect(port, PASSWORD, asking()).unwrap();
    server.join().unwrap();
}

/// With server-public-key=FILE the encrypted password follows "perform full
/// authentication" at once, without asking the server.
#[test]
fn caching_sha2_full_auth_with_the_key_file() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        s.response();
        s.send(2, &[1, 4]);
        let cipher = s.recv(3);
        assert_eq!(server_decrypt(&cipher, &SCRAMBLE), password_nul());
        s.ok(4);
        s.quit();
    });
    connect(port, PASSWORD, with_file()).unwrap();
    server.join().unwrap();
}

/// Without the opt-in, full authentication over TCP is refused with the fix, and the
/// password never leaves the client.
#[test]
fn caching_sha2_full_auth_without_opt_in_is_refused() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        s.response();
        s.send(2, &[1, 4]);
        s.rest()
    });
    let e = connect(port, PASSWORD, KeyExchange::default()).unwrap_err();
    let ClientError::Unsupported(m) = &e else {
        panic!("{e:?}")
    };
    assert!(
        m.contains("caching_sha2_password")
            && m.contains("--tls")
            && m.contains("get-server-public-key=true"),
        "{m}"
    );
    let sent = server.join().unwrap();
    assert!(
        !sent
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes()),
        "the password was sent"
    );
}

/// A wrong password: the server's ERR comes back as the server's error.
#[test]
fn caching_sha2_wrong_password_is_the_server_s_error() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        let (_, data) = s.response();
        assert!(!server_accepts_sha2(&data, PASSWORD));
        let mut err = vec![0xFF];
        err.extend_from_slice(&1045u16.to_le_bytes());
        err.extend_from_slice(
            b"#28000Access denied for user 'bench'@'localhost' (using password: YES)",
        );
        s.send(2, &err);
    });
    let e = connect(port, "not the password", KeyExchange::default()).unwrap_err();
    assert!(matches!(e, ClientError::Server { code: 1045, .. }), "{e:?}");
    server.join().unwrap();
}

/// sha256_password after an auth switch: the client asks for the key (0x01), then sends
/// the password encrypted with it.
#[test]
fn sha256_password_switch_asks_for_the_key_and_encrypts() {
    let (port, server) = serve(|s| {
        s.greet("mysql_native_password");
        let (plugin, _) = s.response();
        assert_eq!(plugin, "mysql_native_password");
        s.switch(2, "sha256_password");
        assert_eq!(s.recv(3), [1], "request_public_key of sha256_password");
        s.send(4, &[&[1][..], test_pem().as_bytes()].concat());
        let cipher = s.recv(5);
        assert_eq!(server_decrypt(&cipher, &SCRAMBLE), password_nul());
        s.ok(6);
        s.quit();
    });
    connect(port, PASSWORD, asking()).unwrap();
    server.join().unwrap();
}

/// A server whose default plugin is sha256_password, with the key file: the encrypted
/// password goes in the handshake response itself.
#[test]
fn sha256_password_first_packet_with_the_key_file() {
    let (port, server) = serve(|s| {
        s.greet("sha256_password");
        let (plugin, cipher) = s.response();
        assert_eq!(plugin, "sha256_password");
        assert_eq!(server_decrypt(&cipher, &SCRAMBLE), password_nul());
        s.ok(2);
        s.quit();
    });
    connect(port, PASSWORD, with_file()).unwrap();
    server.join().unwrap();
}

/// sha256_password over TCP without the opt-in: the first packet is native's hash (never
/// the password), and the switch to sha256_password is refused with the fix.
#[test]
fn sha256_password_without_opt_in_is_refused() {
    let (port, server) = serve(|s| {
        s.greet("sha256_password");
        let (plugin, _) = s.response();
        assert_eq!(plugin, "mysql_native_password");
        s.switch(2, "sha256_password");
        s.rest()
    });
    let e = connect(port, PASSWORD, KeyExchange::default()).unwrap_err();
    let ClientError::Unsupported(m) = &e else {
        panic!("{e:?}")
    };
    assert!(
        m.contains("sha256_password") && m.contains("server-public-key=FILE"),
        "{m}"
    );
    let sent = server.join().unwrap();
    assert!(!sent
        .windows(PASSWORD.len())
        .any(|w| w == PASSWORD.as_bytes()));
}

/// mysql_clear_password asked for over plain TCP: refused, and the password is never sent.
#[test]
fn clear_password_over_tcp_is_refused_and_never_sent() {
    let (port, server) = serve(|s| {
        s.greet("mysql_native_password");
        s.response();
        s.switch(2, "mysql_clear_password");
        s.rest()
    });
    let e = connect(port, PASSWORD, asking()).unwrap_err();
    let ClientError::Unsupported(m) = &e else {
        panic!("{e:?}")
    };
    assert!(
        m.contains("mysql_clear_password") && m.contains("--tls") && !m.contains(PASSWORD),
        "{m}"
    );
    let sent = server.join().unwrap();
    assert!(!sent
        .windows(PASSWORD.len())
        .any(|w| w == PASSWORD.as_bytes()));
}

/// A server reply with the wrong sequence id during authentication is a protocol error.
#[test]
fn a_reply_out_of_sequence_is_a_protocol_error() {
    let (port, server) = serve(|s| {
        s.greet("caching_sha2_password");
        s.response();
        s.send(5, &[1, 3]); // 2 was due
        s.rest();
    });
    let e = connect(port, PASSWORD, KeyExchange::default()).unwrap_err();
    assert!(
        matches!(&e, ClientError::Protocol(m) if m.contains("sequence id 5 where 2 was due")),
        "{e:?}"
    );
    server.join().unwrap();
}

/// mysql_clear_password over a Unix socket (a secure channel, like TLS): the password
/// goes with its NUL, and the login succeeds.
#[test]
fn clear_password_over_a_unix_socket_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scripted.sock");
    let server = serve_unix(&path, |s| {
        s.greet("mysql_native_password");
        s.response();
        s.switch(2, "mysql_clear_password");
        let pw = s.recv(3);
        s.ok(4);
        s.quit();
        pw
    });
    let p = ConnectParams {
        addr: Addr::Unix { path: path.clone() },
        user: "bench".into(),
        password: Some(Secret::new(PASSWORD.to_string())),
        database: None,
        tls: None,
        compress: false,
        key_exchange: KeyExchange::default(),
    };
    drop(RawConn::connect(&p, Duration::from_secs(20), None, None).unwrap());
    assert_eq!(server.join().unwrap(), password_nul());
}

/// Through the engine: the refusal is a Config error that names the target, the plugin and
/// the fix, and never the password.
#[test]
fn the_engine_reports_the_refusal_as_a_config_error() {
    for (plugin, fix) in [
        ("mysql_clear_password", "--tls"),
        ("sha256_password", "get-server-public-key=true"),
    ] {
        let (port, server) = serve(move |s| {
            s.greet("mysql_native_password");
            s.recv(1);
            s.switch(2, plugin);
            s.rest()
        });
        let spec = dbdelta_model::TargetSpec::parse(&format!(
            "x=mysql://bench:{}@127.0.0.1:{port}/dbdelta",
            "Pw-in-url-1"
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e =
            crate::open(&spec, dir.path(), &dbdelta_engine::OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, dbdelta_engine::ErrorKind::Config, "{e}");
        assert!(
            e.message.contains("target 'x'")
                && e.message.contains(plugin)
                && e.message.contains(fix),
            "{e}"
        );
        assert!(!format!("{e:?}").contains("Pw-in-url-1"), "{e:?}");
        let sent = server.join().unwrap();
        assert!(!sent.windows(11).any(|w| w == b"Pw-in-url-1"));
    }
}
