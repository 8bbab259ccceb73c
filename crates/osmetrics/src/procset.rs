//! Sets of processes or threads (a server's process tree, worker threads, the client's own
//! threads): reading them at one moment and differencing two moments.
//!
//! Membership is decided at each sample (descendants of the roots via `ppid` *at that
//! moment*). Members are keyed by id and start time, so a reused PID is a new member.
//! Between two snapshots A and B:
//! - a member present in both contributes B − A;
//! - a member only in B that **started after A** contributes all of B (its whole life lies in
//!   the period); one that started earlier (it joined the set, e.g. was re-parented, or could
//!   not be read at A) is a first sighting and contributes 0 — its delta counts from there on;
//! - a member only in A has exited: what it used after A is lost (noted). Hence CPU of a
//!   process that starts and ends within one period is lost entirely.

use crate::counter::{Notes, Width};
use crate::proc::{parse_io, parse_pid_stat, parse_status_ctxt, CtxSwitches, IoBytes};
use crate::reader::Reader;
use crate::sys::KernelUnits;
use dbdelta_model::os::ProcCost;
use std::collections::{BTreeMap, HashSet};

/// Counters of one process or thread at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskCounters {
    /// Start time, ticks since boot.
    pub start: u64,
    /// User CPU ticks.
    pub utime: u64,
    /// System CPU ticks.
    pub stime: u64,
    /// Context switches (`None` when status was unreadable).
    pub ctx: Option<CtxSwitches>,
    /// RSS pages (0 for threads).
    pub rss_pages: u64,
    /// Storage bytes (`None` when io was unreadable or not asked for).
    pub io: Option<IoBytes>,
}

/// A set of processes or threads at one moment, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcSet {
    /// Members by PID (or TID).
    pub members: BTreeMap<u32, TaskCounters>,
}

/// Summed deltas of a set over one or more periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcDelta {
    /// User CPU ticks.
    pub utime: u64,
    /// System CPU ticks.
    pub stime: u64,
    /// Voluntary context switches.
    pub vcs: u64,
    /// Involuntary context switches.
    pub ivcs: u64,
    /// Storage bytes read (`None`: no member's io readable).
    pub read_bytes: Option<u64>,
    /// Storage bytes written.
    pub write_bytes: Option<u64>,
    /// Summed RSS pages at the end.
    pub rss_pages: u64,
    /// Highest summed RSS pages at any sample end.
    pub rss_peak_pages: u64,
    /// Members at the end.
    pub procs: u32,
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    }
}

impl ProcDelta {
    /// Differences set `a` (taken at `a_uptime_ticks`, ticks since boot) and set `b`.
    /// `what` names the set in notes ("server process", "worker thread").
    pub fn between(
        what: &str,
        a: &ProcSet,
        b: &ProcSet,
        a_uptime_ticks: Option<u64>,
        notes: &mut Notes,
    ) -> ProcDelta {
        let mut d = ProcDelta::default();
        let mut io_missing = false;
        for (id, y) in &b.members {
            d.rss_pages += y.rss_pages;
            d.procs += 1;
            let x = match a.members.get(id) {
                Some(x) if x.start == y.start => *x,
                _ => {
                    let born_after_a = a_uptime_ticks.is_some_and(|t| y.start >= t);
                    if !born_after_a {
                        continue; // first sighting: baseline only
                    }
                    TaskCounters {
                        start: y.start,
                        ctx: Some(CtxSwitches::default()),
                        io: Some(IoBytes::default()),
                        ..TaskCounters::default()
                    }
                }
            };
            d.utime += notes.delta(&format!("{what} utime"), x.utime, y.utime, Width::U64);
            d.stime += notes.delta(&format!("{what} stime"), x.stime, y.stime, Width::U64);
            if let (Some(cx), Some(cy)) = (x.ctx, y.ctx) {
                d.vcs += notes.delta(
                    "voluntary_ctxt_switches",
                    cx.voluntary,
                    cy.voluntary,
                    Width::U64,
                );
                d.ivcs += notes.delta(
                    "nonvoluntary_ctxt_switches",
                    cx.involuntary,
                    cy.involuntary,
                    Width::U64,
                );
            }
            match (x.io, y.io) {
                (Some(ix), Some(iy)) => {
                    let r = notes.delta("read_bytes", ix.read_bytes, iy.read_bytes, Width::U64);
                    let w = notes.delta("write_bytes", ix.write_bytes, iy.write_bytes, Width::U64);
                    d.read_bytes = Some(d.read_bytes.unwrap_or(0) + r);
                    d.write_bytes = Some(d.write_bytes.unwrap_or(0) + w);
                }
                _ => io_missing = true,
            }
        }
        if io_missing && d.read_bytes.is_some() {
            notes.add(format!(
                "io unreadable for some {what}es; read/write bytes are partial"
            ));
        }
        for (id, x) in &a.members {
            match b.members.get(id) {
                Some(y) if y.start == x.start => {}
                _ => notes.add(format!(
                    "a {what} exited during the window; what it used after its last sample is not counted"
                )),
            }
        }
        d.rss_peak_pages = d.rss_pages;
        d
    }

