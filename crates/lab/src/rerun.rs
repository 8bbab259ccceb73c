//! `detect --profile-on-change`: the `dbdelta run` command that measures the two sides of a
//! change point again — the target as it was in the run before the change and as it is in
//! the newest run, side by side as `before` and `after` — with CPU profiles of the changed
//! steps only, built from the two runs' manifests (their command lines: suite, scale and
//! flags); and running it.

use crate::error::{input, LabError};
use dbdelta_report::{load_run, RunData};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where `dbdelta run` puts run directories by default (`--out`), so where the runs of a
/// history are looked for unless told otherwise.
pub const DEFAULT_RUNS_DIR: &str = "dbdelta-runs";

/// A series that changed at its newest run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Target name.
    pub target: String,
    /// Step label.
    pub label: String,
    /// Thread count.
    pub threads: u32,
    /// The run before the change point (the last run of the old level).
    pub before_run: String,
    /// The newest run (the change point).
    pub after_run: String,
}

/// The command for one (before run, newest run, target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerun {
    /// The run before the change.
    pub before_dir: PathBuf,
    /// The newest run.
    pub after_dir: PathBuf,
    /// The `dbdelta` arguments (without the program name): `run …`.
    pub args: Vec<String>,
    /// Changes whose newest run already has a profile of the step (left out of `args`'s
    /// steps: `dbdelta explain` shows them now).
    pub already_profiled: Vec<Change>,
}

