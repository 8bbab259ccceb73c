//! `run.json`: the reproducibility manifest of a run.

use crate::options::RunOptions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the manifest format.
pub const MANIFEST_SCHEMA: u32 = 1;

/// The tool that made the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Crate version.
    pub version: String,
    /// Git commit the binary was built from (`unknown` outside a checkout).
    pub git_commit: String,
}

/// The host the run was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cores: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Kernel release.
    pub kernel: String,
    /// CPU frequency governor, if exposed.
    pub governor: Option<String>,
    /// Transparent huge pages setting, if exposed.
    pub thp: Option<String>,
    /// Simultaneous multithreading: `on`, `off`, `notsupported` (`/sys/devices/system/cpu/smt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<String>,
    /// Turbo/boost: `on` or `off`, where the kernel exposes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost: Option<String>,
    /// CPU time stolen by the hypervisor in a short sample at the start, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// One-minute load average at the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<f64>,
    /// Settings of this host known to make numbers noisy, each with its fix (also printed
    /// when the run starts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One target as it was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetManifest {
    /// Target name (report column).
    pub name: String,
    /// Engine name.
    pub engine: String,
    /// The spec with secrets redacted.
    pub spec: String,
    /// Server or library version string.
    pub version: Option<String>,
    /// Effective non-default settings.
    pub settings: BTreeMap<String, String>,
    /// Why the target could not run at all, if it could not.
    pub error: Option<String>,
}

/// State of the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still running (or killed: results up to the last finished step are valid).
    Running,
    /// Finished every step.
    Complete,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// The manifest written as `run.json` at the start and updated at the end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Manifest format version.
    pub schema: u32,
    /// The tool.
    pub tool: ToolInfo,
    /// The host.
    pub host: HostInfo,
    /// Start, RFC 3339 UTC.
    pub started: String,
    /// End, RFC 3339 UTC, once finished.
    pub finished: Option<String>,
    /// Run state.
    pub status: RunStatus,
    /// The resolved options.
    pub options: RunOptions,
    /// Targets in column order; the first is the default base.
    pub targets: Vec<TargetManifest>,
    /// The command line with secrets redacted.
    pub command: Vec<String>,
    /// A segment of a run (`--segment K/N`), or a run merged from segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<crate::segment::RunSegments>,
}
