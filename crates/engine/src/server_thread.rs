//! The operating-system thread that serves a connection on this host (a PostgreSQL
//! backend process, a MySQL connection thread), so a driver can read how long it waited
//! for a CPU: the work of a server connection runs there, not in the client.

use std::path::Path;

/// A thread of a server process on this host that serves one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerThread {
    /// The server process (PostgreSQL: the backend itself; MySQL: `mysqld`).
    pub pid: u32,
    /// The thread inside it (PostgreSQL: the backend's pid; MySQL: `THREAD_OS_ID`).
    pub tid: u32,
}

impl ServerThread {
    /// Thread `tid` of process `pid` when that process runs on this host under one of the
    /// command names `comms` (`/proc/PID/comm`): a process id from the wire is only a
    /// number, and behind a proxy or on another host it names some other process or none.
    pub fn local(pid: u32, tid: u32, comms: &[&str]) -> Option<Self> {
        Self::local_in(Path::new("/proc"), pid, tid, comms)
    }

    fn local_in(proc_root: &Path, pid: u32, tid: u32, comms: &[&str]) -> Option<Self> {
        if pid == 0 || tid == 0 {
            return None;
        }
        let comm = std::fs::read_to_string(proc_root.join(format!("{pid}/comm"))).ok()?;
        let task = proc_root.join(format!("{pid}/task/{tid}"));
        (comms.contains(&comm.trim()) && task.exists()).then_some(ServerThread { pid, tid })
    }

    /// True for a host name that reaches this host itself (`localhost`, a loopback
    /// address): a server's process ids mean something here only then (or on a Unix socket).
    pub fn loopback(host: &str) -> bool {
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_loopback())
    }

    /// The process that thread `tid` of this host belongs to (`Tgid` of
    /// `/proc/TID/status`): a MySQL connection thread's id names the thread, not `mysqld`.
    pub fn process_of(tid: u32) -> Option<u32> {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_of_another_name_is_not_a_server_thread() {
        let me = std::process::id();
        let comm = std::fs::read_to_string(format!("/proc/{me}/comm")).unwrap_or_default();
        let comm = comm.trim();
        if comm.is_empty() {
            // No /proc here: nothing to read.
            return;
        }
        assert_eq!(
            ServerThread::local(me, me, &[comm]),
            Some(ServerThread { pid: me, tid: me })
        );
        assert_eq!(ServerThread::local(me, me, &["postgres"]), None);
        // A thread id that is not one of the process's threads.
        assert_eq!(ServerThread::local(me, u32::MAX - 1, &[comm]), None);
        assert_eq!(ServerThread::local(0, me, &[comm]), None);
        assert_eq!(ServerThread::process_of(me), Some(me));
        assert!(ServerThread::loopback("127.0.0.1") && ServerThread::loopback("::1"));
        assert!(ServerThread::loopback("localhost") && !ServerThread::loopback("db.example"));
    }
}
