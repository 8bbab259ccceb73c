//! Kernel constants the counters are expressed in: clock ticks per second (USER_HZ) and the
//! page size, read from the ELF auxiliary vector in `/proc/self/auxv` (no libc needed).

use std::path::Path;

/// `AT_PAGESZ` in the auxiliary vector.
const AT_PAGESZ: u64 = 6;
/// `AT_CLKTCK` in the auxiliary vector.
const AT_CLKTCK: u64 = 17;

/// Units of `/proc` counters on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelUnits {
    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, almost always 100).
    pub clk_tck: u64,
    /// Page size in bytes (RSS in `/proc/PID/stat` is in pages).
    pub page_size: u64,
}

impl Default for KernelUnits {
    fn default() -> Self {
        KernelUnits {
            clk_tck: 100,
            page_size: 4096,
        }
    }
}

impl KernelUnits {
    /// Reads the units from `<proc_root>/self/auxv`; falls back to 100 Hz and 4 KiB.
    pub fn detect(proc_root: &Path) -> KernelUnits {
        match std::fs::read(proc_root.join("self/auxv")) {
            Ok(bytes) => parse_auxv(&bytes),
            Err(_) => KernelUnits::default(),
        }
    }
}

/// Parses a native-endian auxiliary vector of (type, value) machine words.
pub fn parse_auxv(bytes: &[u8]) -> KernelUnits {
    const W: usize = std::mem::size_of::<usize>();
    let mut units = KernelUnits::default();
    let word = |b: &[u8]| -> u64 {
        let mut a = [0u8; W];
        a.copy_from_slice(b);
        usize::from_ne_bytes(a) as u64
    };
    for pair in bytes.chunks_exact(2 * W) {
        let (key, val) = (word(&pair[..W]), word(&pair[W..]));
        match key {
            0 => break,
            AT_CLKTCK if val > 0 => units.clk_tck = val,
            AT_PAGESZ if val > 0 => units.page_size = val,
            _ => {}
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_synthetic_and_live_auxv() {
        let mut v = Vec::new();
        for (k, val) in [(AT_PAGESZ, 16384u64), (AT_CLKTCK, 250), (0, 0)] {
            v.extend_from_slice(&(k as usize).to_ne_bytes());
            v.extend_from_slice(&(val as usize).to_ne_bytes());
        }
        let u = parse_auxv(&v);
        assert_eq!((u.clk_tck, u.page_size), (250, 16384));
        let live = KernelUnits::detect(Path::new("/proc"));
        assert!(live.clk_tck >= 100 && live.page_size >= 4096, "{live:?}");
    }
}
