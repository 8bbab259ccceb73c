//! Files and directories a user names: `report -o` refuses a device node or a FIFO (exit 2,
//! naming `-o`; the node stays a node) and writes through a link to a regular file; a
//! `--run-dir` that is a file is named; of two runs given the same `--run-dir` exactly one
//! runs; a suite's query file that is a FIFO is refused instead of blocking; a signal while
//! the reports are written exits 130 with `run.json` marked interrupted.

mod common;

use common::{dbdelta, read_json, run_ok, spawn_dbdelta};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn mock_run() -> (tempfile::TempDir, std::path::PathBuf) {
    run_ok(&[
        "-t",
        "mock:",
        "--steps",
        "point-query",
        "--read-secs",
        "1",
        "--table-size",
        "1000",
    ])
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// `report RUN -o node` exits 2 naming `-o` and the path, and leaves the node as it was.
fn assert_refused(rd: &Path, node: &Path, is_kind: fn(&std::fs::FileType) -> bool) {
    let out = dbdelta()
        .arg("report")
        .arg(rd)
        .arg("-o")
        .arg(node)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-o ") && stderr.contains(&node.display().to_string()),
        "{stderr}"
    );
    let t = std::fs::symlink_metadata(node).unwrap().file_type();
    assert!(is_kind(&t), "{} was replaced: {t:?}", node.display());
}

#[test]
fn report_output_refuses_a_device_and_a_fifo_and_writes_through_a_link() {
    let (_keep, rd) = mock_run();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path(&fifo).as_ptr(), 0o644) }, 0);
    assert_refused(&rd, &fifo, std::fs::FileType::is_fifo);
    // A node like /dev/null (1,3) of our own; mknod needs root (CAP_MKNOD).
    let dev = dir.path().join("null");
    // SAFETY: a valid NUL-terminated path; makedev is arithmetic.
    let made = unsafe {
        libc::mknod(
            c_path(&dev).as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(1, 3),
        )
    };
    if made == 0 {
        assert_refused(&rd, &dev, std::fs::FileType::is_char_device);
    } else {
        assert!(
            std::env::var_os("CI").is_none() || unsafe { libc::geteuid() } != 0,
            "mknod failed as root: {}",
            std::io::Error::last_os_error()
        );
        eprintln!("SKIPPED the device node: mknod needs root");
        assert_refused(
            &rd,
            Path::new("/dev/null"),
            std::fs::FileType::is_char_device,
        );
    }
    // A link to a regular file: the file gets the report, the link stays a link.
    let real = dir.path().join("real.txt");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = dbdelta()
        .arg("report")
        .arg(&rd)
        .arg("-o")
        .arg(&link)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().len() > 3);
    // No temporary file is left beside any of them.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected = vec!["link.txt", "pipe", "real.txt"];
    if made == 0 {
        expected.insert(1, "null");
    }
    assert_eq!(names, expected);
}

#[test]
fn a_run_dir_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("file");
    std::fs::write(&f, "x").unwrap();
    let out = dbdelta()
        .args(["run", "--quiet", "--no-store", "-t", "mock:", "--run-dir"])
        .arg(&f)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--run-dir") && stderr.contains("a file, not a directory"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
}

#[test]
fn of_two_runs_given_the_same_run_dir_exactly_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let args = |rd: &Path| {
        [
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "mock:",
            "--steps",
            "point-query",
            "--read-secs",
            "1",
            "--table-size",
            "1000",
            "--run-dir",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([rd.display().to_string()])
        .collect::<Vec<_>>()
    };
    let spawn = || {
        Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
            .args(args(&rd))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let ok = outs.iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 1, "{outs:?}");
    let lost = outs.iter().find(|o| !o.status.success()).unwrap();
    let stderr = String::from_utf8_lossy(&lost.stderr);
    assert_eq!(lost.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--run-dir") && stderr.contains("in use by another run"),
        "{stderr}"
    );
    assert_eq!(
        read_json(&rd.join("run.json"))["status"],
        serde_json::json!("complete")
    );
    // The claim ends with the run.
    assert!(!rd.join(".dbdelta-run.lock").exists());
}

#[test]
fn a_query_file_that_is_a_fifo_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(suite.join("queries")).unwrap();
    std::fs::create_dir_all(suite.join("setup")).unwrap();
    std::fs::write(suite.join("suite.toml"), "name = \"fifo\"\n").unwrap();
    std::fs::write(suite.join("setup/01.sql"), "CREATE TABLE t(a INT);\n").unwrap();
    let fifo = suite.join("queries/q1.sql");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path(&fifo).as_ptr(), 0o644) }, 0);
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "lite=sqlite",
            "--suite",
        ])
        .arg(&suite)
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("dbdelta blocked on a FIFO query file");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("q1.sql") && stderr.contains("not a regular file"),
        "{stderr}"
    );
}

/// A signal that lands after the manifest was closed as complete — while the reports are
/// written or the run is indexed — still exits 130, and then `run.json` says interrupted.
/// The window is short: the signal is sent the moment `run.json` turns complete, over
/// several tries, and every try must be consistent (130 ⇔ interrupted); at least one must
/// land in the window.
#[test]
fn sigint_while_the_reports_are_written_marks_the_run_interrupted() {
    let mut landed = 0;
    let tries = 5;
    for _ in 0..tries {
        let dir = tempfile::tempdir().unwrap();
        let rd = dir.path().join("run");
        let store = dir.path().join("history.sqlite");
        let mut child = spawn_dbdelta(
            [
                "run",
                "--quiet",
                "-t",
                "a=mock:",
                "--steps",
                "point-query",
                "--read-secs",
                "1",
                "--table-size",
                "1000",
                "--store",
                store.to_str().unwrap(),
                "--run-dir",
                rd.to_str().unwrap(),
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = std::fs::read(rd.join("run.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .map(|m| m["status"].clone());
            if status == Some(serde_json::json!("complete")) {
                break;
            }
            assert!(Instant::now() < deadline, "the run never completed");
            std::thread::sleep(Duration::from_micros(500));
        }
        common::interrupt(&child);
        let code = child.wait().unwrap().code();
        let status = read_json(&rd.join("run.json"))["status"].clone();
        match code {
            Some(130) => {
                assert_eq!(status, serde_json::json!("interrupted"));
                landed += 1;
            }
            Some(0) => assert_eq!(status, serde_json::json!("complete")),
            other => panic!("exit {other:?}, run.json status {status}"),
        }
    }
    eprintln!("{landed} of {tries} signals landed after run.json turned complete");
    assert!(
        landed > 0,
        "no signal landed while the reports were written"
    );
}
