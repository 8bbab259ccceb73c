//! Facts about the host for the run manifest, read from /proc and /sys.

use dbdelta_model::HostInfo;
use std::fs;

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Reads CPU model, cores, memory, kernel, governor and THP setting.
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
    HostInfo {
        hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_default(),
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
        kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_default(),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        thp: read_trim("/sys/kernel/mm/transparent_hugepage/enabled"),
    }
}
