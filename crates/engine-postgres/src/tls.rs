//! TLS (`--tls`) with rustls, like libpq's `sslmode=verify-full`: the server certificate must
//! chain to a trusted root and name the host we connect to. Roots come from the target's
//! `sslrootcert=FILE` parameter, else the system bundle (`SSL_CERT_FILE` or the usual
//! distribution paths), through `dbdelta_engine::tls`. There is no "accept any certificate" mode.

use crate::pgerror::{io_error, protocol_error};
use crate::wire::{Stream, Wire};
use dbdelta_engine::EngineError;
use dbdelta_model::TargetSpec;
use postgres_protocol::message::frontend;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::path::PathBuf;
use std::sync::Arc;

/// The TLS client configuration of one target.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
}

/// Builds the client configuration for `spec` (roots from `sslrootcert=FILE` or the system).
pub(crate) fn setup(spec: &TargetSpec) -> Result<TlsSetup, EngineError> {
    let ca = spec.param("sslrootcert").map(PathBuf::from);
    Ok(TlsSetup {
        config: dbdelta_engine::tls::client_config(&spec.name, ca.as_deref(), "sslrootcert")?,
    })
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
