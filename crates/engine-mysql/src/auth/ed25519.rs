//! MariaDB's `client_ed25519`: the password is the Ed25519 secret seed of any length. The
//! server's `auth_ed25519` (ref10 `crypto_sign` in MariaDB's plugin/auth_ed25519) hashes it
//! with SHA-512, clamps the lower half into the secret scalar and keeps the upper half as
//! the nonce prefix: exactly RFC 8032's key expansion with the password in place of the
//! 32-byte seed. The client signs the server's 32-byte scramble with that expanded key and
//! sends the 64-byte signature; the server checks it against the public key it stored
//! (`USING PASSWORD('pw')`: the base64 in `mysql.user.authentication_string`).

use ed25519_dalek::hazmat::{raw_sign, ExpandedSecretKey};
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha512};

/// The expanded secret key of `password`: SHA-512(password), lower half clamped.
fn expanded(password: &[u8]) -> ExpandedSecretKey {
    let mut az = [0u8; 64];
    az.copy_from_slice(&Sha512::digest(password));
    let key = ExpandedSecretKey::from_bytes(&az);
    az.fill(0);
    key
}

/// The signature of `scramble` that `client_ed25519` sends for `password`.
pub(super) fn sign(password: &[u8], scramble: &[u8; 32]) -> [u8; 64] {
    let key = expanded(password);
    let public = VerifyingKey::from(&key);
    raw_sign::<Sha512>(&key, scramble, &public).to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use ed25519_dalek::{Signature, Verifier};

    /// The public key MariaDB 10.11 stores for `PASSWORD('secret')` under ed25519: the
    /// signature made from the password must verify under it, and fail under another
    /// password's.
    #[test]
    fn signature_verifies_under_the_key_mariadb_stores() {
        let stored = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(MARIADB_SECRET_PUBLIC_KEY)
            .unwrap();
        let public = VerifyingKey::from_bytes(&stored.try_into().unwrap()).unwrap();
        assert_eq!(VerifyingKey::from(&expanded(b"secret")), public);
        let scramble = [0x5Au8; 32];
        let sig = Signature::from_bytes(&sign(b"secret", &scramble));
        assert!(public.verify(&scramble, &sig).is_ok());
        assert!(
            public.verify(&[0x5B; 32], &sig).is_err(),
            "another scramble"
        );
        let wrong = Signature::from_bytes(&sign(b"Secret", &scramble));
        assert!(
            public.verify(&scramble, &wrong).is_err(),
            "another password"
        );
    }

    /// `mysql.user.authentication_string` after `CREATE USER e@localhost IDENTIFIED VIA
    /// ed25519 USING PASSWORD('secret')` on MariaDB 10.11.19 (Debian 12).
    const MARIADB_SECRET_PUBLIC_KEY: &str = "ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY";
}
