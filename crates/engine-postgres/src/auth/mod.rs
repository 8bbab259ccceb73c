//! Authentication: where the password comes from (URL, `PGPASSWORD`, `~/.pgpass`) and the
//! answers to the server's Authentication requests (cleartext, MD5, SCRAM-SHA-256).
//!
//! The password is only ever handed to `postgres-protocol`'s hashing code and to
//! `proto::frontend`, which writes it into the connection's send buffer;
//! no error message built here contains it.

pub mod pgpass;

use crate::pgerror::protocol_error;
use crate::proto::{backend, frontend, ProtoError};
use dbdelta_engine::EngineError;
use dbdelta_model::Secret;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{
    ChannelBinding, ScramSha256, SCRAM_SHA_256, SCRAM_SHA_256_PLUS,
};

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

/// The target parameter `channel_binding=disable|prefer|require`, like libpq's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelBindingMode {
    /// Never bind SCRAM to the TLS channel.
    Disable,
    /// Bind when the connection is TLS and the server offers SCRAM-SHA-256-PLUS (default).
    #[default]
    Prefer,
    /// Refuse to connect unless the server authenticates with SCRAM-SHA-256-PLUS.
    Require,
}

/// The parameter name of [`ChannelBindingMode`].
pub const CHANNEL_BINDING: &str = "channel_binding";

/// The `channel_binding` parameter of `spec` (default prefer).
pub(crate) fn channel_binding(
    spec: &dbdelta_model::TargetSpec,
) -> Result<ChannelBindingMode, EngineError> {
    spec.param(CHANNEL_BINDING)
        .map_or(Ok(ChannelBindingMode::default()), |v| {
            ChannelBindingMode::parse(&spec.name, v)
        })
}

impl ChannelBindingMode {
    /// Parses the `channel_binding` value of target `target`.
    pub fn parse(target: &str, value: &str) -> Result<Self, EngineError> {
        match value.to_ascii_lowercase().as_str() {
            "disable" => Ok(ChannelBindingMode::Disable),
            "prefer" => Ok(ChannelBindingMode::Prefer),
            "require" => Ok(ChannelBindingMode::Require),
            _ => Err(EngineError::config(format!(
                "target '{target}': {CHANNEL_BINDING}={value} is not valid; use one of disable, prefer, require"
            ))),
        }
    }
}

/// What the transport offers SCRAM for channel binding.
#[derive(Debug, Clone, Default)]
pub(crate) struct Binding {
    /// The `channel_binding` parameter.
    pub mode: ChannelBindingMode,
    /// True when the connection runs over TLS.
    pub tls: bool,
    /// The `tls-server-end-point` hash of the server certificate (TLS only; `None` when its
    /// signature algorithm names no hash).
    pub end_point: Option<Vec<u8>>,
}

/// Where SCRAM is.
enum Scram {
    /// Not started.
    None,
    /// Started (`plus`: with channel binding); the server's final message not yet verified.
    Running { scram: ScramSha256, plus: bool },
    /// The server proved it knows the password (`plus`: over the bound channel).
    Verified { plus: bool },
}

/// State of an authentication exchange in progress.
pub(crate) struct Auth<'a> {
    user: &'a str,
    password: Option<&'a Secret>,
    /// Where we connect, for messages.
    peer: &'a str,
    binding: Binding,
    scram: Scram,
}

impl<'a> Auth<'a> {
    pub(crate) fn new(
        user: &'a str,
        password: Option<&'a Secret>,
        peer: &'a str,
        binding: Binding,
    ) -> Self {
        Auth {
            user,
            password,
            peer,
            binding,
            scram: Scram::None,
        }
    }

