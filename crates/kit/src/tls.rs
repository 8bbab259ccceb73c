//! The rustls client configuration shared by the server engines: TLS modes like libpq's
//! `sslmode` and libmysqlclient's `ssl-mode`, the three ways of checking the server's
//! certificate, client certificates, and the `tls-server-end-point` channel-binding hash.
//!
//! Each engine spells the modes its own way ([`PG_MODES`], [`MYSQL_MODES`]) and names its
//! own parameters (`sslrootcert=` or `ssl-ca=`); what a mode means is decided here once:
//!
//! | mode | encrypts | server certificate |
//! |---|---|---|
//! | disable | no | — |
//! | prefer | if the server accepts TLS | not checked (handshake signatures are) |
//! | require | yes | not checked (handshake signatures are) |
//! | verify-ca | yes | chains to a trusted root |
//! | verify-full | yes | chains to a trusted root and names the host |
//!
//! "Not checked" still verifies the handshake signatures with the certificate's key, so the
//! peer holds the private key of the certificate it shows: that is what channel binding needs
//! to detect a man in the middle. Roots come from the CA file the target names, else the system
//! bundle (`SSL_CERT_FILE` or the usual distribution paths).
//!
//! Without the `tls` feature only the modes are here (to check target parameters); the
//! rustls parts need it.

use dbdelta_engine::EngineError;
#[cfg(feature = "tls")]
use rustls::{
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::WebPkiSupportedAlgorithms,
    pki_types::pem::PemObject,
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime},
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::Path;
#[cfg(feature = "tls")]
use std::{path::PathBuf, sync::Arc};

/// System CA bundles, first found wins.
#[cfg(feature = "tls")]
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// How much TLS a target asks for and how much of the server's certificate it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Plain TCP only.
    Disable,
    /// TLS when the server accepts it, else plain; the certificate is not checked.
    Prefer,
    /// TLS or fail; the certificate is not checked.
    Require,
    /// TLS or fail; the certificate must chain to a trusted root, any host name.
    VerifyCa,
    /// TLS or fail; the certificate must chain to a trusted root and name the host.
    VerifyFull,
}

/// The spellings of libpq's `sslmode` (PostgreSQL targets).
pub const PG_MODES: &[(&str, TlsMode)] = &[
    ("disable", TlsMode::Disable),
    ("prefer", TlsMode::Prefer),
    ("require", TlsMode::Require),
    ("verify-ca", TlsMode::VerifyCa),
    ("verify-full", TlsMode::VerifyFull),
];

/// The spellings of libmysqlclient's `ssl-mode` (MySQL and MariaDB targets; any case).
pub const MYSQL_MODES: &[(&str, TlsMode)] = &[
    ("DISABLED", TlsMode::Disable),
    ("PREFERRED", TlsMode::Prefer),
    ("REQUIRED", TlsMode::Require),
    ("VERIFY_CA", TlsMode::VerifyCa),
    ("VERIFY_IDENTITY", TlsMode::VerifyFull),
];

impl TlsMode {
    /// Parses `value` of parameter `param` of target `target` against `names` (case
    /// insensitive); the error names the parameter and lists the valid values.
    pub fn parse(
        target: &str,
        param: &str,
        value: &str,
        names: &[(&str, TlsMode)],
    ) -> Result<TlsMode, EngineError> {
        names
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(value))
            .map(|(_, m)| *m)
            .ok_or_else(|| {
                let valid: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
                EngineError::config(format!(
                    "target '{target}': {param}={value} is not a TLS mode; use one of {}",
                    valid.join(", ")
                ))
            })
    }

    /// True when the mode may use TLS at all.
    pub fn wants_tls(self) -> bool {
        self != TlsMode::Disable
    }

    /// The check of the server certificate when the target names a CA file (`has_ca`) or
    /// not: as in libpq, a CA makes `prefer` and `require` check the chain too (a CA given
    /// and silently unused would be a trap).
    pub fn check_with_ca(self, has_ca: bool) -> CertCheck {
        match self.check() {
            CertCheck::None if has_ca => CertCheck::Chain,
            c => c,
        }
    }

    /// The check of the server certificate this mode asks for.
    pub fn check(self) -> CertCheck {
        match self {
            TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => CertCheck::None,
            TlsMode::VerifyCa => CertCheck::Chain,
            TlsMode::VerifyFull => CertCheck::Full,
        }
    }
}

