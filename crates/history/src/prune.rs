//! Which runs `dbdelta history prune` removes: by age, host and target, chosen from the
//! store's run listing so that what is listed is exactly what is removed.

use serde::Serialize;

/// One target of one run in a store: the unit that prune lists and removes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RunEntry {
    /// When the run started, RFC 3339 UTC.
    pub run_started: String,
    /// The run.
    pub run_id: String,
    /// The target.
    pub target: String,
    /// Host name.
    pub host: String,
    /// Points stored (steps × thread counts × repeats).
    pub points: usize,
}

/// What to prune; a run must meet every given condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneRule {
    /// Runs that started before this time (seconds since the Unix epoch). A run whose start
    /// time cannot be read is never pruned by age.
    pub started_before: Option<i64>,
    /// Only this host.
    pub host: Option<String>,
    /// Only this target name.
    pub target: Option<String>,
}

impl PruneRule {
    /// True when no condition is given (a rule that would remove everything).
    pub fn is_empty(&self) -> bool {
        self.started_before.is_none() && self.host.is_none() && self.target.is_none()
    }

    /// True when `e` meets every given condition.
    pub fn matches(&self, e: &RunEntry) -> bool {
        let old = self
            .started_before
            .is_none_or(|t| epoch_seconds(&e.run_started).is_some_and(|s| s < t));
        old && self.host.as_ref().is_none_or(|h| *h == e.host)
            && self.target.as_ref().is_none_or(|t| *t == e.target)
    }
}

/// The entries `rule` selects, in listing order.
pub fn select(entries: &[RunEntry], rule: &PruneRule) -> Vec<RunEntry> {
    entries
        .iter()
        .filter(|e| rule.matches(e))
        .cloned()
        .collect()
}

/// Seconds of an age such as `30d`, `12h`, `2w` or `90m` (whole numbers; s, m, h, d, w);
/// `None` when it is not one.
pub fn parse_age(text: &str) -> Option<i64> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let n: i64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    (n >= 0).then(|| n.checked_mul(scale)).flatten()
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time (`2026-01-02T03:04:05Z`, fractional
/// seconds ignored); `None` for anything else.
pub fn epoch_seconds(rfc3339: &str) -> Option<i64> {
    let b = rfc3339.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { rfc3339.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !rfc3339.ends_with('Z') || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days-from-civil algorithm.
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(started: &str, host: &str, target: &str) -> RunEntry {
        RunEntry {
            run_started: started.into(),
            run_id: format!("run-{started}"),
            target: target.into(),
            host: host.into(),
            points: 3,
        }
    }

    #[test]
    fn known_epochs() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(epoch_seconds("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(
            epoch_seconds("2026-11-22T02:33:38.250Z"),
            Some(1_795_314_818)
        );
        assert_eq!(epoch_seconds("2026-11-22 02:33:38"), None);
        assert_eq!(epoch_seconds(""), None);
    }

    #[test]
    fn ages() {
        assert_eq!(parse_age("30d"), Some(30 * 86_400));
        assert_eq!(parse_age("2w"), Some(14 * 86_400));
        assert_eq!(parse_age("12h"), Some(43_200));
        assert_eq!(parse_age("90m"), Some(5400));
        assert_eq!(parse_age("30"), None);
        assert_eq!(parse_age("-1d"), None);
        assert_eq!(parse_age("d"), None);
        assert_eq!(parse_age("1y"), None);
        assert_eq!(parse_age("é"), None);
    }

    #[test]
    fn every_condition_must_hold() {
        let all = [
            entry("2026-01-01T00:00:00Z", "a", "pg"),
            entry("2026-03-01T00:00:00Z", "a", "pg"),
            entry("2026-01-01T00:00:00Z", "b", "maria"),
            entry("not a time", "a", "pg"),
        ];
        let feb = epoch_seconds("2026-02-01T00:00:00Z");
        let old = PruneRule {
            started_before: feb,
            ..PruneRule::default()
        };
        assert_eq!(select(&all, &old), vec![all[0].clone(), all[2].clone()]);
        let old_on_b = PruneRule {
            host: Some("b".into()),
            ..old.clone()
        };
        assert_eq!(select(&all, &old_on_b), vec![all[2].clone()]);
        let pg = PruneRule {
            target: Some("pg".into()),
            ..PruneRule::default()
        };
        assert_eq!(select(&all, &pg).len(), 3);
        assert!(PruneRule::default().is_empty() && !pg.is_empty());
    }
}
