//! The check, before anything starts, that this machine can hold the connections and
//! threads a run asks for, and that each target accepts them.

use crate::error::{input, LabError};
use crate::plan::RunPlan;
/// File descriptors dbdelta keeps for itself (result files, /proc readers, perf, logs).
const RESERVED_FDS: u64 = 256;
/// Client memory of one idle connection in session form: its socket's kernel state plus
/// the few bytes dbdelta keeps (measured: see bench/connections.sh); rounded up.
const IDLE_CONNECTION_BYTES: u64 = 8 * 1024;
/// Client memory of one active connection: read and write buffers plus the terminal's
/// workload state.
const ACTIVE_CONNECTION_BYTES: u64 = 64 * 1024;

/// Raises this process's open-file limit so `connections` sockets fit, or explains which
/// limit stops them (exit 2 through the caller). Needs no root unless the hard limit is
/// too low.
/// `flag` is the flag that asked for them (`--connections`, `--terminals`, …).
pub fn ensure_capacity(flag: &str, connections: u64, active: u64) -> Result<(), LabError> {
    let need = connections + RESERVED_FDS;
    let (soft, hard) = nofile()?;
    if soft < need {
        // Managed servers and proxies are our children and inherit the limit: leave them as
        // much room again (each accepted connection is an fd on their side too).
        let nr_open = read_u64("/proc/sys/fs/nr_open").unwrap_or(hard);
        if nr_open < need {
            return Err(input!(
                "{flag} {connections}: needs {need} open files but the kernel allows at \
                 most {nr_open} per process (fs.nr_open); raise it with `sysctl fs.nr_open={need}` \
                 or open fewer connections"
            ));
        }
        if need <= hard {
            // Children inherit the soft limit: give them all we may.
            set_nofile(hard, hard).map_err(|e| {
                input!("{flag} {connections}: raising the open-file limit to {hard}: {e}")
            })?;
        } else {
            let want = (need * 2).min(nr_open);
            set_nofile(want, want).map_err(|e| {
                let why = if e.raw_os_error() == Some(libc::EPERM) {
                    "this process may not raise the hard limit (it lacks CAP_SYS_RESOURCE)"
                        .to_string()
                } else {
                    e.to_string()
                };
                input!(
                    "{flag} {connections}: needs {need} open files but the hard limit is \
                     {hard} and {why}; at most {} connections fit: open fewer, or raise the hard \
                     limit (`ulimit -Hn {need}` as root, LimitNOFILE= in a systemd unit)",
                    hard.saturating_sub(RESERVED_FDS)
                )
            })?;
        }
    }
    let est = active * ACTIVE_CONNECTION_BYTES + (connections - active) * IDLE_CONNECTION_BYTES;
    if let Some(avail) = mem_available() {
        // Leave at least half of the memory to the servers and the page cache.
        if est > avail / 2 {
            return Err(input!(
                "{flag} {connections}: the client alone needs about {} MiB \
                 ({active} active × {} KiB + {} idle × {} KiB), more than half of the {} MiB \
                 available; open fewer connections or fewer active ones (--active)",
                est >> 20,
                ACTIVE_CONNECTION_BYTES >> 10,
                connections - active,
                IDLE_CONNECTION_BYTES >> 10,
                avail >> 20
            ));
        }
    }
    Ok(())
}

/// Client memory of one connection that has a thread of its own (embedded engines, TLS):
/// the touched part of its stack, the engine's per-connection state and the allocator's
/// share; rounded up.
const THREAD_BYTES: u64 = 256 * 1024;
/// Address space one thread reserves: Rust's default 2 MiB stack and its guard page, and
/// the signal stack with its guard page.
const THREAD_ADDRESS_SPACE: u64 = (2048 + 4 + 64 + 4) * 1024;
/// Threads dbdelta runs besides the workers (samplers, event loops, connectors, signals).
const RESERVED_THREADS: u64 = 64;
/// Memory mappings of one thread: its stack and its guard page, and the signal stack Rust
/// gives every thread and its guard page (measured: 19,000 threads fail at 65,530 maps).
const MAPS_PER_THREAD: u64 = 4;

