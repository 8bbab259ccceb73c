//! TLS (`--tls`) with rustls and ring. The server certificate must chain to a trusted root
//! and name the host dbdelta connects to; there is no "accept any certificate" mode.
//!
//! Roots come from the target's `ssl_ca=FILE` parameter (external targets), else the system
//! bundle (`SSL_CERT_FILE` or the usual distribution paths). Managed servers get a throwaway
//! CA and a server certificate for 127.0.0.1, made with the `openssl` command in the scratch
//! directory, and the client trusts only that CA.

use crate::client::TlsClient;
use dbdelta_engine::EngineError;
use rustls::pki_types::ServerName;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The verifying TLS client for `host`, trusting `ca` or else the system roots.
pub(crate) fn client(
    target: &str,
    host: &str,
    ca: Option<&Path>,
) -> Result<TlsClient, EngineError> {
    let config = dbdelta_engine::tls::client_config(target, ca, "ssl_ca")?;
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        EngineError::config(format!(
            "target '{target}': TLS: '{host}' is not a valid server name: {e}"
        ))
    })?;
    Ok(TlsClient { config, name })
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
