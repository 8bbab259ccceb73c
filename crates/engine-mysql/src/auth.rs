//! The authentication plugins dbdelta speaks, as a small state machine over the packets of
//! the connection phase (the socket I/O stays in `client.rs`):
//!
//! - `mysql_native_password` and `caching_sha2_password` answer with a hash of the
//!   password and the server's 20-byte scramble. `caching_sha2_password`'s full
//!   authentication (a cache miss on the server) needs the password itself.
//! - `sha256_password` always needs the password itself.
//! - The password itself goes in clear only over TLS or a Unix socket. Over plain TCP it is
//!   encrypted with the server's RSA public key (RSA-OAEP with SHA-1, of the password and a
//!   NUL XOR the scramble), which the target gives as a PEM file (`server-public-key=FILE`)
//!   or lets dbdelta ask the server for (`get-server-public-key=true`; like the mysql
//!   client's `--get-server-public-key`, opt-in because a man in the middle could hand over
//!   its own key). Without either, dbdelta refuses with an error that names both.
//! - `mysql_clear_password` is answered only over TLS or a Unix socket.
//! - MariaDB's `client_ed25519` signs the server's 32-byte scramble (see [`ed25519`]).

mod ed25519;
mod rsa_key;
#[cfg(test)]
mod scripted;

pub(crate) use rsa_key::ServerKey;

use crate::errors::{malformed, ClientError};
use crate::proto::server::parse_auth_switch;
use dbdelta_engine::EngineError;
use dbdelta_model::TargetSpec;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

/// The target parameter that lets dbdelta ask the server for its RSA public key.
pub(crate) const GET_SERVER_PUBLIC_KEY: &str = "get-server-public-key";
/// The target parameter naming a PEM file with the server's RSA public key.
pub(crate) const SERVER_PUBLIC_KEY: &str = "server-public-key";

const NATIVE: &str = "mysql_native_password";
const CACHING_SHA2: &str = "caching_sha2_password";
const SHA256: &str = "sha256_password";
const CLEAR: &str = "mysql_clear_password";
const ED25519: &str = "client_ed25519";

/// Length of the scramble of the MySQL plugins (servers may append a NUL).
const SCRAMBLE_LEN: usize = 20;

/// `caching_sha2_password`'s request for the server's public key, and `sha256_password`'s.
const CACHING_SHA2_REQUEST_KEY: u8 = 2;
const SHA256_REQUEST_KEY: u8 = 1;
/// `caching_sha2_password`'s answers to the scramble: cache hit, or "send the password".
const FAST_AUTH_OK: u8 = 3;
const FULL_AUTH: u8 = 4;

/// How a password the server needs in full may reach it over plain TCP: the target's
/// `get-server-public-key` and `server-public-key` parameters.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyExchange {
    /// Ask the server for its RSA public key (`get-server-public-key=true`).
    pub get_server_public_key: bool,
    /// The server's RSA public key, read from `server-public-key=FILE`.
    pub server_public_key: Option<Arc<ServerKey>>,
}

/// True for one of the key-exchange target parameters (`-` or `_`, any case), which are
/// dbdelta's options, not server settings.
pub(crate) fn is_param(key: &str) -> bool {
    let k = key.replace('_', "-");
    k.eq_ignore_ascii_case(GET_SERVER_PUBLIC_KEY) || k.eq_ignore_ascii_case(SERVER_PUBLIC_KEY)
}

/// The target's key-exchange parameters; a bad value or an unreadable key file is an error
/// naming the parameter.
pub(crate) fn key_exchange(spec: &TargetSpec) -> Result<KeyExchange, EngineError> {
    let target = &spec.name;
    let mut kx = KeyExchange::default();
    for (k, v) in spec.params.iter().filter(|(k, _)| is_param(k)) {
        if k.replace('_', "-")
            .eq_ignore_ascii_case(GET_SERVER_PUBLIC_KEY)
        {
            kx.get_server_public_key = match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "1" | "yes" => true,
                "false" | "off" | "0" | "no" => false,
                _ => {
                    return Err(EngineError::config(format!(
                        "target '{target}': {k}={v} is invalid: write {GET_SERVER_PUBLIC_KEY}=true to let dbdelta ask the server for its RSA public key (caching_sha2_password, sha256_password over plain TCP), or {GET_SERVER_PUBLIC_KEY}=false"
                    )))
                }
            };
        } else {
            let key = ServerKey::from_file(Path::new(v)).map_err(|m| {
                EngineError::config(format!(
                    "target '{target}': {SERVER_PUBLIC_KEY}={v}: {m}; give the server's RSA public key in PEM (the server's caching_sha2_password_public_key_path or sha256_password_public_key_path file)"
                ))
            })?;
            kx.server_public_key = Some(Arc::new(key));
        }
    }
    Ok(kx)
}