/// Refuses, before anything starts, a thread-per-connection run that this machine cannot
/// start: each limit that would make thread creation fail halfway is checked and named.
/// `flag` is the flag that asked for them (`--threads`, `--terminals`, …).
pub fn ensure_threads(flag: &str, threads: u64) -> Result<(), LabError> {
    let need = threads + RESERVED_THREADS;
    let flag = format!("{flag} {threads}");
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
        && need > lim.rlim_cur
    {
        return Err(input!(
            "{flag}: each connection of this target needs a thread, and the process limit \
             (RLIMIT_NPROC, `ulimit -u`) is {}; use fewer threads or raise it",
            lim.rlim_cur
        ));
    }
    // Every thread takes a pid; /proc/loadavg's 4th field is running/total threads.
    let in_use = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().nth(3)?.split_once('/')?.1.parse().ok())
        .unwrap_or(0u64);
    for (path, name) in [
        ("/proc/sys/kernel/threads-max", "kernel.threads-max"),
        ("/proc/sys/kernel/pid_max", "kernel.pid_max"),
    ] {
        if let Some(max) = read_u64(path) {
            let free = max.saturating_sub(in_use);
            if need > free {
                return Err(input!(
                    "{flag}: each connection of this target needs a thread, and only {free} \
                     more fit under {name} = {max} ({in_use} threads run now); use fewer \
                     threads or raise it (`sysctl {name}=…`)"
                ));
            }
        }
    }
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
    {
        // A thread that gets its stack but not its signal stack aborts the process inside
        // the standard library: the address space must hold every thread with room to spare.
        let in_use = vm_size_bytes().unwrap_or(0);
        let want = need * THREAD_ADDRESS_SPACE;
        if in_use + want > lim.rlim_cur {
            return Err(input!(
                "{flag}: {need} threads need about {} MiB of address space ({} KiB each for \
                 the stack and signal stack) but the limit (RLIMIT_AS, `ulimit -v`) leaves {} \
                 MiB; use fewer threads or raise it",
                want >> 20,
                THREAD_ADDRESS_SPACE >> 10,
                lim.rlim_cur.saturating_sub(in_use) >> 20
            ));
        }
    }
    if let Some(max) = read_u64("/proc/sys/vm/max_map_count") {
        let used = std::fs::read_to_string("/proc/self/maps")
            .map(|m| m.lines().count() as u64)
            .unwrap_or(0);
        if need * MAPS_PER_THREAD + used > max {
            return Err(input!(
                "{flag}: {need} threads need about {} memory mappings, more than the {} left \
                 under vm.max_map_count = {max}; use fewer threads or raise it \
                 (`sysctl vm.max_map_count=…`)",
                need * MAPS_PER_THREAD,
                max.saturating_sub(used)
            ));
        }
    }
    if let Some(avail) = mem_available() {
        let est = threads * THREAD_BYTES;
        if est > avail / 2 {
            return Err(input!(
                "{flag}: each connection of this target needs a thread; the client alone needs \
                 about {} MiB ({threads} × {} KiB), more than half of the {} MiB available; \
                 use fewer threads",
                est >> 20,
                THREAD_BYTES >> 10,
                avail >> 20
            ));
        }
    }
    Ok(())
}

/// The most clients one step of the run opens at once: the largest `--threads` or
/// `--connections` level, or a step's own rule (TPC-C's terminals, one thread per sysbench
/// table), whichever is larger; with the flag of the rule (`None`: the levels).
pub fn most_clients(plan: &RunPlan) -> (u32, Option<&'static str>) {
    use dbdelta_workload::suite::ThreadsRule;
    let levels = plan.options.threads.iter().copied().max().unwrap_or(1);
    let tpc = &plan.options.tpc;
    plan.suite
        .steps()
        .filter_map(|s| match s.threads? {
            ThreadsRule::Tables => Some((plan.options.tables, Some("--tables"))),
            ThreadsRule::One => None,
            ThreadsRule::Terminals => Some(match tpc.terminals {
                Some(n) => (n, Some("--terminals")),
                None => (
                    tpc.warehouses.saturating_mul(10),
                    Some("--warehouses × 10 terminals ="),
                ),
            }),
        })
        .fold((levels, None), |a, b| if b.0 > a.0 { b } else { a })
}

/// The refusal when the target accepts fewer connections than the run's largest level.
pub fn over_server_limit(engine: &dyn dbdelta_engine::Engine, plan: &RunPlan) -> Option<String> {
    let most = u64::from(plan.options.threads.iter().copied().max().unwrap_or(1));
    let limit = engine.connection_limit()?;
    (most > limit).then(|| {
        format!(
            "--connections {most}: the target accepts at most {limit} client connections; \
             raise its limit (e.g. ?max_connections={} on a managed server, \
             ?pgbouncer.max_client_conn=… behind pgbouncer) or open fewer connections",
            most + 10
        )
    })
}

fn nofile() -> Result<(u64, u64), LabError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(input!(
            "cannot read the open-file limit: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok((lim.rlim_cur, lim.rlim_max))
}

fn set_nofile(soft: u64, hard: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// This process's virtual size (VmSize of /proc/self/status), bytes.
fn vm_size_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// MemAvailable from /proc/meminfo, bytes.
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raises_the_open_file_limit_for_a_few_thousand_connections() {
        ensure_capacity("--connections", 4000, 10).expect("4000 connections fit this machine");
        let (soft, _) = nofile().unwrap();
        assert!(soft >= 4000 + RESERVED_FDS);
    }

    #[test]
    fn refuses_more_connections_than_memory_holds() {
        let err = ensure_capacity("--connections", u64::from(u32::MAX), u64::from(u32::MAX))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--connections"), "{err}");
    }
}
