//! Authentication: where the password comes from (URL, `PGPASSWORD`, `~/.pgpass`) and the
//! answers to the server's Authentication requests (cleartext, MD5, SCRAM-SHA-256).
//!
//! The password is only ever handed to `postgres-protocol`'s hashing code and the socket;
//! no error message built here contains it.

pub mod pgpass;

use crate::pgerror::{io_error, protocol_error};
use crate::wire::{be_i32, take_cstr, Wire};
use dbdelta_engine::EngineError;
use dbdelta_model::Secret;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::frontend;

/// The password for a connection: from the URL, else `PGPASSWORD`, else the pgpass file.
pub fn resolve_password(from_url: Option<&Secret>, q: &pgpass::PgpassQuery<'_>) -> Option<Secret> {
    if let Some(p) = from_url {
        return Some(p.clone());
    }
    if let Some(p) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(Secret::new(p));
    }
    pgpass::default_path().and_then(|path| pgpass::lookup(&path, q))
}

/// State of an authentication exchange in progress.
pub(crate) struct Auth<'a> {
    user: &'a str,
    password: Option<&'a Secret>,
    /// Where we connect, for messages.
    peer: &'a str,
    scram: Option<ScramSha256>,
}

impl<'a> Auth<'a> {
    pub(crate) fn new(user: &'a str, password: Option<&'a Secret>, peer: &'a str) -> Self {
        Auth {
            user,
            password,
            peer,
            scram: None,
        }
    }

    fn password(&self, method: &str) -> Result<&'a [u8], EngineError> {
        self.password.map(|p| p.expose().as_bytes()).ok_or_else(|| {
            EngineError::config(format!(
                "postgres at {}: the server asks for a password ({method}) for user \"{}\"; \
                 give it in the target URL (postgres://user:PASSWORD@host/db), PGPASSWORD or ~/.pgpass",
                self.peer, self.user
            ))
        })
    }

    /// Answers one Authentication message (`R`) body. Returns true when authentication is
    /// complete (AuthenticationOk).
    pub(crate) fn step(&mut self, body: &[u8], wire: &mut Wire) -> Result<bool, EngineError> {
        let code = be_i32(body, 0).ok_or_else(|| protocol_error("short Authentication message"))?;
        let data = &body[4..];
        let w = &mut wire.wbuf;
        match code {
            0 => return Ok(true),
            3 => {
                let pw = self.password("cleartext")?;
                frontend::password_message(pw, w).map_err(|e| io_error("write", e))?;
            }
            5 => {
                let pw = self.password("md5")?;
                let salt: [u8; 4] = data
                    .get(..4)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| protocol_error("short MD5 salt"))?;
                let hash = md5_hash(self.user.as_bytes(), pw, salt);
                frontend::password_message(hash.as_bytes(), w).map_err(|e| io_error("write", e))?;
            }
            10 => {
                let mut mechs = Vec::new();
                let mut rest = data;
                while let Some((m, r)) = take_cstr(rest).filter(|(m, _)| !m.is_empty()) {
                    mechs.push(String::from_utf8_lossy(m).into_owned());
                    rest = r;
                }
                if !mechs.iter().any(|m| m == SCRAM_SHA_256) {
                    return Err(EngineError::config(format!(
                        "postgres at {}: the server offers only SASL mechanisms {mechs:?}; dbdelta supports SCRAM-SHA-256",
                        self.peer
                    )));
                }
                let pw = self.password("scram-sha-256")?;
                // "n": we do not do channel binding (also accepted over TLS).
                let scram = ScramSha256::new(pw, ChannelBinding::unsupported());
                frontend::sasl_initial_response(SCRAM_SHA_256, scram.message(), w)
                    .map_err(|e| io_error("write", e))?;
                self.scram = Some(scram);
            }
            11 => {
                let scram = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| protocol_error("SASLContinue without SASL"))?;
                scram.update(data).map_err(|e| {
                    EngineError::connection(format!("postgres at {}: SCRAM: {e}", self.peer))
                })?;
                frontend::sasl_response(scram.message(), w).map_err(|e| io_error("write", e))?;
            }
            12 => {
                let scram = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| protocol_error("SASLFinal without SASL"))?;
                // Verifies the server's signature: the server also knows the password.
                scram.finish(data).map_err(|e| {
                    EngineError::config(format!(
                        "postgres at {}: SCRAM server verification failed: {e}",
                        self.peer
                    ))
                })?;
                return Ok(false);
            }
            other => {
                let name = match other {
                    2 => "Kerberos V5",
                    7 => "GSSAPI",
                    9 => "SSPI",
                    _ => "unknown",
                };
                return Err(EngineError::config(format!(
                    "postgres at {}: the server requires {name} authentication (code {other}); \
                     dbdelta supports trust, password, md5 and scram-sha-256 (see pg_hba.conf)",
                    self.peer
                )));
            }
        }
        wire.send().map_err(|e| io_error("write", e))?;
        Ok(false)
    }
}
