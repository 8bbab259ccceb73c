//! Every managed server this process started and has not stopped yet, so that an exit which
//! does not unwind — the interrupt deadline's `process::exit` after "the current phase did
//! not end in time" — still stops them: [`stop_all`] sends each its fast-shutdown signal,
//! waits, then kills what is left of its process group. (Servers start in a process group of
//! their own, so PostgreSQL's backends go with their postmaster, and Ctrl-C in a terminal
//! reaches dbdelta alone, which stops them in order.)

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A started server: its process id (also its process group) and its stop signal.
#[derive(Debug, Clone, Copy)]
struct Entry {
    pid: i32,
    stop_signal: i32,
}

static RUNNING: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records a started server.
pub(crate) fn register(pid: u32, stop_signal: i32) {
    if let Ok(pid) = i32::try_from(pid) {
        running().push(Entry { pid, stop_signal });
    }
}

/// Forgets a server that stopped.
pub(crate) fn forget(pid: u32) {
    running().retain(|e| i64::from(e.pid) != i64::from(pid));
}

/// Stops every registered server: its stop signal (after SIGCONT, for one frozen with
/// SIGSTOP), up to `grace` for all of them to exit, then SIGKILL to whatever is left of
/// each one's process tree and process group. Safe to call from any thread, at any time
/// (a server another thread is stopping gets the signal twice). Returns how many servers
/// were still registered.
pub fn stop_all(grace: Duration) -> usize {
    let entries = std::mem::take(&mut *running());
    stop_entries(&entries, grace);
    entries.len()
}

fn stop_entries(entries: &[Entry], grace: Duration) {
    let mut trees = Vec::new();
    for e in entries {
        let tree = process_tree(e.pid as u32);
        for &p in &tree {
            signal(p as i32, libc::SIGCONT);
        }
        signal(e.pid, e.stop_signal);
        trees.push(tree);
    }
    let deadline = Instant::now() + grace;
    while entries.iter().any(|e| alive(e.pid as u32)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (e, tree) in entries.iter().zip(&trees) {
        // SAFETY: killpg on the process group our own child leads (see `prepare_command`).
        unsafe {
            libc::killpg(e.pid, libc::SIGKILL);
        }
        for &p in tree.iter().filter(|p| alive(**p)) {
            signal(p as i32, libc::SIGKILL);
        }
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a process of a server this process started has no memory effects.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// True while `pid` exists and is not a zombie (one that exited, not yet reaped).
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat.get(i + 2..))
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// `pid` and all its descendants, from the parent links in `/proc`.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let p: u32 = e.file_name().to_str()?.parse().ok()?;
                    let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
                    let rest = stat.get(stat.rfind(')')? + 2..)?;
                    let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
                    Some((p, ppid))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut todo = vec![pid];
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p) {
            continue;
        }
        out.push(p);
        todo.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{launch, Launch};
    use std::process::Command;

    #[test]
    fn stop_all_ends_a_server_that_ignores_its_stop_signal_and_its_children() {
        let d = tempfile::tempdir().unwrap();
        // A "server" that ignores SIGTERM and has a child that ignores it too.
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "trap '' TERM; sh -c \"trap '' TERM; sleep 300\" & sleep 300",
        ]);
        let mut server = launch(Launch {
            command,
            log: &d.path().join("log"),
            append: false,
            owner: None,
            netns: None,
            stop_signal: libc::SIGTERM,
            grace: Duration::from_secs(30),
        })
        .unwrap();
        let pid = server.pid().unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        while process_tree(pid).len() < 3 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let tree = process_tree(pid);
        assert!(tree.len() >= 3, "{tree:?}");
        // Only this test's server: other tests of this crate run servers beside it.
        let ours: Vec<Entry> = {
            let mut all = running();
            let (ours, rest) = all.iter().partition(|e| e.pid as u32 == pid);
            *all = rest;
            ours
        };
        assert_eq!(ours.len(), 1);
        let started = Instant::now();
        stop_entries(&ours, Duration::from_millis(300));
        // The root is our child: reap it; the grandchildren went to init.
        let _ = server.exited();
        let until = Instant::now() + Duration::from_secs(10);
        while tree.iter().any(|p| alive(*p)) && Instant::now() < until {
            let _ = server.exited();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            tree.iter().all(|p| !alive(*p)),
            "still running: {:?}",
            tree.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
