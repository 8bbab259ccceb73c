//! Emulated network links for managed servers: `net=RATE[,DELAY[,LOSS]]` on a managed
//! postgres or mysql target runs its server in a network namespace dbdelta creates, joined
//! to this host by a veth pair whose two ends are shaped with `tc` (`tbf` for the rate on
//! each direction, `netem` under it for delay and loss).
//!
//! * Everything stays on this machine: the namespace holds only the server; its address is
//!   taken from a private /30 of 10.213.0.0/16 that no interface or route of the host uses.
//! * Root only (namespaces, veth and tc need `CAP_NET_ADMIN`/`CAP_SYS_ADMIN`).
//! * The namespace (and with it the veth pair) is deleted when the [`Link`] drops; every
//!   live link is registered so that an interrupted run removes it with [`remove_all`], and
//!   namespaces left by a dbdelta that was killed outright are reaped by the next link.
//! * Servers enter the namespace in their child process before dropping privileges
//!   ([`crate::server::prepare_command_in`]); [`Link::measure`] measures throughput and round
//!   trip over the link from a thread that entered it (`setns` affects only that thread).

use dbdelta_engine::EngineError;
use dbdelta_model::{Location, TargetSpec};
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The target parameter.
pub const PARAM: &str = "net";
/// The valid form, quoted by every parse error.
const FORM: &str =
    "net=RATE[,DELAY[,LOSS]], e.g. net=10mbit, net=1gbit,0.2ms or net=100mbit,1ms,0.1% \
     (RATE in bit/kbit/mbit/gbit per second on each direction, DELAY the added round trip \
     in us/ms/s, LOSS a percentage per direction)";
/// Namespaces dbdelta creates are named `dbdelta-<pid>-<n>`.
const NS_PREFIX: &str = "dbdelta-";
/// Where `ip netns` keeps its named namespaces.
const NETNS_DIR: &str = "/var/run/netns";
/// The /16 the links' /30 blocks come from.
const RANGE: [u8; 2] = [10, 213];
/// The veth end inside the namespace (names are per namespace).
const NS_IF: &str = "dbdelta0";

/// True for the `net` parameter (any case).
pub fn is_param(key: &str) -> bool {
    key.eq_ignore_ascii_case(PARAM)
}

/// A parsed `net=` value.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// Bandwidth on each direction, bits per second.
    pub rate_bit: u64,
    /// Added round-trip time (half on each direction).
    pub delay: Option<Duration>,
    /// Packet loss on each direction, percent.
    pub loss_pct: Option<f64>,
    /// The value as written (`10mbit`, `1gbit,0.2ms`).
    pub text: String,
}

impl LinkSpec {
    /// Parses `RATE[,DELAY[,LOSS]]`; the error names `net=` and the valid form.
    pub fn parse(value: &str) -> Result<LinkSpec, NetnsError> {
        let bad = |why: String| NetnsError::BadValue {
            value: value.to_string(),
            why,
        };
        let parts: Vec<&str> = value.split(',').map(str::trim).collect();
        if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
            return Err(bad("expected one to three comma-separated values".into()));
        }
        let rate_bit = parse_rate(parts[0]).ok_or_else(|| {
            bad(format!(
                "'{}' is not a rate between 8kbit and 100gbit",
                parts[0]
            ))
        })?;
        let delay = match parts.get(1) {
            Some(d) => Some(
                parse_delay(d)
                    .ok_or_else(|| bad(format!("'{d}' is not a delay between 1us and 10s")))?,
            ),
            None => None,
        };
        let loss_pct = match parts.get(2) {
            Some(l) => Some(
                parse_loss(l)
                    .ok_or_else(|| bad(format!("'{l}' is not a loss percentage below 100")))?,
            ),
            None => None,
        };
        Ok(LinkSpec {
            rate_bit,
            delay,
            loss_pct,
            text: value.trim().to_string(),
        })
    }

    /// True when the link needs `netem` (a delay or a loss).
    pub fn needs_netem(&self) -> bool {
        self.delay.is_some() || self.loss_pct.is_some()
    }

    /// tbf's bucket: 10 ms at the rate, at least 32 KiB (a few full-size packets).
    fn burst_bytes(&self) -> u64 {
        (self.rate_bit / 8 / 100).max(32 * 1024)
    }

    /// tbf's queue: 100 ms at the rate, at least four buckets, so a few TCP streams at
    /// full window are delayed rather than dropped.
    fn limit_bytes(&self) -> u64 {
        (self.rate_bit / 8 / 10).max(4 * self.burst_bytes())
    }
}