/// What is checked of the server's certificate (its handshake signatures always are).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertCheck {
    /// Nothing but the handshake signatures: encryption against passive listeners only.
    None,
    /// The chain to a trusted root; the host name is not compared.
    Chain,
    /// The chain to a trusted root and the host name.
    Full,
}

/// Files and the names of the parameters they come from (quoted in errors).
#[derive(Debug, Clone, Copy)]
pub struct TlsFiles<'a> {
    /// The CA file that signs the server certificate; `None` = the system roots.
    pub ca: Option<&'a Path>,
    /// The target parameter that names the CA file (`sslrootcert`, `ssl-ca`).
    pub ca_param: &'a str,
    /// The client certificate (PEM, may hold the chain) to present.
    pub cert: Option<&'a Path>,
    /// The parameter that names the client certificate (`sslcert`, `ssl-cert`).
    pub cert_param: &'a str,
    /// The client certificate's private key (PEM).
    pub key: Option<&'a Path>,
    /// The parameter that names the client key (`sslkey`, `ssl-key`).
    pub key_param: &'a str,
}

/// Builds the client configuration of target `target`: the certificate check `check`, roots
/// from `files.ca` or the system (only loaded when the check needs them), and the client
/// certificate and key when both are given.
#[cfg(feature = "tls")]
pub fn client_config(
    target: &str,
    check: CertCheck,
    files: &TlsFiles<'_>,
) -> Result<Arc<ClientConfig>, EngineError> {
    let err = |m: String| EngineError::config(format!("target '{target}': TLS: {m}"));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| err(e.to_string()))?;
    let builder = match check {
        CertCheck::Full => {
            builder.with_root_certificates(roots(files).map_err(|e| err(e.to_string()))?)
        }
        CertCheck::Chain | CertCheck::None => {
            let verifier = Relaxed {
                roots: match check {
                    CertCheck::Chain => {
                        Some(Arc::new(roots(files).map_err(|e| err(e.to_string()))?))
                    }
                    _ => None,
                },
                algs: provider.signature_verification_algorithms,
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
        }
    };
    let config = match (files.cert, files.key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(_), None) | (None, Some(_)) => {
            return Err(err(format!(
                "{} and {} go together: give both the client certificate and its key",
                files.cert_param, files.key_param
            )))
        }
        (Some(cert), Some(key)) => {
            let chain = load_certs(cert).map_err(|m| err(format!("{}: {m}", files.cert_param)))?;
            if chain.is_empty() {
                return Err(err(format!(
                    "{}: {} holds no certificate",
                    files.cert_param,
                    cert.display()
                )));
            }
            // The key's bytes never reach a message (the PEM parser's errors can quote a
            // line or a base64 fault): only the file name and the kind of fault.
            let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                let why = match e {
                    rustls::pki_types::pem::Error::Io(io) => io.to_string(),
                    rustls::pki_types::pem::Error::NoItemsFound => {
                        "it holds no PEM private key".to_string()
                    }
                    _ => "it is not a valid PEM private key".to_string(),
                };
                err(format!(
                    "{}: cannot read a private key from {}: {why}",
                    files.key_param,
                    key.display()
                ))
            })?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                err(format!(
                    "{} {} and {} {} do not make a usable client certificate: {e}",
                    files.cert_param,
                    cert.display(),
                    files.key_param,
                    key.display()
                ))
            })?
        }
    };
    Ok(Arc::new(config))
}

/// Why certificates could not be read from a file.
#[cfg(feature = "tls")]
#[derive(Debug, thiserror::Error)]
enum CertFileError {
    #[error("no CA certificates found; give the server's CA as {ca_param}=FILE")]
    NoRoots { ca_param: String },
    #[error("{} holds no usable CA certificate", .file.display())]
    NoUsableRoot { file: PathBuf },
    #[error("cannot read {}: {source}", .file.display())]
    Read {
        file: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    #[error("cannot parse {}: {source}", .file.display())]
    Parse {
        file: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
}

/// The trusted roots: the CA file, else the system bundle.
#[cfg(feature = "tls")]
fn roots(files: &TlsFiles<'_>) -> Result<RootCertStore, CertFileError> {
    let file: PathBuf = match files.ca {
        Some(p) => p.to_path_buf(),
        None => std::env::var_os("SSL_CERT_FILE")
            .map(PathBuf::from)
            .or_else(|| {
                SYSTEM_BUNDLES
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())
            })
            .ok_or_else(|| CertFileError::NoRoots {
                ca_param: files.ca_param.to_string(),
            })?,
    };
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(load_certs(&file)?);
    if added == 0 {
        return Err(CertFileError::NoUsableRoot { file });
    }
    Ok(roots)
}

#[cfg(feature = "tls")]
fn load_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, CertFileError> {
    CertificateDer::pem_file_iter(file)
        .map_err(|source| CertFileError::Read {
            file: file.to_path_buf(),
            source,
        })?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| CertFileError::Parse {
            file: file.to_path_buf(),
            source,
        })
}