/// `mysql_native_password`: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))). Empty for no password.
pub(crate) fn native_password(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password);
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(nonce);
    h.update(stage2);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// `caching_sha2_password` fast path: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
pub(crate) fn caching_sha2_password(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha256::digest(password);
    let stage2 = Sha256::digest(stage1);
    let mut h = Sha256::new();
    h.update(stage2);
    h.update(nonce);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// The password and its NUL, for a channel that protects it (TLS, a Unix socket).
fn clear(password: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(password.len() + 1);
    v.extend_from_slice(password);
    v.push(0);
    v
}

/// The refusal to send the password of `plugin` in full over plain TCP without a key.
fn needs_key(plugin: &str) -> ClientError {
    let cache = if plugin == CACHING_SHA2 {
        " (or log in once over TLS: that fills the server's cache, and the fast path needs no key)"
    } else {
        ""
    };
    ClientError::Unsupported(format!(
        "the server's {plugin} needs the password itself, and over plain TCP dbdelta sends it only encrypted with the server's RSA public key: connect with --tls, or add {GET_SERVER_PUBLIC_KEY}=true (ask the server for its key, like mysql --get-server-public-key) or {SERVER_PUBLIC_KEY}=FILE (the key in PEM) to the target{cache}"
    ))
}

/// One connection's authentication: what to send for the handshake response, an auth
/// switch request and each auth-more-data packet. Never logs or returns the password in an
/// error.
pub(crate) struct Auth<'a> {
    password: &'a [u8],
    /// TLS or a Unix socket: the password may go in clear.
    secure: bool,
    keys: &'a KeyExchange,
    /// The plugin of the exchange in progress.
    plugin: String,
    /// Its scramble (the first 20 bytes for the MySQL plugins, 32 for ed25519).
    nonce: Vec<u8>,
    /// The public key was asked for: the next auth-more-data packet is its PEM.
    awaiting_key: bool,
}

impl std::fmt::Debug for Auth<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("plugin", &self.plugin)
            .field("secure", &self.secure)
            .finish_non_exhaustive()
    }
}

impl<'a> Auth<'a> {
    /// Authentication with `password` on a channel that is `secure` (TLS or a Unix socket)
    /// or not, with the target's key-exchange options.
    pub(crate) fn new(password: &'a [u8], secure: bool, keys: &'a KeyExchange) -> Self {
        Auth {
            password,
            secure,
            keys,
            plugin: String::new(),
            nonce: Vec::new(),
            awaiting_key: false,
        }
    }

    /// The plugin of the exchange in progress.
    pub(crate) fn plugin(&self) -> &str {
        &self.plugin
    }

    /// The plugin to name in the handshake response and its data, for the server's default
    /// plugin `server_plugin` and the greeting's scramble. When that plugin cannot answer in
    /// the first packet (dbdelta does not speak it, it would need the password in clear
    /// over TCP, its key is not known yet, or its scramble comes later), the answer is
    /// `mysql_native_password`'s: the server switches to the user's plugin if it differs.
    pub(crate) fn first(
        &mut self,
        server_plugin: &str,
        nonce: &[u8],
    ) -> Result<(String, Vec<u8>), ClientError> {
        self.plugin = server_plugin.to_string();
        self.nonce = nonce.to_vec();
        self.awaiting_key = false;
        if server_plugin != ED25519 {
            if let Ok(data) = self.respond() {
                return Ok((self.plugin.clone(), data));
            }
        }
        self.plugin = NATIVE.to_string();
        self.awaiting_key = false;
        Ok((self.plugin.clone(), self.respond()?))
    }

    /// The answer to an auth switch request (the payload after 0xFE): `plugin`, NUL, data.
    pub(crate) fn switch(&mut self, payload: &[u8]) -> Result<Vec<u8>, ClientError> {
        let (plugin, nonce) = parse_auth_switch(payload)?;
        self.plugin = String::from_utf8_lossy(plugin).into_owned();
        self.nonce = nonce.to_vec();
        self.awaiting_key = false;
        self.respond()
    }