/// `10mbit`, `1.5gbit`, `800kbit`, `1000000bit` → bits per second (tc's SI units).
fn parse_rate(s: &str) -> Option<u64> {
    let s = s.to_ascii_lowercase();
    let (num, mult) = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)]
        .iter()
        .find_map(|(u, m)| s.strip_suffix(u).map(|n| (n.to_string(), *m)))?;
    let v: f64 = num.parse().ok()?;
    let bits = v * mult;
    (bits.is_finite() && (8e3..=100e9).contains(&bits)).then_some(bits.round() as u64)
}

/// `0.2ms`, `150us`, `1s` → a duration from 1 us to 10 s.
fn parse_delay(s: &str) -> Option<Duration> {
    let s = s.to_ascii_lowercase();
    let (num, mult) = [("ms", 1e-3), ("us", 1e-6), ("s", 1.0)]
        .iter()
        .find_map(|(u, m)| s.strip_suffix(u).map(|n| (n.to_string(), *m)))?;
    let v: f64 = num.parse().ok()?;
    let secs = v * mult;
    (secs.is_finite() && (1e-6..=10.0).contains(&secs)).then(|| Duration::from_secs_f64(secs))
}

/// `0.1%` or `0.1` → a percentage in [0, 100).
fn parse_loss(s: &str) -> Option<f64> {
    let v: f64 = s.strip_suffix('%').unwrap_or(s).parse().ok()?;
    (v.is_finite() && (0.0..100.0).contains(&v)).then_some(v)
}

fn config(spec: &TargetSpec, msg: impl AsRef<str>) -> EngineError {
    EngineError::config(format!("target '{}': {}", spec.name, msg.as_ref()))
}

/// Why a `net=` value was refused or a link could not be built or measured.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// A value that is not `RATE[,DELAY[,LOSS]]`.
    #[error("net={value}: {why}; write {FORM}")]
    BadValue {
        /// The value as written.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A command (`ip`, `tc`) could not be started.
    #[error("cannot run {cmd}: {source}")]
    Spawn {
        /// The program.
        cmd: String,
        /// Why it did not start.
        source: io::Error,
    },
    /// A command ran and failed.
    #[error("'{command}' failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// The namespace's file under /run/netns could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Every /30 of the link range is in use on this host.
    #[error(
        "no free /30 in {}.{}.0.0/16: every block is used by an address or route of this host",
        RANGE[0],
        RANGE[1]
    )]
    NoFreeBlock,
    /// The namespace could not be created.
    #[error("net={link}: {source}")]
    Create {
        /// The link's `net=` value.
        link: String,
        /// The cause.
        source: Box<NetnsError>,
    },
    /// The veth pair, its addresses or its shaping could not be set up.
    #[error("net={link}: building the link failed: {source}")]
    Build {
        /// The link's `net=` value.
        link: String,
        /// The cause.
        source: Box<NetnsError>,
    },
    /// A step of measuring the link failed.
    #[error("{what}{}", suffix(.source))]
    Measure {
        /// The step.
        what: &'static str,
        /// The I/O error behind it, when there is one.
        source: Option<io::Error>,
    },
    /// The measuring transfer itself failed.
    #[error(transparent)]
    Transfer(io::Error),
}

fn suffix(source: &Option<io::Error>) -> String {
    source
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default()
}

fn measure_err(what: &'static str) -> impl FnOnce(io::Error) -> NetnsError {
    move |e| NetnsError::Measure {
        what,
        source: Some(e),
    }
}

