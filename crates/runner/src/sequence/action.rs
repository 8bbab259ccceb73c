//! The result of a suite's action (a load or a settle point): no window, no latency.

use dbdelta_model::{Group, StepKind, StepResult, StepStatus, Throughput, ThroughputUnit};

/// The result of an action that took `seconds` and, for a load, wrote `rows`.
pub(super) fn action_result(
    target: &str,
    order: u32,
    kind: StepKind,
    label: &str,
    status: StepStatus,
    seconds: f64,
    rows: u64,
) -> StepResult {
    let mut r = StepResult::empty(target, label, label, order, Group::Write, kind, 1);
    r.status = status;
    r.seconds = seconds;
    r.started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() - seconds)
        .unwrap_or(0.0);
    if kind == StepKind::Load {
        r.rows_affected = rows;
        r.events = rows;
        r.throughput = Throughput {
            value: if seconds > 0.0 {
                rows as f64 / seconds
            } else {
                0.0
            },
            unit: ThroughputUnit::RowsPerSec,
        };
    }
    r
}
