//! Frontend messages (client to server), one function each, appended to a `Vec<u8>` with no
//! allocation beyond the buffer's growth: callers reuse one buffer per connection. Layouts
//! are PostgreSQL's protocol docs, "Message Formats"; functions that take strings written
//! NUL-terminated refuse strings containing a NUL (the server would read a different
//! message) and then leave the buffer as it was.

use super::ProtoError;
use dbdelta_engine::Value;

/// The protocol version of the StartupMessage: 3.0.
const PROTOCOL_3_0: i32 = 0x0003_0000;
/// The request code of SSLRequest (PostgreSQL's protocol docs, "SSLRequest").
const SSL_REQUEST_CODE: i32 = 80_877_103;
/// The request code of CancelRequest.
const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// What Describe and Close name: a prepared statement or a portal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A prepared statement (`S`).
    Statement,
    /// A portal (`P`).
    Portal,
}

impl Target {
    fn byte(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }
}

/// A message begun in a buffer whose length is not yet written; [`Frame::end`] writes it.
/// For bodies written piece by piece into the buffer (COPY rows), without a copy.
#[derive(Debug)]
#[must_use = "a frame must be ended, or its length stays 0"]
pub struct Frame {
    /// Offset of the length field.
    at: usize,
}

impl Frame {
    /// Starts a message of type `tag`.
    #[inline]
    pub fn begin(buf: &mut Vec<u8>, tag: u8) -> Frame {
        buf.push(tag);
        Frame::untagged(buf)
    }

    /// Starts a message without a type byte (StartupMessage, SSLRequest, CancelRequest).
    #[inline]
    fn untagged(buf: &mut Vec<u8>) -> Frame {
        let at = buf.len();
        buf.extend_from_slice(&[0; 4]);
        Frame { at }
    }

    /// Bytes of body written since [`Frame::begin`].
    #[inline]
    pub fn body_len(&self, buf: &[u8]) -> usize {
        buf.len() - self.at - 4
    }

    /// Writes the length (which counts itself) of the message.
    #[inline]
    pub fn end(self, buf: &mut [u8]) {
        let len = (buf.len() - self.at) as u32;
        buf[self.at..self.at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

#[inline]
fn put_i16(buf: &mut Vec<u8>, v: i16) {
    buf.extend_from_slice(&v.to_be_bytes());
}

#[inline]
fn put_i32(buf: &mut Vec<u8>, v: i32) {
    buf.extend_from_slice(&v.to_be_bytes());
}

/// Appends a NUL-terminated string, or refuses one that holds a NUL.
#[inline]
fn put_cstr(buf: &mut Vec<u8>, s: &[u8]) -> Result<(), ProtoError> {
    if s.contains(&0) {
        return Err(ProtoError::EmbeddedNul);
    }
    buf.extend_from_slice(s);
    buf.push(0);
    Ok(())
}

/// Runs `write` on `buf`, taking back what it wrote when it fails.
#[inline]
fn all_or_nothing(
    buf: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    let start = buf.len();
    let r = write(buf);
    if r.is_err() {
        buf.truncate(start);
    }
    r
}

/// Appends the decimal text of `v` (what a text-format parameter holds) without allocating.
#[inline]
pub fn put_int(buf: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Number of bytes [`put_int`] writes for `v`.
#[inline]
pub fn int_len(v: i64) -> usize {
    let mut n = usize::from(v < 0);
    let mut u = v.unsigned_abs();
    loop {
        n += 1;
        u /= 10;
        if u == 0 {
            return n;
        }
    }
}

/// StartupMessage: protocol 3.0 and the `(name, value)` run-time parameters (`user`,
/// `database`, …).
pub fn startup<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
    buf: &mut Vec<u8>,
) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::untagged(buf);
        put_i32(buf, PROTOCOL_3_0);
        for (name, value) in params {
            put_cstr(buf, name.as_bytes())?;
            put_cstr(buf, value.as_bytes())?;
        }
        buf.push(0);
        frame.end(buf);
        Ok(())
    })
}

/// SSLRequest: asks the server to switch to TLS before the StartupMessage.
pub fn ssl_request(buf: &mut Vec<u8>) {
    let frame = Frame::untagged(buf);
    put_i32(buf, SSL_REQUEST_CODE);
    frame.end(buf);
}

/// CancelRequest: sent on a new connection of its own, names the backend by the process id
/// and secret key of its BackendKeyData.
pub fn cancel_request(pid: i32, secret: i32, buf: &mut Vec<u8>) {
    let frame = Frame::untagged(buf);
    put_i32(buf, CANCEL_REQUEST_CODE);
    put_i32(buf, pid);
    put_i32(buf, secret);
    frame.end(buf);
}

