//! The client-core flags (`--connections`, `--active`, `--connect-rate`, timeouts) and the
//! check, before anything starts, that this machine can hold the connections asked for.

use crate::flags::RunArgs;
use anyhow::{bail, Result};
use dbdelta_model::options::ClientOptions;

/// Longest timeout accepted, in seconds (a day): beyond it a typo, not a benchmark.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;
/// File descriptors dbdelta keeps for itself (result files, /proc readers, perf, logs).
const RESERVED_FDS: u64 = 256;
/// Client memory of one idle connection in session form: its socket's kernel state plus
/// the few bytes dbdelta keeps (measured: see bench/connections.sh); rounded up.
const IDLE_CONNECTION_BYTES: u64 = 8 * 1024;
/// Client memory of one active connection: read and write buffers plus the terminal's
/// workload state.
const ACTIVE_CONNECTION_BYTES: u64 = 64 * 1024;

/// Validates the connection flags into the options the runner reads.
pub(crate) fn client_options(args: &RunArgs) -> Result<ClientOptions> {
    let d = ClientOptions::default();
    if args.active == Some(0) {
        bail!("--active 0 is invalid: give the number of connections that run the workload (>= 1)");
    }
    Ok(ClientOptions {
        active: args.active,
        connect_rate: match args.connect_rate {
            Some(r) if !(r.is_finite() && (1.0..=1e6).contains(&r)) => {
                bail!("--connect-rate {r} is invalid: give new connections per second from 1 to 1000000")
            }
            Some(r) => r,
            None => d.connect_rate,
        },
        connect_timeout_secs: timeout(
            "--connect-timeout",
            args.connect_timeout,
            d.connect_timeout_secs,
        )?,
        statement_timeout_secs: timeout(
            "--statement-timeout",
            args.statement_timeout,
            d.statement_timeout_secs,
        )?,
        max_error_rate: match &args.max_error_rate {
            None => d.max_error_rate,
            Some(text) => parse_rate(text)?,
        },
    })
}

/// `--max-error-rate`: a fraction in [0, 1) or a percentage (`1%`).
fn parse_rate(text: &str) -> Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v.is_finite() && (0.0..1.0).contains(&v) => Ok(v),
        _ => bail!(
            "--max-error-rate {text} is invalid: give the share of events that may fail, from 0 to below 1 (e.g. 0.01) or a percentage (e.g. 1%)"
        ),
    }
}

fn timeout(flag: &str, v: Option<f64>, default: f64) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT_SECS => Ok(s),
        Some(s) => bail!("{flag} {s} is invalid: give seconds > 0 and at most {MAX_TIMEOUT_SECS}"),
    }
}

/// Raises this process's open-file limit so `connections` sockets fit, or explains which
/// limit stops them (exit 2 through the caller). Needs no root unless the hard limit is
/// too low.
pub(crate) fn ensure_capacity(connections: u64, active: u64) -> Result<()> {
    let need = connections + RESERVED_FDS;
    let (soft, hard) = nofile()?;
    if soft < need {
        // Managed servers and proxies are our children and inherit the limit: leave them as
        // much room again (each accepted connection is an fd on their side too).
        let nr_open = read_u64("/proc/sys/fs/nr_open").unwrap_or(hard);
        if nr_open < need {
            bail!(
                "--connections {connections}: needs {need} open files but the kernel allows at \
                 most {nr_open} per process (fs.nr_open); raise it with `sysctl fs.nr_open={need}` \
                 or open fewer connections"
            );
        }
        if need <= hard {
            // Children inherit the soft limit: give them all we may.
            set_nofile(hard, hard).map_err(|e| {
                anyhow::anyhow!(
                    "--connections {connections}: raising the open-file limit to {hard}: {e}"
                )
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
                anyhow::anyhow!(
                    "--connections {connections}: needs {need} open files but the hard limit is \
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
            bail!(
                "--connections {connections}: the client alone needs about {} MiB \
                 ({active} active × {} KiB + {} idle × {} KiB), more than half of the {} MiB \
                 available; open fewer connections or fewer active ones (--active)",
                est >> 20,
                ACTIVE_CONNECTION_BYTES >> 10,
                connections - active,
                IDLE_CONNECTION_BYTES >> 10,
                avail >> 20
            );
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
pub(crate) fn ensure_threads(threads: u64) -> Result<()> {
    let need = threads + RESERVED_THREADS;
    let flag = format!("--threads {threads}");
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
        && need > lim.rlim_cur
    {
        bail!(
            "{flag}: each connection of this target needs a thread, and the process limit \
             (RLIMIT_NPROC, `ulimit -u`) is {}; use fewer threads or raise it",
            lim.rlim_cur
        );
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
                bail!(
                    "{flag}: each connection of this target needs a thread, and only {free} \
                     more fit under {name} = {max} ({in_use} threads run now); use fewer \
                     threads or raise it (`sysctl {name}=…`)"
                );
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
            bail!(
                "{flag}: {need} threads need about {} MiB of address space ({} KiB each for \
                 the stack and signal stack) but the limit (RLIMIT_AS, `ulimit -v`) leaves {} \
                 MiB; use fewer threads or raise it",
                want >> 20,
                THREAD_ADDRESS_SPACE >> 10,
                lim.rlim_cur.saturating_sub(in_use) >> 20
            );
        }
    }
    if let Some(max) = read_u64("/proc/sys/vm/max_map_count") {
        let used = std::fs::read_to_string("/proc/self/maps")
            .map(|m| m.lines().count() as u64)
            .unwrap_or(0);
        if need * MAPS_PER_THREAD + used > max {
            bail!(
                "{flag}: {need} threads need about {} memory mappings, more than the {} left \
                 under vm.max_map_count = {max}; use fewer threads or raise it \
                 (`sysctl vm.max_map_count=…`)",
                need * MAPS_PER_THREAD,
                max.saturating_sub(used)
            );
        }
    }
    if let Some(avail) = mem_available() {
        let est = threads * THREAD_BYTES;
        if est > avail / 2 {
            bail!(
                "{flag}: each connection of this target needs a thread; the client alone needs \
                 about {} MiB ({threads} × {} KiB), more than half of the {} MiB available; \
                 use fewer threads",
                est >> 20,
                THREAD_BYTES >> 10,
                avail >> 20
            );
        }
    }
    Ok(())
}

/// The refusal when the target accepts fewer connections than the run's largest level.
pub(crate) fn over_server_limit(
    engine: &dyn dbdelta_engine::Engine,
    plan: &crate::spec::RunPlan,
) -> Option<String> {
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

fn nofile() -> Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        bail!(
            "cannot read the open-file limit: {}",
            std::io::Error::last_os_error()
        );
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
pub(crate) fn mem_available() -> Option<u64> {
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
        ensure_capacity(4000, 10).expect("4000 connections fit this machine");
        let (soft, _) = nofile().unwrap();
        assert!(soft >= 4000 + RESERVED_FDS);
    }

    #[test]
    fn refuses_more_connections_than_memory_holds() {
        let err = ensure_capacity(u64::from(u32::MAX), u64::from(u32::MAX))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--connections"), "{err}");
    }

    #[test]
    fn timeouts_and_rates_are_bounded() {
        let mut a = RunArgs {
            statement_timeout: Some(1e30),
            ..RunArgs::default()
        };
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--statement-timeout"));
        a.statement_timeout = Some(2.0);
        a.connect_rate = Some(0.0);
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--connect-rate"));
        a.connect_rate = None;
        a.active = Some(0);
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--active"));
    }
}
