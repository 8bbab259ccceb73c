//! Shares of samples per function and the drill-down table.
//!
//! Per profile: total = Σ samples; self\[f\] counts samples whose leaf is f; inclusive\[f\]
//! counts samples with f anywhere on the stack, each **distinct** f once per stack, so a
//! recursive function is not counted twice (perf's "Children" overhead). A path node
//! `root;…;f` counts the samples whose stack starts with that path.

use crate::fold::{Folded, KERNEL_SUFFIX};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

/// Sample counts of one profile by function and by call path.
#[derive(Debug, Clone, Default)]
pub struct Shares {
    /// Total samples.
    pub total: u64,
    /// Function → samples with it anywhere on the stack (deduplicated per stack).
    pub inclusive: BTreeMap<String, u64>,
    /// Function → samples with it as the leaf.
    pub self_samples: BTreeMap<String, u64>,
    /// Path (`a;b;c`) → samples whose stack starts with it.
    pub paths: BTreeMap<String, u64>,
    /// Path → its child paths (`""` is the virtual root).
    pub children: BTreeMap<String, BTreeSet<String>>,
}

impl Shares {
    /// Computes the shares of a folded profile.
    pub fn from_folded(f: &Folded) -> Shares {
        let mut s = Shares::default();
        for (stack, &n) in &f.stacks {
            s.total += n;
            let frames: Vec<&str> = stack.split(';').collect();
            let mut seen = HashSet::new();
            for fr in &frames {
                if seen.insert(*fr) {
                    *s.inclusive.entry((*fr).to_string()).or_insert(0) += n;
                }
            }
            if let Some(leaf) = frames.last() {
                *s.self_samples.entry((*leaf).to_string()).or_insert(0) += n;
            }
            let mut parent = String::new();
            for (i, fr) in frames.iter().enumerate() {
                let path = if i == 0 {
                    (*fr).to_string()
                } else {
                    format!("{parent};{fr}")
                };
                *s.paths.entry(path.clone()).or_insert(0) += n;
                s.children
                    .entry(parent.clone())
                    .or_default()
                    .insert(path.clone());
                parent = path;
            }
        }
        s
    }

    fn pct(&self, n: u64) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            100.0 * n as f64 / self.total as f64
        }
    }

    /// Percent of samples in `function` including its children.
    pub fn inclusive_pct(&self, function: &str) -> f64 {
        self.pct(self.inclusive.get(function).copied().unwrap_or(0))
    }

    /// Percent of samples with `function` as the leaf.
    pub fn self_pct(&self, function: &str) -> f64 {
        self.pct(self.self_samples.get(function).copied().unwrap_or(0))
    }

    /// Percent of samples under the call path `path`.
    pub fn path_pct(&self, path: &str) -> f64 {
        self.pct(self.paths.get(path).copied().unwrap_or(0))
    }
}

/// How one function's inclusive share changed between base and target.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolDelta {
    /// The function.
    pub function: String,
    /// Inclusive percent in the base profile.
    pub base_pct: f64,
    /// Inclusive percent in the target profile.
    pub target_pct: f64,
}

impl SymbolDelta {
    /// Target − base, percentage points.
    pub fn delta(&self) -> f64 {
        self.target_pct - self.base_pct
    }
}

/// Every function of either profile, largest |Δ inclusive share| first (ties by name).
pub fn symbol_deltas(base: &Shares, target: &Shares) -> Vec<SymbolDelta> {
    let names: BTreeSet<&String> = base
        .inclusive
        .keys()
        .chain(target.inclusive.keys())
        .collect();
    let mut v: Vec<SymbolDelta> = names
        .into_iter()
        .map(|f| SymbolDelta {
            function: f.clone(),
            base_pct: base.inclusive_pct(f),
            target_pct: target.inclusive_pct(f),
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta()
            .abs()
            .total_cmp(&a.delta().abs())
            .then_with(|| a.function.cmp(&b.function))
    });
    v
}

/// One node of the drill-down: a call path and its share in every profile.
#[derive(Debug, Clone, PartialEq)]
pub struct DrillNode {
    /// The function (last frame of the path).
    pub function: String,
    /// The call path from the root.
    pub path: String,
    /// Percent of samples under the path, per profile (base first).
    pub pct: Vec<f64>,
}

