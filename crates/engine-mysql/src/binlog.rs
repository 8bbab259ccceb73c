//! The binary-log reset of Mark Callaghan's published sysbench scripts (`reset master`
//! around each test, and first in the post-write settle), asked for with `binlog_reset=true` on a
//! mysql target, so binary logs written by one step never pile up into the next.

use crate::connection::MysqlConnection;
use crate::Flavor;
use dbdelta_engine::{Connection, EngineError};
use dbdelta_model::TargetSpec;

/// The target parameter (a dbdelta option, not a server setting).
pub(crate) const PARAM: &str = "binlog_reset";

/// True for the target parameter, written as the server writes settings (`-` or `_`, any
/// case).
pub(crate) fn is_param(key: &str) -> bool {
    key.replace('-', "_").eq_ignore_ascii_case(PARAM)
}

/// The target's `binlog_reset` value (default off); an unknown value is an error naming the
/// parameter.
pub(crate) fn wanted(spec: &TargetSpec) -> Result<bool, EngineError> {
    let mut on = false;
    for (k, v) in spec.params.iter().filter(|(k, _)| is_param(k)) {
        on = match v.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" | "yes" => true,
            "false" | "off" | "0" | "no" => false,
            _ => {
                return Err(EngineError::config(format!(
                    "target '{}': {k}={v} is invalid: write {PARAM}=true to reset the binary log before write steps, or {PARAM}=false",
                    spec.name
                )))
            }
        };
    }
    Ok(on)
}

/// The statement that drops every binary log: `RESET MASTER`, which MySQL 8.4 removed in
/// favour of `RESET BINARY LOGS AND GTIDS` (MariaDB keeps `RESET MASTER`).
pub(crate) fn reset_statement(flavor: Flavor, version: &str) -> &'static str {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if flavor == Flavor::MySql && (major, minor) >= (8, 4) {
        "RESET BINARY LOGS AND GTIDS"
    } else {
        "RESET MASTER"
    }
}

/// True when the server writes a binary log (`@@log_bin`).
pub(crate) fn enabled(conn: &mut MysqlConnection) -> Result<bool, EngineError> {
    let v = conn.query_scalar("SELECT @@log_bin")?.unwrap_or_default();
    Ok(matches!(v.to_ascii_uppercase().as_str(), "1" | "ON"))
}

/// Drops every binary log when binary logging is on, and says what it ran; `None` when it
/// is off (nothing to drop).
pub(crate) fn reset(
    conn: &mut MysqlConnection,
    flavor: Flavor,
    version: &str,
) -> Result<Option<String>, EngineError> {
    if !enabled(conn)? {
        return Ok(None);
    }
    let sql = reset_statement(flavor, version);
    conn.query(sql).map_err(|e| {
        EngineError::new(
            e.kind,
            format!(
                "{sql} ({PARAM}=true): {e}; the user needs the RELOAD privilege, or drop {PARAM}"
            ),
        )
    })?;
    Ok(Some(format!("{sql} (binary logging is on, {PARAM}=true)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_8_4_and_later_use_the_new_statement() {
        assert_eq!(
            reset_statement(Flavor::MySql, "8.0.39-0ubuntu0.22.04.1"),
            "RESET MASTER"
        );
        assert_eq!(
            reset_statement(Flavor::MySql, "8.4.2"),
            "RESET BINARY LOGS AND GTIDS"
        );
        assert_eq!(
            reset_statement(Flavor::MySql, "9.1.0"),
            "RESET BINARY LOGS AND GTIDS"
        );
        assert_eq!(reset_statement(Flavor::MySql, "5.7.44-log"), "RESET MASTER");
        assert_eq!(
            reset_statement(Flavor::MariaDb, "11.4.2-MariaDB-1"),
            "RESET MASTER"
        );
        assert_eq!(reset_statement(Flavor::MySql, ""), "RESET MASTER");
    }

    #[test]
    fn the_parameter_takes_true_or_false_and_names_itself_otherwise() {
        let spec = |v: &str| TargetSpec::parse(&format!("my=mysql:/usr?binlog-reset={v}")).unwrap();
        assert!(wanted(&spec("true")).unwrap());
        assert!(!wanted(&spec("false")).unwrap());
        assert!(!wanted(&TargetSpec::parse("my=mysql:/usr").unwrap()).unwrap());
        let e = wanted(&spec("maybe")).unwrap_err().to_string();
        assert!(
            e.contains("binlog-reset=maybe") && e.contains("binlog_reset=true"),
            "{e}"
        );
    }
}