/// The target's link, if it asks for one: `net=` parsed and allowed only on managed
/// targets. Cheap (no system calls); [`check_spec`] also checks this host can build it.
pub fn link_spec(spec: &TargetSpec) -> Result<Option<LinkSpec>, EngineError> {
    let mut values = spec.params.iter().filter(|(k, _)| is_param(k));
    let Some((_, value)) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(config(
            spec,
            format!("net= is given twice; write it once: {FORM}"),
        ));
    }
    if !matches!(spec.location, Location::Path { .. }) {
        return Err(config(
            spec,
            "net= emulates a link to a managed server that dbdelta starts in a network \
             namespace (e.g. mysql:/usr?net=10mbit); an external server's network cannot be \
             shaped by dbdelta: drop net= from this target",
        ));
    }
    LinkSpec::parse(value)
        .map(Some)
        .map_err(|e| config(spec, e.to_string()))
}

/// Checks a target's `net=` before anything runs: the value, a managed target, root, the
/// `ip` and `tc` commands, and `netem` when a delay or loss is asked for.
pub fn check_spec(spec: &TargetSpec) -> Result<Option<LinkSpec>, EngineError> {
    let Some(link) = link_spec(spec)? else {
        return Ok(None);
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(config(
            spec,
            format!(
                "net={}: emulated links need root (dbdelta creates a network namespace, a \
                 veth pair and tc shaping); run dbdelta as root or drop net=",
                link.text
            ),
        ));
    }
    for (cmd, pkg) in [("ip", "iproute2"), ("tc", "iproute2")] {
        if Command::new(cmd).arg("-V").output().is_err() {
            return Err(config(
                spec,
                format!(
                    "net={}: the '{cmd}' command is missing; apt-get install {pkg}",
                    link.text
                ),
            ));
        }
    }
    if link.needs_netem() {
        if let Some(tc_says) = netem_missing() {
            return Err(config(
                spec,
                format!(
                    "net={}: a delay or loss needs tc's netem qdisc, which this kernel lacks \
                     (tc said: {tc_says}; the kernel has no sch_netem module): drop the delay \
                     and loss (net=RATE shapes the bandwidth with tbf) or run on a kernel with \
                     sch_netem",
                    link.text
                ),
            ));
        }
    }
    Ok(Some(link))
}

/// Probes `netem` once per process in a throwaway namespace; `Some` holds tc's message
/// when the kernel lacks it.
fn netem_missing() -> Option<String> {
    static PROBE: OnceLock<Option<String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let name = format!("{NS_PREFIX}{}-probe", std::process::id());
            register(&name);
            let r = run("ip", &["netns", "add", &name]).and_then(|()| {
                run(
                    "tc",
                    &[
                        "-n", &name, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
                    ],
                )
            });
            delete_namespace(&name);
            r.err().map(|e| e.to_string().trim().to_string())
        })
        .clone()
}

/// Runs a command; `Err` holds the command line and what it printed.
fn run(cmd: &str, args: &[&str]) -> Result<(), NetnsError> {
    output(cmd, args).map(drop)
}

/// Runs a command and returns its standard output.
fn output(cmd: &str, args: &[&str]) -> Result<String, NetnsError> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|source| NetnsError::Spawn {
            cmd: cmd.to_string(),
            source,
        })?;
    if !out.status.success() {
        return Err(NetnsError::Command {
            command: format!("{cmd} {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Namespaces of this process that exist now (removed by [`remove_all`]).
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Numbers the links of this process.
static NEXT: AtomicU32 = AtomicU32::new(0);

fn register(name: &str) {
    if let Ok(mut live) = LIVE.lock() {
        live.push(name.to_string());
    }
}

/// Deletes a namespace (its veth pair goes with it once its last process exits).
fn delete_namespace(name: &str) {
    let _ = run("ip", &["netns", "delete", name]);
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|n| n != name);
    }
}

/// Deletes every namespace this process created and still holds: for the interrupt path
/// that ends the process without dropping the engines. Returns their names.
pub fn remove_all() -> Vec<String> {
    let names = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
    for n in &names {
        delete_namespace(n);
    }
    names
}

/// Names of the namespaces this process holds now.
pub fn live() -> Vec<String> {
    LIVE.lock().map(|l| l.clone()).unwrap_or_default()
}

/// Deletes `dbdelta-<pid>-*` namespaces whose dbdelta no longer runs (killed with SIGKILL,
/// where no cleanup can run). Returns their names.
pub fn reap_stale() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut reaped = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(NS_PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run("ip", &["netns", "delete", &name]);
            reaped.push(name);
        }
    }
    reaped
}