/// PasswordMessage: a cleartext password or an MD5 hash, NUL-terminated.
pub fn password(password: &[u8], buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'p');
        put_cstr(buf, password)?;
        frame.end(buf);
        Ok(())
    })
}

/// SASLInitialResponse: the chosen mechanism and the client-first message.
pub fn sasl_initial_response(
    mechanism: &str,
    data: &[u8],
    buf: &mut Vec<u8>,
) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'p');
        put_cstr(buf, mechanism.as_bytes())?;
        put_i32(buf, data.len() as i32);
        buf.extend_from_slice(data);
        frame.end(buf);
        Ok(())
    })
}

/// SASLResponse: the next client message of the exchange (SCRAM's client-final).
pub fn sasl_response(data: &[u8], buf: &mut Vec<u8>) {
    let frame = Frame::begin(buf, b'p');
    buf.extend_from_slice(data);
    frame.end(buf);
}

/// Query: one Simple Query.
#[inline]
pub fn query(sql: &str, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'Q');
        put_cstr(buf, sql.as_bytes())?;
        frame.end(buf);
        Ok(())
    })
}

/// Parse: prepares `sql` as statement `name` with no parameter types given (the server
/// infers them from the statement).
pub fn parse(name: &str, sql: &str, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'P');
        put_cstr(buf, name.as_bytes())?;
        put_cstr(buf, sql.as_bytes())?;
        put_i16(buf, 0);
        frame.end(buf);
        Ok(())
    })
}

/// Describe: asks for a statement's ParameterDescription and RowDescription (or a portal's
/// RowDescription).
pub fn describe(target: Target, name: &str, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'D');
        buf.push(target.byte());
        put_cstr(buf, name.as_bytes())?;
        frame.end(buf);
        Ok(())
    })
}

/// Bind: binds `params` to prepared statement `statement` as portal `portal`, every
/// parameter and every result column in text format (like libpq callers such as sysbench).
#[inline]
pub fn bind_text(
    portal: &str,
    statement: &str,
    params: &[Value<'_>],
    buf: &mut Vec<u8>,
) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'B');
        put_cstr(buf, portal.as_bytes())?;
        put_cstr(buf, statement.as_bytes())?;
        put_i16(buf, 0); // no format codes: all parameters in text
        put_i16(buf, params.len() as i16);
        for p in params {
            match *p {
                Value::Int(v) => {
                    put_i32(buf, int_len(v) as i32);
                    put_int(buf, v);
                }
                Value::Text(s) => {
                    put_i32(buf, s.len() as i32);
                    buf.extend_from_slice(s.as_bytes());
                }
                Value::Null => put_i32(buf, -1),
            }
        }
        put_i16(buf, 0); // no result format codes: all columns in text
        frame.end(buf);
        Ok(())
    })
}

/// Execute: runs portal `portal`, returning at most `max_rows` rows (0: all).
#[inline]
pub fn execute(portal: &str, max_rows: i32, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'E');
        put_cstr(buf, portal.as_bytes())?;
        put_i32(buf, max_rows);
        frame.end(buf);
        Ok(())
    })
}

/// Close: closes a prepared statement or a portal.
pub fn close(target: Target, name: &str, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'C');
        buf.push(target.byte());
        put_cstr(buf, name.as_bytes())?;
        frame.end(buf);
        Ok(())
    })
}

/// Sync: ends an extended-query sequence; the server answers ReadyForQuery.
#[inline]
pub fn sync(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"S\0\0\0\x04");
}

/// Flush: asks the server to send what it has produced so far.
pub fn flush(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"H\0\0\0\x04");
}

/// CopyData holding `data`. To write the data straight into the buffer, use
/// `Frame::begin(buf, b'd')` and [`Frame::end`] instead.
pub fn copy_data(data: &[u8], buf: &mut Vec<u8>) {
    let frame = Frame::begin(buf, b'd');
    buf.extend_from_slice(data);
    frame.end(buf);
}

/// CopyDone: the end of COPY FROM STDIN data.
pub fn copy_done(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"c\0\0\0\x04");
}

/// CopyFail: abandons COPY FROM STDIN, with `message` as the server's error text.
pub fn copy_fail(message: &str, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    all_or_nothing(buf, |buf| {
        let frame = Frame::begin(buf, b'f');
        put_cstr(buf, message.as_bytes())?;
        frame.end(buf);
        Ok(())
    })
}

