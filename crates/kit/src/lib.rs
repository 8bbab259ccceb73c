//! What dbdelta's engines share beyond the seam's traits: one managed-server lifecycle
//! ([`server`]: start guard, ready probe, stop, orphan rules, permission walk, free ports,
//! service user, log tail; [`running`]: the servers still up, for an exit that does not
//! unwind), one address type and one loopback rule ([`addr`]), SQL
//! quoting ([`quote`]), target-parameter errors and checks ([`params`]), client sockets
//! ([`net`]), TLS ([`tls`]: its modes always, the rustls client behind the `tls` feature),
//! network namespaces ([`netns`]), where a started server listens ([`listen`]), the rule for
//! writing user-named files ([`outfile`]) and the replay server of the engines' fuzz targets
//! ([`fuzzing`]).
//!
//! The seam (`dbdelta-engine`) stays free of I/O and of any engine; engine crates depend on
//! both.
#![deny(missing_docs)]

pub mod addr;
#[doc(hidden)]
pub mod fuzzing;
pub mod listen;
pub mod net;
pub mod netns;
pub mod outfile;
pub mod params;
pub mod quote;
pub mod running;
pub mod server;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod test_certs;
pub mod tls;

pub use addr::{is_loopback_host, Addr};