/// What [`Link::measure`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkMeasurement {
    /// Throughput from the server's side to the client's (result rows), Mbit/s.
    pub down_mbit: f64,
    /// Throughput from the client's side to the server's (statements), Mbit/s.
    pub up_mbit: f64,
    /// Median round trip of a 1-byte TCP echo, milliseconds.
    pub rtt_ms: f64,
}

/// A shaped link to a network namespace holding one managed server; deleted on drop.
#[derive(Debug)]
pub struct Link {
    name: String,
    host_if: String,
    host_addr: Ipv4Addr,
    ns_addr: Ipv4Addr,
    spec: LinkSpec,
    /// `/var/run/netns/<name>`, the handle `setns` takes.
    ns_file: Option<File>,
    measured: Option<LinkMeasurement>,
}

impl Link {
    /// Builds the link a target asks for (`None` without `net=`) and measures it.
    pub fn for_spec(spec: &TargetSpec) -> Result<Option<Link>, EngineError> {
        let Some(ls) = check_spec(spec)? else {
            return Ok(None);
        };
        let mut link = Link::create(ls).map_err(|e| config(spec, e.to_string()))?;
        link.measured = Some(link.measure().map_err(|e| {
            config(
                spec,
                format!("net={}: measuring the link failed: {e}", link.spec.text),
            )
        })?);
        Ok(Some(link))
    }

    /// Creates the namespace, the veth pair, the addresses and the shaping on both ends.
    /// Needs root; the error quotes the command that failed.
    pub fn create(spec: LinkSpec) -> Result<Link, NetnsError> {
        reap_stale();
        let pid = std::process::id();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{NS_PREFIX}{pid}-{n}");
        // Interface names hold at most 15 bytes: "dbd" + pid in hex (≤ 6) + "h" + n.
        let host_if = format!("dbd{pid:x}h{n}");
        register(&name);
        if let Err(e) = run("ip", &["netns", "add", &name]) {
            delete_namespace(&name);
            return Err(NetnsError::Create {
                link: spec.text,
                source: Box::new(e),
            });
        }
        // From here on, dropping `link` removes whatever was built.
        let mut link = Link {
            name,
            host_if,
            host_addr: Ipv4Addr::UNSPECIFIED,
            ns_addr: Ipv4Addr::UNSPECIFIED,
            spec,
            ns_file: None,
            measured: None,
        };
        if let Err(e) = link.build(pid, n) {
            return Err(NetnsError::Build {
                link: link.spec.text.clone(),
                source: Box::new(e),
            });
        }
        Ok(link)
    }