/// verify-ca (`roots` given): the chain to a trusted root, without the host name;
/// require/prefer (`roots` None): any certificate. Either way the handshake must be signed
/// with the certificate's key.
#[cfg(feature = "tls")]
#[derive(Debug)]
struct Relaxed {
    roots: Option<Arc<RootCertStore>>,
    algs: WebPkiSupportedAlgorithms,
}

#[cfg(feature = "tls")]
impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algs.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// The `tls-server-end-point` channel-binding data of RFC 5929 for the server's leaf
/// certificate `cert` (DER): its hash with the certificate's signature hash, SHA-256 when
/// that is MD5 or SHA-1. `None` when the signature algorithm names no single hash (Ed25519,
/// RSA-PSS, unknown) or the certificate does not parse; channel binding is then impossible.
#[cfg(feature = "tls")]
pub fn tls_server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    use ring::digest;
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
    let (tag, body, _) = der(cert)?;
    if tag != 0x30 {
        return None;
    }
    let (_, _, rest) = der(body)?; // tbsCertificate
    let (tag, alg, _) = der(rest)?; // AlgorithmIdentifier ::= SEQUENCE { OID, params }
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = der(alg)?;
    if tag != 0x06 {
        return None;
    }
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01]; // 1.2.840.113549.1.1
    const ECDSA_SHA2: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03]; // 1.2.840.10045.4.3
    const ECDSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01]; // 1.2.840.10045.4.1
    let algorithm = match oid.split_last() {
        // md5, sha1, sha256, sha224 with RSA: SHA-256 (RFC 5929 §4.1 raises md5/sha1).
        Some((4 | 5 | 11 | 14, head)) if head == RSA => &digest::SHA256,
        Some((12, head)) if head == RSA => &digest::SHA384,
        Some((13, head)) if head == RSA => &digest::SHA512,
        _ if oid == ECDSA_SHA1 => &digest::SHA256,
        Some((1 | 2, head)) if head == ECDSA_SHA2 => &digest::SHA256,
        Some((3, head)) if head == ECDSA_SHA2 => &digest::SHA384,
        Some((4, head)) if head == ECDSA_SHA2 => &digest::SHA512,
        _ => return None,
    };
    Some(digest::digest(algorithm, cert).as_ref().to_vec())
}

/// One DER element: (tag, contents, the bytes after it). Definite lengths only.
#[cfg(feature = "tls")]
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)?;
    let (len, at) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let len = b
            .get(2..2 + n)?
            .iter()
            .fold(0usize, |acc, x| (acc << 8) | usize::from(*x));
        (len, 2 + n)
    };
    let end = at.checked_add(len)?;
    Some((tag, b.get(at..end)?, b.get(end..)?))
}

#[cfg(all(test, feature = "tls"))]
mod tests {
    use super::*;

    use rustls::server::{ClientHello, ResolvesServerCert};
    use rustls::sign::CertifiedKey;
    use rustls::{ClientConnection, ServerConfig, ServerConnection};
    use std::process::Command;

