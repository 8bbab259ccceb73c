//! TLS (`--tls`) with rustls, like libpq's `sslmode=verify-full`: the server certificate must
//! chain to a trusted root and name the host we connect to. Roots come from the target's
//! `sslrootcert=FILE` parameter, else the system bundle (`SSL_CERT_FILE` or the usual
//! distribution paths). There is no "accept any certificate" mode.

use crate::pgerror::{io_error, protocol_error};
use crate::wire::{Stream, Wire};
use dbdelta_engine::EngineError;
use dbdelta_model::TargetSpec;
use postgres_protocol::message::frontend;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// System CA bundles, first found wins.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The TLS client configuration of one target.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
}

/// Builds the client configuration for `spec`.
pub(crate) fn setup(spec: &TargetSpec) -> Result<TlsSetup, EngineError> {
    let err = |m: String| EngineError::config(format!("target '{}': TLS: {m}", spec.name));
    let file: PathBuf = match spec.param("sslrootcert") {
        Some(p) => PathBuf::from(p),
        None => std::env::var_os("SSL_CERT_FILE")
            .map(PathBuf::from)
            .or_else(|| {
                SYSTEM_BUNDLES
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())
            })
            .ok_or_else(|| {
                err("no CA certificates found; give the server's CA as sslrootcert=FILE".into())
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
    Ok(TlsSetup {
        config: Arc::new(config),
    })
}

fn load_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_file_iter(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot parse {}: {e}", file.display()))
}

/// Sends SSLRequest on a fresh connection and completes the TLS handshake.
pub(crate) fn start(
    mut wire: Wire,
    setup: &TlsSetup,
    host: &str,
    peer: &str,
) -> Result<Wire, EngineError> {
    frontend::ssl_request(&mut wire.wbuf);
    wire.send().map_err(|e| io_error("write", e))?;
    match wire.read_byte().map_err(|e| io_error("read", e))? {
        b'S' => {}
        b'N' => {
            return Err(EngineError::config(format!(
                "postgres at {peer} does not accept TLS connections (ssl = off); drop --tls or enable ssl on the server"
            )))
        }
        _ => return Err(protocol_error("unexpected answer to SSLRequest")),
    }
    // Bytes after 'S' would be unencrypted injection (CVE-2021-23222): refuse.
    if wire.has_buffered() {
        return Err(protocol_error("unencrypted data after the TLS answer"));
    }
    let Stream::Tcp(tcp) = wire.into_stream() else {
        return Err(EngineError::config("TLS needs a TCP connection"));
    };
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        EngineError::config(format!("TLS: '{host}' is not a valid server name: {e}"))
    })?;
    let conn = ClientConnection::new(setup.config.clone(), name)
        .map_err(|e| EngineError::config(format!("TLS: {e}")))?;
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).map_err(|e| {
            EngineError::config(format!(
                "TLS handshake with postgres at {peer} failed: {e}; check the server certificate and sslrootcert"
            ))
        })?;
    }
    Ok(Wire::new(Stream::Tls(Box::new(tls))))
}
