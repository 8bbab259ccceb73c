//! Authentication (MongoDB's driver authentication specification): the mechanism asked
//! for, else the best one the server lists in `saslSupportedMechs` (SCRAM-SHA-256, then
//! SCRAM-SHA-1, then PLAIN), else SCRAM-SHA-256; `saslStart` / `saslContinue` carry the
//! conversation. PLAIN sends the password itself, so it is refused unless the connection
//! is TLS or goes to a loopback address. The password only reaches the SCRAM code and the
//! PLAIN payload; no message built here contains it.

use crate::msg::Limits;
use crate::reply;
use crate::scram::{self, Hash, Scram};
use crate::spec::{Mechanism, MongoParams};
use crate::wire::Wire;
use bson::raw::{cstr, RawBinaryRef, RawBsonRef, RawDocumentBuf};
use bson::spec::BinarySubtype;
use dbdelta_engine::EngineError;

/// Chooses the mechanism: the one asked for, else the server's best.
pub fn choose(asked: Option<Mechanism>, offered: &[String]) -> Mechanism {
    if let Some(m) = asked {
        return m;
    }
    let has = |m: Mechanism| offered.iter().any(|o| o == m.name());
    [
        Mechanism::ScramSha256,
        Mechanism::ScramSha1,
        Mechanism::Plain,
    ]
    .into_iter()
    .find(|m| has(*m))
    .unwrap_or(Mechanism::ScramSha256)
}

/// The database the credentials live in: `authSource`, else `$external` for PLAIN, else
/// the URL's database, else `admin`.
pub fn source(p: &MongoParams, m: Mechanism, url_db: Option<&str>) -> String {
    match (&p.auth_source, m) {
        (Some(s), _) => s.clone(),
        (None, Mechanism::Plain) => "$external".into(),
        (None, _) => url_db.unwrap_or("admin").to_string(),
    }
}

/// Refuses PLAIN where the password would cross a network in clear.
pub fn check_plain(private: bool, host: &str) -> Result<(), EngineError> {
    if private {
        Ok(())
    } else {
        Err(EngineError::config(format!(
            "authMechanism=PLAIN would send the password in clear to {host}: use TLS (tls=true) or a \
             loopback address, or a SCRAM mechanism"
        )))
    }
}

fn payload(doc: &RawDocumentBuf) -> Result<Vec<u8>, EngineError> {
    match doc.get("payload").ok().flatten() {
        Some(RawBsonRef::Binary(b)) => Ok(b.bytes.to_vec()),
        Some(RawBsonRef::String(s)) => Ok(s.as_bytes().to_vec()),
        _ => Err(EngineError::config(
            "MongoDB authentication failed: the server's reply has no payload",
        )),
    }
}

fn done(doc: &RawDocumentBuf) -> bool {
    matches!(
        doc.get("done").ok().flatten(),
        Some(RawBsonRef::Boolean(true))
    )
}

fn run(
    wire: &mut Wire,
    body: RawDocumentBuf,
    limits: &Limits,
) -> Result<RawDocumentBuf, EngineError> {
    let reply = wire.command(&body, limits)?;
    reply::check(&reply, "MongoDB authentication").map_err(|e| {
        // Any refusal here means the credentials or the mechanism: a configuration error.
        EngineError {
            kind: dbdelta_engine::ErrorKind::Config,
            ..e
        }
    })?;
    Ok(reply)
}

/// Authenticates `user` with `password` by `mechanism` against database `db`.
pub fn authenticate(
    wire: &mut Wire,
    limits: &Limits,
    mechanism: Mechanism,
    db: &str,
    user: &str,
    password: &str,
) -> Result<(), EngineError> {
    let start = |payload: &[u8]| {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("saslStart"), 1i32);
        d.append(cstr!("mechanism"), mechanism.name());
        d.append(
            cstr!("payload"),
            RawBinaryRef {
                subtype: BinarySubtype::Generic,
                bytes: payload,
            },
        );
        let mut o = RawDocumentBuf::new();
        o.append(cstr!("skipEmptyExchange"), true);
        d.append(cstr!("options"), &o);
        d.append(cstr!("$db"), db);
        d
    };
    let cont = |id: i32, payload: &[u8]| {
        let mut d = RawDocumentBuf::new();
        d.append(cstr!("saslContinue"), 1i32);
        d.append(cstr!("conversationId"), id);
        d.append(
            cstr!("payload"),
            RawBinaryRef {
                subtype: BinarySubtype::Generic,
                bytes: payload,
            },
        );
        d.append(cstr!("$db"), db);
        d
    };
    let hash = match mechanism {
        Mechanism::Plain => {
            let mut p = Vec::with_capacity(user.len() + password.len() + 2);
            p.push(0);
            p.extend_from_slice(user.as_bytes());
            p.push(0);
            p.extend_from_slice(password.as_bytes());
            let r = run(wire, start(&p), limits)?;
            return if done(&r) {
                Ok(())
            } else {
                Err(EngineError::config(
                    "MongoDB authentication failed: PLAIN did not complete",
                ))
            };
        }
        Mechanism::ScramSha256 => Hash::Sha256,
        Mechanism::ScramSha1 => Hash::Sha1,
    };
    let prepared = scram::prepare_password(hash, user, password)?;
    let mut s = Scram::new(hash, user, prepared, scram::nonce()?);
    let first = run(wire, start(&s.client_first()), limits)?;
    let id = reply::number(&first, "conversationId")
        .ok_or_else(|| EngineError::config("MongoDB authentication failed: no conversationId"))?
        as i32;
    let fin = s.client_final(&payload(&first)?)?;
    let second = run(wire, cont(id, &fin), limits)?;
    s.verify(&payload(&second)?)?;
    // A server that ignores skipEmptyExchange wants one more, empty, round.
    if !done(&second) {
        let third = run(wire, cont(id, &[]), limits)?;
        if !done(&third) {
            return Err(EngineError::config(
                "MongoDB authentication failed: the conversation did not end",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_offered_mechanism_wins_and_plain_needs_privacy() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            choose(None, &s(&["SCRAM-SHA-1", "SCRAM-SHA-256"])),
            Mechanism::ScramSha256
        );
        assert_eq!(choose(None, &s(&["SCRAM-SHA-1"])), Mechanism::ScramSha1);
        assert_eq!(choose(None, &s(&["PLAIN"])), Mechanism::Plain);
        assert_eq!(choose(None, &[]), Mechanism::ScramSha256);
        assert_eq!(
            choose(Some(Mechanism::Plain), &s(&["SCRAM-SHA-256"])),
            Mechanism::Plain
        );
        assert!(check_plain(true, "127.0.0.1").is_ok());
        let e = check_plain(false, "db1").unwrap_err();
        assert!(e.message.contains("in clear to db1"), "{e}");
        assert!(!e.message.contains("password="));
    }
}