/// Terminate: the client is closing the connection.
pub fn terminate(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"X\0\0\0\x04");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        for v in [0i64, 7, -7, 10, 99, 100, 123_456, i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            put_int(&mut b, v);
            assert_eq!(std::str::from_utf8(&b).unwrap(), v.to_string());
            assert_eq!(int_len(v), v.to_string().len());
        }
    }

    #[test]
    fn framing() {
        let mut b = Vec::new();
        query("SELECT 1", &mut b).unwrap();
        assert_eq!(&b[..], b"Q\0\0\0\x0dSELECT 1\0");
    }

    /// The bytes `postgres-protocol`'s `message::frontend` writes for the same messages
    /// (the functions this module replaced), so servers see what they saw before.
    #[test]
    fn messages_are_byte_identical_to_postgres_protocol() {
        use bytes::BytesMut;
        use postgres_protocol::message::frontend as pp;
        let same = |ours: &dyn Fn(&mut Vec<u8>), theirs: &dyn Fn(&mut BytesMut)| {
            let (mut a, mut b) = (Vec::new(), BytesMut::new());
            ours(&mut a);
            theirs(&mut b);
            assert_eq!(a, &b[..]);
        };
        let params = [
            ("user", "u"),
            ("database", "d"),
            ("client_encoding", "UTF8"),
        ];
        same(&|b| startup(params, b).unwrap(), &|b| {
            pp::startup_message(params, b).unwrap()
        });
        same(&|b| ssl_request(b), &|b| pp::ssl_request(b));
        same(&|b| cancel_request(7, -9, b), &|b| {
            pp::cancel_request(7, -9, b)
        });
        same(&|b| password(b"pw", b).unwrap(), &|b| {
            pp::password_message(b"pw", b).unwrap()
        });
        same(
            &|b| sasl_initial_response("SCRAM-SHA-256", b"n,,n=,r=x", b).unwrap(),
            &|b| pp::sasl_initial_response("SCRAM-SHA-256", b"n,,n=,r=x", b).unwrap(),
        );
        same(&|b| sasl_response(b"c=biws", b), &|b| {
            pp::sasl_response(b"c=biws", b).unwrap()
        });
        same(&|b| query("SELECT 1", b).unwrap(), &|b| {
            pp::query("SELECT 1", b).unwrap()
        });
        same(&|b| parse("s0", "SELECT $1", b).unwrap(), &|b| {
            pp::parse("s0", "SELECT $1", std::iter::empty(), b).unwrap()
        });
        same(&|b| describe(Target::Statement, "s0", b).unwrap(), &|b| {
            pp::describe(b'S', "s0", b).unwrap()
        });
        same(&|b| close(Target::Portal, "", b).unwrap(), &|b| {
            pp::close(b'P', "", b).unwrap()
        });
        same(&|b| execute("", 0, b).unwrap(), &|b| {
            pp::execute("", 0, b).unwrap()
        });
        same(&|b| sync(b), &|b| pp::sync(b));
        same(&|b| flush(b), &|b| pp::flush(b));
        same(&|b| terminate(b), &|b| pp::terminate(b));
        same(&|b| copy_done(b), &|b| pp::copy_done(b));
        same(&|b| copy_fail("no", b).unwrap(), &|b| {
            pp::copy_fail("no", b).unwrap()
        });
        same(&|b| copy_data(b"1\tx\n", b), &|b| {
            pp::CopyData::new(&b"1\tx\n"[..]).unwrap().write(b)
        });
    }

    #[test]
    fn bind_writes_text_parameters() {
        let mut b = Vec::new();
        bind_text(
            "",
            "s0",
            &[Value::Int(-42), Value::Text("ab"), Value::Null],
            &mut b,
        )
        .unwrap();
        let mut want = b"B\0\0\0\x1f\0s0\0\0\0\0\x03".to_vec();
        want.extend_from_slice(b"\0\0\0\x03-42\0\0\0\x02ab\xff\xff\xff\xff\0\0");
        assert_eq!(b, want);
    }

    #[test]
    fn an_embedded_nul_is_refused_and_nothing_is_written() {
        let mut b = b"kept".to_vec();
        assert_eq!(query("SELECT\0", &mut b), Err(ProtoError::EmbeddedNul));
        assert_eq!(
            startup([("user", "a\0b")], &mut b),
            Err(ProtoError::EmbeddedNul)
        );
        assert_eq!(
            bind_text("", "s\0", &[], &mut b),
            Err(ProtoError::EmbeddedNul)
        );
        assert_eq!(b, b"kept");
    }
}