    fn build(&mut self, pid: u32, n: u32) -> Result<(), NetnsError> {
        let block = free_block(pid, n)?;
        let base = u32::from(Ipv4Addr::new(RANGE[0], RANGE[1], 0, 0)) + block * 4;
        self.host_addr = Ipv4Addr::from(base + 1);
        self.ns_addr = Ipv4Addr::from(base + 2);
        let (ns, hif) = (self.name.clone(), self.host_if.clone());
        let host_cidr = format!("{}/30", self.host_addr);
        let ns_cidr = format!("{}/30", self.ns_addr);
        run(
            "ip",
            &[
                "link", "add", &hif, "type", "veth", "peer", "name", NS_IF, "netns", &ns,
            ],
        )?;
        run("ip", &["addr", "add", &host_cidr, "dev", &hif])?;
        run("ip", &["-n", &ns, "addr", "add", &ns_cidr, "dev", NS_IF])?;
        run("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
        self.shape(None, &hif)?;
        self.shape(Some(&ns), NS_IF)?;
        run("ip", &["-n", &ns, "link", "set", NS_IF, "up"])?;
        run("ip", &["link", "set", &hif, "up"])?;
        let path = format!("{NETNS_DIR}/{}", self.name);
        self.ns_file = Some(File::open(&path).map_err(|source| NetnsError::Open { path, source })?);
        Ok(())
    }

    /// tbf (under netem when there is a delay or loss) on the egress of `dev`.
    fn shape(&self, ns: Option<&str>, dev: &str) -> Result<(), NetnsError> {
        let mut base: Vec<String> = Vec::new();
        if let Some(ns) = ns {
            base.extend(["-n".into(), ns.to_string()]);
        }
        base.extend(["qdisc", "add", "dev", dev].map(String::from));
        let tbf: Vec<String> = [
            "tbf".to_string(),
            "rate".into(),
            format!("{}bit", self.spec.rate_bit),
            "burst".into(),
            self.spec.burst_bytes().to_string(),
            "limit".into(),
            self.spec.limit_bytes().to_string(),
        ]
        .into();
        let mut cmds: Vec<Vec<String>> = Vec::new();
        if self.spec.needs_netem() {
            let mut netem: Vec<String> = base.clone();
            netem.extend(["root", "handle", "1:", "netem", "limit", "100000"].map(String::from));
            if let Some(d) = self.spec.delay {
                netem.extend(["delay".into(), format!("{}us", (d.as_micros() / 2).max(1))]);
            }
            if let Some(l) = self.spec.loss_pct {
                netem.extend(["loss".into(), format!("{l}%")]);
            }
            cmds.push(netem);
            let mut t = base.clone();
            t.extend(["parent", "1:1", "handle", "10:"].map(String::from));
            t.extend(tbf);
            cmds.push(t);
        } else {
            let mut t = base.clone();
            t.push("root".into());
            t.extend(tbf);
            cmds.push(t);
        }
        for c in cmds {
            let args: Vec<&str> = c.iter().map(String::as_str).collect();
            run("tc", &args)?;
        }
        Ok(())
    }

    /// The namespace's name (`dbdelta-<pid>-<n>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's address, inside the namespace.
    pub fn server_addr(&self) -> Ipv4Addr {
        self.ns_addr
    }

    /// The address clients connect from (the host's end of the veth pair).
    pub fn client_addr(&self) -> Ipv4Addr {
        self.host_addr
    }

    /// The link as asked for.
    pub fn spec(&self) -> &LinkSpec {
        &self.spec
    }

    /// What [`Link::measure`] found when the link was built.
    pub fn measured(&self) -> Option<LinkMeasurement> {
        self.measured
    }

    /// The namespace handle for `setns(2)` (valid while the link lives).
    pub fn ns_fd(&self) -> Option<RawFd> {
        self.ns_file.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The link's entries for a target's settings (the manifest and the reports).
    pub fn settings(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("net.link".to_string(), self.spec.text.clone()),
            (
                "net.shaping".to_string(),
                format!(
                    "tbf rate {} burst {} B{} on both ends of a veth pair",
                    self.spec.text.split(',').next().unwrap_or_default(),
                    self.spec.burst_bytes(),
                    if self.spec.needs_netem() {
                        " under netem"
                    } else {
                        ""
                    }
                ),
            ),
            (
                "net.namespace".to_string(),
                format!(
                    "{} (server {}, client {})",
                    self.name, self.ns_addr, self.host_addr
                ),
            ),
        ];
        if let Some(m) = self.measured {
            out.push(("net.measured_mbit".into(), format!("{:.1}", m.down_mbit)));
            out.push(("net.measured_mbit_up".into(), format!("{:.1}", m.up_mbit)));
            out.push(("net.rtt_ms".into(), format!("{:.3}", m.rtt_ms)));
        }
        out
    }

    /// Measures the link: a 1-byte TCP echo (median of 200 round trips after 20 warm-up
    /// ones), then about half a second of bulk data each way, timed over the last three
    /// quarters so that tbf's initial bucket does not count. The far end is a thread that
    /// entered the namespace.
    pub fn measure(&self) -> Result<LinkMeasurement, NetnsError> {
        let ns = self
            .ns_file
            .as_ref()
            .ok_or(NetnsError::Measure {
                what: "the namespace is not open",
                source: None,
            })?
            .try_clone()
            .map_err(measure_err("cannot duplicate the namespace handle"))?;
        let addr = self.ns_addr;
        let bytes = (self.spec.rate_bit / 8 / 2).clamp(1 << 20, 256 << 20);
        let (tx, rx) = std::sync::mpsc::channel();
        let far = std::thread::Builder::new()
            .name("netns-measure".into())
            .spawn(move || far_end(ns, addr, tx))
            .map_err(measure_err("cannot start the measuring thread"))?;
        let near = rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| NetnsError::Measure {
                what: "the measuring thread did not start",
                source: None,
            })
            .and_then(|port| port.map_err(measure_err("listening in the namespace")))
            .and_then(|port| near_end(addr, port, bytes).map_err(NetnsError::Transfer));
        let far = far.join().map_err(|_| NetnsError::Measure {
            what: "the measuring thread panicked",
            source: None,
        })?;
        let m = near?;
        far.map_err(measure_err("the namespace side"))?;
        Ok(m)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.ns_file = None;
        delete_namespace(&self.name);
        // The pair goes with the namespace once the server in it has exited; remove our
        // end at once when it is still there (quiet when already gone).
        let _ = Command::new("ip")
            .args(["link", "delete", &self.host_if])
            .stderr(std::process::Stdio::null())
            .output();
    }
}

