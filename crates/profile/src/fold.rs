//! Folds `perf script` text into folded stacks: one line per unique stack, frames root→leaf
//! joined by `;`, a space, the sample count (the FlameGraph / inferno interchange format).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Why folded text could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum FoldedError {
    /// A line without a space before its count.
    #[error("line {line}: expected `stack count`")]
    NoCount {
        /// The 1-based line number.
        line: usize,
    },
    /// The count after the last space is not a whole number.
    #[error("line {line}: `{count}` is not a sample count")]
    BadCount {
        /// The 1-based line number.
        line: usize,
        /// The text in the count's place.
        count: String,
        /// Why it did not parse.
        #[source]
        source: std::num::ParseIntError,
    },
}

/// Suffix of kernel frames (as `stackcollapse-perf.pl --kernel` writes them).
pub const KERNEL_SUFFIX: &str = "_[k]";

/// Folded stacks: stack (root first, `;`-joined) → samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// Stack → samples.
    pub stacks: BTreeMap<String, u64>,
    /// Samples whose user-space frames were all unresolved, plus frames counted as
    /// resolved/unresolved (user space only), to say when symbols are missing.
    pub stats: FoldStats,
}

/// Symbol-resolution counts of a fold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FoldStats {
    /// User-space frames seen.
    pub user_frames: u64,
    /// User-space frames perf could not name (`[unknown]`).
    pub unknown_user_frames: u64,
}

impl FoldStats {
    /// Percent of user-space frames without a symbol.
    pub fn unknown_pct(&self) -> f64 {
        if self.user_frames == 0 {
            0.0
        } else {
            100.0 * self.unknown_user_frames as f64 / self.user_frames as f64
        }
    }
}

impl Folded {
    /// Total samples.
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// The folded text, lines sorted (as flamegraph renderers expect).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (stack, n) in &self.stacks {
            let _ = writeln!(out, "{stack} {n}");
        }
        out
    }

    /// Parses folded text (`stack count` lines); blank lines are skipped.
    pub fn parse(text: &str) -> Result<Folded, FoldedError> {
        let mut f = Folded::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let (stack, n) = line
                .rsplit_once(' ')
                .ok_or(FoldedError::NoCount { line: i + 1 })?;
            let n: u64 = n.parse().map_err(|source| FoldedError::BadCount {
                line: i + 1,
                count: n.to_string(),
                source,
            })?;
            *f.stacks.entry(stack.to_string()).or_insert(0) += n;
        }
        Ok(f)
    }

    /// Adds one sample's frames (leaf first, as perf prints them).
    fn add_leaf_first(&mut self, frames: &[String]) {
        if frames.is_empty() {
            return;
        }
        let stack = frames
            .iter()
            .rev()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(";");
        *self.stacks.entry(stack).or_insert(0) += 1;
    }
}

/// Folds `perf script` output (default or `-F comm,pid,tid,time,event,ip,sym,dso` fields).
/// Only the first event type seen is kept, so events are never mixed.
pub fn fold_perf_script(text: &str) -> Folded {
    let mut folded = Folded::default();
    let mut event: Option<String> = None;
    let mut keep = false;
    let mut frames: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if keep {
                folded.add_leaf_first(&frames);
            }
            frames.clear();
            keep = false;
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if !line.starts_with(|c: char| c.is_whitespace()) {
            // A sample header: `comm pid/tid [cpu] time: [period] event: ...`.
            if keep {
                folded.add_leaf_first(&frames);
            }
            frames.clear();
            let ev = header_event(line);
            match (&event, ev) {
                (None, Some(e)) => {
                    event = Some(e.to_string());
                    keep = true;
                }
                (Some(seen), Some(e)) => keep = seen == e,
                (_, None) => keep = false,
            }
            continue;
        }
        if keep {
            if let Some((name, user, unknown)) = frame_name(line.trim()) {
                if user {
                    folded.stats.user_frames += 1;
                    if unknown {
                        folded.stats.unknown_user_frames += 1;
                    }
                }
                frames.push(name);
            }
        }
    }
    if keep {
        folded.add_leaf_first(&frames);
    }
    folded
}

