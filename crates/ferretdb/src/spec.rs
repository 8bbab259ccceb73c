//! A `ferretdb:` target's parameters: which FerretDB, which backend, which authentication;
//! every other parameter is the MongoDB client's (`w=`, `j=`, …) and is checked by it.
//!
//! ```text
//! f=ferretdb                                   FerretDB v1.24.2 on SQLite files in the run
//! f=ferretdb:?version=v1.24.2&backend=sqlite   the same, spelled out
//! fp=ferretdb:?backend=postgresql              on a PostgreSQL dbdelta starts beside it
//!                                              (pg_bin=/usr/lib/postgresql/15/bin)
//! fe=ferretdb:?backend_url=postgres://u@db1:5432/ferretdb   on a running PostgreSQL
//! fs=ferretdb:?auth=scram                      SCRAM-SHA-256 (FerretDB's new authentication)
//! fb=ferretdb:?binary=/opt/ferretdb            a FerretDB binary built elsewhere
//! ```

use crate::binary::{check_version, DEFAULT_VERSION};
use dbdelta_engine::EngineError;
use dbdelta_kit::params::config_err;
use dbdelta_model::{Location, Secret, TargetSpec};
use std::path::PathBuf;

/// The engine name of a managed FerretDB target.
pub const ENGINE: &str = "ferretdb";

/// The managed PostgreSQL a `backend=postgresql` target starts unless `pg_bin=` says
/// otherwise: the distribution's PostgreSQL 15.
pub const DEFAULT_PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Where FerretDB stores.
#[derive(Debug, Clone, PartialEq)]
pub enum Backend {
    /// SQLite files in the target's scratch directory (`--handler=sqlite`).
    Sqlite,
    /// A PostgreSQL server dbdelta starts from this bin directory.
    ManagedPostgres {
        /// Its bin directory.
        bin: PathBuf,
    },
    /// A PostgreSQL server already running (its password from `PGPASSWORD`).
    ExternalPostgres {
        /// `--postgresql-url`.
        url: Secret,
    },
}

/// How clients authenticate to FerretDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// No authentication (FerretDB v1's default; PLAIN credentials would be passed on to a
    /// PostgreSQL backend).
    None,
    /// SCRAM-SHA-256 with a user FerretDB creates at start (`--test-enable-new-auth`).
    Scram,
}

/// A validated `ferretdb:` target.
#[derive(Debug, Clone, PartialEq)]
pub struct FerretSpec {
    /// FerretDB's release tag.
    pub version: String,
    /// A FerretDB binary to run instead of building `version` (`binary=`).
    pub binary: Option<PathBuf>,
    /// Its backend.
    pub backend: Backend,
    /// Its authentication.
    pub auth: Auth,
    /// A requested loopback port.
    pub port: Option<u16>,
    /// The MongoDB client's parameters (`w=`, `j=`, `readPreference=`, …).
    pub client_params: Vec<(String, String)>,
}

/// The parameters a `ferretdb:` target itself reads; the rest go to the client.
pub const SERVER_PARAMS: &[&str] = &[
    "version",
    "binary",
    "backend",
    "backend_url",
    "pg_bin",
    "auth",
    "port",
];

