//! `/proc/diskstats` for the selected device(s) and the iostat -x derivation of
//! `r/s rkB/s w/s wkB/s %util` (sysstat's iostat.c).
//!
//! When several devices are measured together (a device-mapper or md volume resolved to its
//! members) their counts are summed and `%util` is the mean over members, as iostat does for
//! device groups. A period in which any member is missing from either snapshot has no disk
//! figures (and a note): the rates are *partial* over the window, never zero-filled.

use crate::counter::{Notes, Width};
use dbdelta_model::os::DiskRates;

/// Cumulative counters of one block device.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiskCounters {
    /// Kernel name (`sda`, `nvme0n1`, `dm-0`).
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Writes completed.
    pub writes: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
    /// Milliseconds with I/O in flight (field 10; printed `%u`, wraps at 2^32).
    pub io_ticks: u64,
}

/// Parses the lines of `/proc/diskstats` whose name is in `wanted`, into `out` (cleared
/// first, buffers reused). Malformed lines are skipped.
pub fn parse_diskstats_into(text: &str, wanted: &[String], out: &mut Vec<DiskCounters>) {
    out.clear();
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(_major), Some(_minor), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if !wanted.iter().any(|w| w == name) {
            continue;
        }
        let mut f = [0u64; 10];
        let mut ok = true;
        for slot in f.iter_mut() {
            match it.next().and_then(|t| t.parse().ok()) {
                Some(v) => *slot = v,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            out.push(DiskCounters {
                name: name.to_string(),
                reads: f[0],
                sectors_read: f[2],
                writes: f[4],
                sectors_written: f[6],
                io_ticks: f[9],
            });
        }
    }
}

/// Parses every device line of `/proc/diskstats` (convenience for tests and tools).
pub fn parse_diskstats(text: &str) -> Vec<DiskCounters> {
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_ascii_whitespace().nth(2).map(str::to_string))
        .collect();
    let mut out = Vec::new();
    parse_diskstats_into(text, &names, &mut out);
    out
}

/// Summed device deltas over one or more periods.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiskDelta {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read.
    pub sectors_read: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub sectors_written: u64,
    /// io_ticks milliseconds, summed over members.
    pub io_ticks: u64,
    /// Seconds covered.
    pub seconds: f64,
}

impl DiskDelta {
    /// Deltas of the `members` between two snapshots over `seconds`; `None` (with a note)
    /// when a member is missing from either snapshot.
    pub fn between(
        members: &[String],
        a: &[DiskCounters],
        b: &[DiskCounters],
        seconds: f64,
        notes: &mut Notes,
    ) -> Option<DiskDelta> {
        let mut d = DiskDelta {
            seconds,
            ..DiskDelta::default()
        };
        for m in members {
            let (Some(x), Some(y)) = (
                a.iter().find(|c| &c.name == m),
                b.iter().find(|c| &c.name == m),
            ) else {
                notes.add(format!(
                    "device {m} missing from /proc/diskstats in a period; disk rates are partial"
                ));
                return None;
            };
            d.reads += notes.delta(&format!("{m}.reads"), x.reads, y.reads, Width::U64);
            d.sectors_read += notes.delta(
                &format!("{m}.sectors_read"),
                x.sectors_read,
                y.sectors_read,
                Width::U64,
            );
            d.writes += notes.delta(&format!("{m}.writes"), x.writes, y.writes, Width::U64);
            d.sectors_written += notes.delta(
                &format!("{m}.sectors_written"),
                x.sectors_written,
                y.sectors_written,
                Width::U64,
            );
            d.io_ticks += notes.delta(&format!("{m}.io_ticks"), x.io_ticks, y.io_ticks, Width::U32);
        }
        Some(d)
    }

    /// Adds another period.
    pub fn add(&mut self, o: &DiskDelta) {
        self.reads += o.reads;
        self.sectors_read += o.sectors_read;
        self.writes += o.writes;
        self.sectors_written += o.sectors_written;
        self.io_ticks += o.io_ticks;
        self.seconds += o.seconds;
    }

    /// iostat rates: per second of covered time; KiB = sectors / 2; util = io_ticks ms /
    /// (members × seconds × 1000) × 100.
    pub fn rates(&self, device: &str, members: &[String]) -> DiskRates {
        let t = self.seconds;
        let per_s = |x: u64| if t > 0.0 { x as f64 / t } else { 0.0 };
        let n = members.len().max(1) as f64;
        DiskRates {
            device: device.to_string(),
            members: members.to_vec(),
            r_s: per_s(self.reads),
            rkb_s: per_s(self.sectors_read) / 2.0,
            w_s: per_s(self.writes),
            wkb_s: per_s(self.sectors_written) / 2.0,
            util: if t > 0.0 {
                self.io_ticks as f64 / (n * t * 1000.0) * 100.0
            } else {
                0.0
            },
            seconds: t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_old_and_new_formats() {
        let t = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 1 sda1 1 2 3\n254 0 vda 1 0 8 0 2 0 16 0 0 30 0 0 0 0 0 0 0\n";
        let all = parse_diskstats(t);
        assert_eq!(all.len(), 2, "malformed sda1 skipped");
        assert_eq!(all[0].io_ticks, 10);
        assert_eq!(all[1].sectors_written, 16);
    }
}