impl Rerun {
    /// The command as a shell line, `dbdelta run …`, quoted where needed.
    pub fn shell(&self) -> String {
        std::iter::once("dbdelta".to_string())
            .chain(self.args.iter().map(|a| quote(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One argument for a POSIX shell: as it is when it holds only safe characters, else in
/// single quotes.
fn quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The directory of run `run_id` under one of `roots` (a root that is the run itself
/// counts too).
pub fn find_run_dir(roots: &[PathBuf], run_id: &str) -> Option<PathBuf> {
    roots.iter().find_map(|root| {
        let named = root
            .file_name()
            .is_some_and(|n| n.to_string_lossy() == run_id);
        [root.join(run_id), root.clone()]
            .into_iter()
            .filter(|d| *d != *root || named)
            .find(|d| d.join("run.json").is_file())
    })
}

/// True when run directory `dir` holds a profile of the target's step at that thread count.
pub fn profiled(dir: &Path, target: &str, label: &str, threads: u32) -> bool {
    dbdelta_profile::store::load_infos(&dir.join("profiles").join(target))
        .iter()
        .any(|i| i.label == label && i.threads == threads && i.folded.is_some())
}

/// Flags of the original command that the rerun sets itself (or must not repeat), with
/// whether each takes a value.
const DROPPED: &[(&str, Option<char>, bool)] = &[
    ("target", Some('t'), true),
    ("run-dir", None, true),
    ("steps", None, true),
    ("threads", None, true),
    ("base", None, true),
    ("store", None, true),
    ("profile-steps", None, true),
    ("profile", None, false),
    ("no-store", None, false),
    ("use-existing", None, false),
    ("dry-run", None, false),
];

/// The original arguments after `run`, without the [`DROPPED`] flags.
fn kept_args(command: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = command.iter().skip(2);
    while let Some(a) = it.next() {
        let dropped = DROPPED.iter().find_map(|(long, short, value)| {
            let l = format!("--{long}");
            if *a == l {
                return Some(*value);
            }
            if a.starts_with(&format!("{l}=")) {
                return Some(false);
            }
            match short {
                Some(s) if *a == format!("-{s}") => Some(*value),
                Some(s) if a.starts_with(&format!("-{s}")) && !a.starts_with("--") => Some(false),
                _ => None,
            }
        });
        match dropped {
            Some(true) => {
                it.next();
            }
            Some(false) => {}
            None => out.push(a.clone()),
        }
    }
    out
}

/// `before=` or `after=` and the rest of a target's spec (`name=engine:location?params`).
fn renamed(run: &RunData, target: &str, name: &str) -> Result<String, LabError> {
    let t = run
        .manifest
        .targets
        .iter()
        .find(|t| t.name == target)
        .ok_or_else(|| {
            input!(
                "{}: run.json has no target {target}; the history and the run directory disagree",
                run.dir.display()
            )
        })?;
    let spec = t.spec.split_once('=').map_or(t.spec.as_str(), |(_, s)| s);
    Ok(format!("{name}={spec}"))
}

/// The step name of a label in a run's results (`--steps` takes names).
fn step_name(run: &RunData, target: &str, label: &str) -> String {
    run.results
        .iter()
        .find(|r| r.target == target && r.label == label)
        .map_or_else(|| label.to_string(), |r| r.step.clone())
}

/// The commands for `changes`, one per (run before, newest run, target): both runs are
/// looked up under `roots` and read.
pub fn plan(roots: &[PathBuf], changes: &[Change]) -> Result<Vec<Rerun>, LabError> {
    let mut groups: BTreeMap<(&str, &str, &str), Vec<&Change>> = BTreeMap::new();
    for c in changes {
        groups
            .entry((&c.before_run, &c.after_run, &c.target))
            .or_default()
            .push(c);
    }
    let find = |id: &str| {
        find_run_dir(roots, id).ok_or_else(|| {
            input!(
                "--profile-on-change: run directory {id} is not under {}; give the directory that holds the runs with --runs-dir DIR",
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    let mut out = Vec::new();
    for ((before_id, after_id, target), group) in groups {
        let (before_dir, after_dir) = (find(before_id)?, find(after_id)?);
        let before = load_run(&before_dir)?;
        let after = load_run(&after_dir)?;
        let (done, todo): (Vec<&Change>, Vec<&Change>) = group
            .into_iter()
            .partition(|c| profiled(&after_dir, target, &c.label, c.threads));
        let already_profiled = done.into_iter().cloned().collect();
        if todo.is_empty() {
            out.push(Rerun {
                before_dir,
                after_dir,
                args: Vec::new(),
                already_profiled,
            });
            continue;
        }
        if after.manifest.command.get(1).map(String::as_str) != Some("run") {
            return Err(input!(
                "{}: run.json's command is not `dbdelta run …`; cannot repeat it",
                after_dir.display()
            ));
        }
        let mut steps: Vec<String> = Vec::new();
        let mut threads: Vec<u32> = Vec::new();
        for c in &todo {
            let s = step_name(&after, target, &c.label);
            if !steps.contains(&s) {
                steps.push(s);
            }
            if !threads.contains(&c.threads) {
                threads.push(c.threads);
            }
        }
        threads.sort_unstable();
        let join = |v: &[String]| v.join(",");
        let mut args = vec!["run".to_string()];
        for (name, run) in [("before", &before), ("after", &after)] {
            args.push("-t".into());
            args.push(renamed(run, target, name)?);
        }
        args.extend(kept_args(&after.manifest.command));
        args.extend([
            "--base".into(),
            "before".into(),
            "--steps".into(),
            join(&steps),
            "--threads".into(),
            threads
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
            "--profile-steps".into(),
            join(&steps),
            // A profiled run is slower than the runs of the series: kept out of the history.
            "--no-store".into(),
        ]);
        out.push(Rerun {
            before_dir,
            after_dir,
            args,
            already_profiled,
        });
    }
    Ok(out)
}

/// Runs `dbdelta ARGS` (this executable) with the caller's standard streams; its exit code.
pub fn run(args: &[String]) -> Result<i32, LabError> {
    let exe = std::env::current_exe()
        .map_err(|e| LabError::io("finding the dbdelta executable for --rerun", e))?;
    let status = std::process::Command::new(&exe)
        .args(args)
        .status()
        .map_err(|e| LabError::io(format!("running {}", exe.display()), e))?;
    Ok(status.code().unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_flags_the_rerun_sets_are_dropped_in_every_form() {
        let cmd = s(&[
            "/usr/bin/dbdelta",
            "run",
            "-t",
            "m=mock",
            "--target=n=mock",
            "-to=mock",
            "--steps",
            "point-query",
            "--read-secs",
            "1",
            "--profile",
            "--run-dir",
            "out/x",
            "--store=h.sqlite",
            "--table-size",
            "100",
            "--threads=1,4",
            "--quiet",
        ]);
        assert_eq!(
            kept_args(&cmd),
            s(&["--read-secs", "1", "--table-size", "100", "--quiet"])
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(quote("m=mock:?latency=2ms"), "'m=mock:?latency=2ms'");
        assert_eq!(
            quote("point-query,update-index"),
            "point-query,update-index"
        );
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}
