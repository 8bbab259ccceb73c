//! Password scrambles of the authentication plugins dbdelta speaks.

use sha1::Sha1;
use sha2::{Digest, Sha256};

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

/// The scramble for `plugin`, or `None` when dbdelta does not implement the plugin.
pub(crate) fn scramble(plugin: &str, password: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
    // The nonce is 20 bytes; servers may append a NUL.
    let nonce = &nonce[..nonce.len().min(20)];
    match plugin {
        "mysql_native_password" | "" => Some(native_password(password, nonce)),
        "caching_sha2_password" => Some(caching_sha2_password(password, nonce)),
        "mysql_clear_password" => {
            // Only sent when the server asks for it; still needs a trailing NUL.
            let mut v = password.to_vec();
            v.push(0);
            Some(v)
        }
        _ => None,
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

    #[test]
    fn sha2_length_and_unknown_plugin() {
        assert_eq!(caching_sha2_password(b"pw", &[7u8; 20]).len(), 32);
        assert!(scramble("client_ed25519", b"pw", &[0; 20]).is_none());
    }
}