/// A /30 block of 10.213.0.0/16 with no host address or route in it, starting the search
/// at a place derived from the pid so that concurrent dbdelta processes rarely collide.
fn free_block(pid: u32, n: u32) -> Result<u32, NetnsError> {
    let addrs = output("ip", &["-4", "-o", "addr", "show"])?;
    let routes = output("ip", &["-4", "route", "show", "table", "all"])?;
    let mut taken: Vec<(u32, u32)> = Vec::new(); // (network, prefix length)
    for tok in addrs.split_whitespace().chain(routes.split_whitespace()) {
        let Some((a, len)) = tok.split_once('/') else {
            if let Ok(ip) = tok.parse::<Ipv4Addr>() {
                taken.push((u32::from(ip), 32));
            }
            continue;
        };
        if let (Ok(ip), Ok(len)) = (a.parse::<Ipv4Addr>(), len.parse::<u32>()) {
            // Wider routes (a default, a 10/8) do not make a /30 of ours unusable: the
            // connected /30 is more specific.
            if (16..=32).contains(&len) {
                taken.push((u32::from(ip) & mask(len), len));
            }
        }
    }
    let range = u32::from(Ipv4Addr::new(RANGE[0], RANGE[1], 0, 0));
    let blocks = 1u32 << 14;
    let start = pid.wrapping_mul(31).wrapping_add(n.wrapping_mul(7)) % blocks;
    for i in 0..blocks {
        let b = (start + i) % blocks;
        let net = range + b * 4;
        let clash = taken.iter().any(|&(t, len)| {
            let common = len.min(30);
            (t & mask(common)) == (net & mask(common))
        });
        if !clash {
            return Ok(b);
        }
    }
    Err(NetnsError::NoFreeBlock)
}

fn mask(len: u32) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len)
    }
}

/// How long one measuring exchange may take before it fails.
const MEASURE_TIMEOUT: Duration = Duration::from_secs(60);

