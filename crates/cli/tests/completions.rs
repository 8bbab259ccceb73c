//! `dbdelta completions SHELL` prints a completion script that knows the subcommands and
//! flags, and `run --help` shows the defaults the code uses.

mod common;

use common::{dbdelta, succeed};

#[test]
fn completion_scripts_know_subcommands_and_flags() {
    for (shell, marker) in [
        ("bash", "_dbdelta()"),
        ("zsh", "#compdef dbdelta"),
        ("fish", "complete -c dbdelta"),
    ] {
        let out = succeed(dbdelta().args(["completions", shell]));
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: no '{marker}'");
        for word in ["prepare", "use-existing", "table-size", "completions"] {
            assert!(script.contains(word), "{shell}: '{word}' missing");
        }
    }
    let out = dbdelta().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_help_shows_the_defaults() {
    let out = succeed(dbdelta().args(["run", "--help"]));
    let help = String::from_utf8_lossy(&out.stdout);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Default: dbdelta-runs.",
        "Default: quick.",
        "sysbench at quick: 10 interleaved rounds of 0.2 s",
        "Default: dbdelta-data.",
    ] {
        assert!(flat.contains(expected), "'{expected}' not in run --help");
    }
}

#[test]
fn a_later_value_of_a_flag_wins() {
    // Scripts (and the docs test) append overrides to a command line.
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "-t",
                "a=sqlite",
                "--steps",
                "point-query",
            ])
            .args([
                "--read-secs",
                "5",
                "--warmup-secs",
                "0",
                "--table-size",
                "100",
            ])
            .args(["--read-secs", "0.05", "--run-dir"])
            .arg(&rd),
    );
    let run = common::read_json(&rd.join("run.json"));
    assert_eq!(run["options"]["read_secs"], 0.05);
}