/// The drill-down table of one step: base and targets, the path followed, and the
/// functions whose inclusive share changed most.
#[derive(Debug, Clone, PartialEq)]
pub struct DrillTable {
    /// What the table is about, e.g. `update-index_range=100 dop1`.
    pub title: String,
    /// Profile names (base first) and their sample counts.
    pub profiles: Vec<(String, u64)>,
    /// Per profile: server CPU µs per statement estimated from the samples (samples / freq
    /// / statements), when the statement count is known. Shares hide throughput changes;
    /// this does not.
    pub cpu_us_per_stmt: Vec<Option<f64>>,
    /// Caveats printed under the table (e.g. missing debug symbols), one per line.
    pub notes: Vec<String>,
    /// The path followed from the root, one node per row of the legend.
    pub nodes: Vec<DrillNode>,
    /// Per target (not the base): functions by |Δ inclusive share|, largest first.
    pub symbols: Vec<(String, Vec<SymbolDelta>)>,
}

/// Most legend rows (a–z).
const MAX_NODES: usize = 26;

/// Most kernel frames in a row on the drilled path.
const MAX_KERNEL_RUN: usize = 4;

/// Drills down from the root: at each level it follows the child whose subtree holds the
/// call path whose share grew most from the base to any target, and stops when no child's
/// subtree holds a path that grew by at least `min_delta` percentage points. So it walks
/// through the "tower" (frames every sample shares) to where the growth is concentrated,
/// then down the grown path (at most four kernel frames in a row).
pub fn drill_down(
    title: &str,
    base: (&str, &Folded),
    targets: &[(&str, &Folded)],
    min_delta: f64,
) -> DrillTable {
    let all: Vec<(&str, Shares)> = std::iter::once(base)
        .chain(targets.iter().copied())
        .map(|(n, f)| (n, Shares::from_folded(f)))
        .collect();
    let pcts = |path: &str| -> Vec<f64> { all.iter().map(|(_, s)| s.path_pct(path)).collect() };
    // Growth of every path, then the largest growth within each path's subtree.
    let paths: BTreeSet<&String> = all.iter().flat_map(|(_, s)| s.paths.keys()).collect();
    let mut subtree: BTreeMap<String, f64> = BTreeMap::new();
    let mut by_depth: Vec<&String> = paths.into_iter().collect();
    by_depth.sort_by_key(|p| std::cmp::Reverse(p.matches(';').count()));
    for path in by_depth {
        let pct = pcts(path);
        let growth = pct[1..]
            .iter()
            .map(|p| p - pct[0])
            .fold(f64::NEG_INFINITY, f64::max);
        let best = subtree
            .get(path.as_str())
            .copied()
            .unwrap_or(f64::NEG_INFINITY);
        let best = best.max(growth);
        subtree.insert(path.clone(), best);
        if let Some((parent, _)) = path.rsplit_once(';') {
            let e = subtree
                .entry(parent.to_string())
                .or_insert(f64::NEG_INFINITY);
            *e = e.max(best);
        }
    }
    let mut nodes = Vec::new();
    let mut node = String::new();
    // Without base samples every path would look grown: nothing to drill into.
    let comparable = all[0].1.total > 0;
    while comparable && nodes.len() < MAX_NODES {
        let kids: BTreeSet<&String> = all
            .iter()
            .filter_map(|(_, s)| s.children.get(&node))
            .flatten()
            .collect();
        let next = kids
            .into_iter()
            .map(|k| {
                (
                    k,
                    subtree
                        .get(k.as_str())
                        .copied()
                        .unwrap_or(f64::NEG_INFINITY),
                )
            })
            .filter(|(_, g)| *g >= min_delta)
            .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)));
        let Some((next, _)) = next else {
            break;
        };
        // Kernel paths are long (syscall entry down to the driver): show where the server
        // entered the kernel, the flamegraph has the rest.
        let kernel_run = nodes
            .iter()
            .rev()
            .take_while(|n: &&DrillNode| n.function.ends_with(KERNEL_SUFFIX))
            .count();
        if kernel_run >= MAX_KERNEL_RUN && next.ends_with(KERNEL_SUFFIX) {
            break;
        }
        node = next.clone();
        nodes.push(DrillNode {
            function: node.rsplit(';').next().unwrap_or(&node).to_string(),
            path: node.clone(),
            pct: pcts(&node),
        });
    }
    let symbols = all[1..]
        .iter()
        .map(|(n, s)| (n.to_string(), symbol_deltas(&all[0].1, s)))
        .collect();
    DrillTable {
        title: title.to_string(),
        profiles: all.iter().map(|(n, s)| (n.to_string(), s.total)).collect(),
        cpu_us_per_stmt: Vec::new(),
        notes: Vec::new(),
        nodes,
        symbols,
    }
}

