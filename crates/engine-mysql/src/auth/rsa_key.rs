//! The server's RSA public key for `caching_sha2_password` full authentication and
//! `sha256_password` over plain TCP. What is encrypted is MySQL's documented construction
//! (libmysqlclient's `sha256_password_auth_client` and `caching_sha2_password_auth_client`):
//! the password and its NUL, XOR the 20-byte scramble repeated, under RSA-OAEP with SHA-1
//! and MGF1-SHA-1 (OpenSSL's `RSA_PKCS1_OAEP_PADDING`). The server decrypts with its private
//! key and undoes the XOR. Only public-key operations run here.

use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::traits::PublicKeyParts;
use rsa::{Oaep, RsaPublicKey};
use std::path::Path;

/// OAEP with SHA-1 takes 2 × 20 + 2 bytes of each block; MySQL's client refuses at 41.
const OAEP_SHA1_OVERHEAD: usize = 41;

/// Largest PEM file read for `server-public-key` (a 16384-bit key is about 3 KB).
const MAX_PEM: u64 = 64 * 1024;

/// Why a server key cannot be read or used. The messages never hold the password.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The key is not UTF-8 text.
    #[error("not PEM text")]
    NotText,
    /// No PEM public-key header.
    #[error("not a PEM public key (no '-----BEGIN PUBLIC KEY-----')")]
    NotPem,
    /// A PKCS#1 (`BEGIN RSA PUBLIC KEY`) key that does not parse.
    #[error("{0}")]
    Pkcs1(#[source] rsa::pkcs1::Error),
    /// A SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`) key that does not parse.
    #[error("{0}")]
    Spki(#[source] rsa::pkcs8::spki::Error),
    /// The key file cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The key file is longer than any PEM public key.
    #[error("{0} bytes is too long for a PEM public key")]
    TooLong(u64),
    /// The server sent no scramble to mix the password with.
    #[error("the server sent no scramble")]
    NoScramble,
    /// The password does not fit one RSA-OAEP block of the key.
    #[error("the password is too long for the server's {bits}-bit RSA key")]
    PasswordTooLong {
        /// The key's size in bits.
        bits: usize,
    },
    /// The encryption itself failed.
    #[error("RSA encryption failed: {0}")]
    Encrypt(#[source] rsa::Error),
}

/// A server's RSA public key.
#[derive(Debug)]
pub(crate) struct ServerKey(RsaPublicKey);

impl ServerKey {
    /// Parses a PEM public key: `BEGIN PUBLIC KEY` (what MySQL sends and writes) or
    /// `BEGIN RSA PUBLIC KEY`. Trailing NULs and whitespace are ignored.
    pub(crate) fn from_pem(pem: &[u8]) -> Result<ServerKey, KeyError> {
        let text = std::str::from_utf8(pem).map_err(|_| KeyError::NotText)?;
        let text = text
            .trim_end_matches(['\0', ' ', '\n', '\r', '\t'])
            .trim_start();
        let key = if text.starts_with("-----BEGIN RSA PUBLIC KEY-----") {
            RsaPublicKey::from_pkcs1_pem(text).map_err(KeyError::Pkcs1)?
        } else if text.starts_with("-----BEGIN PUBLIC KEY-----") {
            RsaPublicKey::from_public_key_pem(text).map_err(KeyError::Spki)?
        } else {
            return Err(KeyError::NotPem);
        };
        Ok(ServerKey(key))
    }

    /// Reads a PEM public key from `path`.
    pub(crate) fn from_file(path: &Path) -> Result<ServerKey, KeyError> {
        let meta = std::fs::metadata(path).map_err(KeyError::Read)?;
        if meta.len() > MAX_PEM {
            return Err(KeyError::TooLong(meta.len()));
        }
        let pem = std::fs::read(path).map_err(KeyError::Read)?;
        ServerKey::from_pem(&pem)
    }

    /// RSA-OAEP(SHA-1) of (`password` + NUL) XOR `scramble` repeated. The message never
    /// holds the password in an error.
    pub(crate) fn encrypt_password(
        &self,
        password: &[u8],
        scramble: &[u8],
    ) -> Result<Vec<u8>, KeyError> {
        if scramble.is_empty() {
            return Err(KeyError::NoScramble);
        }
        let size = self.0.size();
        if password.len() + 1 + OAEP_SHA1_OVERHEAD >= size {
            return Err(KeyError::PasswordTooLong { bits: size * 8 });
        }
        let mut msg = Vec::with_capacity(password.len() + 1);
        msg.extend_from_slice(password);
        msg.push(0);
        for (i, b) in msg.iter_mut().enumerate() {
            *b ^= scramble[i % scramble.len()];
        }
        let r = self
            .0
            .encrypt(&mut rsa::rand_core::OsRng, Oaep::new::<sha1::Sha1>(), &msg);
        msg.fill(0);
        r.map_err(KeyError::Encrypt)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rsa::pkcs8::{EncodePublicKey, LineEnding};
    use rsa::RsaPrivateKey;
    use std::sync::OnceLock;

    /// One 2048-bit key (MySQL's default size) for all tests, made once.
    pub(crate) fn test_key() -> &'static RsaPrivateKey {
        static KEY: OnceLock<RsaPrivateKey> = OnceLock::new();
        KEY.get_or_init(|| RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap())
    }

    /// The PEM MySQL sends: SubjectPublicKeyInfo.
    pub(crate) fn test_pem() -> String {
        test_key()
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap()
    }

    /// What the server does: decrypt, then undo the XOR with the scramble.
    pub(crate) fn server_decrypt(cipher: &[u8], scramble: &[u8]) -> Vec<u8> {
        let mut m = test_key()
            .decrypt(Oaep::new::<sha1::Sha1>(), cipher)
            .unwrap();
        for (i, b) in m.iter_mut().enumerate() {
            *b ^= scramble[i % scramble.len()];
        }
        m
    }

    #[test]
    fn encrypts_password_nul_xor_scramble_with_oaep_sha1() {
        let key = ServerKey::from_pem(test_pem().as_bytes()).unwrap();
        let scramble: Vec<u8> = (1..=20).collect();
        // Longer than the scramble: the XOR pattern repeats.
        let pw = b"a password longer than twenty bytes";
        let c = key.encrypt_password(pw, &scramble).unwrap();
        assert_eq!(c.len(), 256);
        assert_eq!(server_decrypt(&c, &scramble), [&pw[..], b"\0"].concat());
        // OAEP is randomized: the same input encrypts differently.
        assert_ne!(c, key.encrypt_password(pw, &scramble).unwrap());
        let e = key
            .encrypt_password(&[b'x'; 300], &scramble)
            .unwrap_err()
            .to_string();
        assert!(e.contains("too long") && !e.contains("xxx"), "{e}");
    }

    #[test]
    fn pem_forms_and_garbage() {
        let spki = test_pem();
        let mut nul = spki.clone().into_bytes();
        nul.push(0);
        assert!(ServerKey::from_pem(&nul).is_ok());
        let pkcs1 = rsa::pkcs1::EncodeRsaPublicKey::to_pkcs1_pem(
            &test_key().to_public_key(),
            LineEnding::LF,
        )
        .unwrap();
        assert!(ServerKey::from_pem(pkcs1.as_bytes()).is_ok());
        assert!(ServerKey::from_pem(
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
        )
        .is_err());
        assert!(ServerKey::from_pem(&[0xFF, 0xFE]).is_err());
        assert!(ServerKey::from_pem(b"").is_err());
    }
}
