//! Where a started server actually listens: the TCP sockets in the LISTEN state that a
//! process and its descendants hold, read from Linux's `/proc` (`/proc/PID/fd` for the
//! socket inodes, `/proc/PID/net/tcp` and `tcp6` of the server's own network namespace for
//! the addresses), and the rule that a managed server listens on loopback (or its link's
//! address) only.
//!
//! A settings check can only refuse the spellings it knows; this reads what the server did,
//! so a plugin or an option nobody thought of cannot open a port to the network unnoticed.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// `st` of a listening socket in `/proc/net/tcp` (`TCP_LISTEN`).
const TCP_LISTEN: &str = "0A";

/// Why a server's listening sockets are not acceptable, or could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The server listens on an address beyond loopback and the allowed ones.
    #[error("listens on {} beyond loopback", list(.0))]
    Exposed(Vec<SocketAddr>),
    /// `/proc` could not be read for the process.
    #[error("cannot read {path} to check where it listens: {source}")]
    Proc {
        /// The file or directory that failed.
        path: String,
        /// The read error.
        #[source]
        source: io::Error,
    },
}

fn list(addrs: &[SocketAddr]) -> String {
    addrs
        .iter()
        .map(SocketAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The addresses the process `pid` and its descendants listen on (TCP, IPv4 and IPv6).
pub fn listening(pid: u32) -> Result<Vec<SocketAddr>, ListenError> {
    let mut inodes = HashSet::new();
    for p in process_tree(pid)? {
        socket_inodes(p, &mut inodes)?;
    }
    let mut out = Vec::new();
    for file in ["tcp", "tcp6"] {
        let path = format!("/proc/{pid}/net/{file}");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            // A kernel without IPv6 has no tcp6.
            Err(e) if e.kind() == io::ErrorKind::NotFound && file == "tcp6" => continue,
            Err(source) => return Err(ListenError::Proc { path, source }),
        };
        out.extend(parse_listening(&text, &inodes));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Fails unless every socket `pid`'s tree listens on is on a loopback address or one of
/// `allowed` (a `net=` link's server address).
pub fn check_loopback_only(pid: u32, allowed: &[IpAddr]) -> Result<(), ListenError> {
    let exposed: Vec<SocketAddr> = listening(pid)?
        .into_iter()
        .filter(|a| !is_loopback(a.ip()) && !allowed.contains(&a.ip()))
        .collect();
    if exposed.is_empty() {
        Ok(())
    } else {
        Err(ListenError::Exposed(exposed))
    }
}

/// [`check_loopback_only`] for a managed server that just became ready, as a config error
/// naming the target: the caller stops the server when this fails. `what` names the
/// program ("the managed server", "pgbouncer"); a server that has already exited passes.
pub fn require_loopback_only(
    target: &str,
    what: &str,
    pid: Option<u32>,
    allowed: &[IpAddr],
) -> Result<(), dbdelta_engine::EngineError> {
    let Some(pid) = pid else { return Ok(()) };
    check_loopback_only(pid, allowed).map_err(|e| {
        dbdelta_engine::EngineError::config(match e {
            ListenError::Exposed(_) => format!(
                "target '{target}': {what} (pid {pid}) {e}; dbdelta stops it: managed servers \
                 listen on loopback only. Remove the setting or plugin that opens this port"
            ),
            ListenError::Proc { .. } => format!("target '{target}': {what} (pid {pid}): {e}"),
        })
    })
}

/// 127.0.0.0/8, ::1 and IPv4-mapped loopback (`::ffff:127.0.0.1`).
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
    }
}

/// `pid` and every process whose parent chain leads to it.
fn process_tree(pid: u32) -> Result<Vec<u32>, ListenError> {
    let proc_err = |path: &str, source| ListenError::Proc {
        path: path.to_string(),
        source,
    };
    let mut parents = Vec::new();
    for entry in fs::read_dir("/proc").map_err(|e| proc_err("/proc", e))? {
        let Ok(entry) = entry else { continue };
        let Some(p) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        // Processes come and go while we read: a vanished one is simply not in the tree.
        if let Ok(stat) = fs::read_to_string(entry.path().join("stat")) {
            if let Some(ppid) = parent_of(&stat) {
                parents.push((p, ppid));
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    Ok(tree)
}

/// The parent pid in a `/proc/PID/stat` line: the fourth field, counted after the command
/// name, which is in parentheses and may itself hold spaces and parentheses.
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Adds the inodes of the sockets `pid` holds open.
fn socket_inodes(pid: u32, into: &mut HashSet<u64>) -> Result<(), ListenError> {
    let dir = format!("/proc/{pid}/fd");
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        // Exited since the tree was read.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(ListenError::Proc { path: dir, source }),
    };
    for entry in entries.flatten() {
        if let Some(inode) = fs::read_link(entry.path())
            .ok()
            .as_deref()
            .and_then(socket_inode)
        {
            into.insert(inode);
        }
    }
    Ok(())
}

/// The inode of a `socket:[N]` fd link.
fn socket_inode(link: &Path) -> Option<u64> {
    link.to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The local addresses of the LISTEN sockets in a `/proc/net/tcp` or `tcp6` text whose
/// inode is in `inodes`.
fn parse_listening(text: &str, inodes: &HashSet<u64>) -> Vec<SocketAddr> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] != TCP_LISTEN {
                return None;
            }
            let inode: u64 = f[9].parse().ok()?;
            if !inodes.contains(&inode) {
                return None;
            }
            parse_addr(f[1])
        })
        .collect()
}

