//! The verifying rustls client configuration shared by the server engines (`--tls`).
//!
//! The server certificate must chain to a trusted root and name the host dbdelta connects
//! to; there is no "accept any certificate" mode. Roots come from a CA file the target names
//! (each engine has its own parameter, e.g. `sslrootcert=` or `ssl_ca=`), else the system
//! bundle (`SSL_CERT_FILE` or the usual distribution paths).

use crate::EngineError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// System CA bundles, first found wins.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// Builds the client configuration of target `target`, trusting the CA certificates in `ca`
/// or else the system roots. `ca_param` is the target parameter that names a CA file, quoted
/// in the error that asks for one.
pub fn client_config(
    target: &str,
    ca: Option<&Path>,
    ca_param: &str,
) -> Result<Arc<ClientConfig>, EngineError> {
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
                err(format!(
                    "no CA certificates found; give the server's CA as {ca_param}=FILE"
                ))
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
    Ok(Arc::new(config))
}

fn load_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_file_iter(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot parse {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_certificates_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("empty.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        let e = client_config("t", Some(&f), "ssl_ca")
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty.pem") && e.contains("no usable CA"), "{e}");
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let e = client_config("t", Some(Path::new("/nonexistent/ca.pem")), "sslrootcert")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
