//! What sharing the host cost the rounds measured in turns: per step and target, its rate
//! in turns relative to its rate in a window of its own (the last round), the share of its
//! turns' time other processes took (not charged), the rounds measured again and the windows
//! extended; one line beside the noise floor, and a warning when the rates in turns fall
//! well below the windows of their own. Server targets are charged their turns whole (their
//! client's and server's CPU waits overlap their own work, crate-level docs of
//! dbdelta_runner::turns): the line gives what those waits came to, and names the targets
//! whose server threads could not be read.

use dbdelta_model::{StepKind, StepResult};
use serde::Serialize;
use std::collections::BTreeMap;

/// Below this median in-turns/own-window ratio the absolute rates of the rounds in turns
/// are not what the targets do alone (a quiet host gives about 0.95: a switch every turn
/// costs caches), and the report says so.
pub const LOW_RATIO: f64 = 0.8;

/// Above this median ratio the time taken off the turns for waits on a busy host was more
/// than the targets lost: the absolute rates are too high, and the report says so.
pub const HIGH_RATIO: f64 = 1.5;

/// What turns cost one target on one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnsCost {
    /// Thread count.
    #[serde(rename = "dop")]
    pub threads: u32,
    /// Step label.
    pub label: String,
    /// Target.
    pub target: String,
    /// Geometric mean rate of its rounds in turns over its rate in its window(s) of its
    /// own, both over the time the target could run; `None` without both.
    pub ratio: Option<f64>,
    /// Rounds in turns.
    pub rounds: usize,
    /// Share of its turns' time its workers waited for a CPU other processes held (taken
    /// off the time it is charged; 0 for a server target).
    pub lost_share: f64,
    /// A server target whose server threads were read: the share of its turns' time its
    /// client and server threads waited for a CPU (not taken off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_share: Option<f64>,
    /// Rounds measured again because a target could not run enough of its turns (the
    /// same rounds for every target of the step).
    pub retries: u32,
    /// Windows extended past their planned end to their first event.
    pub extended: usize,
    /// A server target: whether the CPU waits of the server threads serving its
    /// connections were read in all its rounds in turns; `false` when in some they were not
    /// (a remote host, pgbouncer, performance_schema off). Absent for embedded engines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_waits_read: Option<bool>,
}

fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty() && v.iter().all(|x| *x > 0.0))
        .then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// Every step and target of `results` (a report's: `ReportData::results`) with at least
/// one round in turns.
pub fn costs<'a>(results: impl IntoIterator<Item = &'a StepResult>) -> Vec<TurnsCost> {
    type Key = (u32, u32, String, String); // threads, order, label, target
    let mut by: BTreeMap<Key, Vec<&StepResult>> = BTreeMap::new();
    for r in results {
        if r.kind != StepKind::Measured {
            continue;
        }
        by.entry((r.threads, r.order, r.label.clone(), r.target.clone()))
            .or_default()
            .push(r);
    }
    by.into_iter()
        .filter(|(_, rs)| rs.iter().any(|r| r.turns.is_some()))
        .map(|((threads, _, label, target), rs)| {
            let ok = |r: &&&StepResult| r.is_ok() && r.is_complete() && r.throughput.value > 0.0;
            // A window of its own at the rate of the time it could run, as the turns are
            // charged: else a busy host would slow one side of the ratio only.
            let rate = |turns: bool| -> Vec<f64> {
                rs.iter()
                    .filter(ok)
                    .filter(|r| r.turns.is_some() == turns)
                    .map(|r| r.throughput.value / r.could_run.unwrap_or(1.0).max(0.25))
                    .collect()
            };
            let ratio = geomean(&rate(true))
                .zip(geomean(&rate(false)))
                .map(|(t, own)| t / own);
            let (turn, lost, waited) =
                rs.iter()
                    .filter_map(|r| r.turns)
                    .fold((0.0, 0.0, None::<f64>), |(t, l, w), i| {
                        let w = match (w, i.waited_secs) {
                            (Some(a), Some(b)) => Some(a + b),
                            (a, b) => a.or(b),
                        };
                        (t + i.turn_secs, l + i.lost_secs, w)
                    });
            TurnsCost {
                threads,
                label,
                target,
                ratio,
                rounds: rs.iter().filter(|r| r.turns.is_some()).count(),
                lost_share: if turn > 0.0 { lost / turn } else { 0.0 },
                waited_share: waited.filter(|_| turn > 0.0).map(|w| w / turn),
                retries: rs.iter().filter_map(|r| r.turns).map(|t| t.retries).sum(),
                extended: rs.iter().filter(|r| r.extended_secs.is_some()).count(),
                server_waits_read: rs
                    .iter()
                    .filter(|r| r.turns.is_some())
                    .filter_map(|r| r.server_waits_read)
                    .reduce(|a, b| a && b),
            }
        })
        .collect()
}

