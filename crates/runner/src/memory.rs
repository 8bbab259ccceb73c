//! The client's peak resident memory over one step, so a step's memory per connection
//! covers everything it held (connect phase, warm-up, window), not one moment of it.

/// Peak resident memory of this process since start or the last reset, bytes
/// (`VmHWM` in `/proc/self/status`).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets this process's peak resident memory to its current resident memory (writing `5`
/// to `/proc/self/clear_refs`, Linux 4.0 and later; see the kernel's proc(5) manual).
/// False when the kernel refuses.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The client memory of one step: resident memory at its start, peak at its end.
#[derive(Debug, Clone, Copy)]
pub struct StepMemory {
    start: Option<u64>,
    /// The peak could be reset at the start: `VmHWM` then is this step's peak. Otherwise
    /// the memory still resident at the end stands in for it (a lower bound).
    peak_is_step: bool,
}

impl StepMemory {
    /// Starts measuring: resets the peak and reads the resident memory now.
    pub fn start() -> Self {
        let peak_is_step = reset_peak_rss();
        Self {
            start: crate::cpu::process_rss_bytes(),
            peak_is_step,
        }
    }

    /// Growth of resident memory from the start to the step's peak, bytes.
    pub fn growth(&self) -> Option<u64> {
        let end = if self.peak_is_step {
            peak_rss_bytes()
        } else {
            crate::cpu::process_rss_bytes()
        }?;
        Some(end.saturating_sub(self.start?))
    }

    /// [`StepMemory::growth`] divided over `connections`; `None` without connections.
    pub fn per_connection(&self, connections: u64) -> Option<f64> {
        if connections == 0 {
            return None;
        }
        Some(self.growth()? as f64 / connections as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_allocation_still_counts_in_the_step_peak() {
        let m = StepMemory::start();
        let before = m.growth().expect("readable /proc");
        // 64 MiB touched and then freed: resident memory falls back, the peak does not.
        let big = vec![1u8; 64 << 20];
        assert_eq!(big.iter().map(|&b| u64::from(b)).sum::<u64>(), 64 << 20);
        drop(big);
        let after = m.growth().expect("readable /proc");
        if m.peak_is_step {
            assert!(after >= before + (60 << 20), "{before} -> {after}");
            // The next step starts from a reset peak: the freed 64 MiB are not its cost.
            let next = StepMemory::start();
            assert!(next.growth().expect("readable") < 60 << 20);
        }
        assert_eq!(m.per_connection(0), None);
    }
}
