//! The client's messages, one function each, appending the payload to the caller's buffer
//! (the packet header is the framing's: `Wire` on a blocking connection, the session's
//! encoder on a multiplexed one). Layouts follow MySQL's "Client/Server Protocol" docs:
//! "Protocol::HandshakeResponse41", "Protocol::SSLRequest", "COM_QUERY",
//! "COM_STMT_PREPARE", "COM_STMT_EXECUTE", "COM_QUIT".

use super::{caps, put_lenenc};
use dbdelta_engine::Value;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

const TYPE_LONGLONG: u8 = 0x08;
const TYPE_STRING: u8 = 0xFE;
const TYPE_NULL: u8 = 0x06;

/// utf8mb4_general_ci: known to MySQL 5.5+ and every MariaDB.
const CHARSET_UTF8MB4: u8 = 45;
/// The largest packet the client accepts, announced in the handshake response: 1 GiB.
const MAX_PACKET: u32 = 1 << 30;

/// What the client answers the server's greeting with.
#[derive(Debug)]
pub(crate) struct HandshakeResponse<'a> {
    /// The capabilities the client uses.
    pub caps: u32,
    /// User name.
    pub user: &'a str,
    /// The authentication plugin's first answer.
    pub auth_data: &'a [u8],
    /// Default schema (sent with CLIENT_CONNECT_WITH_DB).
    pub database: Option<&'a str>,
    /// The authentication plugin the data is for (sent with CLIENT_PLUGIN_AUTH).
    pub plugin: &'a str,
}

/// The fixed start shared by the SSL request and the handshake response: capabilities,
/// largest packet, character set and 23 reserved bytes.
fn fixed_part(buf: &mut Vec<u8>, caps: u32) {
    buf.extend_from_slice(&caps.to_le_bytes());
    buf.extend_from_slice(&MAX_PACKET.to_le_bytes());
    buf.push(CHARSET_UTF8MB4);
    buf.extend_from_slice(&[0; 23]);
}

/// Protocol::SSLRequest: the first 32 bytes of the handshake response; TLS starts after it.
pub(crate) fn ssl_request(buf: &mut Vec<u8>, caps: u32) {
    fixed_part(buf, caps);
}

/// Protocol::HandshakeResponse41.
pub(crate) fn handshake_response(buf: &mut Vec<u8>, r: &HandshakeResponse<'_>) {
    fixed_part(buf, r.caps);
    buf.extend_from_slice(r.user.as_bytes());
    buf.push(0);
    if r.caps & caps::PLUGIN_AUTH_LENENC != 0 {
        put_lenenc(buf, r.auth_data.len() as u64);
    } else {
        buf.push(r.auth_data.len() as u8);
    }
    buf.extend_from_slice(r.auth_data);
    if let Some(db) = r.database {
        buf.extend_from_slice(db.as_bytes());
        buf.push(0);
    }
    if r.caps & caps::PLUGIN_AUTH != 0 {
        buf.extend_from_slice(r.plugin.as_bytes());
        buf.push(0);
    }
}

/// The answer to an auth switch request or an auth-more-data packet: the plugin's data
/// as is.
pub(crate) fn auth_response(buf: &mut Vec<u8>, data: &[u8]) {
    buf.extend_from_slice(data);
}

/// The content of the file a LOAD DATA LOCAL statement asked for; an empty packet ends it.
pub(crate) fn local_infile_data(buf: &mut Vec<u8>, data: &[u8]) {
    buf.extend_from_slice(data);
}

/// COM_QUIT.
pub(crate) fn com_quit(buf: &mut Vec<u8>) {
    buf.push(COM_QUIT);
}

/// COM_QUERY with the statement text `sql`.
pub(crate) fn com_query(buf: &mut Vec<u8>, sql: &[u8]) {
    buf.push(COM_QUERY);
    buf.extend_from_slice(sql);
}

/// COM_STMT_PREPARE of `sql`.
pub(crate) fn com_stmt_prepare(buf: &mut Vec<u8>, sql: &str) {
    buf.push(COM_STMT_PREPARE);
    buf.extend_from_slice(sql.as_bytes());
}

