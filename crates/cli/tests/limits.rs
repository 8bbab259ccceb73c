//! Thread counts the address-space limit cannot hold are refused before anything starts
//! (exit 2 naming --threads): past it, a thread that gets its stack but not its signal stack
//! aborts the process inside the standard library, and a run used to hang at a barrier
//! sized for every thread. (A thread that cannot be created at all still fails its step
//! instead of hanging the others: the breakable gate's own tests cover that.)

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn threads_beyond_the_address_space_limit_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("dbdelta"));
    cmd.args([
        "run",
        "--quiet",
        "--no-store",
        "-t",
        "m=mock",
        "--threads",
        "2000",
        "--steps",
        "point-query",
        "--read-secs",
        "1",
        "--warmup-secs",
        "0",
        "--run-dir",
    ])
    .arg(&rd)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    // 1.5 GB of address space holds a few hundred 2 MiB thread stacks, not 2,000.
    // SAFETY: setrlimit in the child before exec touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1_500_000_000,
                rlim_max: 1_500_000_000,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the run hung");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--threads 2000") && err.contains("RLIMIT_AS"),
        "{err}"
    );
    assert!(!dir.path().join("run").exists(), "nothing started");
}
