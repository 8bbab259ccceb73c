//! Which operation families a target can run: a suite declares what its steps need, an
//! engine what it serves; SQL engines serve key-value operations through the usertable
//! translation. A target that lacks a family gets every step reported as not supported,
//! and the run goes on.

use dbdelta_engine::{Engine, Family};
use dbdelta_model::{Group, StepKind, StepResult, StepStatus};
use dbdelta_workload::Step;

/// The families of `needed` that `engine` serves neither natively nor by translation.
pub fn missing_families(needed: &[Family], engine: &dyn Engine) -> Vec<Family> {
    let served = engine.families();
    let serves =
        |f: Family| served.contains(&f) || (f == Family::KeyValue && served.contains(&Family::Sql));
    needed.iter().copied().filter(|f| !serves(*f)).collect()
}

/// The reason shown for every step of a target whose engine lacks `missing`.
pub fn unsupported_reason(missing: &[Family], engine: &dyn Engine) -> String {
    let names: Vec<&str> = missing.iter().map(|f| f.name()).collect();
    format!(
        "{} operations are not supported by {}",
        names.join(" and "),
        format!("{:?}", engine.dialect()).to_lowercase()
    )
}

/// A "not supported" result for `step` at `threads`.
pub fn not_supported(target: &str, step: &Step, threads: u32, reason: &str) -> StepResult {
    let kind = if step.warm {
        StepKind::Warm
    } else {
        StepKind::Measured
    };
    let group: Group = step.group;
    let mut r = StepResult::empty(
        target,
        &step.name,
        &step.label,
        step.order,
        group,
        kind,
        threads,
    );
    r.status = StepStatus::NotSupported {
        reason: reason.to_string(),
    };
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine_mock::{MockConfig, MockEngine};

    fn mock(families: &str) -> MockEngine {
        let spec =
            dbdelta_model::TargetSpec::parse(&format!("m=mock?families={families}")).unwrap();
        MockEngine::new(MockConfig::from_spec(&spec).unwrap())
    }

    #[test]
    fn sql_engines_serve_key_value_by_translation() {
        let sql = mock("sql");
        assert!(missing_families(&[Family::Sql, Family::KeyValue], &sql).is_empty());
        let kv = mock("kv");
        assert_eq!(missing_families(&[Family::Sql], &kv), vec![Family::Sql]);
        assert!(missing_families(&[Family::KeyValue], &kv).is_empty());
        assert_eq!(
            unsupported_reason(&[Family::Sql], &kv),
            "sql operations are not supported by mock"
        );
    }
}
