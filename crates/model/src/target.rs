//! Targets: `NAME=SPEC` where SPEC is URL-like and its scheme names the engine.
//!
//! ```text
//! wal=sqlite?journal_mode=WAL&synchronous=NORMAL        embedded file in the run directory
//! db=sqlite:/tmp/x.db                                    embedded file at a given path
//! pg15=postgres:/usr/lib/postgresql/15/bin?shared_buffers=1GB   managed server from binaries
//! prod=postgres://bench@db1:5432/benchdb                 external server
//! m=mock?latency=1ms&error_rate=0.01                     the test engine
//! ```

use serde::{Serialize, Serializer};
use std::fmt;
use std::path::PathBuf;

/// A secret (a password). It never prints, logs or serializes its content.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The secret itself, for the one place that must send it to a server.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("***")
    }
}

/// Where a target's database comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Location {
    /// Nothing given: the engine's default (an SQLite file in the run directory).
    Default,
    /// A filesystem path: an SQLite file, or the bin/base directory of a managed server.
    Path {
        /// The path as given.
        path: PathBuf,
    },
    /// An already running server, `scheme://user[:password]@host[:port]/db`.
    Url {
        /// User name, if given.
        user: Option<String>,
        /// Password from the URL (never printed or stored).
        #[serde(skip)]
        password: Option<Secret>,
        /// Host name or address.
        host: String,
        /// TCP port, if given.
        port: Option<u16>,
        /// Database name, if given.
        database: Option<String>,
    },
}

/// One database under test: a name (a report column), an engine, a location and parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetSpec {
    /// Short name used in reports and as a directory name.
    pub name: String,
    /// Engine name: the scheme of the spec (`sqlite`, `postgres`, `mysql`, `mock`).
    pub engine: String,
    /// Where the database comes from.
    pub location: Location,
    /// Query parameters in the order given: PRAGMAs, server settings or mock knobs.
    pub params: Vec<(String, String)>,
}

/// Why a target could not be parsed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TargetError {
    /// The spec is empty or has no engine.
    #[error("target '{0}' is empty: write NAME=ENGINE[:PATH|://URL][?key=value&...], e.g. wal=sqlite?journal_mode=WAL")]
    Empty(String),
    /// The name is not usable as a report column and directory name.
    #[error("target name '{0}' is invalid: use letters, digits, '_', '-' and '.' (e.g. pg15)")]
    BadName(String),
    /// A query parameter without `=`.
    #[error("target '{spec}': parameter '{param}' has no value: write key=value")]
    BadParam {
        /// The whole spec.
        spec: String,
        /// The offending parameter.
        param: String,
    },
    /// The URL part could not be parsed.
    #[error("target '{spec}': {why}")]
    BadUrl {
        /// The whole spec.
        spec: String,
        /// What is wrong.
        why: String,
    },
}

impl TargetSpec {
    /// Parses `NAME=SPEC` or a bare `SPEC` (then the name is the engine's name).
    pub fn parse(text: &str) -> Result<TargetSpec, TargetError> {
        let text = text.trim();
        let (name, spec) = split_name(text);
        if spec.is_empty() {
            return Err(TargetError::Empty(text.to_string()));
        }
        let (head, query) = match spec.split_once('?') {
            Some((h, q)) => (h, Some(q)),
            None => (spec, None),
        };
        let (engine, rest) = match head.split_once(':') {
            Some((e, r)) => (e, Some(r)),
            None => (head, None),
        };
        if engine.is_empty() {
            return Err(TargetError::Empty(text.to_string()));
        }
        let engine = engine.to_ascii_lowercase();
        let location = match rest {
            None | Some("") => Location::Default,
            Some(r) if r.starts_with("//") => parse_url(&r[2..], text)?,
            Some(r) => Location::Path {
                path: PathBuf::from(percent_decode(r)),
            },
        };
        let params = match query {
            Some(q) => parse_params(q, text)?,
            None => Vec::new(),
        };
        let name = name.map(str::to_string).unwrap_or_else(|| engine.clone());
        if !valid_name(&name) {
            return Err(TargetError::BadName(name));
        }
        Ok(TargetSpec {
            name,
            engine,
            location,
            params,
        })
    }

    /// The value of a parameter, if given (the last one wins).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The spec as text with any password replaced by `***`; safe to print and store.
    pub fn redacted(&self) -> String {
        let mut out = format!("{}={}", self.name, self.engine);
        match &self.location {
            Location::Default => {}
            Location::Path { path } => {
                out.push(':');
                out.push_str(&path.display().to_string());
            }
            Location::Url {
                user,
                password,
                host,
                port,
                database,
            } => {
                out.push_str("://");
                if let Some(u) = user {
                    out.push_str(u);
                    if password.is_some() {
                        out.push_str(":***");
                    }
                    out.push('@');
                }
                out.push_str(host);
                if let Some(p) = port {
                    out.push_str(&format!(":{p}"));
                }
                if let Some(d) = database {
                    out.push('/');
                    out.push_str(d);
                }
            }
        }
        for (i, (k, v)) in self.params.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        }
        out
    }
}

