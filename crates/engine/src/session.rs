//! The sans-IO form of a server connection, for drivers that multiplex many connections on
//! a few event-loop threads.
//!
//! A blocking [`Connection`](crate::Connection) is opened and prepared as usual (startup,
//! authentication and statement preparation are rare and stay blocking), then split by
//! [`Connection::into_session`](crate::Connection::into_session) into its socket and a
//! [`Session`]: the protocol state of the query phase. The session never touches the
//! socket: it encodes requests into a buffer and consumes response bytes the driver read,
//! so it is tested from byte streams alone (split and coalesced reads included).

use crate::ops::Op;
use crate::{EngineError, Outcome};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;

/// What [`Session::decode`] made of the bytes it was given.
#[derive(Debug)]
pub enum Decoded {
    /// The response is not complete yet; `consumed` bytes (whole messages) were used and
    /// the rest must be offered again with more bytes appended.
    Partial {
        /// Bytes consumed from the front of the input.
        consumed: usize,
    },
    /// The response to the last request is complete. A statement error is a complete
    /// response with an `Err` result: the connection stays usable.
    Complete {
        /// Bytes consumed from the front of the input.
        consumed: usize,
        /// The outcome of the operation.
        result: Result<Outcome, EngineError>,
    },
}

/// The query-phase protocol state of one connection (PostgreSQL extended protocol, MySQL
/// binary protocol): bytes in, bytes out, a small state. One request is outstanding at a
/// time; a request is encoded only after the previous response completed.
pub trait Session: Send {
    /// Appends the request for `op` to `out`. An `Err` means nothing was appended and the
    /// operation cannot be sent on this session (unknown statement, unsupported family).
    fn encode(&mut self, op: &Op<'_>, out: &mut Vec<u8>) -> Result<(), EngineError>;

    /// Consumes response bytes from the front of `input`. An `Err` means the byte stream is
    /// broken (protocol violation, fatal server error, oversized message): the connection
    /// must be closed.
    fn decode(&mut self, input: &[u8]) -> Result<Decoded, EngineError>;

    /// Appends a request the session must send before the response in progress can
    /// complete (a MongoDB cursor's `getMore`), after [`Session::decode`] returned
    /// `Partial`; false when there is none (every protocol but MongoDB's).
    fn follow_up(&mut self, out: &mut Vec<u8>) -> bool {
        let _ = out;
        false
    }

    /// Keeps the values of the next response's rows (for the request encoded next), to be
    /// taken with [`Session::take_rows`]. The default refuses: the session only counts rows.
    fn capture_next(&mut self) -> Result<(), EngineError> {
        Err(EngineError::new(
            crate::ErrorKind::Unsupported,
            "this connection does not return row values",
        ))
    }

    /// Swaps the rows captured for the last response into `into` (whose old content the
    /// session reuses as its next buffer).
    fn take_rows(&mut self, into: &mut crate::Rows) {
        into.clear();
    }

    /// Appends the request that rolls back an open transaction after an error (`ROLLBACK`);
    /// its response is decoded like any other.
    fn encode_rollback(&mut self, out: &mut Vec<u8>) -> Result<(), EngineError> {
        self.encode(&Op::Query("ROLLBACK"), out)
    }

    /// A handle that asks the server to cancel this connection's running statement from
    /// another connection (PostgreSQL CancelRequest, MySQL `KILL QUERY`).
    fn canceller(&self) -> Option<Box<dyn Canceller>>;
}

/// Cancels a running statement of one connection through a side channel. Blocking: drivers
/// call it from a helper thread.
pub trait Canceller: Send + Sync {
    /// Sends the cancel request; success means it was delivered, not that anything ran.
    fn cancel(&self) -> Result<(), EngineError>;
}

/// The socket of a connection in session form.
#[derive(Debug)]
pub enum Socket {
    /// A TCP connection.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
}

impl Socket {
    /// Puts the socket in non-blocking mode (event-loop drivers).
    pub fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_nonblocking(on),
            Socket::Unix(s) => s.set_nonblocking(on),
        }
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl AsFd for Socket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Socket::Tcp(s) => s.as_fd(),
            Socket::Unix(s) => s.as_fd(),
        }
    }
}

impl std::io::Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl std::io::Write for Socket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A connection split into its socket and its protocol state.
pub struct SessionParts {
    /// The socket, still in blocking mode.
    pub socket: Socket,
    /// The protocol state; prepared statements of the connection stay valid.
    pub session: Box<dyn Session>,
}

impl std::fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionParts")
            .field("socket", &self.socket)
            .finish_non_exhaustive()
    }
}

/// Feeds `bytes` to `session` in pieces of `chunk` bytes as an event loop would (unconsumed
/// bytes stay buffered and are offered again with the next piece) and returns every
/// completed result. For protocol tests: split reads with a small `chunk`, coalesced ones
/// with a large one. Bytes left over at the end, or a broken stream, are an `Err`.
pub fn decode_in_chunks(
    session: &mut dyn Session,
    bytes: &[u8],
    chunk: usize,
) -> Result<Vec<Result<Outcome, EngineError>>, EngineError> {
    let mut buf = Vec::new();
    let mut done = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match session.decode(&buf)? {
                Decoded::Partial { consumed } => {
                    buf.drain(..consumed);
                    // Requests sent mid-response are the caller's to check; drop them here.
                    let mut sent = Vec::new();
                    session.follow_up(&mut sent);
                    break;
                }
                Decoded::Complete { consumed, result } => {
                    buf.drain(..consumed);
                    done.push(result);
                }
            }
        }
    }
    if !buf.is_empty() {
        return Err(EngineError::connection(format!(
            "{} bytes left over after the last complete response",
            buf.len()
        )));
    }
    Ok(done)
}