/// The client side, on this host: echo, upload, download, one connection each.
fn near_end(addr: Ipv4Addr, port: u16, bytes: u64) -> io::Result<LinkMeasurement> {
    let connect = || -> io::Result<TcpStream> {
        let s = TcpStream::connect_timeout(&(addr, port).into(), Duration::from_secs(10))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(MEASURE_TIMEOUT))?;
        s.set_write_timeout(Some(MEASURE_TIMEOUT))?;
        Ok(s)
    };
    // Round trip.
    let mut s = connect()?;
    let mut samples = Vec::with_capacity(200);
    let mut b = [0u8; 1];
    for i in 0..220 {
        let t = Instant::now();
        s.write_all(&[7])?;
        s.read_exact(&mut b)?;
        if i >= 20 {
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    drop(s);
    samples.sort_by(f64::total_cmp);
    let rtt_ms = samples[samples.len() / 2];
    // Upload: the far end times it and answers with its rate.
    let mut s = connect()?;
    s.write_all(&bytes.to_le_bytes())?;
    let chunk = vec![0x5au8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        s.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    let mut rate = [0u8; 8];
    s.read_exact(&mut rate)?;
    let up_mbit = f64::from_le_bytes(rate);
    drop(s);
    // Download.
    let mut s = connect()?;
    s.write_all(&bytes.to_le_bytes())?;
    let down_mbit = receive(&mut s, bytes)?;
    Ok(LinkMeasurement {
        down_mbit,
        up_mbit,
        rtt_ms,
    })
}

/// Reads `bytes` from `s`; the rate over the last three quarters, Mbit/s.
fn receive(s: &mut TcpStream, bytes: u64) -> io::Result<f64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    let quarter = bytes / 4;
    let mut mark: Option<(Instant, u64)> = None;
    while got < bytes {
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the link closed after {got} of {bytes} bytes"),
            ));
        }
        got += n as u64;
        if mark.is_none() && got >= quarter {
            mark = Some((Instant::now(), got));
        }
    }
    let (t0, at) = mark.unwrap_or((Instant::now(), 0));
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    Ok((bytes - at) as f64 * 8.0 / secs / 1e6)
}

