//! Sampler arithmetic on recorded /proc snapshots (tests/data/snap/*) with answers computed
//! by hand. Snapshot `a` is at t = 0 s, `b` at t = 2 s, `reset` and `nodisk` at t = 3 s (each
//! following `b`). The machine has 2 CPUs and 100 ticks/s, so 2 s is 400 ticks.

use dbdelta_model::os::OsSamples;
use dbdelta_osmetrics::{Collector, DeviceChoice, SamplerConfig, Snapshot};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/snap")
        .join(name)
}

fn cfg(workers: bool) -> SamplerConfig {
    SamplerConfig {
        period: Duration::from_secs(1),
        device: DeviceChoice::Named("sda".into()),
        server_pids: vec![100],
        worker_tids: workers.then(|| Arc::new(|| vec![502u32]) as _),
        client_pid: 500,
        proc_root: data("a"),
        ..SamplerConfig::default()
    }
}

fn snap(cfg: &SamplerConfig, dir: &str, t: f64) -> Snapshot {
    let mut c = Collector::new(&SamplerConfig {
        proc_root: data(dir),
        ..cfg.clone()
    });
    c.snapshot(t)
}

fn run(workers: bool, dirs: &[(&str, f64)]) -> OsSamples {
    let cfg = cfg(workers);
    let snaps: Vec<Snapshot> = dirs.iter().map(|(d, t)| snap(&cfg, d, *t)).collect();
    Collector::new(&cfg).summarize(&snaps)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {
        assert!(close($a, $b), "{} = {} ≠ {}", stringify!($a), $a, $b)
    };
}

fn has_note(s: &OsSamples, needle: &str) -> bool {
    s.summary.notes.iter().any(|n| n.contains(needle))
}

#[test]
fn host_cpu_and_scheduler_rates() {
    let s = run(false, &[("a", 0.0), ("b", 2.0)]);
    let h = s.summary.host;
    // Δ user 120 + nice 10 = 130, system 40 + irq 4 + softirq 6 = 50, idle 200, iowait 16,
    // steal 4: 400 ticks.
    assert_close!(h.us, 32.5);
    assert_close!(h.sy, 12.5);
    assert_close!(h.id, 50.0);
    assert_close!(h.wa, 4.0);
    assert_close!(h.st, 1.0);
    assert_close!(h.gu, 0.0);
    assert_close!(h.cs_per_s, 15_000.0); // Δctxt 30000 / 2 s
    assert_close!(h.intr_per_s, 2_000.0); // Δintr 4000 / 2 s
    assert_eq!(s.summary.ncpu, 2);
    assert_eq!(s.summary.samples, 2);
    assert_close!(s.summary.seconds, 2.0);
    assert_eq!(s.intervals.len(), 1);
    assert_eq!(s.intervals[0].host, h);
}

#[test]
fn disk_rates_util_and_io_ticks_wrap() {
    let s = run(false, &[("a", 0.0), ("b", 2.0)]);
    let d = s.summary.disk.clone().expect("sda measured");
    assert_eq!(d.device, "sda");
    assert_close!(d.r_s, 100.0); // 200 reads / 2 s
    assert_close!(d.rkb_s, 800.0); // 3200 sectors = 1600 KiB / 2 s
    assert_close!(d.w_s, 50.0);
    assert_close!(d.wkb_s, 1000.0); // 4000 sectors
                                    // io_ticks 2^32−500 → 0 is a 32-bit wrap of 500 ms in 2000 ms.
    assert_close!(d.util, 25.0);
    assert_close!(d.seconds, 2.0);
    assert!(!has_note(&s, "backwards"), "{:?}", s.summary.notes);
}

#[test]
fn process_tree_with_appearing_and_vanishing_children() {
    let s = run(false, &[("a", 0.0), ("b", 2.0)]);
    let p = s.summary.server.clone().expect("server tree");
    // 100: +20u +10s; 101: +50u +20s; 102 vanished (lost); 103 born after a (start 100150 >
    // uptime 100000 ticks): all of 30u 5s; 104 existed before a but first seen at b: 0.
    assert_close!(p.cpu_user_s, 1.0);
    assert_close!(p.cpu_sys_s, 0.35);
    // cs: 100: +100/+5; 101 (2 threads, summed over task/*/status): +900/+60; 103: +40/+2.
    assert_eq!((p.vcs, p.ivcs), (1040, 67));
    // io: 100 wrote 4096; 101 read 8192 wrote 4096; 103's io unreadable.
    assert_eq!(p.read_bytes, Some(8192));
    assert_eq!(p.write_bytes, Some(8192));
    // RSS at b: 1000 + 2000 + 500 + 300 pages of 4 KiB.
    assert_eq!(p.rss_kb, 15_200);
    assert_eq!(p.procs, 4);
    assert!(
        has_note(&s, "server process exited"),
        "{:?}",
        s.summary.notes
    );
    assert!(has_note(&s, "partial"), "{:?}", s.summary.notes);
    // The client: process totals, context switches summed over its threads.
    let c = &s.summary.client;
    assert_close!(c.cpu_user_s, 0.6);
    assert_close!(c.cpu_sys_s, 0.1);
    assert_eq!((c.vcs, c.ivcs), (152, 7));
    assert_eq!(c.rss_kb, 2000);
    assert_eq!((c.read_bytes, c.write_bytes), (Some(4096), Some(40960)));
    assert_eq!(c.procs, 3);
}

