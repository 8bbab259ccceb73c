//! TLS with rustls, configured like libpq: `sslmode=disable|prefer|require|verify-ca|verify-full`
//! (`--tls` alone means verify-full), `sslrootcert=FILE` (the CA; else the system bundle),
//! `sslcert=FILE&sslkey=FILE` (a client certificate). As in libpq, `prefer` and `require`
//! with an `sslrootcert` check the chain as verify-ca does. The certificate checks themselves
//! live in `dbdelta_kit::tls`, shared with the MySQL engine.

use crate::auth::Binding;
use crate::pgerror::{io_error, protocol_error};
use crate::proto::frontend;
use crate::wire::{Stream, Wire};
use dbdelta_engine::EngineError;
use dbdelta_kit::tls::{TlsFiles, TlsMode, PG_MODES};
use dbdelta_model::TargetSpec;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::path::PathBuf;
use std::sync::Arc;

/// The TLS client configuration of one target.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
    /// The sslmode in force (never `Disable`: then there is no setup).
    pub mode: TlsMode,
}

/// The sslmode of `spec`: the `sslmode` parameter, else verify-full with `--tls`, else
/// disable.
pub(crate) fn mode(spec: &TargetSpec, tls_flag: bool) -> Result<TlsMode, EngineError> {
    match spec.param("sslmode") {
        Some(v) => TlsMode::parse(&spec.name, "sslmode", v, PG_MODES),
        None if tls_flag => Ok(TlsMode::VerifyFull),
        None => Ok(TlsMode::Disable),
    }
}

/// Builds the client configuration for `spec` under `mode` (not `Disable`).
pub(crate) fn setup(spec: &TargetSpec, mode: TlsMode) -> Result<TlsSetup, EngineError> {
    let path = |k: &str| spec.param(k).map(PathBuf::from);
    let (ca, cert, key) = (path("sslrootcert"), path("sslcert"), path("sslkey"));
    // libpq: with a root certificate, prefer and require check the chain.
    let check = mode.check_with_ca(ca.is_some());
    let files = TlsFiles {
        ca: ca.as_deref(),
        ca_param: "sslrootcert",
        cert: cert.as_deref(),
        cert_param: "sslcert",
        key: key.as_deref(),
        key_param: "sslkey",
    };
    Ok(TlsSetup {
        config: dbdelta_kit::tls::client_config(&spec.name, check, &files)?,
        mode,
    })
}

/// Sends SSLRequest on a fresh connection and completes the TLS handshake. Under
/// `sslmode=prefer` a server that answers 'N' keeps the plain connection. Returns the wire
/// and what it offers channel binding.
pub(crate) fn start(
    mut wire: Wire,
    setup: &TlsSetup,
    host: &str,
    peer: &str,
) -> Result<(Wire, Binding), EngineError> {
    frontend::ssl_request(&mut wire.wbuf);
    wire.send().map_err(|e| io_error("write", e))?;
    match wire.read_byte().map_err(|e| io_error("read", e))? {
        b'S' => {}
        b'N' if setup.mode == TlsMode::Prefer => return Ok((wire, Binding::default())),
        b'N' => {
            return Err(EngineError::config(format!(
                "postgres at {peer} does not accept TLS connections (ssl = off); enable ssl on the server, \
                 or use sslmode=prefer or sslmode=disable (or drop --tls)"
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
                "TLS handshake with postgres at {peer} failed: {e}; check the server certificate, \
                 sslrootcert and sslmode (verify-ca skips the host name, require checks no certificate)"
            ))
        })?;
    }
    let end_point = tls
        .conn
        .peer_certificates()
        .and_then(|c| c.first())
        .and_then(|leaf| dbdelta_kit::tls::tls_server_end_point(leaf));
    let binding = Binding {
        tls: true,
        end_point,
        ..Binding::default()
    };
    Ok((Wire::new(Stream::Tls(Box::new(tls))), binding))
}