fn letter(i: usize) -> String {
    ((b'a' + (i % 26) as u8) as char).to_string()
}

impl DrillTable {
    /// The published layout: a legend `a - <function>` per node of the path followed, one
    /// row per profile with the percentages (and server CPU µs per statement when known),
    /// then the user-space functions whose inclusive share grew and shrank most per target.
    pub fn render(&self, top: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: percent of samples in the function including its children",
            self.title
        );
        let empty: Vec<&str> = self
            .profiles
            .iter()
            .filter(|(_, n)| *n == 0)
            .map(|(name, _)| name.as_str())
            .collect();
        if !empty.is_empty() {
            let _ = writeln!(
                out,
                "({} recorded no samples in this step: shares cannot be compared; profile a longer window or raise --profile-freq)",
                empty.join(", ")
            );
        } else if self.nodes.is_empty() {
            let _ = writeln!(
                out,
                "(no call path's share grew by a percentage point or more)"
            );
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(out, "{} - {}", letter(i), n.function);
        }
        let w = self
            .profiles
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(0)
            .max(6);
        let per_op = self.cpu_us_per_stmt.iter().any(Option::is_some);
        let _ = write!(out, "{:<w$}  {:>8}", "target", "samples");
        if per_op {
            let _ = write!(out, "  {:>8}", "µs/stmt");
        }
        for i in 0..self.nodes.len() {
            let _ = write!(out, "  {:>5}", letter(i));
        }
        out.push('\n');
        for (p, (name, samples)) in self.profiles.iter().enumerate() {
            let _ = write!(out, "{name:<w$}  {samples:>8}");
            if per_op {
                match self.cpu_us_per_stmt.get(p).copied().flatten() {
                    Some(v) => {
                        let _ = write!(out, "  {v:>8.1}");
                    }
                    None => {
                        let _ = write!(out, "  {:>8}", "-");
                    }
                }
            }
            for n in &self.nodes {
                let _ = write!(out, "  {:>5.1}", n.pct.get(p).copied().unwrap_or(0.0));
            }
            out.push('\n');
        }
        let base = self.profiles.first().map(|p| p.0.as_str()).unwrap_or("");
        for (target, deltas) in &self.symbols {
            // Kernel frames (scheduler, interrupts) move with load on the client side too;
            // the lists name the server's own functions, the path above keeps the kernel.
            let user = |d: &&SymbolDelta| !d.function.ends_with(KERNEL_SUFFIX);
            let mut grew: Vec<&SymbolDelta> = deltas
                .iter()
                .filter(user)
                .filter(|d| d.delta() > 0.0)
                .collect();
            grew.sort_by(|a, b| {
                b.delta()
                    .total_cmp(&a.delta())
                    .then_with(|| a.function.cmp(&b.function))
            });
            let mut shrank: Vec<&SymbolDelta> = deltas
                .iter()
                .filter(user)
                .filter(|d| d.delta() < 0.0)
                .collect();
            shrank.sort_by(|a, b| {
                a.delta()
                    .total_cmp(&b.delta())
                    .then_with(|| a.function.cmp(&b.function))
            });
            let shown: Vec<&SymbolDelta> = grew
                .into_iter()
                .take(top)
                .chain(shrank.into_iter().take(top.div_ceil(2)))
                .collect();
            let _ = writeln!(
                out,
                "\nuser-space functions whose share grew most, then shrank most, {target} vs {base} (inclusive %, Δ points):"
            );
            let fw = shown
                .iter()
                .map(|d| d.function.chars().count())
                .max()
                .unwrap_or(8)
                .clamp(8, 60);
            let _ = writeln!(
                out,
                "{:<fw$}  {:>7}  {:>7}  {:>7}",
                "function",
                truncate(base, 7),
                truncate(target, 7),
                "Δ"
            );
            for d in shown {
                let _ = writeln!(
                    out,
                    "{:<fw$}  {:>7.1}  {:>7.1}  {:>+7.1}",
                    truncate(&d.function, 60),
                    d.base_pct,
                    d.target_pct,
                    d.delta()
                );
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect()
    }
}