    /// Runs `openssl args` in `dir`; false (skip) when openssl is missing, which fails
    /// under CI.
    fn openssl(dir: &Path, args: &[&str]) -> bool {
        let Ok(out) = Command::new("openssl").current_dir(dir).args(args).output() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "openssl is missing and CI is set: it makes the test certificates"
            );
            eprintln!("SKIPPED: openssl is needed to make test certificates");
            return false;
        };
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        true
    }

    /// A server that presents `cert` and signs the handshake with `key` (which need not
    /// match: a man in the middle with a copied certificate).
    #[derive(Debug)]
    struct Presents(Arc<CertifiedKey>);

    impl ResolvesServerCert for Presents {
        fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
            Some(Arc::clone(&self.0))
        }
    }

    fn server(
        dir: &Path,
        cert: &str,
        key: &str,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Arc<ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = load_certs(&dir.join(cert)).unwrap();
        let key = PrivateKeyDer::from_pem_file(dir.join(key)).unwrap();
        let signer = provider.key_provider.load_private_key(key).unwrap();
        let ck = Arc::new(CertifiedKey::new(chain, signer));
        Arc::new(
            ServerConfig::builder_with_provider(provider)
                .with_protocol_versions(versions)
                .unwrap()
                .with_no_client_auth()
                .with_cert_resolver(Arc::new(Presents(ck))),
        )
    }

    /// A whole handshake in memory; the client's error if it refuses.
    fn handshake(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> Result<(), String> {
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let mut c = ClientConnection::new(client, name).unwrap();
        let mut s = ServerConnection::new(server).unwrap();
        for _ in 0..20 {
            let mut buf = Vec::new();
            while c.wants_write() {
                c.write_tls(&mut buf).unwrap();
            }
            if !buf.is_empty() {
                s.read_tls(&mut &buf[..]).unwrap();
                // A server-side failure shows up as the client's alert next round.
                let _ = s.process_new_packets();
            }
            let mut buf = Vec::new();
            while s.wants_write() {
                s.write_tls(&mut buf).unwrap();
            }
            if !buf.is_empty() {
                c.read_tls(&mut &buf[..]).unwrap();
                c.process_new_packets().map_err(|e| e.to_string())?;
            }
            if !c.is_handshaking() && !s.is_handshaking() {
                return Ok(());
            }
        }
        Err("the handshake did not finish".into())
    }

    /// The certificates of the verifier tests in `dir`: a CA, a server certificate it signed
    /// for `wrong.example` (`srv`), another key (`mitm.key`) and another CA (`other`).
    fn make_certs(dir: &Path) -> bool {
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for ca in ["ca", "other"] {
            let subj = format!("/CN={ca}");
            let (key, crt) = (format!("{ca}.key"), format!("{ca}.crt"));
            let mut args = vec!["req", "-x509"];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &crt, "-days", "2", "-subj", &subj]);
            if !openssl(dir, &args) {
                return false;
            }
        }
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend([
            "-keyout",
            "srv.key",
            "-out",
            "srv.csr",
            "-subj",
            "/CN=wrong.example",
        ]);
        openssl(dir, &args);
        std::fs::write(
            dir.join("srv.ext"),
            "subjectAltName=DNS:wrong.example\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                "srv.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "srv.crt",
                "-days",
                "2",
                "-extfile",
                "srv.ext",
            ],
        );
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend([
            "-keyout", "mitm.key", "-out", "mitm.csr", "-subj", "/CN=mitm",
        ]);
        openssl(dir, &args);
        true
    }

    #[test]
    fn each_check_against_a_wrong_name_a_wrong_ca_and_a_wrong_key() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        if !make_certs(d) {
            return;
        }
        let ca = d.join("ca.crt");
        let other = d.join("other.crt");
        let client = |check, ca: Option<&Path>| client_config("t", check, &files(ca)).unwrap();
        for versions in [
            &[&rustls::version::TLS13][..],
            &[&rustls::version::TLS12][..],
        ] {
            let good = server(d, "srv.crt", "srv.key", versions);
            // require: any certificate…
            handshake(client(CertCheck::None, None), Arc::clone(&good)).unwrap();
            // …but the handshake must be signed by its key: a copied certificate fails.
            let mitm = server(d, "srv.crt", "mitm.key", versions);
            for check in [CertCheck::None, CertCheck::Chain] {
                let e = handshake(client(check, Some(&ca)), Arc::clone(&mitm)).unwrap_err();
                assert!(e.to_lowercase().contains("signature"), "{check:?}: {e}");
            }
            // verify-ca: the trusted chain, any name.
            handshake(client(CertCheck::Chain, Some(&ca)), Arc::clone(&good)).unwrap();
            let e =
                handshake(client(CertCheck::Chain, Some(&other)), Arc::clone(&good)).unwrap_err();
            assert!(e.to_lowercase().contains("issuer"), "{e}");
            // verify-full: the name must match too.
            let e = handshake(client(CertCheck::Full, Some(&ca)), Arc::clone(&good)).unwrap_err();
            assert!(e.contains("not valid for name"), "{e}");
        }
    }

    fn files(ca: Option<&Path>) -> TlsFiles<'_> {
        TlsFiles {
            ca,
            ca_param: "sslrootcert",
            cert: None,
            cert_param: "sslcert",
            key: None,
            key_param: "sslkey",
        }
    }

    #[test]
    fn a_file_without_certificates_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("empty.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        for check in [CertCheck::Full, CertCheck::Chain] {
            let e = client_config("t", check, &files(Some(&f)))
                .unwrap_err()
                .to_string();
            assert!(e.contains("empty.pem") && e.contains("no usable CA"), "{e}");
        }
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let e = client_config(
            "t",
            CertCheck::Full,
            &files(Some(Path::new("/nonexistent/ca.pem"))),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }

    #[test]
    fn no_check_needs_no_roots() {
        // A CA file that does not exist is never read when nothing is checked.
        client_config(
            "t",
            CertCheck::None,
            &files(Some(Path::new("/nonexistent/ca.pem"))),
        )
        .unwrap();
    }

    #[test]
    fn a_certificate_without_its_key_names_both_parameters() {
        let mut f = files(None);
        f.cert = Some(Path::new("/x/client.crt"));
        let e = client_config("t", CertCheck::None, &f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslcert and sslkey go together"), "{e}");
    }

    #[test]
    fn a_bad_key_file_is_named_and_its_bytes_are_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("c.pem");
        let key = dir.path().join("k.pem");
        // A certificate section (its DER is not checked here) and a broken key: the
        // secret-looking text must not be echoed.
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        std::fs::write(
            &key,
            "-----BEGIN PRIVATE KEY-----\nSECRETKEYBYTES!!\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let mut f = files(None);
        f.cert = Some(&cert);
        f.key = Some(&key);
        let e = client_config("t", CertCheck::None, &f)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sslkey") && e.contains("k.pem") && e.contains("not a valid PEM"),
            "{e}"
        );
        assert!(!e.contains("SECRETKEYBYTES"), "{e}");
    }

    #[test]
    fn modes_parse_in_each_spelling_and_bad_values_list_the_valid_ones() {
        assert_eq!(
            TlsMode::parse("t", "sslmode", "verify-ca", PG_MODES).unwrap(),
            TlsMode::VerifyCa
        );
        assert_eq!(
            TlsMode::parse("t", "ssl-mode", "verify_identity", MYSQL_MODES).unwrap(),
            TlsMode::VerifyFull
        );
        let e = TlsMode::parse("t", "sslmode", "allow-ish", PG_MODES)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sslmode=allow-ish")
                && e.contains("disable, prefer, require, verify-ca, verify-full"),
            "{e}"
        );
        assert_eq!(TlsMode::Require.check(), CertCheck::None);
        assert_eq!(TlsMode::Require.check_with_ca(true), CertCheck::Chain);
        assert_eq!(TlsMode::Prefer.check_with_ca(true), CertCheck::Chain);
        assert_eq!(TlsMode::VerifyFull.check_with_ca(true), CertCheck::Full);
        assert_eq!(TlsMode::VerifyCa.check(), CertCheck::Chain);
        assert!(!TlsMode::Disable.wants_tls());
    }

    /// A minimal certificate shape: SEQUENCE { SEQUENCE {}, SEQUENCE { OID }, BIT STRING }.
    fn fake_cert(oid: &[u8]) -> Vec<u8> {
        let mut alg = vec![0x06, oid.len() as u8];
        alg.extend_from_slice(oid);
        let mut body = vec![0x30, 0x00, 0x30, alg.len() as u8];
        body.extend_from_slice(&alg);
        body.extend_from_slice(&[0x03, 0x01, 0x00]);
        let mut c = vec![0x30, body.len() as u8];
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn end_point_hash_follows_the_signature_hash() {
        let rsa = |n: u8| {
            let mut o = vec![0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
            o.push(n);
            fake_cert(&o)
        };
        let len = |c: Vec<u8>| tls_server_end_point(&c).map(|h| h.len());
        assert_eq!(len(rsa(5)), Some(32), "sha1WithRSA is raised to SHA-256");
        assert_eq!(len(rsa(11)), Some(32));
        assert_eq!(len(rsa(12)), Some(48));
        assert_eq!(len(rsa(13)), Some(64));
        assert_eq!(len(rsa(10)), None, "RSA-PSS names its hash in parameters");
        let ec = |n: u8| fake_cert(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, n]);
        assert_eq!(len(ec(2)), Some(32));
        assert_eq!(len(ec(3)), Some(48));
        assert_eq!(len(fake_cert(&[0x2b, 0x65, 0x70])), None, "Ed25519");
        let c = rsa(11);
        assert_eq!(
            tls_server_end_point(&c).unwrap(),
            ring::digest::digest(&ring::digest::SHA256, &c).as_ref()
        );
        assert_eq!(tls_server_end_point(&c[..c.len() - 1]), None);
        assert_eq!(tls_server_end_point(&[]), None);
    }
}
