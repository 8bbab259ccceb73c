//! [`Endpoint`]: where and as whom a target's connections are opened, with connect errors
//! that name the target. Connections, bulk loaders, the canceller and the managed server's
//! bootstrap open theirs through it.

use crate::client::{ConnectParams, RawConn};
use crate::errors::connect_error;
use dbdelta_engine::{ConnectOptions, EngineError};
use std::time::Duration;

/// How long a connection attempt may take before it fails.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a connection needs to open siblings (bulk loads) and to name itself in errors.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// Target name, for messages.
    pub target: String,
    /// Address, user, password, database.
    pub params: ConnectParams,
    /// The engine the workloads' tables are created in (`engine=rocksdb`: ROCKSDB); `None`
    /// for the workloads' own InnoDB.
    pub table_engine: Option<&'static str>,
}

impl Endpoint {
    /// Opens a protocol connection, with errors that name the target.
    pub(crate) fn connect_raw(&self) -> Result<RawConn, EngineError> {
        self.connect_raw_with(&ConnectOptions::default())
    }

    /// [`Endpoint::connect_raw`] from a chosen source address, within a chosen timeout.
    pub(crate) fn connect_raw_with(&self, opts: &ConnectOptions) -> Result<RawConn, EngineError> {
        let timeout = opts.timeout.unwrap_or(CONNECT_TIMEOUT);
        RawConn::connect(&self.params, timeout, opts.source, opts.io_timeout).map_err(|e| {
            connect_error(
                e,
                &self.target,
                &self.params.addr.to_string(),
                &self.params.user,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Addr;
    use dbdelta_engine::ErrorKind;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Instant;

    fn endpoint(port: u16) -> Endpoint {
        Endpoint {
            target: "silent".into(),
            params: ConnectParams {
                addr: Addr::Tcp {
                    host: "127.0.0.1".into(),
                    port,
                },
                user: "root".into(),
                password: None,
                database: None,
                tls: None,
                compress: false,
                key_exchange: crate::auth::KeyExchange::default(),
            },
            table_engine: None,
        }
    }

    /// Connects to a server that accepts and then runs `serve` on the socket; returns the
    /// error and how long the connect took.
    fn connect_to(serve: fn(std::net::TcpStream)) -> (EngineError, Duration) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            serve(s);
        });
        let opts = ConnectOptions {
            source: None,
            timeout: Some(Duration::from_secs(1)),
            io_timeout: None,
        };
        let t = Instant::now();
        let e = endpoint(port).connect_raw_with(&opts).unwrap_err();
        let took = t.elapsed();
        server.join().unwrap();
        (e, took)
    }

    #[test]
    fn a_server_that_never_greets_times_out() {
        let (e, took) = connect_to(|s| {
            std::thread::sleep(Duration::from_secs(4));
            drop(s);
        });
        assert!(took < Duration::from_secs(3), "{took:?}");
        assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
        assert!(e.message.contains("connect timeout"), "{e}");
        assert!(e.message.contains("silent"), "names the target: {e}");
    }

    #[test]
    fn the_timeout_bounds_the_whole_handshake_not_each_read() {
        // A byte every 300 ms: each read is quick, the greeting never completes.
        let (e, took) = connect_to(|mut s| {
            let greeting = [60u8, 0, 0, 0, 10, b'5', b'.', b'5'];
            for b in greeting.iter().cycle().take(14) {
                if s.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        assert!(took < Duration::from_secs(3), "{took:?}");
        assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    }
}