    /// The error of `channel_binding=require` when the server authenticates otherwise.
    fn binding_required(&self, how: &str) -> EngineError {
        let why = if !self.binding.tls {
            "the connection is not TLS (give sslmode=require or stronger, or --tls)"
        } else if self.binding.end_point.is_none() {
            "the server certificate's signature algorithm names no hash for tls-server-end-point"
        } else {
            "the server does not offer SCRAM-SHA-256-PLUS (pg_hba.conf must say scram-sha-256 and the server must run over TLS)"
        };
        EngineError::config(format!(
            "postgres at {}: {CHANNEL_BINDING}=require, but the server {how} without channel binding: {why}",
            self.peer
        ))
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

    /// Answers one Authentication message (`R`) body, appending the answer (if any) to `w`
    /// for the caller to send. Returns true when authentication is
    /// complete (AuthenticationOk). AuthenticationOk is refused while SCRAM has not verified
    /// the server's signature, and under `channel_binding=require` unless SCRAM-SHA-256-PLUS
    /// completed.
    pub(crate) fn step(&mut self, body: &[u8], w: &mut Vec<u8>) -> Result<bool, EngineError> {
        let (code, data) = backend::authentication(body)?;
        match code {
            0 => {
                return match &self.scram {
                    // AuthenticationOk before SASLFinal: the server never proved it knows
                    // the password, so it may be anyone.
                    Scram::Running { .. } => Err(EngineError::config(format!(
                        "postgres at {}: the server sent AuthenticationOk before completing SCRAM \
                         (no server signature), so it is not authenticated; refusing the connection \
                         (a man in the middle or a broken server)",
                        self.peer
                    ))),
                    Scram::Verified { plus: false } | Scram::None
                        if self.binding.mode == ChannelBindingMode::Require =>
                    {
                        Err(self.binding_required("authenticated the client"))
                    }
                    _ => Ok(true),
                };
            }
            3 | 5 if self.binding.mode == ChannelBindingMode::Require => {
                return Err(self.binding_required("asks for a password"));
            }
            3 => {
                let pw = self.password("cleartext")?;
                frontend::password(pw, w).map_err(unsendable)?;
            }
            5 => {
                let pw = self.password("md5")?;
                let salt: [u8; 4] = data
                    .get(..4)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| protocol_error("short MD5 salt"))?;
                let hash = md5_hash(self.user.as_bytes(), pw, salt);
                frontend::password(hash.as_bytes(), w).map_err(unsendable)?;
            }
            10 => {
                if !matches!(self.scram, Scram::None) {
                    return Err(protocol_error("a second SASL exchange"));
                }
                let mechs: Vec<String> = backend::sasl_mechanisms(data)
                    .map(|m| String::from_utf8_lossy(m).into_owned())
                    .collect();
                let plus_offered = mechs.iter().any(|m| m == SCRAM_SHA_256_PLUS);
                if !plus_offered && !mechs.iter().any(|m| m == SCRAM_SHA_256) {
                    return Err(EngineError::config(format!(
                        "postgres at {}: the server offers only SASL mechanisms {mechs:?}; dbdelta supports SCRAM-SHA-256 and SCRAM-SHA-256-PLUS",
                        self.peer
                    )));
                }
                let end_point = match self.binding.mode {
                    ChannelBindingMode::Disable => None,
                    _ => self.binding.end_point.clone().filter(|_| plus_offered),
                };
                if end_point.is_none() && self.binding.mode == ChannelBindingMode::Require {
                    return Err(self.binding_required("offers SCRAM"));
                }
                let pw = self.password("scram-sha-256")?;
                let (mech, cb) = match end_point {
                    Some(hash) => (
                        SCRAM_SHA_256_PLUS,
                        ChannelBinding::tls_server_end_point(hash),
                    ),
                    // "y": we could bind but the server did not offer -PLUS (over TLS a
                    // server that strips -PLUS is caught by the real server's check).
                    None if self.binding.tls
                        && self.binding.end_point.is_some()
                        && self.binding.mode != ChannelBindingMode::Disable =>
                    {
                        (SCRAM_SHA_256, ChannelBinding::unrequested())
                    }
                    // "n": no binding.
                    None => (SCRAM_SHA_256, ChannelBinding::unsupported()),
                };
                if !mechs.iter().any(|m| m == mech) {
                    // Only -PLUS offered, and we cannot bind.
                    return Err(EngineError::config(format!(
                        "postgres at {}: the server offers only {mechs:?}, which needs channel binding over TLS; \
                         connect with TLS (sslmode=require or stronger) and {CHANNEL_BINDING}=prefer",
                        self.peer
                    )));
                }
                let scram = ScramSha256::new(pw, cb);
                frontend::sasl_initial_response(mech, scram.message(), w).map_err(unsendable)?;
                self.scram = Scram::Running {
                    scram,
                    plus: mech == SCRAM_SHA_256_PLUS,
                };
            }
            11 => {
                let Scram::Running { scram, .. } = &mut self.scram else {
                    return Err(protocol_error("SASLContinue without SASL"));
                };
                scram.update(data).map_err(|e| {
                    EngineError::connection(format!("postgres at {}: SCRAM: {e}", self.peer))
                })?;
                frontend::sasl_response(scram.message(), w);
            }
            12 => {
                let Scram::Running { scram, plus } = &mut self.scram else {
                    return Err(protocol_error("SASLFinal without SASL"));
                };
                // Verifies the server's signature: the server also knows the password
                // (and, with -PLUS, sits at the far end of this TLS channel).
                scram.finish(data).map_err(|e| {
                    EngineError::config(format!(
                        "postgres at {}: SCRAM server verification failed: {e}",
                        self.peer
                    ))
                })?;
                self.scram = Scram::Verified { plus: *plus };
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
        Ok(false)
    }
}

/// An answer that cannot be written (a password holding a NUL byte).
fn unsendable(e: ProtoError) -> EngineError {
    EngineError::connection(format!("postgres connection write: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Authentication message body: the code, then `data`.
    fn body(code: i32, data: &[u8]) -> Vec<u8> {
        let mut b = code.to_be_bytes().to_vec();
        b.extend_from_slice(data);
        b
    }

    /// What the client sent since the last call.
    fn sent(w: &mut Vec<u8>) -> Vec<u8> {
        std::mem::take(w)
    }

    /// AuthenticationSASL offering `mechs`.
    fn sasl(mechs: &[&str]) -> Vec<u8> {
        let mut d = Vec::new();
        for m in mechs {
            d.extend_from_slice(m.as_bytes());
            d.push(0);
        }
        d.push(0);
        body(10, &d)
    }

    fn tls_binding(mode: ChannelBindingMode) -> Binding {
        Binding {
            mode,
            tls: true,
            end_point: Some(vec![7; 32]),
        }
    }

    #[test]
    fn authentication_ok_before_sasl_final_is_refused() {
        let pw = Secret::new("pencil".to_string());
        let mut w = Vec::new();
        let mut auth = Auth::new("u", Some(&pw), "h:1", Binding::default());
        assert!(!auth.step(&sasl(&[SCRAM_SHA_256]), &mut w).unwrap());
        let first = sent(&mut w);
        // 'p', length, mechanism, then client-first "n,,n=,r=<nonce>".
        let client_first = String::from_utf8_lossy(&first).into_owned();
        assert!(client_first.contains("n,,n=,r="), "{client_first}");
        // The server skips SASLContinue/SASLFinal and says OK: a server that never proved
        // it knows the password.
        let e = auth.step(&body(0, &[]), &mut w).unwrap_err();
        assert!(e.message.contains("before completing SCRAM"), "{e}");
        assert!(!e.message.contains("pencil"), "{e}");

        // The same after SASLContinue: still no server signature.
        let mut w = Vec::new();
        let mut auth = Auth::new("u", Some(&pw), "h:1", Binding::default());
        auth.step(&sasl(&[SCRAM_SHA_256]), &mut w).unwrap();
        let first = String::from_utf8_lossy(&sent(&mut w)).into_owned();
        let nonce = first.split("r=").nth(1).unwrap().trim_end_matches('\0');
        let server_first = format!("r={nonce}srv,s=QSXCR+Q6sek8bf92,i=4096");
        auth.step(&body(11, server_first.as_bytes()), &mut w)
            .unwrap();
        let e = auth.step(&body(0, &[]), &mut w).unwrap_err();
        assert!(e.message.contains("before completing SCRAM"), "{e}");
    }

    #[test]
    fn a_wrong_server_signature_is_refused() {
        let pw = Secret::new("pencil".to_string());
        let mut w = Vec::new();
        let mut auth = Auth::new("u", Some(&pw), "h:1", Binding::default());
        auth.step(&sasl(&[SCRAM_SHA_256]), &mut w).unwrap();
        let first = String::from_utf8_lossy(&sent(&mut w)).into_owned();
        let nonce = first.split("r=").nth(1).unwrap().trim_end_matches('\0');
        let server_first = format!("r={nonce}srv,s=QSXCR+Q6sek8bf92,i=4096");
        auth.step(&body(11, server_first.as_bytes()), &mut w)
            .unwrap();
        let e = auth
            .step(
                &body(12, b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
                &mut w,
            )
            .unwrap_err();
        assert!(
            e.message.contains("SCRAM server verification failed"),
            "{e}"
        );
    }

    #[test]
    fn trust_and_passwords_are_accepted_without_scram() {
        let pw = Secret::new("pencil".to_string());
        let mut w = Vec::new();
        let mut auth = Auth::new("u", Some(&pw), "h:1", Binding::default());
        assert!(auth.step(&body(0, &[]), &mut w).unwrap());
        let mut auth = Auth::new("u", Some(&pw), "h:1", Binding::default());
        assert!(!auth.step(&body(5, b"salt"), &mut w).unwrap());
        assert!(auth.step(&body(0, &[]), &mut w).unwrap());
    }

    #[test]
    fn plus_is_used_over_tls_when_offered() {
        let pw = Secret::new("pencil".to_string());
        let mut w = Vec::new();
        let mut auth = Auth::new(
            "u",
            Some(&pw),
            "h:1",
            tls_binding(ChannelBindingMode::Prefer),
        );
        auth.step(&sasl(&[SCRAM_SHA_256_PLUS, SCRAM_SHA_256]), &mut w)
            .unwrap();
        let first = String::from_utf8_lossy(&sent(&mut w)).into_owned();
        assert!(first.contains("SCRAM-SHA-256-PLUS\0"), "{first}");
        assert!(first.contains("p=tls-server-end-point,,n=,r="), "{first}");

        // Over TLS, a server that does not offer -PLUS gets "y" (downgrade detection).
        let mut w = Vec::new();
        let mut auth = Auth::new(
            "u",
            Some(&pw),
            "h:1",
            tls_binding(ChannelBindingMode::Prefer),
        );
        auth.step(&sasl(&[SCRAM_SHA_256]), &mut w).unwrap();
        let first = String::from_utf8_lossy(&sent(&mut w)).into_owned();
        assert!(first.contains("y,,n=,r="), "{first}");

        // channel_binding=disable: "n" even when offered.
        let mut w = Vec::new();
        let mut auth = Auth::new(
            "u",
            Some(&pw),
            "h:1",
            tls_binding(ChannelBindingMode::Disable),
        );
        auth.step(&sasl(&[SCRAM_SHA_256_PLUS, SCRAM_SHA_256]), &mut w)
            .unwrap();
        let first = String::from_utf8_lossy(&sent(&mut w)).into_owned();
        assert!(
            first.contains("SCRAM-SHA-256\0") && first.contains("n,,n=,r="),
            "{first}"
        );
    }

    #[test]
    fn require_refuses_every_path_without_plus() {
        let pw = Secret::new("pencil".to_string());
        let mut w = Vec::new();
        let plain = Binding {
            mode: ChannelBindingMode::Require,
            ..Binding::default()
        };
        // No TLS: SCRAM without -PLUS, md5, cleartext and trust are all refused.
        for msg in [
            sasl(&[SCRAM_SHA_256]),
            body(5, b"salt"),
            body(3, &[]),
            body(0, &[]),
        ] {
            let mut auth = Auth::new("u", Some(&pw), "h:1", plain.clone());
            let e = auth.step(&msg, &mut w).unwrap_err();
            assert!(
                e.message.contains("channel_binding=require") && e.message.contains("not TLS"),
                "{e}"
            );
        }
        // TLS but the server offers no -PLUS.
        let mut auth = Auth::new(
            "u",
            Some(&pw),
            "h:1",
            tls_binding(ChannelBindingMode::Require),
        );
        let e = auth.step(&sasl(&[SCRAM_SHA_256]), &mut w).unwrap_err();
        assert!(
            e.message.contains("does not offer SCRAM-SHA-256-PLUS"),
            "{e}"
        );
        // TLS, offered, but the certificate has no usable hash.
        let mut b = tls_binding(ChannelBindingMode::Require);
        b.end_point = None;
        let mut auth = Auth::new("u", Some(&pw), "h:1", b);
        let e = auth
            .step(&sasl(&[SCRAM_SHA_256_PLUS, SCRAM_SHA_256]), &mut w)
            .unwrap_err();
        assert!(e.message.contains("names no hash"), "{e}");
    }

    #[test]
    fn channel_binding_values() {
        assert_eq!(
            ChannelBindingMode::parse("t", "REQUIRE").unwrap(),
            ChannelBindingMode::Require
        );
        let e = ChannelBindingMode::parse("t", "maybe").unwrap_err();
        assert!(
            e.message.contains("channel_binding=maybe")
                && e.message.contains("disable, prefer, require"),
            "{e}"
        );
    }
}
