//! Preparing several runs for one report: `--rename [RUN:]OLD=NEW` to resolve target-name
//! clashes, `--cost NAME=DOLLARS_PER_HOUR`, and the warnings when merged runs were measured
//! under different conditions (host, scale, durations).

use crate::error::ReportError;
use crate::load::RunData;

/// One `--rename` value: rename target `from` to `to` in one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// 1-based position of the run directory; `None` = the last run that has `from`.
    pub run: Option<usize>,
    /// The target's recorded name.
    pub from: String,
    /// Its name in the report.
    pub to: String,
}

/// Parses `[RUN:]OLD=NEW` (RUN = 1-based position of the run directory on the command line).
pub fn parse_rename(text: &str) -> Result<Rename, ReportError> {
    let bad = |why: &str| ReportError::BadRename {
        text: text.to_string(),
        why: why.to_string(),
    };
    let (run, rest) = match text.split_once(':') {
        Some((n, rest)) => {
            let n: usize = n
                .trim()
                .parse()
                .map_err(|_| bad("RUN before ':' must be a run position (1, 2, …)"))?;
            if n == 0 {
                return Err(bad("run positions start at 1"));
            }
            (Some(n), rest)
        }
        None => (None, text),
    };
    let (from, to) = rest.split_once('=').ok_or_else(|| bad("'=' is missing"))?;
    let (from, to) = (from.trim(), to.trim());
    if from.is_empty() || to.is_empty() {
        return Err(bad("OLD and NEW must not be empty"));
    }
    Ok(Rename {
        run,
        from: from.to_string(),
        to: to.to_string(),
    })
}

/// Applies renames in order. Without a run position a rename applies to the last run (in the
/// order given) that has a target `from`, i.e. the later of two clashing runs.
pub fn apply_renames(runs: &mut [RunData], renames: &[Rename]) -> Result<(), ReportError> {
    for r in renames {
        let text = match r.run {
            Some(n) => format!("{n}:{}={}", r.from, r.to),
            None => format!("{}={}", r.from, r.to),
        };
        let idx = match r.run {
            Some(n) if n > runs.len() => {
                return Err(ReportError::BadRename {
                    text,
                    why: format!("there are only {} run directories", runs.len()),
                })
            }
            Some(n) => n - 1,
            None => runs
                .iter()
                .rposition(|run| run.manifest.targets.iter().any(|t| t.name == r.from))
                .ok_or_else(|| ReportError::BadRename {
                    text,
                    why: format!("no run has a target '{}'", r.from),
                })?,
        };
        runs[idx].rename_target(&r.from, &r.to)?;
    }
    Ok(())
}

/// Parses `NAME=DOLLARS_PER_HOUR` (a positive price).
pub fn parse_cost(text: &str) -> Result<(String, f64), ReportError> {
    let bad = |why: &str| ReportError::BadCost {
        text: text.to_string(),
        why: why.to_string(),
    };
    let (name, price) = text.split_once('=').ok_or_else(|| bad("'=' is missing"))?;
    let price: f64 = price
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| bad("the price is not a number"))?;
    if !(price.is_finite() && price > 0.0) {
        return Err(bad("the price must be positive"));
    }
    if name.trim().is_empty() {
        return Err(bad("NAME is empty"));
    }
    Ok((name.trim().to_string(), price))
}

/// Warnings for runs merged into one report that were measured under different conditions:
/// each names both run directories and the differing values.
pub(crate) fn cross_run_warnings(runs: &[RunData]) -> Vec<String> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let host = |r: &RunData| {
        let h = &r.manifest.host;
        format!(
            "{} ({}, {} cores, kernel {})",
            h.hostname, h.cpu_model, h.cores, h.kernel
        )
    };
    let scale = |r: &RunData| {
        let o = &r.manifest.options;
        format!(
            "{} tables x {} rows ({:?})",
            o.tables, o.table_size, o.scale
        )
        .to_lowercase()
    };
    let durations = |r: &RunData| {
        let o = &r.manifest.options;
        format!(
            "read {} s, write {} s, insert {} s, warm-up {} s",
            o.read_secs, o.write_secs, o.insert_secs, o.warmup_secs
        )
    };
    type Describe<'a> = &'a dyn Fn(&RunData) -> String;
    let checks: [(&str, Describe, &str); 3] = [
        ("hosts", &host, "relative values compare different machines"),
        (
            "scales",
            &scale,
            "relative values compare different data sizes",
        ),
        (
            "durations",
            &durations,
            "shorter steps usually measure higher QPS",
        ),
    ];
    for run in &runs[1..] {
        for (what, describe, why) in &checks {
            let (a, b) = (describe(first), describe(run));
            if a != b {
                out.push(format!(
                    "runs differ in {what}: {} has {a}, {} has {b}; {why}",
                    first.dir.display(),
                    run.dir.display()
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_syntax() {
        assert_eq!(
            parse_rename("pg15=pg15-mon").ok(),
            Some(Rename {
                run: None,
                from: "pg15".into(),
                to: "pg15-mon".into()
            })
        );
        assert_eq!(parse_rename("2:a=b").ok().and_then(|r| r.run), Some(2));
        for bad in ["a", "0:a=b", "x:a=b", "=b", "a="] {
            let e = parse_rename(bad).expect_err(bad).to_string();
            assert!(e.contains("--rename"), "{e}");
        }
    }

    #[test]
    fn cost_syntax() {
        assert_eq!(parse_cost("a=0.5").ok(), Some(("a".to_string(), 0.5)));
        assert_eq!(parse_cost("a=$2").ok(), Some(("a".to_string(), 2.0)));
        for bad in ["a", "a=x", "a=0", "a=-1", "=1"] {
            let e = parse_cost(bad).expect_err(bad).to_string();
            assert!(e.contains("--cost"), "{e}");
        }
    }
}
