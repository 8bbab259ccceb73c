//! `--resolve PCT` and `--budget DURATION`: parsed and checked against the rest of the run
//! (they need interleaved rounds of two or more targets).

use anyhow::{bail, Result};
use dbdelta_lab::resolve::Resolve;
use std::time::Duration;

/// The budget when `--resolve` is given without `--budget`.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(600);

/// The longest budget accepted: a week (beyond it a typo).
const MAX_BUDGET_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// `--resolve 2%` (or `2`, `2.5 %`): the half-width in percent, from 0.1 to 50.
pub fn parse_resolve(text: &str) -> Result<f64> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.1..=50.0).contains(&v) => Ok(v),
        _ => bail!(
            "--resolve '{text}' is invalid: give the half-width of the 95 % interval to reach \
             in percent, from 0.1% to 50%, e.g. --resolve 2%"
        ),
    }
}

/// `--budget 10m` (or `90s`, `1h`, `600`: seconds without a unit): more than zero, at most a
/// week.
pub fn parse_budget(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((at, _)) => (t[..at].trim(), &t[at..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => 0.0,
    };
    match number.parse::<f64>().map(|v| v * scale) {
        Ok(secs) if (1.0..=MAX_BUDGET_SECS).contains(&secs) => Ok(Duration::from_secs_f64(secs)),
        _ => bail!(
            "--budget '{text}' is invalid: give the measuring time --resolve may spend, from 1s \
             to a week, as a number with s, m or h, e.g. --budget 10m"
        ),
    }
}

/// The run's `--resolve`/`--budget`, checked against how it runs: `targets` compared,
/// `interleaved` when the targets run in rounds (not --sequential, ibench or a query set).
pub fn resolve(
    resolve: Option<&str>,
    budget: Option<&str>,
    targets: usize,
    interleaved: bool,
) -> Result<Option<Resolve>> {
    let Some(goal) = resolve else {
        if let Some(b) = budget {
            parse_budget(b)?;
            bail!("--budget only bounds --resolve: add --resolve PCT (e.g. --resolve 2%) or drop --budget");
        }
        return Ok(None);
    };
    let goal_pct = parse_resolve(goal)?;
    let budget = budget
        .map(parse_budget)
        .transpose()?
        .unwrap_or(DEFAULT_BUDGET);
    if targets < 2 {
        bail!("--resolve needs two or more targets to compare (it narrows the interval of target/base): add a target with -t or drop --resolve");
    }
    if !interleaved {
        bail!("--resolve adds interleaved rounds: it does not apply to --sequential runs, the Insert Benchmark or query-set suites; drop one of them");
    }
    Ok(Some(Resolve { goal_pct, budget }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_and_budget_parse_and_refuse_nonsense() {
        assert_eq!(parse_resolve("2%").unwrap(), 2.0);
        assert_eq!(parse_resolve(" 2.5 % ").unwrap(), 2.5);
        assert_eq!(parse_resolve("3").unwrap(), 3.0);
        for bad in ["0%", "-1%", "abc", "100%", "NaN", "", "%"] {
            assert!(parse_resolve(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_budget("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_budget("600").unwrap(), Duration::from_secs(600));
        for bad in ["0", "0m", "-5m", "10x", "m", "", "1e9h", "0.5s"] {
            assert!(parse_budget(bad).is_err(), "{bad}");
        }
        assert!(resolve(None, Some("10m"), 2, true).is_err());
        assert!(resolve(Some("2%"), None, 1, true).is_err());
        assert!(resolve(Some("2%"), None, 2, false).is_err());
        let r = resolve(Some("2%"), None, 2, true).unwrap().unwrap();
        assert_eq!((r.goal_pct, r.budget), (2.0, DEFAULT_BUDGET));
        assert!(resolve(None, None, 2, true).unwrap().is_none());
    }
}
