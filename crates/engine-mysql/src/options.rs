//! Which server option a target's `my.cnf` key resolves to, read the way the server's own
//! option parser reads it, so that a managed server's listening address, port, socket and
//! files stay dbdelta's.
//!
//! MySQL's and MariaDB's option parser (`my_getopt`, used for `my.cnf` and the command line
//! alike) treats `-` and `_` in names as the same character, accepts any unambiguous prefix
//! of an option name (`bind` for `bind-address`), strips the special prefixes `loose-`,
//! `skip-`, `disable-`, `enable-` and `maximum-` (repeatedly: `loose-skip-networking`) when a
//! name matches no option, and reads `key.option` as a structured option whose name is the
//! part after the dot; plugin options also answer to a `plugin-` prefix. A key is refused
//! when any of these readings can reach an option dbdelta controls itself; a prefix of such
//! an option is refused even when the server would find it ambiguous. Names are compared without regard to case: the server would
//! reject the upper-case spelling, dbdelta refuses it before the server starts.

/// Options dbdelta writes itself or that decide where a managed server listens, what files
/// it uses, or which configuration it reads.
const RESERVED: &[&str] = &[
    // Where the server listens: dbdelta chooses a loopback port and a scratch socket.
    "port",
    "socket",
    "bind-address",
    "skip-networking",
    "extra-port",
    "admin-port",
    "admin-address",
    "create-admin-listener",
    "named-pipe",
    "shared-memory",
    "shared-memory-base-name",
    "proxy-protocol-networks",
    // Files and directories in the scratch area.
    "datadir",
    "log-error",
    "pid-file",
    "tmpdir",
    "basedir",
    "user",
    // Which configuration the server reads.
    "defaults-file",
    "defaults-extra-file",
    "defaults-group-suffix",
    "no-defaults",
];

/// Option families whose members open listening sockets of their own: MySQL's X Protocol
/// plugin (`mysqlx`, `mysqlx-port`, `mysqlx-bind-address`, …), Galera replication
/// (`wsrep-on`, `wsrep-provider`, `wsrep-node-address`, …) and MariaDB's HandlerSocket plugin.
const RESERVED_FAMILIES: &[&str] = &["mysqlx", "wsrep", "handlersocket"];

/// The prefixes `my_getopt` strips from a name that matches no option, and `plugin-`: the
/// server registers every plugin option a second time under that prefix
/// (`plugin-mysqlx-port`).
const SPECIAL_PREFIXES: &[&str] = &[
    "loose-", "skip-", "disable-", "enable-", "maximum-", "plugin-",
];

/// The reserved option (or family) a `my.cnf` key could set, or `None` when the key cannot
/// reach one in any reading the server's option parser allows.
pub(crate) fn reserved_option(key: &str) -> Option<&'static str> {
    // `-`/`_` equivalence and case; leading dashes as written on a command line.
    let norm = key.to_ascii_lowercase().replace('_', "-");
    let norm = norm.trim_start_matches('-');
    // A structured option `key.option` names `option`; check the whole name and every part
    // after a dot.
    std::iter::once(norm)
        .chain(norm.match_indices('.').map(|(i, _)| &norm[i + 1..]))
        .find_map(reserved_reading)
}

/// The reserved option `name` (normalized) can reach, with special prefixes stripped in
/// turn.
fn reserved_reading(name: &str) -> Option<&'static str> {
    let mut name = name;
    // Each pass strips one special prefix; the name only gets shorter, so this ends.
    loop {
        if let Some(hit) = reaches(name) {
            return Some(hit);
        }
        let stripped = SPECIAL_PREFIXES.iter().find_map(|p| name.strip_prefix(p))?;
        name = stripped;
    }
}

/// The reserved option `name` names exactly, abbreviates, or belongs to (a family).
fn reaches(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return None;
    }
    RESERVED
        .iter()
        .find(|r| r.starts_with(name))
        .or_else(|| {
            RESERVED_FAMILIES
                .iter()
                .find(|f| f.starts_with(name) || name.starts_with(*f))
        })
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_listen_option_is_reserved() {
        let cases = [
            ("bind-address", "bind-address"),
            ("bind_address", "bind-address"),
            ("BIND-ADDRESS", "bind-address"),
            ("Bind_Address", "bind-address"),
            ("--bind-address", "bind-address"),
            ("loose-bind-address", "bind-address"),
            ("loose_bind_address", "bind-address"),
            ("LOOSE-BIND-ADDRESS", "bind-address"),
            ("loose-loose-bind-address", "bind-address"),
            ("bind", "bind-address"),
            ("bind-addr", "bind-address"),
            ("bind_addr", "bind-address"),
            ("loose-bind", "bind-address"),
            ("b", "bind-address"),
            ("port", "port"),
            ("loose-port", "port"),
            ("loose_port", "port"),
            ("maximum-port", "port"),
            ("po", "port"),
            ("socket", "socket"),
            ("sock", "socket"),
            ("loose-socket", "socket"),
            ("skip-networking", "skip-networking"),
            ("skip_networking", "skip-networking"),
            ("loose-skip-networking", "skip-networking"),
            ("skip-skip-networking", "skip-networking"),
            ("enable-skip-networking", "skip-networking"),
            ("skip-net", "skip-networking"),
            ("extra-port", "extra-port"),
            ("extra_port", "extra-port"),
            ("loose-extra-port", "extra-port"),
            ("admin-port", "admin-port"),
            ("admin_address", "admin-address"),
            ("mysqlx", "mysqlx"),
            ("loose-mysqlx", "mysqlx"),
            ("mysqlx-port", "mysqlx"),
            ("plugin-mysqlx-port", "mysqlx"),
            ("loose-plugin-mysqlx-bind-address", "mysqlx"),
            ("loose_mysqlx_bind_address", "mysqlx"),
            ("wsrep_on", "wsrep"),
            ("wsrep-provider", "wsrep"),
            ("loose-wsrep-node-address", "wsrep"),
            ("handlersocket_address", "handlersocket"),
            ("proxy-protocol-networks", "proxy-protocol-networks"),
            ("datadir", "datadir"),
            ("data", "datadir"),
            ("defaults-extra-file", "defaults-extra-file"),
            ("tmpdir", "tmpdir"),
            // A structured option `key.option` sets `option`.
            ("x.bind-address", "bind-address"),
            ("default.port", "port"),
            ("a.b.loose-port", "port"),
        ];
        for (key, option) in cases {
            assert_eq!(reserved_option(key), Some(option), "{key}");
        }
    }

    #[test]
    fn ordinary_settings_pass() {
        for key in [
            "innodb_buffer_pool_size",
            "innodb-buffer-pool-size",
            "loose-innodb-buffer-pool-size",
            "max_connections",
            "skip-name-resolve",
            "port-open-timeout",
            "port_open_timeout",
            "performance_schema",
            "skip-log-bin",
            "sync_binlog",
            "innodb_flush_log_at_trx_commit",
            "thread_handling",
            "default.key_buffer_size",
            "report-port",
            "plugin-load-add",
            "plugin_dir",
            "plugin-maturity",
            "table_open_cache",
        ] {
            assert_eq!(reserved_option(key), None, "{key}");
        }
    }
}
