//! Emulated network links (`net=RATE` on managed targets): bad values and external targets
//! are refused with exit 2; a slow link makes wide range reads network-bound while point
//! queries barely move; Ctrl-C leaves no namespace or veth interface behind.
//!
//! The links need root and iproute2, the known effect a PostgreSQL 15; under CI a missing
//! one fails the test.

mod common;

use common::{dbdelta, read_json, spawn_dbdelta, step_results};
use dbdelta_model::StepStatus;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const PG: &str = "/usr/lib/postgresql/15/bin";

/// Root, ip and tc, and a PostgreSQL 15; `false` (skip) outside CI when one is missing.
fn can_run_links() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        assert!(
            std::env::var_os("CI").is_none(),
            "emulated links need root under CI"
        );
        eprintln!("SKIPPED: emulated links need root");
        return false;
    }
    common::require(
        &["/usr/sbin/ip", "/usr/sbin/tc"],
        "apt-get install iproute2",
    ) && common::require(&[&format!("{PG}/initdb")], "apt-get install postgresql-15")
}

/// `ip netns list` and `ip -o link show`.
fn namespaces_and_links() -> (String, String) {
    let run = |args: &[&str]| {
        String::from_utf8_lossy(&Command::new("ip").args(args).output().unwrap().stdout)
            .into_owned()
    };
    (run(&["netns", "list"]), run(&["-o", "link", "show"]))
}

