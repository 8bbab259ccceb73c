//! The client side of SCRAM (RFC 5802 for SHA-1, RFC 7677 for SHA-256) as MongoDB's
//! authentication specification uses it: no channel binding (`n,,`), the server's nonce
//! must extend ours, the iteration count must be at least 4096, and the server's
//! signature is verified before the connection is trusted. The password arrives prepared
//! (SASLprep'd for SHA-256, MongoDB's MD5 digest for SHA-1: [`prepare_password`]); no
//! message built here contains it.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use dbdelta_engine::EngineError;
use hmac::{Hmac, KeyInit, Mac};

/// The hash of a SCRAM mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    /// SCRAM-SHA-1.
    Sha1,
    /// SCRAM-SHA-256.
    Sha256,
}

impl Hash {
    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha1 => {
                let mut m = <Hmac<sha1::Sha1> as KeyInit>::new_from_slice(key)
                    .expect("HMAC takes any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            Hash::Sha256 => {
                let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key)
                    .expect("HMAC takes any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        use sha2::Digest as _;
        match self {
            Hash::Sha1 => sha1::Sha1::digest(data).to_vec(),
            Hash::Sha256 => sha2::Sha256::digest(data).to_vec(),
        }
    }

    /// `Hi()` of RFC 5802: PBKDF2 with HMAC as the pseudo-random function, one block.
    fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut first = salt.to_vec();
        first.extend_from_slice(&1u32.to_be_bytes());
        let mut u = self.hmac(password, &first);
        let mut out = u.clone();
        for _ in 1..iterations {
            u = self.hmac(password, &u);
            for (o, x) in out.iter_mut().zip(&u) {
                *o ^= x;
            }
        }
        out
    }
}

fn auth_error(msg: impl std::fmt::Display) -> EngineError {
    EngineError::config(format!("MongoDB authentication failed: {msg}"))
}

/// The password as the mechanism hashes it: SCRAM-SHA-256 SASLprep's it (RFC 4013);
/// SCRAM-SHA-1 uses MongoDB's `hex(md5("user:mongo:password"))`.
pub fn prepare_password(hash: Hash, user: &str, password: &str) -> Result<Vec<u8>, EngineError> {
    match hash {
        Hash::Sha256 => stringprep::saslprep(password)
            .map(|p| p.as_bytes().to_vec())
            .map_err(|_| auth_error("the password has characters SASLprep prohibits")),
        Hash::Sha1 => {
            use md5::Digest as _;
            let d = md5::Md5::digest(format!("{user}:mongo:{password}").as_bytes());
            Ok(d.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
                .into_bytes())
        }
    }
}

/// One SCRAM conversation.
pub struct Scram {
    hash: Hash,
    password: Vec<u8>,
    nonce: String,
    first_bare: String,
    server_signature: Option<Vec<u8>>,
}

impl std::fmt::Debug for Scram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scram")
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

/// A fresh client nonce: 24 random bytes in base64.
pub fn nonce() -> Result<String, EngineError> {
    let mut b = [0u8; 24];
    getrandom::fill(&mut b).map_err(|e| auth_error(format!("no randomness for the nonce: {e}")))?;
    Ok(B64.encode(b))
}

impl Scram {
    /// Starts a conversation for `user` with the prepared `password` and client `nonce`.
    pub fn new(hash: Hash, user: &str, password: Vec<u8>, nonce: String) -> Self {
        let user = user.replace('=', "=3D").replace(',', "=2C");
        Scram {
            hash,
            password,
            first_bare: format!("n={user},r={nonce}"),
            nonce,
            server_signature: None,
        }
    }

