//! External targets: `postgres://user[:password]@host[:port]/db`, an already running server.
//! A host starting with `/` is a Unix socket directory. The password comes from the URL,
//! else `PGPASSWORD`, else the pgpass file; it is never printed.

use crate::auth::{pgpass::PgpassQuery, resolve_password};
use crate::conn::{tls_optional, Addr, ConnParams, TlsOpt};
use dbdelta_engine::{EngineError, OpenOptions};
use dbdelta_model::{Location, TargetSpec};
use std::path::PathBuf;
use std::time::Duration;

/// Target parameters an external target accepts (they configure the client).
const KNOWN: &[&str] = &[
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "channel_binding",
    "connect_timeout",
];

/// `connect_timeout=SECS` of an external target (default 10): 1 to 86400 (a day), since
/// `Instant + Duration` past the clock's range panics.
pub(crate) fn connect_timeout(spec: &TargetSpec) -> Result<Duration, EngineError> {
    match spec.param("connect_timeout") {
        None => Ok(Duration::from_secs(10)),
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|s| (1..=86_400).contains(s))
            .map(Duration::from_secs)
            .ok_or_else(|| {
                EngineError::config(format!(
                    "target '{}': connect_timeout={v} must be a number of seconds from 1 to \
                     86400 (a day)",
                    spec.name
                ))
            }),
    }
}

/// Connection parameters for an external target.
pub(crate) fn params(
    spec: &TargetSpec,
    opts: &OpenOptions,
    mut tls: TlsOpt,
) -> Result<ConnParams, EngineError> {
    let Location::Url {
        user,
        password,
        host,
        port,
        database,
    } = &spec.location
    else {
        return Err(EngineError::config(format!(
            "target '{}': not a postgres:// URL",
            spec.name
        )));
    };
    for (k, _) in &spec.params {
        if !KNOWN.contains(&k.as_str()) {
            return Err(EngineError::config(format!(
                "target '{}': unknown parameter '{k}' for an external postgres target (known: {}); \
                 server settings can only be given to managed targets (postgres:/path/to/bin?setting=value)",
                spec.name,
                KNOWN.join(", ")
            )));
        }
    }
    let connect_timeout = connect_timeout(spec)?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let user = user
        .clone()
        .or_else(|| env("PGUSER"))
        .or_else(|| env("USER"))
        .unwrap_or_else(|| "postgres".to_string());
    let port = match port {
        Some(p) => *p,
        None => env("PGPORT").and_then(|p| p.parse().ok()).unwrap_or(5432),
    };
    let database = database.clone().unwrap_or_else(|| opts.database.clone());
    let (addr, pgpass_host) = if host.starts_with('/') {
        let path = PathBuf::from(host).join(format!(".s.PGSQL.{port}"));
        (Addr::Unix { path }, "localhost".to_string())
    } else {
        (
            Addr::Tcp {
                host: host.clone(),
                port,
            },
            host.clone(),
        )
    };
    if tls.is_some() && matches!(addr, Addr::Unix { .. }) {
        if !tls_optional(&tls) {
            return Err(EngineError::config(format!(
                "target '{}': TLS over a Unix socket is not supported; connect by host name, \
                 or use sslmode=prefer or sslmode=disable (or drop --tls)",
                spec.name
            )));
        }
        // sslmode=prefer: a Unix socket goes plain, as in libpq.
        tls = None;
    }
    let password = resolve_password(
        password.as_ref(),
        &PgpassQuery {
            host: &pgpass_host,
            port,
            database: &database,
            user: &user,
        },
    );
    Ok(ConnParams {
        addr,
        user,
        password,
        database,
        prepared: opts.prepared,
        connect_timeout,
        tls,
        channel_binding: crate::auth::channel_binding(spec)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_to_params() {
        let t = TargetSpec::parse("p=postgres://bob:pw@db1:6000/bench").unwrap();
        let p = params(&t, &OpenOptions::default(), None).unwrap();
        assert_eq!(
            p.addr,
            Addr::Tcp {
                host: "db1".into(),
                port: 6000
            }
        );
        assert_eq!(p.user, "bob");
        assert_eq!(p.database, "bench");
        assert_eq!(p.password.as_ref().unwrap().expose(), "pw");
        assert!(!format!("{p:?}").contains("pw\""), "{p:?}");

        let t = TargetSpec::parse("p=postgres://bob:pw@db1").unwrap();
        let p = params(&t, &OpenOptions::default(), None).unwrap();
        assert_eq!(p.database, "dbdelta");

        let t = TargetSpec::parse("p=postgres://bob@%2Ftmp/x").unwrap();
        // The model keeps the host as written; a literal path works.
        let _ = params(&t, &OpenOptions::default(), None).unwrap();

        let t = TargetSpec::parse("p=postgres://bob@db1/x?shared_buffers=1GB").unwrap();
        let e = params(&t, &OpenOptions::default(), None).unwrap_err();
        assert!(e.message.contains("unknown parameter"), "{e}");
    }

    #[test]
    fn locality() {
        assert!(Addr::Tcp {
            host: "127.0.0.1".into(),
            port: 1
        }
        .is_local());
        assert!(!Addr::Tcp {
            host: "db1".into(),
            port: 1
        }
        .is_local());
    }
}
