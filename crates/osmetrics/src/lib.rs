//! OS metrics for dbdelta: host CPU, the data directory's block device, the server's process
//! tree and the client process, sampled from `/proc` on a thread of its own during a measured
//! window; and the per-operation hardware costs (the published `sb.met` figures) derived from
//! them.
//!
//! How the runner uses it:
//! ```no_run
//! use dbdelta_osmetrics::{op_costs, DeviceChoice, Sampler, SamplerConfig};
//! let cfg = SamplerConfig {
//!     device: DeviceChoice::DataDir("/var/lib/postgresql/data".into()),
//!     server_pids: vec![4242], // postmaster
//!     ..SamplerConfig::default()
//! };
//! let handle = Sampler::start(cfg)?; // after warm-up
//! // … measured window …
//! let samples = handle.stop(); // at the end of the window
//! let costs = op_costs(&samples.summary, 12345.0); // ops/s of the step
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Modules: [`stat`] (`/proc/stat`, vmstat columns), [`disk`] (`/proc/diskstats`, iostat
//! columns), [`proc`] (per-process files), [`procset`] (process trees and thread sets),
//! [`device`] (data dir → block device), [`sampler`] (snapshots and the thread), [`costs`]
//! (per-operation costs), [`host`] (facts about the machine for the run manifest and its noise
//! warnings), [`fmt`] (C `%.6g` and the `sb.met` text block). Counter resets and
//! wraps are handled in [`counter`].
#![deny(missing_docs)]

pub mod costs;
pub mod counter;
pub mod device;
pub mod disk;
pub mod fmt;
pub mod host;
pub mod proc;
pub mod procset;
pub mod reader;
pub mod sampler;
pub mod stat;
pub mod sys;

pub use costs::op_costs;
pub use device::{resolve_data_dir, ResolvedDevice, SysPaths};
pub use fmt::{fmt_c_f, fmt_c_g, sb_met_block};
pub use sampler::{
    Collector, DeviceChoice, Sampler, SamplerConfig, SamplerHandle, Snapshot, WorkerTids,
};