    /// The client-first message.
    pub fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.first_bare).into_bytes()
    }

    /// Answers the server-first message with the client-final one (the proof).
    pub fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, EngineError> {
        let text = std::str::from_utf8(server_first)
            .map_err(|_| auth_error("server-first message is not UTF-8"))?;
        let (mut r, mut s, mut i) = (None, None, None);
        for part in text.split(',') {
            match part.split_once('=') {
                Some(("r", v)) => r = Some(v),
                Some(("s", v)) => s = Some(v),
                Some(("i", v)) => i = Some(v),
                Some(("e", v)) => return Err(auth_error(format!("the server said {v}"))),
                _ => {}
            }
        }
        let (Some(r), Some(s), Some(i)) = (r, s, i) else {
            return Err(auth_error("the server-first message lacks r, s or i"));
        };
        if !r.starts_with(&self.nonce) || r.len() == self.nonce.len() {
            return Err(auth_error("the server's nonce does not extend ours"));
        }
        let salt = B64
            .decode(s)
            .map_err(|_| auth_error("the salt is not base64"))?;
        let iterations: u32 = i
            .parse()
            .map_err(|_| auth_error("the iteration count is not a number"))?;
        if !(4096..=10_000_000).contains(&iterations) {
            return Err(auth_error(format!(
                "an iteration count of {iterations} is outside 4096…10000000"
            )));
        }
        let salted = self.hash.hi(&self.password, &salt, iterations);
        let client_key = self.hash.hmac(&salted, b"Client Key");
        let stored = self.hash.digest(&client_key);
        let without_proof = format!("c=biws,r={r}");
        let auth_message = format!("{},{text},{without_proof}", self.first_bare);
        let signature = self.hash.hmac(&stored, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = self.hash.hmac(&salted, b"Server Key");
        self.server_signature = Some(self.hash.hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)).into_bytes())
    }

    /// Checks the server-final message: the server proves it knows the password too.
    pub fn verify(&self, server_final: &[u8]) -> Result<(), EngineError> {
        let Some(expected) = &self.server_signature else {
            return Err(auth_error("server-final message before the proof was sent"));
        };
        let text = std::str::from_utf8(server_final)
            .map_err(|_| auth_error("server-final message is not UTF-8"))?;
        if let Some(e) = text.strip_prefix("e=") {
            return Err(auth_error(format!("the server said {e}")));
        }
        let v = text
            .split(',')
            .find_map(|p| p.strip_prefix("v="))
            .ok_or_else(|| auth_error("the server-final message has no signature"))?;
        let got = B64
            .decode(v)
            .map_err(|_| auth_error("the server signature is not base64"))?;
        // Constant-time comparison: no early exit on the first differing byte.
        let same = got.len() == expected.len()
            && got
                .iter()
                .zip(expected)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return Err(auth_error(
                "the server's SCRAM signature is wrong: it does not know the password (a forged or intercepted server?)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7677_sha256_example() {
        let pw = prepare_password(Hash::Sha256, "user", "pencil").unwrap();
        let mut s = Scram::new(Hash::Sha256, "user", pw, "rOprNGfwEbeRWgbNEkqO".into());
        assert_eq!(s.client_first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let fin = s
            .client_final(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        assert_eq!(
            String::from_utf8(fin).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        s.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
    }

    #[test]
    fn rfc_5802_sha1_example() {
        let mut s = Scram::new(
            Hash::Sha1,
            "user",
            b"pencil".to_vec(),
            "fyko+d2lbbFgONRv9qkxdawL".into(),
        );
        let fin = s
            .client_final(b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
            .unwrap();
        assert!(String::from_utf8(fin)
            .unwrap()
            .ends_with(",p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="));
        s.verify(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=").unwrap();
    }

    #[test]
    fn a_forged_server_signature_is_refused() {
        let pw = prepare_password(Hash::Sha256, "user", "pencil").unwrap();
        let mut s = Scram::new(Hash::Sha256, "user", pw, "rOprNGfwEbeRWgbNEkqO".into());
        s.client_final(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        // One bit of the real signature flipped: a server that does not know the password.
        let e = s
            .verify(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(e.message.contains("signature is wrong"), "{e}");
        assert!(s.verify(b"e=other-error").is_err());
        assert!(s.verify(b"x=1").is_err());
    }

    #[test]
    fn a_nonce_the_server_did_not_extend_or_few_iterations_are_refused() {
        let mut s = Scram::new(Hash::Sha256, "u", b"p".to_vec(), "abc".into());
        assert!(s.client_final(b"r=xyz1,s=QSXCR+Q6sek8bf92,i=4096").is_err());
        assert!(s.client_final(b"r=abcd,s=QSXCR+Q6sek8bf92,i=1").is_err());
        // MongoDB's SCRAM-SHA-1 digest of the password.
        assert_eq!(
            prepare_password(Hash::Sha1, "user", "pencil").unwrap(),
            b"1c33006ec1ffd90f9cadcbcc0e118200".to_vec()
        );
    }
}