/// The event name of a header line: the token ending in ':' after the time.
fn header_event(line: &str) -> Option<&str> {
    let mut tokens = line.split_whitespace().skip_while(|t| !is_time(t));
    tokens.next()?;
    tokens
        .find(|t| t.ends_with(':') && t.parse::<u64>().is_err())
        .map(|t| t.trim_end_matches(':'))
}

fn is_time(t: &str) -> bool {
    t.strip_suffix(':')
        .is_some_and(|s| s.contains('.') && s.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Parses `addr sym+0xoff (dso)`: the cleaned name, whether it is a user-space frame and
/// whether perf could not name it.
fn frame_name(line: &str) -> Option<(String, bool, bool)> {
    let (_addr, rest) = line.split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let (sym, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => (rest, ""),
    };
    let kernel = dso.starts_with("[kernel") || dso.ends_with(".ko") || dso == "[vdso]";
    let sym = strip_offset(sym.trim());
    let unknown = sym.is_empty() || sym == "[unknown]";
    let name = if unknown {
        let base = dso.rsplit('/').next().unwrap_or(dso);
        let base = base.trim_matches(|c| c == '[' || c == ']');
        if base.is_empty() {
            "[unknown]".to_string()
        } else {
            format!("[{base}]")
        }
    } else if kernel {
        format!("{sym}{KERNEL_SUFFIX}")
    } else {
        demangle(sym)
    };
    Some((name.replace(';', ":"), !kernel, unknown))
}

/// Strips a trailing `+0x1f` offset.
fn strip_offset(sym: &str) -> &str {
    match sym.rfind("+0x") {
        Some(i) if sym[i + 3..].chars().all(|c| c.is_ascii_hexdigit()) => &sym[..i],
        _ => sym,
    }
}

/// Demangles Rust (legacy and v0) and C++ names; strips the hash perf leaves on Rust
/// legacy names it demangled itself.
pub fn demangle(sym: &str) -> String {
    if sym.starts_with("_R") || sym.starts_with("_ZN") {
        if let Ok(d) = rustc_demangle::try_demangle(sym) {
            return format!("{d:#}");
        }
    }
    if sym.starts_with("_Z") {
        if let Ok(s) = cpp_demangle::Symbol::new(sym) {
            if let Ok(d) = s.demangle(&cpp_demangle::DemangleOptions::default()) {
                return d;
            }
        }
    }
    // `core::ptr::drop_in_place::h0123456789abcdef` → without the hash.
    if let Some(i) = sym.rfind("::h") {
        let h = &sym[i + 3..];
        if h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit()) {
            return sym[..i].to_string();
        }
    }
    sym.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_cleaned() {
        let (n, user, unk) =
            frame_name("5a8a35 GetSysCacheOid+0x25 (/usr/lib/postgresql/15/bin/postgres)").unwrap();
        assert_eq!((n.as_str(), user, unk), ("GetSysCacheOid", true, false));
        let (n, _, unk) =
            frame_name("595b80 [unknown] (/usr/lib/postgresql/15/bin/postgres)").unwrap();
        assert_eq!((n.as_str(), unk), ("[postgres]", true));
        let (n, user, _) =
            frame_name("ffffffff821ed511 do_syscall_64 ([kernel.kallsyms])").unwrap();
        assert_eq!((n.as_str(), user), ("do_syscall_64_[k]", false));
    }

    #[test]
    fn rust_and_cpp_names_demangle() {
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place"
        );
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
        assert_eq!(
            demangle("alloc::vec::Vec<T>::push::h0123456789abcdef"),
            "alloc::vec::Vec<T>::push"
        );
        assert_eq!(demangle("PostgresMain"), "PostgresMain");
    }
}