    /// Adds the following period: counts add up, RSS becomes the later one, peak the max.
    pub fn add(&mut self, later: &ProcDelta) {
        self.utime += later.utime;
        self.stime += later.stime;
        self.vcs += later.vcs;
        self.ivcs += later.ivcs;
        self.read_bytes = add_opt(self.read_bytes, later.read_bytes);
        self.write_bytes = add_opt(self.write_bytes, later.write_bytes);
        self.rss_pages = later.rss_pages;
        self.rss_peak_pages = self.rss_peak_pages.max(later.rss_peak_pages);
        self.procs = later.procs;
    }

    /// Merges a disjoint set measured over the same period (e.g. tree + worker threads).
    pub fn merge(&mut self, other: &ProcDelta) {
        self.utime += other.utime;
        self.stime += other.stime;
        self.vcs += other.vcs;
        self.ivcs += other.ivcs;
        self.read_bytes = add_opt(self.read_bytes, other.read_bytes);
        self.write_bytes = add_opt(self.write_bytes, other.write_bytes);
        self.rss_pages += other.rss_pages;
        self.rss_peak_pages += other.rss_peak_pages;
        self.procs += other.procs;
    }

    /// In seconds and KiB.
    pub fn cost(&self, units: KernelUnits) -> ProcCost {
        let tck = units.clk_tck.max(1) as f64;
        let kb = units.page_size / 1024;
        ProcCost {
            cpu_user_s: self.utime as f64 / tck,
            cpu_sys_s: self.stime as f64 / tck,
            vcs: self.vcs,
            ivcs: self.ivcs,
            rss_kb: self.rss_pages * kb,
            rss_peak_kb: self.rss_peak_pages * kb,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            procs: self.procs,
        }
    }
}

/// One line of the process table scan.
#[derive(Debug, Clone, Copy)]
struct Row {
    pid: u32,
    ppid: u32,
    threads: u64,
    c: TaskCounters,
}

/// Reads process and thread sets, reusing its buffers between samples.
#[derive(Debug)]
pub struct SetReader {
    rd: Reader,
    ids: Vec<u32>,
    tids: Vec<u32>,
    rows: Vec<Row>,
    in_tree: HashSet<u32>,
}

impl SetReader {
    /// A reader over `reader`'s root.
    pub fn new(rd: Reader) -> SetReader {
        SetReader {
            rd,
            ids: Vec::new(),
            tids: Vec::new(),
            rows: Vec::new(),
            in_tree: HashSet::new(),
        }
    }

    /// The underlying file reader.
    pub fn reader(&mut self) -> &mut Reader {
        &mut self.rd
    }

    /// `/proc/uptime` in clock ticks (the clock process start times use).
    pub fn uptime_ticks(&mut self, units: KernelUnits) -> Option<u64> {
        let text = self.rd.read(format_args!("uptime"))?;
        let secs: f64 = text.split_ascii_whitespace().next()?.parse().ok()?;
        Some((secs * units.clk_tck as f64) as u64)
    }

    /// Counters of `/proc/<pid>` (process totals) or, with `tid`, of one thread.
    fn task(&mut self, pid: u32, tid: Option<u32>, io: bool) -> Option<(u32, u64, TaskCounters)> {
        let (ppid, threads, start, utime, stime, rss) = {
            let text = match tid {
                Some(t) => self.rd.read(format_args!("{pid}/task/{t}/stat"))?,
                None => self.rd.read(format_args!("{pid}/stat"))?,
            };
            let s = parse_pid_stat(&text)?;
            (
                s.ppid,
                s.num_threads,
                s.starttime,
                s.utime,
                s.stime,
                s.rss_pages,
            )
        };
        let ctx = match tid {
            Some(t) => self.rd.read(format_args!("{pid}/task/{t}/status")),
            None => self.rd.read(format_args!("{pid}/status")),
        }
        .and_then(|t| parse_status_ctxt(&t));
        let io = if io {
            match tid {
                Some(t) => self.rd.read(format_args!("{pid}/task/{t}/io")),
                None => self.rd.read(format_args!("{pid}/io")),
            }
            .and_then(|t| parse_io(&t))
        } else {
            None
        };
        let c = TaskCounters {
            start,
            utime,
            stime,
            ctx,
            rss_pages: if tid.is_some() { 0 } else { rss },
            io,
        };
        Some((ppid, threads, c))
    }

