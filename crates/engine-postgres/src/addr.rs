//! Where a PostgreSQL server listens, as connections and cancel requests need it.

use std::fmt;
use std::path::PathBuf;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Addr {
    /// TCP host and port.
    Tcp { host: String, port: u16 },
    /// A Unix socket file (`<dir>/.s.PGSQL.<port>`).
    Unix { path: PathBuf },
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Addr::Tcp { host, port } => write!(f, "{host}:{port}"),
            Addr::Unix { path } => write!(f, "{}", path.display()),
        }
    }
}