impl FerretSpec {
    /// Parses and checks `spec` (engine `ferretdb`). Errors name the target, the parameter
    /// and the fix.
    pub fn parse(spec: &TargetSpec) -> Result<FerretSpec, EngineError> {
        if !matches!(spec.location, Location::Default) {
            return Err(config_err(
                spec,
                "ferretdb takes its settings as parameters (ferretdb:?backend=sqlite or \
                 ferretdb:?backend=postgresql), not a path or URL; for a FerretDB that is \
                 already running use a mongodb:// target",
            ));
        }
        let version = spec.param("version").unwrap_or(DEFAULT_VERSION).to_string();
        check_version(&version).map_err(|e| config_err(spec, e.to_string()))?;
        let binary = spec.param("binary").map(PathBuf::from);
        if let Some(b) = &binary {
            if spec.param("version").is_some() {
                return Err(config_err(
                    spec,
                    "binary= runs that FerretDB and version= builds one: drop one of them",
                ));
            }
            if !b.is_file() {
                return Err(config_err(
                    spec,
                    format!(
                        "binary={} is not a file: point it at a FerretDB server binary, or drop it to build FerretDB {DEFAULT_VERSION}",
                        b.display()
                    ),
                ));
            }
        }
        let backend_url = spec.param("backend_url");
        let pg_bin = spec.param("pg_bin");
        let backend = match (spec.param("backend"), backend_url) {
            (None | Some("sqlite"), None) => {
                if pg_bin.is_some() {
                    return Err(config_err(
                        spec,
                        "pg_bin= names the PostgreSQL of backend=postgresql; add backend=postgresql or drop pg_bin=",
                    ));
                }
                Backend::Sqlite
            }
            (Some("sqlite"), Some(_)) => {
                return Err(config_err(
                    spec,
                    "backend=sqlite and backend_url= do not go together: backend_url= is a PostgreSQL URL; drop one of them",
                ))
            }
            (None | Some("postgresql" | "postgres"), Some(url)) => {
                if pg_bin.is_some() {
                    return Err(config_err(
                        spec,
                        "backend_url= uses a running PostgreSQL and pg_bin= starts one; drop one of them",
                    ));
                }
                Backend::ExternalPostgres {
                    url: Secret::new(check_backend_url(spec, url)?),
                }
            }
            (Some("postgresql" | "postgres"), None) => {
                let bin = PathBuf::from(pg_bin.unwrap_or(DEFAULT_PG_BIN));
                if !bin.join("postgres").is_file() || !bin.join("initdb").is_file() {
                    return Err(config_err(
                        spec,
                        format!(
                            "backend=postgresql starts a PostgreSQL from {}, which has no initdb and postgres; install PostgreSQL (apt-get install postgresql-15), point pg_bin= at its bin directory, or give backend_url= of a running one",
                            bin.display()
                        ),
                    ));
                }
                Backend::ManagedPostgres { bin }
            }
            (Some(other), _) => {
                return Err(config_err(
                    spec,
                    format!("backend={other} is not a FerretDB backend dbdelta runs: use sqlite or postgresql"),
                ))
            }
        };
        let auth = match spec.param("auth") {
            None | Some("none") => Auth::None,
            Some("scram") => Auth::Scram,
            Some(other) => {
                return Err(config_err(
                    spec,
                    format!("auth={other} is not an authentication dbdelta sets up on FerretDB: use none or scram"),
                ))
            }
        };
        let port = match spec.param("port") {
            None => None,
            Some(v) => Some(v.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                config_err(spec, format!("port={v} is not a TCP port number (1-65535)"))
            })?),
        };
        let client_params = spec
            .params
            .iter()
            .filter(|(k, _)| !SERVER_PARAMS.contains(&k.as_str()))
            .cloned()
            .collect();
        Ok(FerretSpec {
            version,
            binary,
            backend,
            auth,
            port,
            client_params,
        })
    }
}

/// A `backend_url=`: a `postgres://` or `postgresql://` URL without a password (target
/// parameters are printed and stored; the password comes from `PGPASSWORD`, which
/// FerretDB's PostgreSQL driver reads).
fn check_backend_url<'a>(spec: &TargetSpec, url: &'a str) -> Result<&'a str, EngineError> {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return Err(config_err(
            spec,
            format!("backend_url={url} is not a PostgreSQL URL: write postgres://user@host:port/database"),
        ));
    };
    let authority = rest.split('/').next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        if userinfo.contains(':') {
            return Err(config_err(
                spec,
                "backend_url= holds a password, which would be printed and stored with the run: drop it from the URL and set PGPASSWORD",
            ));
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FerretSpec, String> {
        FerretSpec::parse(&TargetSpec::parse(text).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_client_params() {
        let s = parse("f=ferretdb").unwrap();
        assert_eq!(s.version, "v1.24.2");
        assert_eq!(s.backend, Backend::Sqlite);
        assert_eq!(s.auth, Auth::None);
        let s = parse("f=ferretdb:?backend=sqlite&w=1&j=false&port=27018&auth=scram").unwrap();
        assert_eq!(
            s.client_params,
            [
                ("w".to_string(), "1".to_string()),
                ("j".into(), "false".into())
            ]
        );
        assert_eq!((s.port, s.auth), (Some(27018), Auth::Scram));
        let s = parse("f=ferretdb:?backend_url=postgres://u@db1:5432/fd").unwrap();
        assert!(matches!(s.backend, Backend::ExternalPostgres { .. }));
    }

    #[test]
    fn bad_specs_name_the_parameter() {
        for (spec, needle) in [
            ("f=ferretdb:?version=latest", "version=latest is not"),
            ("f=ferretdb:?backend=mysql", "backend=mysql is not"),
            ("f=ferretdb:?auth=plain", "auth=plain is not"),
            ("f=ferretdb:?port=0", "port=0 is not"),
            ("f=ferretdb:?pg_bin=/x", "pg_bin= names"),
            (
                "f=ferretdb:?backend=sqlite&backend_url=postgres://h/d",
                "do not go together",
            ),
            (
                "f=ferretdb:?backend_url=mysql://h/d",
                "not a PostgreSQL URL",
            ),
            (
                "f=ferretdb:?backend_url=postgres://u:pw@h/d",
                "set PGPASSWORD",
            ),
            (
                "f=ferretdb:?backend=postgresql&pg_bin=/nonexistent",
                "has no initdb and postgres",
            ),
            ("f=ferretdb:/usr/bin", "not a path or URL"),
            ("f=ferretdb:?binary=/nonexistent", "is not a file"),
            (
                "f=ferretdb:?binary=/bin/sh&version=v1.24.2",
                "drop one of them",
            ),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(e.starts_with("target 'f'"), "{spec}: {e}");
        }
    }
}