/// The median in-turns/own-window ratio over the cells that have one.
fn median_ratio(costs: &[TurnsCost]) -> Option<(f64, usize)> {
    let mut r: Vec<f64> = costs.iter().filter_map(|c| c.ratio).collect();
    let n = r.len();
    median(&mut r).map(|m| (m, n))
}

fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The line beside the noise floor: what the turns cost (rates against windows of their
/// own, time taken by other processes, rounds measured again, windows extended); `None`
/// without rounds in turns.
pub fn line<'a>(results: impl IntoIterator<Item = &'a StepResult>) -> Option<String> {
    let costs = costs(results);
    if costs.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some((m, n)) = median_ratio(&costs) {
        parts.push(format!(
            "rates in turns {m:.2}× those of a window of their own (median of {n} step/target \
             cells; a quiet host gives about 0.95)"
        ));
    }
    let embedded = |c: &&TurnsCost| c.server_waits_read.is_none();
    let mut lost: Vec<f64> = costs
        .iter()
        .filter(embedded)
        .map(|c| c.lost_share * 100.0)
        .collect();
    let max_lost = lost.iter().copied().fold(0.0, f64::max);
    if let Some(m) = median(&mut lost) {
        parts.push(format!(
            "other processes held the CPU for {m:.1} % of the targets' turns (median; at most \
             {max_lost:.1} %), time not charged to them"
        ));
    }
    // A round measured again is in every target's result of it: count it once per step.
    let mut per_step: BTreeMap<(u32, &str), u32> = BTreeMap::new();
    for c in &costs {
        let n = per_step.entry((c.threads, c.label.as_str())).or_default();
        *n = (*n).max(c.retries);
    }
    let retries: u32 = per_step.values().sum();
    if retries > 0 {
        parts.push(format!(
            "{retries} round(s) measured again because a target could not run enough of its turns"
        ));
    }
    let mut servers: Vec<&str> = costs
        .iter()
        .filter(|c| c.server_waits_read.is_some())
        .map(|c| c.target.as_str())
        .collect();
    servers.sort_unstable();
    servers.dedup();
    if !servers.is_empty() {
        let mut waited: Vec<f64> = costs.iter().filter_map(|c| c.waited_share).collect();
        let waits = match median(&mut waited) {
            Some(m) => format!(
                "; their client and server threads waited for a CPU in {:.1} % of them \
                 (median), not taken off: such waits overlap their own work",
                m * 100.0
            ),
            None => String::new(),
        };
        parts.push(format!(
            "server targets ({}) are charged their turns whole{waits}",
            servers.join(", ")
        ));
    }
    let mut unread: Vec<&str> = costs
        .iter()
        .filter(|c| c.server_waits_read == Some(false))
        .map(|c| c.target.as_str())
        .collect();
    unread.sort_unstable();
    unread.dedup();
    if !unread.is_empty() {
        parts.push(format!(
            "the server's CPU waits of {} were not read (a remote host, pgbouncer or \
             performance_schema off)",
            unread.join(", ")
        ));
    }
    let extended: usize = costs.iter().map(|c| c.extended).sum();
    if extended > 0 {
        parts.push(format!(
            "{extended} window(s) extended to their first event (events in flight through the whole window)"
        ));
    }
    Some(format!("Contention: {}", parts.join("; ")))
}

/// A warning when the targets' rates in turns fell below [`LOW_RATIO`] of their windows of
/// their own, or rose above [`HIGH_RATIO`]: the host was too busy for the absolute rates to
/// be what the targets do alone.
pub fn warning<'a>(results: impl IntoIterator<Item = &'a StepResult>) -> Option<String> {
    let (m, n) = median_ratio(&costs(results))?;
    if m > HIGH_RATIO {
        return Some(format!(
            "in turns the targets ran at {m:.2}× their own windows' rates (median of {n} \
             step/target cells, above {HIGH_RATIO}): the host was busy and the time taken off \
             their turns for it was more than they lost, so the absolute rates are high; the \
             ratios between targets shared the same turns and still hold"
        ));
    }
    (m < LOW_RATIO).then(|| {
        format!(
            "in turns the targets ran at {m:.2}× their own windows' rates (median of {n} \
             step/target cells, below {LOW_RATIO}): the host was busy, so the absolute rates \
             are low; the ratios between targets shared the same turns and still hold"
        )
    })
}
