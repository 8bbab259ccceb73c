//! A `mongodb://user:pw@host:port/db?…` target: the connection-string options dbdelta
//! understands (MongoDB's "Connection String Options" names), checked before anything runs.
//! An unknown option, a bad value or a missing host is refused naming the key. The password
//! stays a `Secret`: it is never printed, and `Debug` shows `***`.

use dbdelta_engine::EngineError;
use dbdelta_kit::tls::TlsMode;
use dbdelta_model::{Location, Secret, TargetSpec};
use std::time::Duration;

/// Options an external `mongodb` target accepts.
pub const KNOWN: &[&str] = &[
    "w",
    "j",
    "wtimeoutMS",
    "readPreference",
    "authSource",
    "authMechanism",
    "appName",
    "connectTimeoutMS",
    "tls",
    "ssl",
    "tlsCAFile",
    "tlsCertificateKeyFile",
    "tlsAllowInvalidHostnames",
    "tlsAllowInvalidCertificates",
    "tlsInsecure",
    "collection",
    "batchsize",
];

/// The write concern every write carries (`w`, `j`, `wtimeoutMS`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteConcern {
    /// `w=N` or `w=majority`; `None` = the server's default.
    pub w: Option<W>,
    /// `j=true|false`; `None` = the server's default.
    pub j: Option<bool>,
    /// `wtimeoutMS=N`.
    pub wtimeout_ms: Option<i64>,
}

/// The `w` of a write concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum W {
    /// Acknowledged by this many members.
    Nodes(i32),
    /// Acknowledged by a majority.
    Majority,
}

impl WriteConcern {
    /// True when no option was given: the commands carry no `writeConcern`.
    pub fn is_default(&self) -> bool {
        self == &WriteConcern::default()
    }

    /// How the manifest records it (`w=1 j=false`, or `server default`).
    pub fn describe(&self) -> String {
        if self.is_default() {
            return "server default".into();
        }
        let mut parts = Vec::new();
        match &self.w {
            Some(W::Nodes(n)) => parts.push(format!("w={n}")),
            Some(W::Majority) => parts.push("w=majority".into()),
            None => {}
        }
        if let Some(j) = self.j {
            parts.push(format!("j={j}"));
        }
        if let Some(t) = self.wtimeout_ms {
            parts.push(format!("wtimeoutMS={t}"));
        }
        parts.join(" ")
    }
}

/// The authentication mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// SCRAM-SHA-256 (RFC 7677), the password SASLprep'd.
    ScramSha256,
    /// SCRAM-SHA-1 (RFC 5802) over MongoDB's `md5(user:mongo:password)` digest.
    ScramSha1,
    /// SASL PLAIN (RFC 4616): the password in clear, so only over TLS or loopback.
    Plain,
}

impl Mechanism {
    /// The name MongoDB uses.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha1 => "SCRAM-SHA-1",
            Mechanism::Plain => "PLAIN",
        }
    }

    fn parse(v: &str) -> Option<Self> {
        [
            Mechanism::ScramSha256,
            Mechanism::ScramSha1,
            Mechanism::Plain,
        ]
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(v))
    }
}

/// Everything needed to connect, parsed from the spec.
#[derive(Clone)]
pub struct MongoParams {
    /// The target's name (errors).
    pub name: String,
    /// Host name or address.
    pub host: String,
    /// TCP port (27017 by default).
    pub port: u16,
    /// User name, when the server wants authentication.
    pub user: Option<String>,
    /// The password (never printed).
    pub password: Option<Secret>,
    /// The database commands run in.
    pub database: String,
    /// The database the URL names, if any (the default authentication source).
    pub url_database: Option<String>,
    /// The collection the records live in (`usertable`, as YCSB's binding).
    pub collection: String,
    /// Where the user is defined (`authSource`).
    pub auth_source: Option<String>,
    /// The mechanism asked for; `None` = negotiated from `saslSupportedMechs`.
    pub mechanism: Option<Mechanism>,
    /// The write concern of every write.
    pub write_concern: WriteConcern,
    /// `readPreference` mode; `primary` sends none.
    pub read_preference: String,
    /// `appName` (sent in the handshake's client metadata).
    pub app_name: String,
    /// Limit on connect plus handshake.
    pub connect_timeout: Duration,
    /// TLS mode: disable, require (no certificate check), verify-ca, verify-full.
    pub tls: TlsMode,
    /// `tlsCAFile`.
    pub tls_ca: Option<std::path::PathBuf>,
    /// `tlsCertificateKeyFile` (client certificate and key in one PEM file).
    pub tls_cert_key: Option<std::path::PathBuf>,
    /// YCSB's `batchsize`: records per `insertMany` when loading (1 = one insert each).
    pub batch_size: usize,
}

