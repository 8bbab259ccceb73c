//! Test certificates made with the `openssl` command: a CA and certificates it signs, for
//! the TLS tests of the server engines (feature `test-support`, never in the binary).

use std::path::Path;
use std::process::Command;

/// The key of a CA or certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// RSA 2048 (signatures SHA-256 with RSA).
    Rsa2048,
    /// ECDSA on P-256.
    EcP256,
}

impl Key {
    fn args(self) -> &'static [&'static str] {
        match self {
            Key::Rsa2048 => &["-newkey", "rsa:2048"],
            Key::EcP256 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
        }
    }
}

/// True when `openssl` runs; otherwise the test is skipped with a message, except under
/// `CI`, where a missing openssl fails the test.
pub fn have_openssl() -> bool {
    if Command::new("openssl").arg("version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "openssl is missing and CI is set: it makes the test certificates"
    );
    eprintln!("SKIPPED: openssl is needed to make test certificates");
    false
}

/// Runs `openssl ARGS` in `dir`, failing the test with its stderr unless it succeeds.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed CA `dir/NAME.crt` with its key `dir/NAME.key`, valid for two days.
pub fn make_ca(dir: &Path, name: &str, key: Key) {
    let (keyout, out, subj) = (
        format!("{name}.key"),
        format!("{name}.crt"),
        format!("/CN={name}"),
    );
    let mut args = vec!["req", "-x509"];
    args.extend(key.args());
    args.extend([
        "-nodes",
        "-keyout",
        &keyout,
        "-out",
        &out,
        "-days",
        "2",
        "-subj",
        &subj,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(dir, &args);
}

/// A certificate `dir/NAME.crt` (key `dir/NAME.key`) for common name `cn`, signed by the CA
/// `ca`, with the X.509 extensions `ext` (e.g. `subjectAltName=DNS:localhost`).
pub fn make_cert(dir: &Path, name: &str, cn: &str, ext: &str, ca: &str, key: Key) {
    let (keyout, csr, subj) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("/CN={cn}"),
    );
    let mut args = vec!["req"];
    args.extend(key.args());
    args.extend(["-nodes", "-keyout", &keyout, "-out", &csr, "-subj", &subj]);
    openssl(dir, &args);
    std::fs::write(dir.join(format!("{name}.ext")), ext).expect("write the extensions file");
    let (ca_crt, ca_key, crt, extfile) = (
        format!("{ca}.crt"),
        format!("{ca}.key"),
        format!("{name}.crt"),
        format!("{name}.ext"),
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "2",
            "-extfile",
            &extfile,
        ],
    );
}
