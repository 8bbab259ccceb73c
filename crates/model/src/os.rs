//! Operating-system measurements of one measured window: host CPU, disk, server process
//! tree and client process, per interval and in total, and the per-operation hardware costs
//! derived from them (the `sb.met` figures).
//!
//! These are plain results; `dbdelta-osmetrics` produces them from `/proc` and `/sys`.
//! Conventions:
//! - CPU percentages are of the whole machine (all CPUs = 100 %), derived from tick deltas of
//!   `/proc/stat` like vmstat (`us` = user+nice−guest, `sy` = system+irq+softirq), but kept as
//!   floating point instead of vmstat's integer rounding.
//! - Disk rates follow iostat -x (`rkB/s` = sectors read / 2 per second, `%util` = io_ticks
//!   delta / elapsed ms × 100, averaged over the devices when several are summed).
//! - Absent means "not measured" (`None`), never zero: an unresolvable data-dir device or an
//!   unknown server process gives `None`, not a row of zeros.

use serde::{Deserialize, Serialize};

/// Whole-machine CPU use and scheduler activity over a period (vmstat's `us sy id wa st cs in`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HostCpu {
    /// User time incl. nice, excluding guest time, % of all CPUs.
    pub us: f64,
    /// System time incl. irq and softirq, % of all CPUs.
    pub sy: f64,
    /// Idle, % of all CPUs.
    pub id: f64,
    /// I/O wait, % of all CPUs (unreliable by kernel design; may be 0 when it went backwards).
    pub wa: f64,
    /// Stolen by the hypervisor, % of all CPUs.
    pub st: f64,
    /// Guest (KVM) time, % of all CPUs (vmstat's `gu`; not part of `us`).
    pub gu: f64,
    /// Context switches per second, whole machine.
    pub cs_per_s: f64,
    /// Interrupts per second, whole machine (includes the clock, like vmstat `in`).
    pub intr_per_s: f64,
}

impl HostCpu {
    /// `us + sy`: the busy share the published `cpu/o` is built from.
    pub fn busy(&self) -> f64 {
        self.us + self.sy
    }
}

/// Block-device rates over a period (iostat -x columns).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiskRates {
    /// Device name: the disk (`nvme0n1`), or `dm-0(sda+sdb)` for a volume over several disks.
    pub device: String,
    /// The `/proc/diskstats` names whose counters were summed.
    pub members: Vec<String>,
    /// Reads completed per second.
    pub r_s: f64,
    /// KiB read per second.
    pub rkb_s: f64,
    /// Writes completed per second.
    pub w_s: f64,
    /// KiB written per second.
    pub wkb_s: f64,
    /// Percent of time the device had I/O in flight (mean over members).
    pub util: f64,
    /// Seconds these rates cover (less than the window when a device vanished meanwhile).
    pub seconds: f64,
}

/// Resource use of a set of processes or threads over a period.
///
/// CPU and counts are deltas over the period; RSS is a gauge at the end (and its peak).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcCost {
    /// User CPU seconds (utime).
    pub cpu_user_s: f64,
    /// System CPU seconds (stime).
    pub cpu_sys_s: f64,
    /// Voluntary context switches.
    pub vcs: u64,
    /// Involuntary context switches.
    pub ivcs: u64,
    /// Resident set size at the end, KiB (summed over processes, so shared pages count
    /// once per process).
    pub rss_kb: u64,
    /// Highest summed RSS seen at any sample, KiB.
    pub rss_peak_kb: u64,
    /// Bytes the processes caused to be read from storage (`/proc/PID/io` read_bytes);
    /// `None` when no process's io file was readable.
    pub read_bytes: Option<u64>,
    /// Bytes the processes caused to be written to storage (write_bytes); `None` when
    /// unreadable.
    pub write_bytes: Option<u64>,
    /// Processes (or threads) in the set at the end.
    pub procs: u32,
}

impl ProcCost {
    /// User + system CPU seconds.
    pub fn cpu_s(&self) -> f64 {
        self.cpu_user_s + self.cpu_sys_s
    }
}

/// One sampling period (normally 1 s) of the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsInterval {
    /// Seconds since the window began, at the end of this period.
    pub t: f64,
    /// Length of this period, seconds.
    pub seconds: f64,
    /// Host CPU and scheduler rates.
    pub host: HostCpu,
    /// Data-dir device rates, when the device is known and present.
    pub disk: Option<DiskRates>,
    /// Server process tree (or embedded-engine worker threads), when known.
    pub server: Option<ProcCost>,
    /// A proxy between client and server (a managed pgbouncer), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProcCost>,
    /// The dbdelta process (minus worker threads when those are the server).
    pub client: ProcCost,
}

/// Totals over the whole measured window (exact: last minus first counter values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsSummary {
    /// Number of snapshots taken (intervals + 1).
    pub samples: u32,
    /// Window length, seconds.
    pub seconds: f64,
    /// Online CPUs seen in `/proc/stat`.
    pub ncpu: u32,
    /// Host CPU over the window.
    pub host: HostCpu,
    /// Data-dir device over the window; `None` when it could not be resolved or read.
    pub disk: Option<DiskRates>,
    /// Server processes over the window; `None` when no server was given.
    pub server: Option<ProcCost>,
    /// The proxy's processes over the window; `None` without a proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProcCost>,
    /// The client over the window.
    pub client: ProcCost,
    /// Caveats: unresolved device and why, counters that went backwards, vanished
    /// processes or devices, unreadable files.
    pub notes: Vec<String>,
}

/// Everything the OS sampler recorded for one measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsSamples {
    /// Totals over the window.
    pub summary: OsSummary,
    /// Per-period series.
    pub intervals: Vec<OsInterval>,
}

/// Hardware cost per operation for one step.
///
/// The first six are in the units of the published `sb.met` reports (spec A9.3): `cpu_o` is
/// mean host (us+sy) **percent** divided by operations per second — not CPU time. The others
/// are the clearer absolute figures. For scan, "operation" is a thousand rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpCosts {
    /// Published `cpu/o`: mean host (us+sy) % ÷ ops/s.
    pub cpu_o: f64,
    /// Published `cs/o`: host context switches per op.
    pub cs_o: f64,
    /// Published `r/o`: device reads per op (`None` without a device).
    pub r_o: Option<f64>,
    /// Published `rKB/o`: device KiB read per op.
    pub rkb_o: Option<f64>,
    /// Published `wKB/o`: device KiB written per op.
    pub wkb_o: Option<f64>,
    /// Published `o/s`: operations per second as given.
    pub o_s: f64,
    /// Whole-host CPU µs per op: `cpu_o × ncpu / 100 × 1e6`.
    pub host_cpu_us_op: f64,
    /// Server process tree (or worker threads) CPU µs per op.
    pub server_cpu_us_op: Option<f64>,
    /// Client (dbdelta) CPU µs per op.
    pub client_cpu_us_op: f64,
    /// CPU µs per op of a proxy between client and server (a managed pgbouncer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_cpu_us_op: Option<f64>,
    /// Server context switches (voluntary + involuntary) per op.
    pub server_cs_op: Option<f64>,
    /// KiB the server read from storage per op (`/proc/PID/io`).
    pub server_rkb_op: Option<f64>,
    /// KiB the server wrote to storage per op.
    pub server_wkb_op: Option<f64>,
}