impl std::fmt::Debug for MongoParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MongoParams")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("database", &self.database)
            .field("write_concern", &self.write_concern)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

fn bad(spec: &TargetSpec, key: &str, value: &str, want: &str) -> EngineError {
    EngineError::config(format!(
        "target '{}': {key}={value} is not valid: {want}",
        spec.name
    ))
}

fn boolean(spec: &TargetSpec, key: &str) -> Result<Option<bool>, EngineError> {
    match spec.param(key) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(bad(spec, key, v, "use true or false")),
    }
}

fn integer(
    spec: &TargetSpec,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<i64>, EngineError> {
    match spec.param(key) {
        None => Ok(None),
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|n| range.contains(n))
            .map(Some)
            .ok_or_else(|| {
                bad(
                    spec,
                    key,
                    v,
                    &format!(
                        "use a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ),
                )
            }),
    }
}

/// Parses and checks an external target; `tls_flag` is `--tls` (verify-full unless the
/// spec says otherwise).
pub fn params(
    spec: &TargetSpec,
    tls_flag: bool,
    default_db: &str,
) -> Result<MongoParams, EngineError> {
    for (k, _) in &spec.params {
        if !KNOWN.contains(&k.as_str()) {
            return Err(EngineError::config(format!(
                "target '{}': unknown option '{k}' for a mongodb target (known: {})",
                spec.name,
                KNOWN.join(", ")
            )));
        }
    }
    let Location::Url {
        user,
        password,
        host,
        port,
        database,
    } = &spec.location
    else {
        return Err(EngineError::config(format!(
            "target '{}': mongodb needs a URL with a host: {}=mongodb://user:password@host:27017/db",
            spec.name, spec.name
        )));
    };
    if host.is_empty() {
        return Err(EngineError::config(format!(
            "target '{}': host is missing: write mongodb://user:password@host:27017/db",
            spec.name
        )));
    }
    let w = match spec.param("w") {
        None => None,
        Some("majority") => Some(W::Majority),
        Some(v) => match v.parse::<i32>() {
            Ok(n) if n >= 0 => Some(W::Nodes(n)),
            _ => {
                return Err(bad(
                    spec,
                    "w",
                    v,
                    "use a number of members (0, 1, …) or majority",
                ))
            }
        },
    };
    let write_concern = WriteConcern {
        w,
        j: boolean(spec, "j")?,
        wtimeout_ms: integer(spec, "wtimeoutMS", 0..=86_400_000)?,
    };
    if write_concern.w == Some(W::Nodes(0)) && write_concern.j == Some(true) {
        return Err(bad(
            spec,
            "j",
            "true",
            "w=0 asks for no acknowledgement, so j=true cannot hold",
        ));
    }
    let read_preference = match spec.param("readPreference") {
        None => "primary".to_string(),
        Some(v) => {
            const MODES: [&str; 5] = [
                "primary",
                "primaryPreferred",
                "secondary",
                "secondaryPreferred",
                "nearest",
            ];
            MODES
                .iter()
                .find(|m| m.eq_ignore_ascii_case(v))
                .map(|m| m.to_string())
                .ok_or_else(|| {
                    bad(
                        spec,
                        "readPreference",
                        v,
                        &format!("use one of {}", MODES.join(", ")),
                    )
                })?
        }
    };
    let mechanism = match spec.param("authMechanism") {
        None => None,
        Some(v) => Some(Mechanism::parse(v).ok_or_else(|| {
            bad(
                spec,
                "authMechanism",
                v,
                "use SCRAM-SHA-256, SCRAM-SHA-1 or PLAIN",
            )
        })?),
    };
    if mechanism.is_some() && user.is_none() {
        return Err(EngineError::config(format!(
            "target '{}': authMechanism needs a user: write mongodb://user:password@host/db",
            spec.name
        )));
    }
    let tls_on = match (boolean(spec, "tls")?, boolean(spec, "ssl")?) {
        (Some(a), Some(b)) if a != b => {
            return Err(bad(
                spec,
                "ssl",
                &b.to_string(),
                "tls and ssl are one option; give one",
            ))
        }
        (a, b) => a.or(b).unwrap_or(tls_flag),
    };
    let insecure = boolean(spec, "tlsInsecure")?.unwrap_or(false)
        || boolean(spec, "tlsAllowInvalidCertificates")?.unwrap_or(false);
    let any_host = boolean(spec, "tlsAllowInvalidHostnames")?.unwrap_or(false);
    let tls = match (tls_on, insecure, any_host) {
        (false, _, _) => TlsMode::Disable,
        (true, true, _) => TlsMode::Require,
        (true, false, true) => TlsMode::VerifyCa,
        (true, false, false) => TlsMode::VerifyFull,
    };
    let path = |k: &str| spec.param(k).map(std::path::PathBuf::from);
    let (tls_ca, tls_cert_key) = (path("tlsCAFile"), path("tlsCertificateKeyFile"));
    if tls == TlsMode::Disable {
        for k in ["tlsCAFile", "tlsCertificateKeyFile"] {
            if spec.param(k).is_some() {
                return Err(EngineError::config(format!(
                    "target '{}': {k} needs TLS: add tls=true (or --tls)",
                    spec.name
                )));
            }
        }
    }
    let collection = spec.param("collection").unwrap_or("usertable").to_string();
    if collection.is_empty() || collection.contains(['$', '\0']) {
        return Err(bad(
            spec,
            "collection",
            &collection,
            "use a plain collection name",
        ));
    }
    Ok(MongoParams {
        name: spec.name.clone(),
        host: host.clone(),
        port: port.unwrap_or(27017),
        user: user.clone(),
        password: password.clone(),
        database: database.clone().unwrap_or_else(|| default_db.to_string()),
        url_database: database.clone(),
        collection,
        auth_source: spec.param("authSource").map(str::to_string),
        mechanism,
        write_concern,
        read_preference,
        app_name: spec.param("appName").unwrap_or("dbdelta").to_string(),
        connect_timeout: Duration::from_millis(
            integer(spec, "connectTimeoutMS", 1..=86_400_000)?.unwrap_or(10_000) as u64,
        ),
        tls,
        tls_ca,
        tls_cert_key,
        batch_size: integer(spec, "batchsize", 1..=100_000)?.unwrap_or(1) as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<MongoParams, EngineError> {
        params(&TargetSpec::parse(s).unwrap(), false, "dbdelta")
    }

    #[test]
    fn a_full_url_is_read_and_the_password_never_shown() {
        let p = parse("m=mongodb://bob:s3cret@db1:27018/ycsb?w=1&j=false&readPreference=primary")
            .unwrap();
        assert_eq!(
            (p.host.as_str(), p.port, p.database.as_str()),
            ("db1", 27018, "ycsb")
        );
        assert_eq!(p.write_concern.describe(), "w=1 j=false");
        assert_eq!(p.tls, TlsMode::Disable);
        assert!(!format!("{p:?}").contains("s3cret"));
        let p = parse("m=mongodb://db1?w=majority&tls=true&tlsAllowInvalidHostnames=true").unwrap();
        assert_eq!((p.port, p.tls), (27017, TlsMode::VerifyCa));
        assert_eq!(p.write_concern.w, Some(W::Majority));
    }

    #[test]
    fn bad_options_name_their_key() {
        for (spec, key) in [
            ("m=mongodb://h?w=banana", "w=banana"),
            ("m=mongodb://h?nosuch=1", "'nosuch'"),
            ("m=mongodb://h?j=maybe", "j=maybe"),
            ("m=mongodb://h?readPreference=any", "readPreference=any"),
            ("m=mongodb://h?authMechanism=GSSAPI", "authMechanism"),
            ("m=mongodb://h?tlsCAFile=/x", "tlsCAFile"),
            ("m=mongodb://h?batchsize=0", "batchsize=0"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.message.contains(key), "{spec}: {e}");
        }
    }
}
