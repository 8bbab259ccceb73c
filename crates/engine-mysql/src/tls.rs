//! TLS (`--tls`) with rustls and ring. The server certificate must chain to a trusted root
//! and name the host dbdelta connects to; there is no "accept any certificate" mode.
//!
//! Roots come from the target's `ssl_ca=FILE` parameter (external targets), else the system
//! bundle (`SSL_CERT_FILE` or the usual distribution paths). Managed servers get a throwaway
//! CA and a server certificate for 127.0.0.1, made with the `openssl` command in the scratch
//! directory, and the client trusts only that CA.

use crate::client::TlsClient;
use dbdelta_engine::EngineError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

/// System CA bundles, first found wins.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The verifying TLS client for `host`, trusting `ca` or else the system roots.
pub(crate) fn client(
    target: &str,
    host: &str,
    ca: Option<&Path>,
) -> Result<TlsClient, EngineError> {
    let err = |m: String| EngineError::config(format!("target '{target}': TLS: {m}"));
    let file: PathBuf = match ca {
        Some(p) => p.to_path_buf(),
        None => std::env::var_os("SSL_CERT_FILE")
            .map(PathBuf::from)
            .or_else(|| {
                SYSTEM_BUNDLES
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())
            })
            .ok_or_else(|| {
                err("no CA certificates found; give the server's CA as ssl_ca=FILE".into())
            })?,
    };
    let mut roots = RootCertStore::empty();
    let certs = load_certs(&file).map_err(&err)?;
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(err(format!(
            "{} holds no usable CA certificate",
            file.display()
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| err(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| err(format!("'{host}' is not a valid server name: {e}")))?;
    Ok(TlsClient {
        config: Arc::new(config),
        name,
    })
}

fn load_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_file_iter(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot parse {}: {e}", file.display()))
}

/// Files of a generated certificate set.
#[derive(Debug, Clone)]
pub(crate) struct GeneratedCerts {
    /// The throwaway CA's certificate (the client's only root).
    pub ca: PathBuf,
    /// The server certificate, for 127.0.0.1 and localhost.
    pub cert: PathBuf,
    /// The server's private key.
    pub key: PathBuf,
}

/// Makes a throwaway CA and a server certificate for 127.0.0.1/localhost in `dir` with the
/// `openssl` command.
pub(crate) fn generate(target: &str, dir: &Path) -> Result<GeneratedCerts, EngineError> {
    let err = |m: String| {
        EngineError::config(format!(
            "target '{target}': cannot make a TLS certificate for the managed server: {m}"
        ))
    };
    fs::create_dir_all(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let ext = dir.join("server.ext");
    fs::write(
        &ext,
        "basicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\n\
         subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .map_err(|e| err(format!("{}: {e}", ext.display())))?;
    let run = |args: &[&str]| -> Result<(), EngineError> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| err(format!("cannot run openssl: {e} (apt-get install openssl)")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(err(format!(
                "openssl {} failed: {}",
                args.first().copied().unwrap_or_default(),
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    };
    let days = "3650";
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        days,
        "-subj",
        "/CN=dbdelta throwaway CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ])?;
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ])?;
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        days,
        "-extfile",
        "server.ext",
    ])?;
    Ok(GeneratedCerts {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    })
}