/// `0100007F:0CEA` (IPv4) or 32 hex digits and a port (IPv6): the kernel prints each 32-bit
/// word of the address as a number in the host's byte order, the port in plain hex.
fn parse_addr(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// The kernel's text for an address, as `/proc/net/tcp` prints it on this host.
    fn hex_v4(ip: Ipv4Addr) -> String {
        format!("{:08X}", u32::from_ne_bytes(ip.octets()))
    }

    #[test]
    fn parses_the_kernel_table() {
        let lo = hex_v4(Ipv4Addr::LOCALHOST);
        let text = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             \x20  0: {lo}:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 111 1 0 100 0 0 10 0\n\
             \x20  1: 00000000:0CEB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 222 1 0 100 0 0 10 0\n\
             \x20  2: 00000000:0CEC 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 333 1 0 100 0 0 10 0\n\
             \x20  3: {lo}:0CED {lo}:9999 01 00000000:00000000 00:00000000 00000000   999        0 111 1 0 100 0 0 10 0\n"
        );
        let inodes: HashSet<u64> = [111, 222].into_iter().collect();
        assert_eq!(
            parse_listening(&text, &inodes),
            vec![
                "127.0.0.1:3306".parse().unwrap(),
                "0.0.0.0:3307".parse().unwrap()
            ]
        );
        let v6 = "00000000000000000000000001000000:1F90";
        let addr = parse_addr(v6).unwrap();
        assert!(
            addr.ip().is_loopback() || cfg!(target_endian = "big"),
            "{addr}"
        );
        assert_eq!(addr.port(), 8080);
    }

    #[test]
    fn parent_pid_after_a_command_with_spaces() {
        assert_eq!(parent_of("42 (a b) c) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn reads_this_process_listeners() {
        let lo = TcpListener::bind("127.0.0.1:0").unwrap();
        let any = TcpListener::bind("0.0.0.0:0").unwrap();
        let pid = std::process::id();
        let found = listening(pid).unwrap();
        assert!(found.contains(&lo.local_addr().unwrap()), "{found:?}");
        assert!(found.contains(&any.local_addr().unwrap()), "{found:?}");
        match check_loopback_only(pid, &[]) {
            Err(ListenError::Exposed(a)) => {
                assert!(a.contains(&any.local_addr().unwrap()), "{a:?}");
                assert!(!a.contains(&lo.local_addr().unwrap()), "{a:?}");
            }
            other => panic!("expected the 0.0.0.0 listener to be reported: {other:?}"),
        }
        drop(any);
        // Other tests of this binary may hold listeners of their own, on loopback only.
        check_loopback_only(pid, &[]).unwrap();
    }
}