/// Waits until no namespace or host-side veth of dbdelta process `pid` is left.
fn assert_nothing_left(pid: u32) {
    let ns = format!("dbdelta-{pid}-");
    let veth = format!("dbd{pid:x}h");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (namespaces, links) = namespaces_and_links();
        if !namespaces.contains(&ns) && !links.contains(&veth) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left behind by dbdelta {pid}:\n{namespaces}\n{links}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn bad_net_values_and_external_targets_exit_2_naming_the_parameter() {
    for (target, wants) in [
        (
            format!("p=postgres:{PG}?net=fast"),
            vec!["net=fast", "net=RATE[,DELAY[,LOSS]]"],
        ),
        (
            format!("p=postgres:{PG}?net=10mbps"),
            vec!["net=10mbps", "net=RATE[,DELAY[,LOSS]]"],
        ),
        (
            "m=mysql:/usr?net=10mbit,1ms,200%".to_string(),
            vec!["net=10mbit,1ms,200%", "loss"],
        ),
        (
            "m=mysql://root@127.0.0.1:3306/db?net=10mbit".to_string(),
            vec!["net=", "managed", "drop net="],
        ),
        (
            "p=postgres://u@127.0.0.1:5432/db?net=1gbit".to_string(),
            vec!["net=", "managed"],
        ),
    ] {
        let out = dbdelta()
            .args(["run", "--quiet", "--no-store", "--target", &target])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{target}: {err}");
        for w in wants {
            assert!(err.contains(w), "{target}: no '{w}' in: {err}");
        }
    }
}

#[test]
fn a_delay_is_refused_with_tcs_message_when_the_kernel_lacks_netem() {
    if !can_run_links() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args(["run", "--quiet", "--no-store", "--steps", "no-such-step"])
        .args(["--target", &format!("p=postgres:{PG}?net=1gbit,0.2ms")])
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Either this kernel lacks netem (refused naming net=, tc's words and the fix), or it
    // has it and the run fails later on the unknown step; exit 2 both ways.
    assert_eq!(out.status.code(), Some(2), "{err}");
    if err.contains("netem") {
        for w in ["net=1gbit,0.2ms", "tc said", "sch_netem", "drop the delay"] {
            assert!(err.contains(w), "no '{w}' in: {err}");
        }
    } else {
        assert!(err.contains("no-such-step"), "{err}");
    }
    let (namespaces, _) = namespaces_and_links();
    assert!(!namespaces.contains("-probe"), "{namespaces}");
}

/// Mean QPS and c-column payload bit rate of a step's good rounds on a target.
fn measured(run: &Path, target: &str, label: &str) -> (f64, f64) {
    let rounds: Vec<_> = step_results(run, target)
        .into_iter()
        .filter(|r| r.label == label && matches!(r.status, StepStatus::Ok))
        .collect();
    assert!(!rounds.is_empty(), "no good round of {label} on {target}");
    let n = rounds.len() as f64;
    let qps = rounds.iter().map(|r| r.qps).sum::<f64>() / n;
    // Every row a read-only event returns but SUM's carries c, CHAR(120): a lower bound of
    // the bytes that crossed the link.
    let payload_bit_s = rounds
        .iter()
        .map(|r| r.rows_returned as f64 * 120.0 * 8.0 / r.seconds)
        .sum::<f64>()
        / n;
    (qps, payload_bit_s)
}

#[test]
fn a_slow_link_makes_wide_ranges_network_bound_and_point_queries_barely_move() {
    if !can_run_links() {
        return;
    }
    let (_dir, rd) = common::run_ok(&[
        "--scale",
        "quick",
        "--tables",
        "1",
        "--table-size",
        "10000",
        "--read-secs",
        "3",
        "--repeat",
        "2",
        "--steps",
        "read-only_range=10000,point-query_range=100",
        "--target",
        &format!("free=postgres:{PG}"),
        "--target",
        &format!("l200=postgres:{PG}?net=200mbit"),
        "--target",
        &format!("l50=postgres:{PG}?net=50mbit"),
    ]);
    // The links were measured before the steps and recorded with the targets.
    let manifest = read_json(&rd.join("run.json"));
    for (i, (name, mbit)) in [("l200", 200.0), ("l50", 50.0)].iter().enumerate() {
        let t = &manifest["targets"][i + 1];
        assert_eq!(t["name"], *name);
        let measured: f64 = t["settings"]["net.measured_mbit"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            measured > 0.7 * mbit && measured < 1.3 * mbit,
            "{name}: measured {measured} Mbit/s"
        );
        assert!(t["settings"]["net.rtt_ms"].as_str().is_some());
    }
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(report.contains("l50 (net 50mbit: measured"), "{report}");

    let range = "read-only_range=10000";
    let (free, _) = measured(&rd, "free", range);
    let (l200, bits200) = measured(&rd, "l200", range);
    let (l50, bits50) = measured(&rd, "l50", range);
    eprintln!(
        "{range}: free {free:.1} qps, 200mbit {l200:.1} qps ({:.1} Mbit/s of c), 50mbit {l50:.1} qps ({:.1} Mbit/s of c)",
        bits200 / 1e6,
        bits50 / 1e6
    );
    // The payload alone stays within the link's rate, and fills much of it.
    for (bits, mbit) in [(bits200, 200e6), (bits50, 50e6)] {
        assert!(
            bits <= 1.2 * mbit && bits >= 0.3 * mbit,
            "payload {:.1} Mbit/s on a {} Mbit/s link",
            bits / 1e6,
            mbit / 1e6
        );
    }
    // Network-bound: rQPS follows the bandwidth ratio (1/4), far below the unshaped target.
    // QPS counts whole 16-statement events (a few per round at 50 Mbit/s), the payload every
    // row: the payload ratio is the finer one.
    let ratio = l50 / l200;
    assert!(
        (0.1..=0.4).contains(&ratio),
        "range rQPS 50mbit/200mbit = {ratio:.2} ({l50:.1} vs {l200:.1} qps)"
    );
    let payload_ratio = bits50 / bits200;
    assert!(
        (0.15..=0.35).contains(&payload_ratio),
        "range payload 50mbit/200mbit = {payload_ratio:.2}"
    );
    assert!(
        l200 < 0.6 * free,
        "range: {l200:.1} qps at 200 Mbit/s vs {free:.1} unshaped"
    );
    // Point queries need little bandwidth (~50 Mbit/s at 20k qps): the link's rate does not
    // bind them, only the shaped path's per-packet work (veth, qdisc) and latency do, which
    // two CPU hogs beside make dearer (0.40 of unshaped measured with them; close to 1 alone).
    let point = "point-query_range=100";
    let (pfree, _) = measured(&rd, "free", point);
    let (p200, _) = measured(&rd, "l200", point);
    eprintln!("{point}: free {pfree:.0} qps, 200mbit {p200:.0} qps");
    assert!(
        p200 > 0.3 * pfree,
        "point: {p200:.0} qps at 200 Mbit/s vs {pfree:.0} unshaped"
    );
    assert_nothing_left_by_any_finished_run();
}

/// No namespace of a dbdelta that is no longer running.
fn assert_nothing_left_by_any_finished_run() {
    let (namespaces, _) = namespaces_and_links();
    for line in namespaces.lines() {
        let Some(pid) = line
            .strip_prefix("dbdelta-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "namespace of finished dbdelta {pid} left: {line}"
        );
    }
}

fn interrupted_run(rows: &str, read_secs: &str, rd: &Path) -> Child {
    spawn_dbdelta(
        [
            "run",
            "--quiet",
            "--no-store",
            "--steps",
            "point-query_range=100",
            "--read-secs",
            read_secs,
            "--table-size",
            rows,
            "--target",
            &format!("pg=postgres:{PG}?net=10mbit"),
            "--run-dir",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([rd.display().to_string()]),
    )
}

fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sigint(child: &Child) {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
}

#[test]
fn ctrl_c_during_a_load_over_a_link_leaves_no_namespace_or_veth() {
    if !can_run_links() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    // 10 Mbit/s makes a million-row load last minutes: the interrupt deadline cuts it.
    let mut child = interrupted_run("1000000", "1", &rd);
    let pid = child.id();
    let ns = Path::new("/var/run/netns").join(format!("dbdelta-{pid}-0"));
    wait_until("the link and the load", || {
        ns.exists() && !common::processes_mentioning(" COPY").is_empty()
    });
    std::thread::sleep(Duration::from_millis(500));
    sigint(&child);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_nothing_left(pid);
}

#[test]
fn ctrl_c_during_a_step_over_a_link_leaves_no_namespace_or_veth() {
    if !can_run_links() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = interrupted_run("1000", "60", &rd);
    let pid = child.id();
    let results = rd.join("results").join("pg");
    // The load's result is written: the 60-second step is under way.
    wait_until("the step", || {
        std::fs::read_dir(&results)
            .map(|d| d.count() > 0)
            .unwrap_or(false)
    });
    std::thread::sleep(Duration::from_millis(1500));
    let (namespaces, _) = namespaces_and_links();
    assert!(
        namespaces.contains(&format!("dbdelta-{pid}-0")),
        "{namespaces}"
    );
    sigint(&child);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_nothing_left(pid);
}

#[test]
fn without_root_a_link_is_refused_with_exit_2() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the refusal is what this process gets.
        let out = dbdelta()
            .args(["run", "--quiet", "--no-store", "--target"])
            .arg(format!("p=postgres:{PG}?net=10mbit"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("need root"));
        return;
    }
    // As root, run dbdelta as nobody (65534). The build's binary may sit under a
    // directory nobody cannot enter (CI builds into /root/.cache), so run a copy
    // from a world-readable temporary directory.
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let copy_dir = tempfile::Builder::new()
        .prefix("dbdelta-nobody-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(copy_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let binary = copy_dir.path().join("dbdelta");
    std::fs::copy(assert_cmd::cargo::cargo_bin("dbdelta"), &binary).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&binary)
        .args(["run", "--quiet", "--no-store", "--target"])
        .arg(format!("p=postgres:{PG}?net=10mbit"))
        .current_dir("/tmp")
        .env("HOME", "/tmp")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for w in ["net=10mbit", "need root", "drop net="] {
        assert!(err.contains(w), "no '{w}' in: {err}");
    }
}

#[test]
fn a_managed_mariadb_runs_behind_a_link_with_tls_and_compression() {
    if !can_run_links()
        || !common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server")
    {
        return;
    }
    let (_dir, rd) = common::run_ok(&[
        "--scale",
        "quick",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--read-secs",
        "1",
        "--tls",
        "--compress",
        "--steps",
        "point-query_range=100",
        "--target",
        "m=mysql:/usr?net=100mbit&innodb_buffer_pool_size=64M",
    ]);
    let t = &read_json(&rd.join("run.json"))["targets"][0];
    let s = &t["settings"];
    assert_eq!(s["net.link"], "100mbit");
    assert_eq!(s["tls"], "on");
    assert_eq!(s["compression"], "on");
    let mbit: f64 = s["net.measured_mbit"].as_str().unwrap().parse().unwrap();
    assert!((70.0..130.0).contains(&mbit), "{mbit}");
    // The server listened in the namespace: the client reached it over the link.
    assert!(
        s["net.namespace"]
            .as_str()
            .unwrap()
            .contains("server 10.213."),
        "{s}"
    );
    let (qps, _) = measured(&rd, "m", "point-query_range=100");
    assert!(qps > 0.0);
    assert_nothing_left_by_any_finished_run();
}
