//! The sampler: snapshots of all counters, their differences, and the thread that takes a
//! snapshot every period during the measured window.
//!
//! Totals are exact: the summary is the sum of the integer counter deltas of all periods,
//! which telescopes to *last snapshot − first snapshot* whenever no counter was reset (and
//! stays correct when one was). The per-period series keeps per-interval rates. A final
//! fragment shorter than half a period (the stop rarely falls on a tick) is merged into the
//! preceding period instead of being listed on its own.

use crate::counter::Notes;
use crate::device::{resolve_data_dir, ResolvedDevice, SysPaths};
use crate::disk::{parse_diskstats_into, DiskCounters, DiskDelta};
use crate::procset::{ProcDelta, ProcSet, SetReader, TaskCounters};
use crate::reader::Reader;
use crate::stat::{parse_stat, StatCounters, StatDelta};
use crate::sys::KernelUnits;
use dbdelta_model::os::{HostCpu, OsInterval, OsSamples, OsSummary, ProcCost};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Returns the thread ids (TIDs) of the worker threads that *are* the server — for an
/// embedded engine (SQLite) the server CPU is those threads' CPU and the client is the rest
/// of the process. Called once per sample.
pub type WorkerTids = Arc<dyn Fn() -> Vec<u32> + Send + Sync>;

/// Which block device's counters to record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// No disk metrics.
    #[default]
    None,
    /// This `/proc/diskstats` name, as given (`--device NAME`); no resolution.
    Named(String),
    /// The device(s) holding this directory (a target's data dir), resolved at start.
    DataDir(PathBuf),
}

/// What to sample.
#[derive(Clone)]
pub struct SamplerConfig {
    /// Sampling period (default 1 s).
    pub period: Duration,
    /// The block device to measure.
    pub device: DeviceChoice,
    /// Root PIDs of the server (e.g. the postmaster); their descendants at each sample are
    /// included. Empty: no server process tree.
    pub server_pids: Vec<u32>,
    /// Root PIDs of a proxy between client and server (a managed pgbouncer): a third
    /// process group beside server and client. Empty: no proxy.
    pub proxy_pids: Vec<u32>,
    /// Worker threads that are the server (embedded engines); `None`: no such threads.
    pub worker_tids: Option<WorkerTids>,
    /// The client process (default: this process).
    pub client_pid: u32,
    /// `/proc` (a fixture directory in tests).
    pub proc_root: PathBuf,
    /// `/sys` and mountinfo, for device resolution.
    pub sys: SysPaths,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            period: Duration::from_secs(1),
            device: DeviceChoice::None,
            server_pids: Vec::new(),
            proxy_pids: Vec::new(),
            worker_tids: None,
            client_pid: std::process::id(),
            proc_root: PathBuf::from("/proc"),
            sys: SysPaths::default(),
        }
    }
}

impl std::fmt::Debug for SamplerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplerConfig")
            .field("period", &self.period)
            .field("device", &self.device)
            .field("server_pids", &self.server_pids)
            .field("proxy_pids", &self.proxy_pids)
            .field("worker_tids", &self.worker_tids.is_some())
            .field("client_pid", &self.client_pid)
            .field("proc_root", &self.proc_root)
            .finish()
    }
}

/// All counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Seconds since the sampler's epoch.
    pub t: f64,
    /// `/proc/uptime` in ticks, read before the process scans.
    pub uptime_ticks: Option<u64>,
    /// `/proc/stat`.
    pub stat: Option<StatCounters>,
    /// The measured devices found in `/proc/diskstats`.
    pub disks: Vec<DiskCounters>,
    /// The server process tree.
    pub tree: Option<ProcSet>,
    /// The proxy's process tree.
    pub proxy: Option<ProcSet>,
    /// The worker threads (server side of an embedded engine).
    pub workers: ProcSet,
    /// The client's other threads.
    pub client_threads: ProcSet,
    /// The client process as a whole.
    pub client: Option<TaskCounters>,
}

