//! The one rule for which host names are this machine, shared by the engines (through the
//! kit's `Addr`) and the report (which marks remote targets).

use std::net::IpAddr;

/// True when `host` names this machine over loopback: `localhost`, any address of
/// 127.0.0.0/8 (RFC 1122, 3.2.1.3: the whole block is loopback, and dbdelta spreads client
/// connections over it) or `::1`, with or without the brackets of a URL.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_rule() {
        for h in [
            "localhost",
            "LocalHost",
            "127.0.0.1",
            "127.0.0.7",
            "::1",
            "[::1]",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "",
            "db1",
            "10.0.0.1",
            "128.0.0.1",
            "::2",
            "localhost.example",
            "0.0.0.0",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
