//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Processes whose command line mentions `needle` (e.g. a run directory).
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// `dbdelta` with its results history in a temp file, never in the user's data directory.
pub fn dbdelta() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("dbdelta").unwrap();
    c.env(
        "DBDELTA_STORE",
        std::env::temp_dir().join("dbdelta-test-history.sqlite"),
    );
    c
}

/// Runs `cmd` and returns its output, failing the test with its stderr unless it exits 0.
pub fn succeed(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `dbdelta run --quiet --no-store <args>` into a fresh temp run directory, failing the
/// test unless it exits 0; returns the temp directory (keep it alive) and the run directory.
#[allow(dead_code)] // each test binary compiles this module; not all of them run suites
pub fn run_ok(args: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args(["run", "--quiet", "--no-store"])
            .args(args)
            .arg("--run-dir")
            .arg(&rd),
    );
    (dir, rd)
}

/// Starts `dbdelta` with `args` in the background, stdout piped, stderr discarded.
pub fn spawn_dbdelta<I, S>(args: I) -> Child
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
        .args(args)
        .env(
            "DBDELTA_STORE",
            std::env::temp_dir().join("dbdelta-test-history.sqlite"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until `dir` holds at least `n` entries (result files), at most `limit`.
pub fn wait_for_files(dir: &Path, n: usize, limit: Duration) {
    let deadline = Instant::now() + limit;
    while std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0) < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends SIGINT (Ctrl-C) to a child.
pub fn interrupt(child: &Child) {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
}

/// Parses a JSON file.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()))
}

/// Skips a test whose server is missing, or fails it under CI. (Each test file compiles this
/// module; not every one needs a server.)
#[allow(unused_imports)]
pub use dbdelta_model::testing::require;

/// A target's results in a run directory, in file (= suite) order.
pub fn step_results(run: &Path, target: &str) -> Vec<dbdelta_model::StepResult> {
    let mut files: Vec<_> = std::fs::read_dir(run.join("results").join(target))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

/// The FerretDB binary scripts/test.sh builds (`$DBDELTA_FERRETDB_BIN`, as root by default
/// under /var/cache), for `ferretdb:?binary=…` targets; `None` when it is missing (the test
/// is skipped, or fails under CI).
pub fn ferretdb_binary() -> Option<String> {
    let bin = std::env::var("DBDELTA_FERRETDB_BIN")
        .unwrap_or_else(|_| "/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb".into());
    require(
        &[&bin],
        "scripts/test.sh builds FerretDB v1.24.2 from the Go module proxy",
    )
    .then_some(bin)
}