#[test]
fn worker_threads_are_the_server_and_not_the_client() {
    let s = run(true, &[("a", 0.0), ("b", 2.0)]);
    let p = s.summary.server.clone().unwrap();
    // Tree as above plus thread 502: +38u +6s, +100/+5 cs, wrote 32768.
    assert_close!(p.cpu_user_s, 1.38);
    assert_close!(p.cpu_sys_s, 0.41);
    assert_eq!((p.vcs, p.ivcs), (1140, 72));
    assert_eq!(p.write_bytes, Some(8192 + 32768));
    assert_eq!(p.procs, 5);
    let c = &s.summary.client;
    assert_close!(c.cpu_user_s, 0.22);
    assert_close!(c.cpu_sys_s, 0.04);
    assert_eq!((c.vcs, c.ivcs), (52, 2));
    assert_eq!(c.write_bytes, Some(8192));
    assert_eq!(c.procs, 2);
}

#[test]
fn counters_going_backwards_count_zero_for_that_interval() {
    let s = run(false, &[("a", 0.0), ("b", 2.0), ("reset", 3.0)]);
    // Interval b→reset: ctxt reset → 0 cs; iowait −2 → 0; user +100, system +20, idle +80.
    let i = &s.intervals[1];
    assert_close!(i.host.us, 50.0);
    assert_close!(i.host.sy, 10.0);
    assert_close!(i.host.id, 40.0);
    assert_close!(i.host.wa, 0.0);
    assert_close!(i.host.cs_per_s, 0.0);
    assert_close!(i.host.intr_per_s, 1000.0);
    let d = i.disk.as_ref().unwrap();
    assert_close!(d.r_s, 0.0); // reads reset 1200 → 5
    assert_close!(d.rkb_s, 800.0);
    assert_close!(d.w_s, 50.0);
    assert_close!(d.wkb_s, 500.0);
    assert_close!(d.util, 25.0);
    // Window totals are the sums of the interval deltas.
    let h = s.summary.host;
    assert_close!(h.us, 230.0 / 6.0);
    assert_close!(h.sy, 70.0 / 6.0);
    assert_close!(h.id, 280.0 / 6.0);
    assert_close!(h.wa, 16.0 / 6.0);
    assert_close!(h.cs_per_s, 10_000.0);
    let d = s.summary.disk.clone().unwrap();
    assert_close!(d.r_s, 200.0 / 3.0);
    assert_close!(d.rkb_s, 800.0);
    assert_close!(d.wkb_s, 2500.0 / 3.0);
    assert_close!(d.util, 25.0);
    for n in ["counter ctxt", "counter cpu.iowait", "counter sda.reads"] {
        assert!(has_note(&s, n), "{n}: {:?}", s.summary.notes);
    }
}

#[test]
fn a_vanished_device_makes_disk_rates_partial() {
    let s = run(false, &[("a", 0.0), ("b", 2.0), ("nodisk", 3.0)]);
    assert!(s.intervals[0].disk.is_some());
    assert!(s.intervals[1].disk.is_none());
    let d = s.summary.disk.clone().unwrap();
    assert_close!(d.seconds, 2.0);
    assert_close!(d.r_s, 100.0);
    assert!(has_note(&s, "device sda missing"), "{:?}", s.summary.notes);
    assert!(
        has_note(&s, "measured over 2.0 of 3.0 s"),
        "{:?}",
        s.summary.notes
    );
    // Host figures still cover the whole window.
    assert_close!(s.summary.seconds, 3.0);
    assert_close!(s.summary.host.cs_per_s, 40_000.0 / 3.0);
}

#[test]
fn an_absent_device_is_absent_not_zero() {
    let cfg = SamplerConfig {
        device: DeviceChoice::Named("nvme9n9".into()),
        ..cfg(false)
    };
    let snaps = vec![snap(&cfg, "a", 0.0), snap(&cfg, "b", 2.0)];
    let s = Collector::new(&cfg).summarize(&snaps);
    assert!(s.summary.disk.is_none());
    assert!(s.intervals[0].disk.is_none());
    assert!(has_note(&s, "never found"), "{:?}", s.summary.notes);
    // And the result serializes (no NaN/inf), for the result files.
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"disk\":null"));
}