    /// The answer to an auth-more-data packet (the payload after 0x01); `None` when the
    /// client only waits for the OK or ERR that follows.
    pub(crate) fn more_data(&mut self, data: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        if self.awaiting_key {
            self.awaiting_key = false;
            let key = ServerKey::from_pem(data).map_err(|m| {
                ClientError::Protocol(format!(
                    "the server's RSA public key ({}) is not usable: {m}",
                    self.plugin
                ))
            })?;
            return self.encrypted(&key).map(Some);
        }
        match (self.plugin.as_str(), data) {
            (CACHING_SHA2, [FAST_AUTH_OK]) => Ok(None),
            (CACHING_SHA2, [FULL_AUTH]) => self.full(CACHING_SHA2_REQUEST_KEY).map(Some),
            (CACHING_SHA2, _) => Err(malformed(CACHING_SHA2)),
            (plugin, _) => Err(ClientError::Protocol(format!(
                "unexpected auth-more-data packet during {plugin} authentication"
            ))),
        }
    }

    /// The data for the current plugin and scramble.
    fn respond(&mut self) -> Result<Vec<u8>, ClientError> {
        let nonce = &self.nonce[..self.nonce.len().min(SCRAMBLE_LEN)];
        match self.plugin.as_str() {
            NATIVE | "" => Ok(native_password(self.password, nonce)),
            CACHING_SHA2 => Ok(caching_sha2_password(self.password, nonce)),
            SHA256 if self.password.is_empty() => Ok(vec![0]),
            SHA256 => self.full(SHA256_REQUEST_KEY),
            CLEAR if self.secure => Ok(clear(self.password)),
            CLEAR => Err(ClientError::Unsupported(
                "the server asks for mysql_clear_password, which would send the password unencrypted over plain TCP, and dbdelta refuses: connect with --tls (or over a Unix socket), or give the user a plugin that does not send the password (mysql_native_password, caching_sha2_password, ed25519)".into(),
            )),
            ED25519 => {
                let scramble: &[u8; 32] = self
                    .nonce
                    .get(..32)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| malformed("client_ed25519 scramble"))?;
                Ok(ed25519::sign(self.password, scramble).to_vec())
            }
            other => Err(ClientError::Unsupported(format!(
                "the server asks for authentication plugin '{other}', which dbdelta does not implement; give the benchmark user mysql_native_password, caching_sha2_password, sha256_password or (MariaDB) ed25519"
            ))),
        }
    }

    /// The password itself: in clear on a secure channel, else encrypted with the server's
    /// key (from the target's file, or asked for with `request`).
    fn full(&mut self, request: u8) -> Result<Vec<u8>, ClientError> {
        if self.secure {
            return Ok(clear(self.password));
        }
        if let Some(key) = &self.keys.server_public_key {
            return self.encrypted(key);
        }
        if self.keys.get_server_public_key {
            self.awaiting_key = true;
            return Ok(vec![request]);
        }
        Err(needs_key(&self.plugin))
    }

    fn encrypted(&self, key: &ServerKey) -> Result<Vec<u8>, ClientError> {
        let nonce = &self.nonce[..self.nonce.len().min(SCRAMBLE_LEN)];
        key.encrypt_password(self.password, nonce)
            .map_err(|m| ClientError::Unsupported(format!("{}: {m}", self.plugin)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_known_vector() {
        // Checked against the server's own formula: SHA1(nonce + PASSWORD('secret') hash).
        let nonce = [1u8; 20];
        let s = native_password(b"secret", &nonce);
        assert_eq!(s.len(), 20);
        // Undo the XOR: stage1 = s XOR SHA1(nonce + SHA1(stage1)); verify self-consistency.
        let stage1 = Sha1::digest(b"secret");
        let mut h = Sha1::new();
        h.update(nonce);
        h.update(Sha1::digest(stage1));
        let mix = h.finalize();
        let back: Vec<u8> = s.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect();
        assert_eq!(back, stage1.to_vec());
        assert!(native_password(b"", &nonce).is_empty());
    }

    fn switch(plugin: &str, nonce: &[u8]) -> Vec<u8> {
        let mut v = plugin.as_bytes().to_vec();
        v.push(0);
        v.extend_from_slice(nonce);
        v
    }

    #[test]
    fn sha2_length_and_unknown_plugin() {
        assert_eq!(caching_sha2_password(b"pw", &[7u8; 20]).len(), 32);
        let kx = KeyExchange::default();
        let mut a = Auth::new(b"pw", true, &kx);
        let e = a.switch(&switch("dialog", &[0; 20])).unwrap_err();
        assert!(
            matches!(&e, ClientError::Unsupported(m) if m.contains("'dialog'")),
            "{e:?}"
        );
    }

    /// mysql_clear_password: refused over plain TCP with a message naming the plugin and
    /// the fix; the password in clear over TLS or a Unix socket.
    #[test]
    fn clear_password_only_on_a_secure_channel() {
        let kx = KeyExchange::default();
        let mut tcp = Auth::new(b"s3cret", false, &kx);
        let e = tcp.switch(&switch(CLEAR, b"")).unwrap_err();
        let ClientError::Unsupported(m) = &e else {
            panic!("{e:?}")
        };
        assert!(
            m.contains("mysql_clear_password") && m.contains("--tls"),
            "{m}"
        );
        assert!(!m.contains("s3cret"), "{m}");
        let mut tls = Auth::new(b"s3cret", true, &kx);
        assert_eq!(tls.switch(&switch(CLEAR, b"")).unwrap(), b"s3cret\0");
        // A server whose default plugin is mysql_clear_password gets native in the first
        // packet over TCP, never the password.
        let (plugin, data) = tcp.first(CLEAR, &[9; 20]).unwrap();
        assert_eq!(plugin, NATIVE);
        assert_eq!(data, native_password(b"s3cret", &[9; 20]));
    }

    #[test]
    fn password_needed_in_full_without_key_is_refused_with_the_fix() {
        let kx = KeyExchange::default();
        for (plugin, more) in [(CACHING_SHA2, Some(FULL_AUTH)), (SHA256, None)] {
            let mut a = Auth::new(b"s3cret", false, &kx);
            let r = a.switch(&switch(plugin, &[5; 21]));
            let e = match more {
                Some(m) => {
                    assert_eq!(r.unwrap().len(), 32);
                    assert_eq!(a.more_data(&[FAST_AUTH_OK]).unwrap(), None);
                    a.more_data(&[m]).unwrap_err()
                }
                None => r.unwrap_err(),
            };
            let ClientError::Unsupported(m) = &e else {
                panic!("{e:?}")
            };
            assert!(
                m.contains(plugin)
                    && m.contains("--tls")
                    && m.contains("get-server-public-key=true")
                    && m.contains("server-public-key=FILE"),
                "{m}"
            );
            assert!(!m.contains("s3cret"), "{m}");
        }
        // Over a secure channel the password goes in clear, with its NUL.
        let mut a = Auth::new(b"s3cret", true, &kx);
        assert_eq!(a.switch(&switch(SHA256, &[5; 21])).unwrap(), b"s3cret\0");
        // An empty password is one NUL byte (what libmysqlclient sends).
        let mut a = Auth::new(b"", false, &kx);
        assert_eq!(a.switch(&switch(SHA256, &[5; 21])).unwrap(), [0]);
    }

    #[test]
    fn get_server_public_key_requests_the_key_with_the_plugin_s_byte() {
        let kx = KeyExchange {
            get_server_public_key: true,
            server_public_key: None,
        };
        let mut a = Auth::new(b"pw", false, &kx);
        a.switch(&switch(CACHING_SHA2, &[5; 20])).unwrap();
        assert_eq!(a.more_data(&[FULL_AUTH]).unwrap(), Some(vec![2]));
        let e = a.more_data(b"not a key").unwrap_err();
        assert!(matches!(e, ClientError::Protocol(_)), "{e:?}");
        let mut a = Auth::new(b"pw", false, &kx);
        assert_eq!(a.switch(&switch(SHA256, &[5; 20])).unwrap(), [1]);
    }

    #[test]
    fn ed25519_needs_a_32_byte_scramble_and_is_never_the_first_answer() {
        let kx = KeyExchange::default();
        let mut a = Auth::new(b"pw", false, &kx);
        assert_eq!(a.switch(&switch(ED25519, &[3; 32])).unwrap().len(), 64);
        let e = a.switch(&switch(ED25519, &[3; 31])).unwrap_err();
        assert!(matches!(e, ClientError::Protocol(_)), "{e:?}");
        let (plugin, _) = a.first(ED25519, &[3; 20]).unwrap();
        assert_eq!(plugin, NATIVE);
    }

    #[test]
    fn parameters_are_parsed_and_named_in_errors() {
        let spec = TargetSpec::parse("x=mysql://u@h:1/d?get_server_public_key=TRUE").unwrap();
        assert!(key_exchange(&spec).unwrap().get_server_public_key);
        let spec = TargetSpec::parse("x=mysql://u@h:1/d?get-server-public-key=maybe").unwrap();
        let e = key_exchange(&spec).unwrap_err();
        assert!(e.message.contains("get-server-public-key=maybe"), "{e}");
        let spec =
            TargetSpec::parse("x=mysql://u@h:1/d?server-public-key=/nonexistent.pem").unwrap();
        let e = key_exchange(&spec).unwrap_err();
        assert!(
            e.message.contains("server-public-key=/nonexistent.pem"),
            "{e}"
        );
        assert!(is_param("Server_Public_Key") && !is_param("ssl_ca"));
    }
}