/// A statement prepared on the server.
#[derive(Debug, Clone)]
pub(crate) struct ServerStmt {
    /// Server-side statement id.
    pub id: u32,
    /// Number of `?` parameters.
    pub params: u16,
    /// Parameter types sent with the last execution; resent only when they change.
    types: Vec<u8>,
}

impl ServerStmt {
    /// A statement the server knows as `id`, with `params` placeholders.
    pub(crate) fn new(id: u32, params: u16) -> Self {
        ServerStmt {
            id,
            params,
            types: Vec::new(),
        }
    }

    /// After a failed execute the server may not have stored the parameter types: the next
    /// execute sends them again.
    pub(crate) fn forget_types(&mut self) {
        self.types.clear();
    }
}

/// COM_STMT_EXECUTE of `st` with `params` (binary protocol). The parameter types go only
/// when they differ from the last execution's, which `st` remembers.
pub(crate) fn com_stmt_execute(b: &mut Vec<u8>, st: &mut ServerStmt, params: &[Value<'_>]) {
    let n = params.len();
    let same_types =
        st.types.len() == n && params.iter().zip(&st.types).all(|(p, t)| type_of(p) == *t);
    if !same_types {
        st.types.clear();
        st.types.extend(params.iter().map(type_of));
    }
    b.push(COM_STMT_EXECUTE);
    b.extend_from_slice(&st.id.to_le_bytes());
    b.push(0); // CURSOR_TYPE_NO_CURSOR
    b.extend_from_slice(&1u32.to_le_bytes());
    if n > 0 {
        let bitmap = b.len();
        b.resize(bitmap + n.div_ceil(8), 0);
        for (i, p) in params.iter().enumerate() {
            if matches!(p, Value::Null) {
                b[bitmap + i / 8] |= 1 << (i % 8);
            }
        }
        if same_types {
            b.push(0);
        } else {
            b.push(1);
            for t in &st.types {
                b.extend_from_slice(&[*t, 0]);
            }
        }
        for p in params {
            match p {
                Value::Int(i) => b.extend_from_slice(&i.to_le_bytes()),
                Value::Text(s) => {
                    put_lenenc(b, s.len() as u64);
                    b.extend_from_slice(s.as_bytes());
                }
                // Marked in the NULL bitmap; no value bytes.
                Value::Null => {}
            }
        }
    }
}

fn type_of(v: &Value<'_>) -> u8 {
    match v {
        Value::Int(_) => TYPE_LONGLONG,
        Value::Text(_) => TYPE_STRING,
        Value::Null => TYPE_NULL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handshake_response_starts_with_the_ssl_request() {
        let caps = caps::PROTOCOL_41 | caps::PLUGIN_AUTH | caps::PLUGIN_AUTH_LENENC;
        let mut ssl = Vec::new();
        ssl_request(&mut ssl, caps | caps::SSL);
        assert_eq!(ssl.len(), 32);
        let mut full = Vec::new();
        handshake_response(
            &mut full,
            &HandshakeResponse {
                caps,
                user: "bench",
                auth_data: &[7; 20],
                database: Some("db"),
                plugin: "mysql_native_password",
            },
        );
        assert_eq!(&full[4..32], &ssl[4..], "same fixed part after the flags");
        assert_eq!(&full[32..38], b"bench\0");
        assert_eq!(full[38], 20, "length-encoded auth data");
        assert!(full.ends_with(b"db\0mysql_native_password\0"));
    }

    #[test]
    fn execute_with_null_and_text_parameters() {
        let mut st = ServerStmt::new(3, 3);
        let mut b = Vec::new();
        com_stmt_execute(
            &mut b,
            &mut st,
            &[Value::Int(1), Value::Null, Value::Text("ab")],
        );
        assert_eq!(&b[..10], &[0x17, 3, 0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(b[10], 0b010, "NULL bitmap");
        assert_eq!(&b[11..18], &[1, 0x08, 0, 0x06, 0, 0xFE, 0]);
        assert!(b.ends_with(&[2, b'a', b'b']));
        b.clear();
        com_query(&mut b, b"SELECT 1");
        assert_eq!(b, b"\x03SELECT 1");
    }
}
