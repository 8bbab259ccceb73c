//! What watches a window from outside the workers: the OS sampler (host, disk, server and
//! client processes) and perf's CPU profile. Neither ever fails a step: a sampler that
//! cannot start loses the OS metrics, a profile that cannot be taken records why.

use dbdelta_engine::Engine;
use dbdelta_osmetrics::{DeviceChoice, Sampler, SamplerConfig, SamplerHandle};
use dbdelta_profile::perf::Stopped;
use dbdelta_profile::{ProfileError, ProfileSpec, ProfileTargets, Recording};
use std::sync::{Arc, Mutex};

/// Starts the OS sampler for the window; a failure only loses the OS metrics (noted).
pub(crate) fn start_sampler(
    engine: &dyn Engine,
    enabled: bool,
    device: &Option<String>,
    tids: Option<&Arc<Mutex<Vec<u32>>>>,
) -> Option<SamplerHandle> {
    if !enabled {
        return None;
    }
    let device = match (device, engine.data_dir()) {
        (Some(name), _) => DeviceChoice::Named(name.clone()),
        (None, Some(dir)) => DeviceChoice::DataDir(dir),
        (None, None) => DeviceChoice::None,
    };
    let worker_tids: Option<dbdelta_osmetrics::WorkerTids> = match tids {
        Some(tids) if engine.embedded() => {
            let tids = Arc::clone(tids);
            let prefixes = engine.background_thread_prefixes();
            Some(Arc::new(move || {
                let mut all = tids.lock().map(|v| v.clone()).unwrap_or_default();
                all.extend(crate::cpu::threads_named(prefixes));
                all
            }))
        }
        _ => None,
    };
    Sampler::start(SamplerConfig {
        device,
        server_pids: engine.server_pids(),
        proxy_pids: engine.proxy_pids(),
        worker_tids,
        ..SamplerConfig::default()
    })
    .ok()
}

/// Starts perf for the window on the server's processes, or on the worker threads of an
/// embedded engine; an error is the reason there will be no profile.
pub(crate) fn start_profile(
    engine: &dyn Engine,
    spec: &ProfileSpec,
    tids: &Arc<Mutex<Vec<u32>>>,
) -> Result<Recording, ProfileError> {
    let targets = if engine.embedded() {
        ProfileTargets::Tids(tids.lock().map(|v| v.clone()).unwrap_or_default())
    } else {
        ProfileTargets::Pids(engine.server_pids())
    };
    spec.start_disabled(&targets)
}

/// Keeps the profile of a step (folded stacks, flamegraph, …) or the reason it has none
/// (`None`: the measured window never started). Never fails the step.
pub(crate) fn keep_profile(
    spec: &ProfileSpec,
    stopped: Option<Result<Stopped, ProfileError>>,
    queries: u64,
) {
    let Some(stopped) = stopped else {
        dbdelta_profile::store::record_failure(spec, "the measured window never started");
        return;
    };
    match stopped.and_then(Stopped::script) {
        Ok(script) => {
            dbdelta_profile::store::keep_profile(spec, &script, queries);
        }
        Err(why) => {
            dbdelta_profile::store::record_failure(spec, &why.to_string());
        }
    }
}