/// Integer deltas over one or more periods (addable).
#[derive(Debug, Clone, Copy, Default)]
pub struct RawDelta {
    /// Seconds covered.
    pub seconds: f64,
    /// Host counters.
    pub stat: Option<StatDelta>,
    /// Device counters (absent when no device, or a member vanished in every period).
    pub disk: Option<DiskDelta>,
    /// Server tree plus worker threads.
    pub server: Option<ProcDelta>,
    /// The proxy's tree.
    pub proxy: Option<ProcDelta>,
    /// Client process minus worker threads.
    pub client: ProcDelta,
}

impl RawDelta {
    /// Adds the following period.
    pub fn add(&mut self, later: &RawDelta) {
        self.seconds += later.seconds;
        self.stat = match (self.stat, later.stat) {
            (Some(mut a), Some(b)) => {
                a.add(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
        self.disk = match (self.disk, later.disk) {
            (Some(mut a), Some(b)) => {
                a.add(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
        for (mine, theirs) in [
            (&mut self.server, later.server),
            (&mut self.proxy, later.proxy),
        ] {
            *mine = match (*mine, theirs) {
                (Some(mut a), Some(b)) => {
                    a.add(&b);
                    Some(a)
                }
                (a, b) => a.or(b),
            };
        }
        self.client.add(&later.client);
    }
}

/// Takes snapshots and turns pairs of them into results.
pub struct Collector {
    sets: SetReader,
    units: KernelUnits,
    device: Option<ResolvedDevice>,
    server_pids: Vec<u32>,
    proxy_pids: Vec<u32>,
    worker_tids: Option<WorkerTids>,
    client_pid: u32,
    period: Duration,
    notes: Notes,
    ncpu: u32,
}

impl Collector {
    /// Prepares sampling (resolves the device; notes why when it cannot).
    pub fn new(cfg: &SamplerConfig) -> Collector {
        let mut notes = Notes::default();
        let device = match &cfg.device {
            DeviceChoice::None => None,
            DeviceChoice::Named(n) => Some(ResolvedDevice::named(n)),
            DeviceChoice::DataDir(dir) => match resolve_data_dir(dir, &cfg.sys) {
                Ok(d) => {
                    notes.add(format!("disk: {}", d.how));
                    Some(d)
                }
                Err(why) => {
                    notes.add(format!("no disk metrics: {why}"));
                    None
                }
            },
        };
        Collector {
            sets: SetReader::new(Reader::new(&cfg.proc_root)),
            units: KernelUnits::detect(&cfg.proc_root),
            device,
            server_pids: cfg.server_pids.clone(),
            proxy_pids: cfg.proxy_pids.clone(),
            worker_tids: cfg.worker_tids.clone(),
            client_pid: cfg.client_pid,
            period: cfg.period,
            notes,
            ncpu: 0,
        }
    }

    /// The device being measured, if any.
    pub fn device(&self) -> Option<&ResolvedDevice> {
        self.device.as_ref()
    }

    /// Reads every counter now; `t` is seconds since the window's epoch.
    pub fn snapshot(&mut self, t: f64) -> Snapshot {
        let mut s = Snapshot {
            t,
            ..Snapshot::default()
        };
        let rd = self.sets.reader();
        s.stat = rd.read(format_args!("stat")).and_then(|x| parse_stat(&x));
        if let Some(dev) = &self.device {
            if let Some(text) = rd.read(format_args!("diskstats")) {
                parse_diskstats_into(&text, &dev.members, &mut s.disks);
            }
        }
        s.uptime_ticks = self.sets.uptime_ticks(self.units);
        if !self.server_pids.is_empty() {
            s.tree = Some(self.sets.tree(&self.server_pids));
        }
        if !self.proxy_pids.is_empty() {
            s.proxy = Some(self.sets.tree(&self.proxy_pids));
        }
        let workers = self.worker_tids.as_ref().map(|f| f()).unwrap_or_default();
        s.client = self.sets.process(self.client_pid);
        (s.workers, s.client_threads) = self.sets.threads(self.client_pid, &workers);
        s
    }

    /// The deltas from `a` to `b`.
    pub fn diff(&mut self, a: &Snapshot, b: &Snapshot) -> RawDelta {
        if let Some(st) = &b.stat {
            self.ncpu = st.ncpu;
        }
        let notes = &mut self.notes;
        let seconds = (b.t - a.t).max(0.0);
        let stat = match (&a.stat, &b.stat) {
            (Some(x), Some(y)) => Some(StatDelta::between(x, y, notes)),
            _ => {
                notes.add("/proc/stat unreadable in a period");
                None
            }
        };
        let disk = self
            .device
            .as_ref()
            .and_then(|d| DiskDelta::between(&d.members, &a.disks, &b.disks, seconds, notes));
        let up = a.uptime_ticks;
        let workers = ProcDelta::between("worker thread", &a.workers, &b.workers, up, notes);
        let others = ProcDelta::between(
            "client thread",
            &a.client_threads,
            &b.client_threads,
            up,
            notes,
        );
        if b.tree.as_ref().is_some_and(|t| t.members.is_empty()) {
            notes.add(format!(
                "server process(es) {:?} not found in a sample",
                self.server_pids
            ));
        }
        let tree = match (&a.tree, &b.tree) {
            (Some(x), Some(y)) => Some(ProcDelta::between("server process", x, y, up, notes)),
            _ => None,
        };
        let proxy = match (&a.proxy, &b.proxy) {
            (Some(x), Some(y)) => Some(ProcDelta::between("proxy process", x, y, up, notes)),
            _ => None,
        };
        let server = match (tree, self.worker_tids.is_some()) {
            (Some(mut t), true) => {
                t.merge(&workers);
                Some(t)
            }
            (Some(t), false) => Some(t),
            (None, true) => Some(workers),
            (None, false) => None,
        };
        let mut client = ProcDelta::default();
        match (a.client, b.client) {
            (Some(x), Some(y)) if x.start == y.start => {
                let one = |c: TaskCounters| ProcSet {
                    members: [(self.client_pid, c)].into_iter().collect(),
                };
                let own = ProcDelta::between("client process", &one(x), &one(y), up, notes);
                client.utime = own.utime.saturating_sub(workers.utime);
                client.stime = own.stime.saturating_sub(workers.stime);
                let sub =
                    |p: Option<u64>, w: Option<u64>| p.map(|p| p.saturating_sub(w.unwrap_or(0)));
                client.read_bytes = sub(own.read_bytes, workers.read_bytes);
                client.write_bytes = sub(own.write_bytes, workers.write_bytes);
                client.rss_pages = own.rss_pages;
                client.rss_peak_pages = own.rss_peak_pages;
            }
            _ => notes.add("client process unreadable in a period"),
        }
        client.vcs = others.vcs;
        client.ivcs = others.ivcs;
        client.procs = others.procs;
        RawDelta {
            seconds,
            stat,
            disk,
            server,
            proxy,
            client,
        }
    }

    fn host(d: &RawDelta) -> HostCpu {
        d.stat.map(|s| s.host(d.seconds)).unwrap_or_default()
    }

    /// One period's results, ending at `t`.
    pub fn interval(&self, t: f64, d: &RawDelta) -> OsInterval {
        OsInterval {
            t,
            seconds: d.seconds,
            host: Self::host(d),
            disk: self.disk_rates(d),
            server: d.server.map(|p| p.cost(self.units)),
            proxy: d.proxy.map(|p| p.cost(self.units)),
            client: d.client.cost(self.units),
        }
    }

    fn disk_rates(&self, d: &RawDelta) -> Option<dbdelta_model::os::DiskRates> {
        let dev = self.device.as_ref()?;
        Some(d.disk?.rates(&dev.name, &dev.members))
    }

    /// The window's totals.
    pub fn summary(&self, samples: u32, total: &RawDelta) -> OsSummary {
        let mut notes = self.notes.to_vec();
        if let (Some(dev), Some(disk)) = (&self.device, &total.disk) {
            if disk.seconds + 1e-9 < total.seconds {
                notes.push(format!(
                    "disk {} measured over {:.1} of {:.1} s",
                    dev.name, disk.seconds, total.seconds
                ));
            }
        } else if self.device.is_some() {
            notes.push("disk: device never found in /proc/diskstats".to_string());
        }
        OsSummary {
            samples,
            seconds: total.seconds,
            ncpu: self.ncpu,
            host: Self::host(total),
            disk: self.disk_rates(total),
            server: total.server.map(|p| p.cost(self.units)),
            proxy: total.proxy.map(|p| p.cost(self.units)),
            client: total.client.cost(self.units),
            notes,
        }
    }

    /// Results from an ordered list of snapshots (what the thread does incrementally).
    pub fn summarize(&mut self, snaps: &[Snapshot]) -> OsSamples {
        let mut acc = Accum::default();
        for w in snaps.windows(2) {
            let d = self.diff(&w[0], &w[1]);
            acc.push(self, w[1].t, d, false);
        }
        acc.finish(self, snaps.len() as u32)
    }
}

/// Running totals and series.
#[derive(Default)]
struct Accum {
    total: Option<RawDelta>,
    last: Option<RawDelta>,
    intervals: Vec<OsInterval>,
}

impl Accum {
    fn push(&mut self, c: &Collector, t: f64, d: RawDelta, last_one: bool) {
        match &mut self.total {
            Some(tot) => tot.add(&d),
            None => self.total = Some(d),
        }
        let short = d.seconds < c.period.as_secs_f64() / 2.0;
        if let (true, true, Some(prev)) = (last_one, short, self.last.as_mut()) {
            prev.add(&d);
            let merged = *prev;
            self.intervals.pop();
            self.intervals.push(c.interval(t, &merged));
        } else {
            self.intervals.push(c.interval(t, &d));
            self.last = Some(d);
        }
    }

    fn finish(self, c: &Collector, samples: u32) -> OsSamples {
        let total = self.total.unwrap_or_default();
        OsSamples {
            summary: c.summary(samples, &total),
            intervals: self.intervals,
        }
    }
}

/// Starts sampling threads.
#[derive(Debug)]
pub struct Sampler;

/// A running sampler; [`SamplerHandle::stop`] ends it and returns what it measured.
/// Dropping the handle also stops the thread (its results are discarded).
#[derive(Debug)]
pub struct SamplerHandle {
    stop: Sender<()>,
    thread: JoinHandle<OsSamples>,
    device: Option<ResolvedDevice>,
}

impl Sampler {
    /// Takes the first snapshot now (the window starts when this returns) and samples every
    /// `cfg.period` on a new thread until stopped.
    pub fn start(cfg: SamplerConfig) -> std::io::Result<SamplerHandle> {
        let mut c = Collector::new(&cfg);
        let device = c.device().cloned();
        let epoch = Instant::now();
        let first = c.snapshot(0.0);
        let period = cfg.period.max(Duration::from_millis(10));
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("dbdelta-osmetrics".into())
            .spawn(move || {
                let mut acc = Accum::default();
                let mut prev = first;
                let mut samples = 1u32;
                let mut k = 1u32;
                loop {
                    let deadline = epoch + period * k;
                    let wait = deadline.saturating_duration_since(Instant::now());
                    let stop = !matches!(rx.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
                    let snap = c.snapshot(epoch.elapsed().as_secs_f64());
                    samples += 1;
                    let d = c.diff(&prev, &snap);
                    acc.push(&c, snap.t, d, stop);
                    prev = snap;
                    if stop {
                        break;
                    }
                    // Skip ticks missed while the machine was overloaded.
                    let due = (epoch.elapsed().as_secs_f64() / period.as_secs_f64()) as u32;
                    k = (k + 1).max(due + 1);
                }
                acc.finish(&c, samples)
            })?;
        Ok(SamplerHandle {
            stop: tx,
            thread,
            device,
        })
    }
}

impl SamplerHandle {
    /// The device whose counters are recorded, if one was resolved.
    pub fn device(&self) -> Option<&ResolvedDevice> {
        self.device.as_ref()
    }

    /// Takes a last snapshot now, ends the thread and returns all samples and the summary.
    /// Returns promptly (does not wait for the current period to end).
    pub fn stop(self) -> OsSamples {
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(s) => s,
            Err(_) => OsSamples {
                summary: OsSummary {
                    samples: 0,
                    seconds: 0.0,
                    ncpu: 0,
                    host: HostCpu::default(),
                    disk: None,
                    server: None,
                    proxy: None,
                    client: ProcCost::default(),
                    notes: vec!["OS sampler thread failed; no OS metrics".to_string()],
                },
                intervals: Vec::new(),
            },
        }
    }
}
