//! The vocabulary of dbdelta: plain serde types with no I/O.
//!
//! Every other crate speaks in these types. `target` parses the `NAME=SPEC` grammar,
//! `options` holds the resolved run options, `result` is what one step measured and
//! `manifest` describes a whole run. Secrets (passwords) live only in [`target::Secret`],
//! which never serializes or prints its content.
#![deny(missing_docs)]

pub mod dialect;
#[doc(hidden)]
pub mod fuzzing;
pub mod glob;
pub mod ibench;
pub mod manifest;
pub mod net;
pub mod options;
pub mod os;
pub mod queryset;
pub mod result;
pub mod segment;
pub mod target;
#[cfg(feature = "test-support")]
pub mod testing;

pub use dialect::Dialect;
pub use ibench::{IbenchOptions, IbenchStats, KindLatency};
pub use manifest::{HostInfo, RunManifest, RunStatus, TargetManifest, ToolInfo};
pub use options::{
    settle_bound_secs, QuickPreset, RunOptions, Scale, ScaleDefaults, SettleTime, TpcOptions,
    TpccMode, QUICK_SETTLE_SECS,
};
pub use result::{
    ConnectStats, Group, Interval, LatencySummary, OpTypeStats, Pacing, ResolveStop, Resolved,
    StepKind, StepResult, StepStatus, Throughput, ThroughputUnit, TurnsInfo, TxnCounts,
    DB_COUNTER_PREFIX, RESULT_SCHEMA,
};
pub use segment::{RunSegments, Segment, SegmentPart, SegmentWindow};
pub use target::{Location, Secret, TargetError, TargetSpec};