    /// Context switches summed over all threads of `pid` (the process's status file only
    /// has its main thread's). Threads that exited are not included.
    fn all_threads_ctx(&mut self, pid: u32) -> Option<CtxSwitches> {
        let mut tids = std::mem::take(&mut self.tids);
        self.rd.numeric_entries(&format!("{pid}/task"), &mut tids);
        let mut sum = CtxSwitches::default();
        let mut any = false;
        for &t in &tids {
            if let Some(c) = self
                .rd
                .read(format_args!("{pid}/task/{t}/status"))
                .and_then(|t| parse_status_ctxt(&t))
            {
                sum.voluntary += c.voluntary;
                sum.involuntary += c.involuntary;
                any = true;
            }
        }
        self.tids = tids;
        any.then_some(sum)
    }

    /// The processes descending from `roots` (roots included) right now, with their counters.
    /// A multi-threaded member's context switches are summed over its threads.
    pub fn tree(&mut self, roots: &[u32]) -> ProcSet {
        let mut ids = std::mem::take(&mut self.ids);
        self.rd.numeric_entries("", &mut ids);
        self.rows.clear();
        for &pid in &ids {
            // Pass 1: stat only (cheap), to learn the parent links.
            let Some(text) = self.rd.read(format_args!("{pid}/stat")) else {
                continue;
            };
            let Some(s) = parse_pid_stat(&text) else {
                continue;
            };
            self.rows.push(Row {
                pid,
                ppid: s.ppid,
                threads: s.num_threads,
                c: TaskCounters {
                    start: s.starttime,
                    utime: s.utime,
                    stime: s.stime,
                    ctx: None,
                    rss_pages: s.rss_pages,
                    io: None,
                },
            });
        }
        self.ids = ids;
        self.in_tree.clear();
        for r in &self.rows {
            if roots.contains(&r.pid) {
                self.in_tree.insert(r.pid);
            }
        }
        loop {
            let before = self.in_tree.len();
            for r in &self.rows {
                if self.in_tree.contains(&r.ppid) {
                    self.in_tree.insert(r.pid);
                }
            }
            if self.in_tree.len() == before {
                break;
            }
        }
        let mut set = ProcSet::default();
        let rows = std::mem::take(&mut self.rows);
        for r in &rows {
            if !self.in_tree.contains(&r.pid) {
                continue;
            }
            let mut c = r.c;
            c.ctx = if r.threads > 1 {
                self.all_threads_ctx(r.pid)
            } else {
                self.rd
                    .read(format_args!("{}/status", r.pid))
                    .and_then(|t| parse_status_ctxt(&t))
            };
            c.io = self
                .rd
                .read(format_args!("{}/io", r.pid))
                .and_then(|t| parse_io(&t));
            set.members.insert(r.pid, c);
        }
        self.rows = rows;
        set
    }

    /// The process `pid` as a whole (CPU of all threads, dead ones included; RSS; io).
    pub fn process(&mut self, pid: u32) -> Option<TaskCounters> {
        self.task(pid, None, true).map(|(_, _, c)| c)
    }

    /// The threads of `pid`, split into those in `workers` (read with their io) and the
    /// others (CPU and context switches only).
    pub fn threads(&mut self, pid: u32, workers: &[u32]) -> (ProcSet, ProcSet) {
        let mut tids = std::mem::take(&mut self.tids);
        self.rd.numeric_entries(&format!("{pid}/task"), &mut tids);
        let (mut w, mut o) = (ProcSet::default(), ProcSet::default());
        for &t in &tids {
            let is_worker = workers.contains(&t);
            if let Some((_, _, c)) = self.task(pid, Some(t), is_worker) {
                if is_worker { &mut w } else { &mut o }.members.insert(t, c);
            }
        }
        self.tids = tids;
        (w, o)
    }
}
