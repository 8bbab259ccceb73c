//! Where a server listens, printed the way clients and logs expect, and the one rule for
//! which hosts are this machine.

use std::fmt;
use std::path::PathBuf;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    /// TCP host (a name or an IP address, IPv6 without brackets) and port.
    Tcp {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// A Unix-domain socket file.
    Unix {
        /// The socket's path.
        path: PathBuf,
    },
}

impl fmt::Display for Addr {
    /// `host:port`, with an IPv6 address in brackets (`[::1]:5432`, RFC 3986's host syntax)
    /// so the port cannot be read as part of the address; a socket prints as its path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Addr::Tcp { host, port } => write!(f, "{host}:{port}"),
            Addr::Unix { path } => write!(f, "{}", path.display()),
        }
    }
}

impl Addr {
    /// True when the server is on this machine: a Unix socket, or a TCP host that
    /// [`is_loopback_host`] accepts. Then its data directory and processes are visible to
    /// dbdelta's OS metrics.
    pub fn is_local(&self) -> bool {
        match self {
            Addr::Unix { .. } => true,
            Addr::Tcp { host, .. } => is_loopback_host(host),
        }
    }
}

/// The loopback rule lives in the model, so the report (which cannot depend on the kit)
/// applies the same one.
pub use dbdelta_model::net::is_loopback_host;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_is_bracketed() {
        let tcp = |host: &str| Addr::Tcp {
            host: host.into(),
            port: 5432,
        };
        assert_eq!(tcp("::1").to_string(), "[::1]:5432");
        assert_eq!(tcp("db1").to_string(), "db1:5432");
        assert_eq!(tcp("10.0.0.1").to_string(), "10.0.0.1:5432");
        let unix = Addr::Unix {
            path: "/tmp/.s.PGSQL.5432".into(),
        };
        assert_eq!(unix.to_string(), "/tmp/.s.PGSQL.5432");
    }

    #[test]
    fn locality() {
        assert!(Addr::Unix { path: "/s".into() }.is_local());
        assert!(!Addr::Tcp {
            host: "db1".into(),
            port: 1
        }
        .is_local());
    }
}
