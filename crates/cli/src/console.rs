//! The console's lines, as pure functions of what the runner reported: one summary line
//! per step and target when a step's rounds are over (median rate, interval, rounds in turns
//! and in their own window), the per-round lines of `--verbose`, and durations as `1m40s`.

use dbdelta_model::{StepResult, StepStatus};
use dbdelta_report::markup::significant;
use std::time::Duration;

/// A duration as a person reads it: `850ms`, `12s`, `1m40s`, `2h05m`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        return format!("{}ms", d.as_millis());
    }
    let whole = s.round() as u64;
    match whole {
        0..=59 => format!("{whole}s"),
        60..=3599 => format!("{}m{:02}s", whole / 60, whole % 60),
        _ => format!("{}h{:02}m", whole / 3600, (whole % 3600) / 60),
    }
}

/// `[ 3/42]`: the step counter, padded to the width of the total.
pub fn counter(index: usize, total: usize) -> String {
    let w = total.to_string().len();
    format!("[{index:>w$}/{total}]")
}

/// The median of a sample and, from 6 values on, a distribution-free 95 % interval of it
/// (order statistics whose binomial coverage is at least 95 %).
pub fn median_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    // Largest k with P(Binomial(n, 1/2) < k) ≤ 2.5 %: [x_(k), x_(n−k+1)] covers ≥ 95 %.
    let below = |k: usize| -> f64 {
        (0..k)
            .map(|i| binomial(n, i) * 0.5_f64.powi(n as i32))
            .sum()
    };
    let k = (1..=n / 2).take_while(|&k| below(k) <= 0.025).last();
    Some((median, k.map(|k| (v[k - 1], v[n - k]))))
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// A rate with thousands written out: whole numbers from 100 up, three significant digits
/// below.
pub fn rate(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        significant(v, 3)
    }
}

/// The summary of one target's rounds of a step: `12345 q/s [12100, 12600]  p95 85.3 us
/// 10 rounds: 9 in turns, 1 own window`, or why it failed.
pub fn summary(rounds: &[&StepResult]) -> String {
    let ok: Vec<&StepResult> = rounds
        .iter()
        .copied()
        .filter(|r| matches!(r.status, StepStatus::Ok | StepStatus::Interrupted))
        .collect();
    let failed: Vec<&StepResult> = rounds
        .iter()
        .copied()
        .filter(|r| !ok.iter().any(|o| std::ptr::eq(*o, *r)))
        .collect();
    let why = failed.first().map(|r| status_text(&r.status));
    let Some((median, interval)) =
        median_interval(&ok.iter().map(|r| r.throughput.value).collect::<Vec<_>>())
    else {
        return why.unwrap_or_else(|| "no result".to_string());
    };
    let unit = ok.first().map_or("", |r| r.throughput.unit.name());
    let p95: Vec<f64> = ok.iter().map(|r| r.latency.p95_us).collect();
    let p95 = median_interval(&p95).map_or(0.0, |(m, _)| m);
    let in_turns = ok.iter().filter(|r| r.turns.is_some()).count();
    let own = ok.len() - in_turns;
    let how = match (ok.len(), in_turns) {
        (1, 0) => "1 round".to_string(),
        (1, _) => "1 round in turns".to_string(),
        (n, 0) => format!("{n} rounds, own windows"),
        (n, t) if t == n => format!("{n} rounds in turns"),
        (n, t) => format!("{n} rounds: {t} in turns, {own} own window{}", plural(own)),
    };
    let mut line = format!(
        "{:>10} {unit:<7} {:<17} p95 {:>9} us  {how}",
        rate(median),
        interval.map_or(String::new(), |(lo, hi)| format!(
            "[{}, {}]",
            rate(lo),
            rate(hi)
        )),
        significant(p95, 3),
    );
    if ok.iter().any(|r| r.status == StepStatus::Interrupted) {
        line.push_str("  (interrupted)");
    }
    if let Some(why) = why {
        line.push_str(&format!(
            "  {} of {} round(s) {why}",
            failed.len(),
            rounds.len()
        ));
    }
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn status_text(s: &StepStatus) -> String {
    match s {
        StepStatus::Failed { reason } => format!("FAILED: {reason}"),
        StepStatus::Stalled { reason } => format!("STALLED: {reason}"),
        StepStatus::NotSupported { reason } => format!("not supported: {reason}"),
        other => format!("{other:?}"),
    }
}

/// One round of one target (`--verbose`, and steps outside a suite's sequence): target,
/// round, rate, p95 and how the round was measured; `round` counts the target's rounds of the step (the result's own number is set after
/// progress hears of it).
pub fn round_line(r: &StepResult, target_width: usize, round: Option<usize>) -> String {
    let round = match round.or((r.repeat > 0).then_some(r.repeat as usize)) {
        Some(n) => format!("round {n:>2}"),
        None => "        ".to_string(),
    };
    let how = if r.turns.is_some() {
        "in turns"
    } else {
        "own window"
    };
    let body = match &r.status {
        StepStatus::Failed { .. } | StepStatus::Stalled { .. } => status_text(&r.status),
        status => format!(
            "{:>10} {:<7} p95 {:>9} us  {how}{}",
            rate(r.throughput.value),
            r.throughput.unit.name(),
            significant(r.latency.p95_us, 3),
            if *status == StepStatus::Interrupted {
                "  (interrupted)"
            } else {
                ""
            }
        ),
    };
    format!(
        "  {:<target_width$}  {:<28} dop={:<3} {round}  {body}",
        r.target, r.label, r.threads
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human(Duration::from_millis(850)), "850ms");
        assert_eq!(human(Duration::from_secs(12)), "12s");
        assert_eq!(human(Duration::from_secs(100)), "1m40s");
        assert_eq!(human(Duration::from_secs(7500)), "2h05m");
    }

    #[test]
    fn median_interval_needs_six_values() {
        let five = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(median_interval(&five), Some((3.0, None)));
        // n = 10: P(X ≤ 1) = 11/1024 ≤ 2.5 %, P(X ≤ 2) = 56/1024 > 2.5 %: ranks 2 and 9.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&ten), Some((5.5, Some((2.0, 9.0)))));
        assert_eq!(median_interval(&[]), None);
    }

    #[test]
    fn counter_pads_to_the_total() {
        assert_eq!(counter(3, 42), "[ 3/42]");
        assert_eq!(counter(12, 42), "[12/42]");
    }
}
