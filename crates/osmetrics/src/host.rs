//! Facts about the host for the run manifest, read from /proc and /sys, and the settings
//! among them that are known to make numbers noisy (one warning line each, with the fix,
//! as hyperfine warns about outliers).

use dbdelta_model::HostInfo;
use std::fs;
use std::time::Duration;

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// How long steal time is sampled at the start of a run.
const STEAL_SAMPLE: Duration = Duration::from_millis(200);

/// Reads CPU model, cores, memory, kernel, governor, THP, SMT, boost, steal and load, and
/// derives the noise warnings.
pub fn host_info() -> HostInfo {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let memory_bytes = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let boost = read_trim("/sys/devices/system/cpu/cpufreq/boost")
        .map(|b| if b == "1" { "on" } else { "off" }.to_string())
        .or_else(|| {
            read_trim("/sys/devices/system/cpu/intel_pstate/no_turbo")
                .map(|n| if n == "0" { "on" } else { "off" }.to_string())
        });
    let mut info = HostInfo {
        hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_default(),
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
        kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_default(),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        thp: read_trim("/sys/kernel/mm/transparent_hugepage/enabled"),
        smt: read_trim("/sys/devices/system/cpu/smt/control"),
        boost,
        steal_percent: steal_percent(STEAL_SAMPLE),
        load_average: read_trim("/proc/loadavg")
            .and_then(|l| l.split_whitespace().next()?.parse().ok()),
        warnings: Vec::new(),
    };
    info.warnings = noise_warnings(&info);
    info
}

/// (steal, total) jiffies of all CPUs from /proc/stat's `cpu` line.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let steal = *v.get(7)?;
    Some((steal, v.iter().take(8).sum()))
}

fn steal_percent(sample: Duration) -> Option<f64> {
    let (s0, t0) = cpu_jiffies()?;
    std::thread::sleep(sample);
    let (s1, t1) = cpu_jiffies()?;
    let total = t1.saturating_sub(t0);
    (total > 0).then(|| 100.0 * s1.saturating_sub(s0) as f64 / total as f64)
}

/// The settings of `h` that are known to add noise, one line each with the fix.
pub fn noise_warnings(h: &HostInfo) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(g) = h.governor.as_deref().filter(|g| *g != "performance") {
        w.push(format!(
            "CPU frequency governor '{g}': the clock follows the load, so short steps run slower; \
             fix: cpupower frequency-set -g performance"
        ));
    }
    if h.thp.as_deref().is_some_and(|t| t.contains("[always]")) {
        w.push(
            "transparent huge pages 'always': khugepaged compaction stalls add latency spikes; \
             fix: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"
                .to_string(),
        );
    }
    if h.smt.as_deref() == Some("on") {
        w.push(
            "SMT is on: a sibling hardware thread shares the core with the server or client; \
             fix: echo off > /sys/devices/system/cpu/smt/control (or pin with taskset)"
                .to_string(),
        );
    }
    if h.boost.as_deref() == Some("on") {
        w.push(
            "turbo boost is on: the clock depends on temperature and how many cores are busy; \
             fix: echo 0 > /sys/devices/system/cpu/cpufreq/boost (intel_pstate: echo 1 > no_turbo)"
                .to_string(),
        );
    }
    if let Some(s) = h.steal_percent.filter(|s| *s >= 1.0) {
        w.push(format!(
            "{s:.1} % of CPU time stolen by the hypervisor: a virtual machine whose neighbours \
             vary; fix: a dedicated host, or trust only ratios of interleaved rounds (the default)"
        ));
    }
    if let Some(l) = h.load_average.filter(|l| *l >= 0.5 * h.cores.max(1) as f64) {
        w.push(format!(
            "load average {l:.1} on {} CPUs before the run: other processes compete with the \
             server and client; fix: stop them, or trust only ratios of interleaved rounds",
            h.cores
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_host_has_no_warnings_and_each_noisy_setting_one() {
        let quiet = HostInfo {
            cores: 8,
            governor: Some("performance".into()),
            thp: Some("always [madvise] never".into()),
            smt: Some("off".into()),
            boost: Some("off".into()),
            steal_percent: Some(0.0),
            load_average: Some(0.2),
            ..HostInfo::default()
        };
        assert!(noise_warnings(&quiet).is_empty());
        let noisy = HostInfo {
            governor: Some("powersave".into()),
            thp: Some("[always] madvise never".into()),
            smt: Some("on".into()),
            boost: Some("on".into()),
            steal_percent: Some(3.2),
            load_average: Some(6.0),
            ..quiet
        };
        let w = noise_warnings(&noisy);
        assert_eq!(w.len(), 6, "{w:#?}");
        for (line, needle) in w.iter().zip([
            "powersave",
            "transparent huge pages",
            "SMT",
            "turbo",
            "3.2 % of CPU time stolen",
            "load average 6.0 on 8 CPUs",
        ]) {
            assert!(line.contains(needle) && line.contains("fix:"), "{line}");
        }
    }

    #[test]
    fn reads_this_host() {
        let h = host_info();
        assert!(h.cores >= 1 && h.memory_bytes > 0);
        assert!(h.steal_percent.is_some_and(|s| (0.0..=100.0).contains(&s)));
        assert_eq!(h.warnings, noise_warnings(&h));
    }
}
