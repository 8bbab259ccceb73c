//! Parsers for one process's (or thread's) files: `/proc/PID/stat`, `/proc/PID/status`
//! (context switches) and `/proc/PID/io` (as sysstat's pidstat reads them). Pure functions over text.

/// The fields of `/proc/PID/stat` dbdelta uses. `comm` borrows from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidStat<'a> {
    /// Process (or thread) id.
    pub pid: u32,
    /// Command name (between the outermost parentheses; may contain spaces and `)`).
    pub comm: &'a str,
    /// State letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// Parent process id.
    pub ppid: u32,
    /// User CPU, clock ticks (includes guest time).
    pub utime: u64,
    /// System CPU, clock ticks.
    pub stime: u64,
    /// Threads in the process.
    pub num_threads: u64,
    /// Start time, clock ticks since boot (tells a reused PID apart).
    pub starttime: u64,
    /// Resident set size, pages.
    pub rss_pages: u64,
}

/// Parses `/proc/PID/stat` (or `/proc/PID/task/TID/stat`). `None` when malformed.
pub fn parse_pid_stat(text: &str) -> Option<PidStat<'_>> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = &text[open + 1..close];
    // Fields from 3 (state) on; index i here is field i + 3 of proc(5).
    let mut f = text[close + 1..].split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let mut num = |skip: usize| -> Option<i64> { f.nth(skip)?.parse::<i64>().ok() };
    let ppid = num(0)?; // field 4
    let utime = num(9)?; // field 14
    let stime = num(0)?; // 15
    let num_threads = num(4)?; // 20
    let starttime = num(1)?; // 22
    let rss = num(1)?; // 24
    Some(PidStat {
        pid,
        comm,
        state,
        ppid: u32::try_from(ppid).ok()?,
        utime: u64::try_from(utime).ok()?,
        stime: u64::try_from(stime).ok()?,
        num_threads: u64::try_from(num_threads).unwrap_or(0),
        starttime: u64::try_from(starttime).ok()?,
        rss_pages: u64::try_from(rss).unwrap_or(0),
    })
}

/// Context switches from `/proc/PID/status`. For a process these are the **main thread's**
/// only (the kernel does not sum threads there); sum `task/*/status` for all threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CtxSwitches {
    /// `voluntary_ctxt_switches`.
    pub voluntary: u64,
    /// `nonvoluntary_ctxt_switches`.
    pub involuntary: u64,
}

/// Parses the context-switch lines of `/proc/PID/status`; `None` if either is missing.
pub fn parse_status_ctxt(text: &str) -> Option<CtxSwitches> {
    let mut v = None;
    let mut iv = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("voluntary_ctxt_switches:") {
            v = rest.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
            iv = rest.trim().parse().ok();
        }
    }
    Some(CtxSwitches {
        voluntary: v?,
        involuntary: iv?,
    })
}

/// Storage bytes from `/proc/PID/io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoBytes {
    /// `read_bytes`: bytes fetched from the storage layer.
    pub read_bytes: u64,
    /// `write_bytes`: bytes sent to the storage layer.
    pub write_bytes: u64,
}

/// Parses `/proc/PID/io`; `None` if the fields are missing. (The file itself is often
/// unreadable for other users' processes; callers treat that as "unknown", not an error.)
pub fn parse_io(text: &str) -> Option<IoBytes> {
    let mut r = None;
    let mut w = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("read_bytes:") {
            r = rest.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("write_bytes:") {
            w = rest.trim().parse().ok();
        }
    }
    Some(IoBytes {
        read_bytes: r?,
        write_bytes: w?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_comm() {
        let t = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 3 0 9876 1000 321 18446744073709551615 0\n";
        let s = parse_pid_stat(t).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "a) b (c)");
        assert_eq!(s.state, 'S');
        assert_eq!((s.ppid, s.utime, s.stime), (1, 250, 37));
        assert_eq!((s.num_threads, s.starttime, s.rss_pages), (3, 9876, 321));
        assert!(parse_pid_stat("12 (x) S 1 2").is_none());
    }

    #[test]
    fn status_and_io() {
        let st = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(
            parse_status_ctxt(st),
            Some(CtxSwitches {
                voluntary: 12,
                involuntary: 3
            })
        );
        assert!(parse_status_ctxt("Name:\tx\n").is_none());
        let io =
            "rchar: 1\nwchar: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_io(io),
            Some(IoBytes {
                read_bytes: 4096,
                write_bytes: 8192
            })
        );
    }
}
