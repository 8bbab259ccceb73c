//! The CancelRequest side channel: a short connection of its own to the server's address
//! that names the backend by its process id and secret key (PostgreSQL's protocol docs,
//! "Canceling Requests in Progress").

use crate::proto::frontend;
use dbdelta_engine::{Canceller, EngineError};
use dbdelta_kit::Addr;
use std::io::Write;
use std::time::Duration;

/// Where and how to cancel one backend's running statement.
#[derive(Debug, Clone)]
pub(crate) struct CancelKey {
    pub addr: Addr,
    pub pid: i32,
    pub secret: i32,
    pub timeout: Duration,
}

impl Canceller for CancelKey {
    fn cancel(&self) -> Result<(), EngineError> {
        let mut msg = Vec::with_capacity(16);
        frontend::cancel_request(self.pid, self.secret, &mut msg);
        let sent = match &self.addr {
            Addr::Tcp { host, port } => {
                dbdelta_kit::net::connect_tcp(host, *port, None, self.timeout)
                    .and_then(|mut s| s.write_all(&msg))
            }
            Addr::Unix { path } => {
                std::os::unix::net::UnixStream::connect(path).and_then(|mut s| s.write_all(&msg))
            }
        };
        sent.map_err(|e| EngineError::connection(format!("postgres cancel request: {e}")))
    }
}
