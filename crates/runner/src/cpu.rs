//! The client's own CPU time (getrusage), so every result says what dbdelta itself cost.

/// The calling thread's kernel id (its /proc/self/task entry, for per-thread CPU).
pub(crate) fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// User + system CPU seconds of this whole process so far.
pub fn process_cpu_secs() -> f64 {
    let (user, sys) = process_cpu_split();
    user + sys
}

/// User and system CPU seconds of this whole process so far (0 when unreadable).
pub fn process_cpu_split() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Resident memory of this process, bytes (`/proc/self/statm`).
pub fn process_rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Proportional resident memory (PSS, so shared memory counts once) of `pids` and all
/// their descendants, bytes; `None` when there are no pids or /proc cannot be read.
pub fn tree_rss_bytes(pids: &[u32]) -> Option<u64> {
    if pids.is_empty() {
        return None;
    }
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = parent_of(pid) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut todo: Vec<u32> = pids.to_vec();
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    while let Some(pid) = todo.pop() {
        if !seen.insert(pid) {
            continue;
        }
        total += pss_bytes(pid).unwrap_or(0);
        if let Some(kids) = children.get(&pid) {
            todo.extend(kids);
        }
    }
    Some(total)
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn pss_bytes(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Pss:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Thread ids of this process whose name starts with one of `prefixes`
/// (`/proc/self/task/<tid>/comm`); empty when `prefixes` is.
pub fn threads_named(prefixes: &[&str]) -> Vec<u32> {
    if prefixes.is_empty() {
        return Vec::new();
    }
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| {
            let tid: u32 = t.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            prefixes.iter().any(|p| comm.starts_with(p)).then_some(tid)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_threads_by_name() {
        let t = std::thread::Builder::new()
            .name("dbdtest:bg".into())
            .spawn(|| std::thread::sleep(std::time::Duration::from_millis(300)))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(super::threads_named(&["dbdtest:"]).len(), 1);
        assert!(super::threads_named(&[]).is_empty());
        t.join().unwrap();
    }
}
