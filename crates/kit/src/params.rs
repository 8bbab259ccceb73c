//! Target-parameter errors and checks shared by engines: the one form of a configuration
//! error about a target, and the parameter-count check of a prepared statement's execute.

use dbdelta_engine::{EngineError, Value};
use dbdelta_model::TargetSpec;

/// A configuration error about `spec`, prefixed with the target's name as every engine
/// writes it (`target 'pg': …`), so the user sees which `--target` to fix.
pub fn config_err(spec: &TargetSpec, msg: impl AsRef<str>) -> EngineError {
    target_config_err(&spec.name, msg)
}

/// [`config_err`] for an engine that keeps only the target's name.
pub fn target_config_err(target: &str, msg: impl AsRef<str>) -> EngineError {
    EngineError::config(format!("target '{target}': {}", msg.as_ref()))
}

/// Refuses an execute whose parameter count differs from the statement's placeholders:
/// the server would reject it with a less helpful message, or a text interpolation would
/// leave a `?` behind.
pub fn check_param_count(
    placeholders: usize,
    params: &[Value<'_>],
    sql: &str,
) -> Result<(), EngineError> {
    if placeholders != params.len() {
        return Err(EngineError::statement(format!(
            "statement has {placeholders} placeholders but got {} parameters: {sql}",
            params.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let spec = TargetSpec::parse("ch=clickhouse:/usr/sbin").unwrap();
        let e = config_err(&spec, "no such directory");
        assert_eq!(e.to_string(), "target 'ch': no such directory");
        assert_eq!(e.kind, dbdelta_engine::ErrorKind::Config);
        assert!(check_param_count(1, &[Value::Int(1)], "SELECT ?").is_ok());
        let e = check_param_count(2, &[Value::Int(1)], "SELECT ?, ?").unwrap_err();
        assert_eq!(
            e.to_string(),
            "statement has 2 placeholders but got 1 parameters: SELECT ?, ?"
        );
    }
}