/// The server side, in a thread that entered the namespace: sends its port (or the error)
/// to `ready`, then serves the echo, the upload and the download.
fn far_end(
    ns: File,
    addr: Ipv4Addr,
    ready: std::sync::mpsc::Sender<io::Result<u16>>,
) -> io::Result<()> {
    let listener = (|| {
        // SAFETY: setns on a valid namespace fd; it changes only this thread's namespace.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let l = TcpListener::bind((addr, 0))?;
        l.set_nonblocking(true)?;
        Ok(l)
    })();
    let listener = match listener {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(io::Error::new(e.kind(), e.to_string())));
            return Err(e);
        }
    };
    let _ = ready.send(listener.local_addr().map(|a| a.port()));
    let accept = || -> io::Result<TcpStream> {
        let deadline = Instant::now() + MEASURE_TIMEOUT;
        loop {
            match listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false)?;
                    s.set_nodelay(true)?;
                    s.set_read_timeout(Some(MEASURE_TIMEOUT))?;
                    s.set_write_timeout(Some(MEASURE_TIMEOUT))?;
                    return Ok(s);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(e),
            }
        }
    };
    // Echo until the client closes.
    let mut s = accept()?;
    let mut b = [0u8; 1];
    while s.read(&mut b)? == 1 {
        s.write_all(&b)?;
    }
    // Upload: receive, answer with the rate.
    let mut s = accept()?;
    let mut len = [0u8; 8];
    s.read_exact(&mut len)?;
    let rate = receive(&mut s, u64::from_le_bytes(len))?;
    s.write_all(&rate.to_le_bytes())?;
    // Download.
    let mut s = accept()?;
    s.read_exact(&mut len)?;
    let chunk = vec![0xa5u8; 64 * 1024];
    let mut left = u64::from_le_bytes(len);
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        s.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse() {
        let l = LinkSpec::parse("10mbit").unwrap();
        assert_eq!(l.rate_bit, 10_000_000);
        assert!(!l.needs_netem());
        let l = LinkSpec::parse("1gbit,0.2ms").unwrap();
        assert_eq!(l.rate_bit, 1_000_000_000);
        assert_eq!(l.delay, Some(Duration::from_micros(200)));
        assert!(l.needs_netem());
        let l = LinkSpec::parse("1.5Gbit, 150us, 0.1%").unwrap();
        assert_eq!(l.rate_bit, 1_500_000_000);
        assert_eq!(l.loss_pct, Some(0.1));
        assert_eq!(LinkSpec::parse("800kbit").unwrap().rate_bit, 800_000);
    }

    #[test]
    fn bad_values_name_the_parameter_and_the_form() {
        for bad in [
            "",
            "10",
            "10mbps",
            "fast",
            "0mbit",
            "1tbit",
            "10mbit,",
            "10mbit,2",
            "10mbit,1ms,100%",
            "10mbit,1ms,1%,x",
            "-1mbit",
            "nanmbit",
        ] {
            let e = LinkSpec::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("net={bad}:")), "{bad}: {e}");
            assert!(e.contains("net=RATE[,DELAY[,LOSS]]"), "{bad}: {e}");
        }
    }

    #[test]
    fn only_managed_targets_take_a_link() {
        let t = TargetSpec::parse("m=mysql:/usr?net=10mbit").unwrap();
        assert_eq!(link_spec(&t).unwrap().unwrap().rate_bit, 10_000_000);
        let t = TargetSpec::parse("m=mysql://root@127.0.0.1:3306/db?net=10mbit").unwrap();
        let e = link_spec(&t).unwrap_err();
        assert!(
            e.message.contains("net=") && e.message.contains("managed"),
            "{e}"
        );
        let t = TargetSpec::parse("m=mysql:/usr?net=1mbit&NET=2mbit").unwrap();
        assert!(link_spec(&t).unwrap_err().message.contains("twice"));
        let t = TargetSpec::parse("m=mysql:/usr?innodb_buffer_pool_size=1G").unwrap();
        assert_eq!(link_spec(&t).unwrap(), None);
    }

    #[test]
    fn tbf_sizes_follow_the_rate() {
        let slow = LinkSpec::parse("10mbit").unwrap();
        assert_eq!(slow.burst_bytes(), 32 * 1024);
        assert_eq!(slow.limit_bytes(), 4 * 32 * 1024);
        let fast = LinkSpec::parse("10gbit").unwrap();
        assert_eq!(fast.burst_bytes(), 12_500_000);
        assert_eq!(fast.limit_bytes(), 125_000_000);
    }

    /// Root and iproute2 are needed; under CI their absence fails the test.
    fn can_build_links() -> bool {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let ip = Command::new("ip").arg("-V").output().is_ok()
            && Command::new("tc").arg("-V").output().is_ok();
        if root && ip {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "links need root and iproute2 under CI (root: {root}, ip/tc: {ip})"
        );
        eprintln!("SKIPPED: links need root and iproute2 (root: {root}, ip/tc: {ip})");
        false
    }

    fn namespaces() -> String {
        output("ip", &["netns", "list"]).unwrap()
    }

    #[test]
    fn a_link_is_shaped_measured_and_removed() {
        if !can_build_links() {
            return;
        }
        let link = Link::create(LinkSpec::parse("10mbit").unwrap()).unwrap();
        let (name, hif) = (link.name().to_string(), link.host_if.clone());
        assert!(namespaces().contains(&name));
        assert!(live().contains(&name));
        let m = link.measure().unwrap();
        // tbf at 10 Mbit/s on each end: the measured rate is the shaped one, not the veth's.
        assert!((7.0..=12.5).contains(&m.down_mbit), "{m:?}");
        assert!((7.0..=12.5).contains(&m.up_mbit), "{m:?}");
        assert!(m.rtt_ms > 0.0 && m.rtt_ms < 20.0, "{m:?}");
        let fast = Link::create(LinkSpec::parse("1gbit").unwrap()).unwrap();
        assert_ne!(fast.server_addr(), link.server_addr());
        let f = fast.measure().unwrap();
        assert!(f.down_mbit > 5.0 * m.down_mbit, "{f:?} vs {m:?}");
        let settings = fast.settings();
        assert!(settings
            .iter()
            .any(|(k, v)| k == "net.link" && v == "1gbit"));
        drop(fast);
        drop(link);
        assert!(!namespaces().contains(&name));
        assert!(!live().contains(&name));
        let links = output("ip", &["-o", "link", "show"]).unwrap();
        assert!(!links.contains(&format!("{hif}@")), "{links}");
    }

    #[test]
    fn masks() {
        assert_eq!(mask(30), 0xffff_fffc);
        assert_eq!(mask(16), 0xffff_0000);
        assert_eq!(mask(0), 0);
    }
}
