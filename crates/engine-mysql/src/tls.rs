//! TLS with rustls and ring, configured like libmysqlclient: `ssl-mode=DISABLED|PREFERRED|
//! REQUIRED|VERIFY_CA|VERIFY_IDENTITY` (`--tls` alone means VERIFY_IDENTITY; neither means
//! DISABLED), `ssl-ca=FILE` (the CA; else the system bundle), and on external targets
//! `ssl-cert=FILE&ssl-key=FILE` (a client certificate, e.g. for a `REQUIRE X509` user).
//! As everywhere in dbdelta, a given CA makes PREFERRED and REQUIRED check the chain.
//! The certificate checks live in `dbdelta_kit::tls`, shared with the PostgreSQL engine.
//!
//! MySQL's auto-generated server certificates name no host: VERIFY_CA (with their
//! `ca.pem` as `ssl-ca`) accepts them, VERIFY_IDENTITY cannot.
//!
//! On managed targets `ssl_ca`, `ssl_cert` and `ssl_key` (any of `-`/`_`) are the server's
//! my.cnf settings; only `ssl-mode` is the client's. Managed servers without their own
//! certificate get a throwaway CA and a server certificate for 127.0.0.1, made with the
//! `openssl` command in the scratch directory, and the client trusts only that CA.

use crate::client::TlsClient;
use dbdelta_engine::EngineError;
use dbdelta_kit::tls::{TlsFiles, TlsMode, MYSQL_MODES};
use dbdelta_model::TargetSpec;
use rustls::pki_types::ServerName;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The TLS mode parameter.
pub(crate) const SSL_MODE: &str = "ssl-mode";
/// The CA file parameter (on managed targets also the server's `ssl_ca`).
pub(crate) const SSL_CA: &str = "ssl-ca";
/// The client certificate parameter of external targets.
pub(crate) const SSL_CERT: &str = "ssl-cert";
/// The client key parameter of external targets.
pub(crate) const SSL_KEY: &str = "ssl-key";

/// `key` as the client spells options: `-` for `_`, lower case.
fn norm(key: &str) -> String {
    key.replace('_', "-").to_ascii_lowercase()
}

/// True for the client's TLS parameter of every target (`ssl-mode`): never a server setting.
pub(crate) fn is_client_param(key: &str) -> bool {
    norm(key) == SSL_MODE
}

/// True for the TLS parameters of an external target.
pub(crate) fn is_external_param(key: &str) -> bool {
    [SSL_MODE, SSL_CA, SSL_CERT, SSL_KEY].contains(&norm(key).as_str())
}

/// The value of TLS parameter `name` of `spec` (`-` and `_` alike, any case).
fn param<'a>(spec: &'a TargetSpec, name: &str) -> Option<&'a str> {
    spec.params
        .iter()
        .find(|(k, _)| norm(k) == name)
        .map(|(_, v)| v.as_str())
}

/// The TLS mode of `spec`: `ssl-mode` when given, else VERIFY_IDENTITY with `--tls`, else
/// DISABLED. A bad value names the parameter and the valid values.
pub(crate) fn mode(spec: &TargetSpec, tls_flag: bool) -> Result<TlsMode, EngineError> {
    match param(spec, SSL_MODE) {
        Some(v) => TlsMode::parse(&spec.name, SSL_MODE, v, MYSQL_MODES),
        None if tls_flag => Ok(TlsMode::VerifyFull),
        None => Ok(TlsMode::Disable),
    }
}

/// The TLS client of an external target on `host`, or `None` when its mode is DISABLED
/// (then a CA or client certificate is an error: they would be silently unused).
pub(crate) fn external(
    spec: &TargetSpec,
    host: &str,
    tls_flag: bool,
) -> Result<Option<TlsClient>, EngineError> {
    let target = spec.name.as_str();
    let mode = mode(spec, tls_flag)?;
    let path = |name: &str| param(spec, name).map(PathBuf::from);
    let (ca, cert, key) = (path(SSL_CA), path(SSL_CERT), path(SSL_KEY));
    if !mode.wants_tls() {
        if let Some((k, _)) = spec
            .params
            .iter()
            .find(|(k, _)| is_external_param(k) && !is_client_param(k))
        {
            return Err(EngineError::config(format!(
                "target '{target}': '{k}' is for TLS connections; add --tls or {SSL_MODE}=VERIFY_CA \
                 (or another mode than DISABLED), or drop it"
            )));
        }
        return Ok(None);
    }
    let files = TlsFiles {
        ca: ca.as_deref(),
        ca_param: SSL_CA,
        cert: cert.as_deref(),
        cert_param: SSL_CERT,
        key: key.as_deref(),
        key_param: SSL_KEY,
    };
    client(target, host, mode, &files).map(Some)
}

/// The TLS client for `host` under `mode` (not DISABLED) with `files`.
pub(crate) fn client(
    target: &str,
    host: &str,
    mode: TlsMode,
    files: &TlsFiles<'_>,
) -> Result<TlsClient, EngineError> {
    let check = mode.check_with_ca(files.ca.is_some());
    let config = dbdelta_kit::tls::client_config(target, check, files)?;
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        EngineError::config(format!(
            "target '{target}': TLS: '{host}' is not a valid server name: {e}"
        ))
    })?;
    Ok(TlsClient {
        config,
        name,
        optional: mode == TlsMode::Prefer,
    })
}

/// The files of a managed target's client: its CA only (never a client certificate).
pub(crate) fn managed_files(ca: &Path) -> TlsFiles<'_> {
    TlsFiles {
        ca: Some(ca),
        ca_param: SSL_CA,
        cert: None,
        cert_param: SSL_CERT,
        key: None,
        key_param: SSL_KEY,
    }
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