fn split_name(text: &str) -> (Option<&str>, &str) {
    // A name is everything before the first '=' that comes before any ':' or '?'.
    match text.find('=') {
        Some(eq) if !text[..eq].contains([':', '?', '/']) => (Some(&text[..eq]), &text[eq + 1..]),
        _ => (None, text),
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn parse_params(query: &str, spec: &str) -> Result<Vec<(String, String)>, TargetError> {
    let mut out = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(TargetError::BadParam {
                spec: spec.to_string(),
                param: part.to_string(),
            });
        };
        if k.is_empty() {
            return Err(TargetError::BadParam {
                spec: spec.to_string(),
                param: part.to_string(),
            });
        }
        out.push((percent_decode(k), percent_decode(v)));
    }
    Ok(out)
}

fn parse_url(rest: &str, spec: &str) -> Result<Location, TargetError> {
    let bad = |why: &str| TargetError::BadUrl {
        spec: redact_raw(spec),
        why: why.to_string(),
    };
    let (authority, database) = match rest.split_once('/') {
        Some((a, d)) => (a, (!d.is_empty()).then(|| percent_decode(d))),
        None => (rest, None),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((n, p)) => (
                Some(percent_decode(n)),
                Some(Secret::new(percent_decode(p))),
            ),
            None => (Some(percent_decode(u)), None),
        },
        None => (None, None),
    };
    let (host, port) = if let Some(stripped) = hostport.strip_prefix('[') {
        let (h, after) = stripped
            .split_once(']')
            .ok_or_else(|| bad("unclosed '[' in IPv6 host"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(parse_port(p).ok_or_else(|| bad("port must be a number 1-65535"))?),
            None => None,
        };
        (h.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                Some(parse_port(p).ok_or_else(|| bad("port must be a number 1-65535"))?),
            ),
            None => (hostport.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(bad("the URL has no host: write user@host:port/db"));
    }
    Ok(Location::Url {
        user,
        password,
        host,
        port,
        database,
    })
}

fn parse_port(p: &str) -> Option<u16> {
    p.parse::<u16>().ok().filter(|p| *p > 0)
}

/// Replaces the password of a raw `scheme://user:pass@host` text, for error messages.
fn redact_raw(spec: &str) -> String {
    if let Some(start) = spec.find("://") {
        let after = &spec[start + 3..];
        if let Some(at) = after.find('@') {
            if let Some(colon) = after[..at].find(':') {
                return format!(
                    "{}{}:***{}",
                    &spec[..start + 3],
                    &after[..colon],
                    &after[at..]
                );
            }
        }
    }
    spec.to_string()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // Two hex digits, looked at as bytes: slicing the text could split a character.
        let hex = |at: usize| bytes.get(at).and_then(|b| char::from(*b).to_digit(16));
        if bytes[i] == b'%' {
            if let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_with_pragmas() {
        let t = TargetSpec::parse("wal=sqlite?journal_mode=WAL&synchronous=NORMAL").unwrap();
        assert_eq!(t.name, "wal");
        assert_eq!(t.engine, "sqlite");
        assert_eq!(t.location, Location::Default);
        assert_eq!(t.param("journal_mode"), Some("WAL"));
        assert_eq!(t.params.len(), 2);
    }

    #[test]
    fn bare_engine_takes_engine_name() {
        let t = TargetSpec::parse("sqlite").unwrap();
        assert_eq!(t.name, "sqlite");
    }

    #[test]
    fn managed_path() {
        let t = TargetSpec::parse("pg15=postgres:/usr/lib/postgresql/15/bin?shared_buffers=1GB")
            .unwrap();
        assert_eq!(
            t.location,
            Location::Path {
                path: "/usr/lib/postgresql/15/bin".into()
            }
        );
        assert_eq!(t.param("shared_buffers"), Some("1GB"));
    }

    #[test]
    fn external_url_hides_password() {
        let t = TargetSpec::parse("prod=postgres://bench:s3cret@db1:5432/benchdb").unwrap();
        match &t.location {
            Location::Url {
                user,
                password,
                host,
                port,
                database,
            } => {
                assert_eq!(user.as_deref(), Some("bench"));
                assert_eq!(password.as_ref().unwrap().expose(), "s3cret");
                assert_eq!(host, "db1");
                assert_eq!(*port, Some(5432));
                assert_eq!(database.as_deref(), Some("benchdb"));
            }
            other => panic!("{other:?}"),
        }
        let shown = format!(
            "{} {:?} {}",
            t.redacted(),
            t,
            serde_json::to_string(&t).unwrap()
        );
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn bad_inputs() {
        assert!(matches!(
            TargetSpec::parse("x="),
            Err(TargetError::Empty(_))
        ));
        assert!(matches!(
            TargetSpec::parse("a b=sqlite"),
            Err(TargetError::BadName(_))
        ));
        assert!(matches!(
            TargetSpec::parse("x=sqlite?journal_mode"),
            Err(TargetError::BadParam { .. })
        ));
        let e = TargetSpec::parse("x=postgres://u:pw@h:99999/db").unwrap_err();
        assert!(!e.to_string().contains("pw@"), "{e}");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%41%4a%4B"), "AJK");
        // Found by fuzzing: a '%' before a multi-byte character panicked (str slicing).
        assert_eq!(percent_decode("%a\u{e9}"), "%a\u{e9}");
        assert_eq!(percent_decode("%\u{e9}"), "%\u{e9}");
        assert_eq!(percent_decode("%+1"), "%+1", "not a hex escape");
        assert!(TargetSpec::parse("x=sqlite:/tmp/%a\u{e9}.db").is_ok());
    }
}
