//! `/proc/stat`: whole-machine CPU ticks, context switches and interrupts, and the vmstat
//! derivation of `us sy id wa st cs in` from two snapshots (procps-ng's vmstat.c).

use crate::counter::{Notes, Width};
use dbdelta_model::os::HostCpu;

/// The aggregate `cpu` line, in clock ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    /// Normal user time (includes guest).
    pub user: u64,
    /// Niced user time (includes guest_nice).
    pub nice: u64,
    /// Kernel time.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Waiting for I/O (may decrease).
    pub iowait: u64,
    /// Hard interrupts.
    pub irq: u64,
    /// Soft interrupts.
    pub softirq: u64,
    /// Stolen by the hypervisor.
    pub steal: u64,
    /// Running a guest (already inside `user`).
    pub guest: u64,
    /// Running a niced guest (already inside `nice`).
    pub guest_nice: u64,
}

impl CpuTicks {
    const NAMES: [&'static str; 10] = [
        "cpu.user",
        "cpu.nice",
        "cpu.system",
        "cpu.idle",
        "cpu.iowait",
        "cpu.irq",
        "cpu.softirq",
        "cpu.steal",
        "cpu.guest",
        "cpu.guest_nice",
    ];

    fn fields(&self) -> [u64; 10] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
    }

    fn from_fields(f: [u64; 10]) -> CpuTicks {
        CpuTicks {
            user: f[0],
            nice: f[1],
            system: f[2],
            idle: f[3],
            iowait: f[4],
            irq: f[5],
            softirq: f[6],
            steal: f[7],
            guest: f[8],
            guest_nice: f[9],
        }
    }
}

/// What dbdelta reads from `/proc/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatCounters {
    /// The aggregate `cpu` line.
    pub cpu: CpuTicks,
    /// `ctxt`: context switches since boot.
    pub ctxt: u64,
    /// First number of `intr`: interrupts since boot.
    pub intr: u64,
    /// Number of `cpuN` lines (online CPUs).
    pub ncpu: u32,
}

/// Parses `/proc/stat`. `None` when the `cpu` line is missing or malformed. Fields a kernel
/// does not print (steal, guest on old kernels) are 0.
pub fn parse_stat(text: &str) -> Option<StatCounters> {
    let mut out = StatCounters::default();
    let mut have_cpu = false;
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        match key {
            "cpu" => {
                let mut f = [0u64; 10];
                let mut n = 0;
                for (slot, tok) in f.iter_mut().zip(it) {
                    *slot = tok.parse().ok()?;
                    n += 1;
                }
                if n < 4 {
                    return None;
                }
                out.cpu = CpuTicks::from_fields(f);
                have_cpu = true;
            }
            "ctxt" => out.ctxt = it.next()?.parse().ok()?,
            "intr" => out.intr = it.next()?.parse().ok()?,
            k if k.len() > 3
                && k.starts_with("cpu")
                && k[3..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                out.ncpu += 1
            }
            _ => {}
        }
    }
    have_cpu.then_some(out)
}

/// Differences of [`StatCounters`] over a period; addable, so totals are exact sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatDelta {
    /// Tick deltas per CPU state.
    pub cpu: CpuTicks,
    /// Context switches.
    pub ctxt: u64,
    /// Interrupts.
    pub intr: u64,
}

impl StatDelta {
    /// `b − a`, counter by counter (backwards → 0 with a note).
    pub fn between(a: &StatCounters, b: &StatCounters, notes: &mut Notes) -> StatDelta {
        let (fa, fb) = (a.cpu.fields(), b.cpu.fields());
        let mut f = [0u64; 10];
        for i in 0..10 {
            f[i] = notes.delta(CpuTicks::NAMES[i], fa[i], fb[i], Width::U64);
        }
        StatDelta {
            cpu: CpuTicks::from_fields(f),
            ctxt: notes.delta("ctxt", a.ctxt, b.ctxt, Width::U64),
            intr: notes.delta("intr", a.intr, b.intr, Width::U64),
        }
    }

    /// Adds another period.
    pub fn add(&mut self, o: &StatDelta) {
        let (a, b) = (self.cpu.fields(), o.cpu.fields());
        let mut f = [0u64; 10];
        for i in 0..10 {
            f[i] = a[i] + b[i];
        }
        self.cpu = CpuTicks::from_fields(f);
        self.ctxt += o.ctxt;
        self.intr += o.intr;
    }

    /// vmstat's columns: Div = (user+nice) + (system+irq+softirq) + idle + iowait + steal;
    /// us = max(user+nice − guest − guest_nice, 0); each column = 100·x/Div. `cs`/`in` are
    /// per second of `seconds`. All zero when no tick elapsed.
    pub fn host(&self, seconds: f64) -> HostCpu {
        let c = &self.cpu;
        let us_raw = c.user + c.nice;
        let gu = c.guest + c.guest_nice;
        let sy = c.system + c.irq + c.softirq;
        let div = us_raw + sy + c.idle + c.iowait + c.steal;
        let pct = |x: u64| {
            if div == 0 {
                0.0
            } else {
                100.0 * x as f64 / div as f64
            }
        };
        let per_s = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                0.0
            }
        };
        HostCpu {
            us: pct(us_raw.saturating_sub(gu)),
            sy: pct(sy),
            id: pct(c.idle),
            wa: pct(c.iowait),
            st: pct(c.steal),
            gu: pct(gu.min(us_raw)),
            cs_per_s: per_s(self.ctxt),
            intr_per_s: per_s(self.intr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_short_and_full_cpu_lines() {
        let s = parse_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\nctxt 7\nintr 9 1 2\n").unwrap();
        assert_eq!(s.cpu.idle, 4);
        assert_eq!(s.cpu.steal, 0);
        assert_eq!((s.ctxt, s.intr, s.ncpu), (7, 9, 1));
        assert!(parse_stat("cpu 1 x 3 4\n").is_none());
        assert!(parse_stat("ctxt 1\n").is_none());
    }
}
