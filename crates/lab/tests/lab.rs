//! The run as a library: a plan of two mock targets goes through prepare, run and
//! conclude, every line goes to the progress and none is printed, and a target that fails
//! its steps ends the run with failed steps.

use dbdelta_engine::OpenOptions;
use dbdelta_lab::{End, History, Lab, LabProgress, OutDir, RunPlan, Schedule};
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{StepResult, TargetSpec, ToolInfo};
use dbdelta_runner::{Progress, StopFlag};
use dbdelta_workload::Suite;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Keeps every line the lab tells, instead of printing it.
#[derive(Default)]
struct Kept {
    lines: Mutex<Vec<String>>,
}

impl Kept {
    fn keep(&self, line: String) {
        self.lines.lock().unwrap().push(line);
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

impl Progress for Kept {
    fn step_started(&self, _: &str, _: &str, _: u32, _: Duration, _: Duration) {}
    fn step_tick(&self, _: Duration, _: u64) {}
    fn step_finished(&self, r: &StepResult) {
        self.keep(format!("step {} {}", r.target, r.label));
    }
    fn message(&self, text: &str) {
        self.keep(text.to_string());
    }
}

impl LabProgress for Kept {
    fn note(&self, text: &str) {
        self.keep(text.to_string());
    }
    fn warning(&self, text: &str) {
        self.keep(format!("warning: {text}"));
    }
    fn error(&self, text: &str) {
        self.keep(format!("error: {text}"));
    }
    fn report(&self, text: &str) -> std::io::Result<()> {
        self.keep(format!("report: {text}"));
        Ok(())
    }
    fn build(&self, _: dbdelta_lab::BuildEvent<'_>) {}
}

fn plan(targets: &[&str], run: &Path) -> RunPlan {
    RunPlan {
        options: OptionsBuilder::new()
            .steps(&["point-query"])
            .secs(0.2)
            .warmup(0.0)
            .tables(1, 100)
            .os_metrics(false)
            .build(),
        suite: Suite::load("sysbench").unwrap(),
        targets: targets
            .iter()
            .map(|t| dbdelta_lab::registry::check(&TargetSpec::parse(t).unwrap()).unwrap())
            .collect(),
        base: "a".into(),
        open: OpenOptions::default(),
        out: OutDir::Exact(run.to_path_buf()),
        existing: None,
        keep_data: false,
        ibench: None,
        queryset: None,
        schedule: Schedule {
            rounds: 2,
            repeats: 1,
            sequential: false,
            reuse_load: false,
            resolve: None,
        },
        fail_on: None,
        history: History::Off,
        profile: None,
        command: vec!["test".into()],
        tool: ToolInfo {
            version: "test".into(),
            git_commit: "unknown".into(),
        },
        segment: None,
    }
}

#[test]
fn a_plan_runs_to_a_complete_run_directory_and_tells_the_progress() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let kept = Arc::new(Kept::default());
    let lab = Lab::prepare(plan(&["a=mock", "b=mock"], &run), Arc::clone(&kept)).unwrap();
    assert_eq!(lab.dir(), run);
    let outcome = lab.run(&StopFlag::new()).unwrap();
    let conclusion = outcome.conclude().unwrap();
    assert_eq!(conclusion.end, End::Complete);
    assert_eq!(conclusion.gate, None);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["command"][0], "test");
    for report in ["report.txt", "report.md", "report.json", "report.html"] {
        assert!(run.join(report).is_file(), "{report}");
    }
    let lines = kept.lines();
    assert_eq!(lines[0], format!("run directory: {}", run.display()));
    assert!(
        lines.iter().any(|l| l.starts_with("report: ")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l == "step b point-query_range=100"),
        "{lines:#?}"
    );
}

#[test]
fn failing_steps_end_the_run_with_failed_steps() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let kept = Arc::new(Kept::default());
    let plan = plan(&["a=mock", "b=mock?fail_on=SELECT"], &run);
    let outcome = Lab::prepare(plan, kept)
        .unwrap()
        .run(&StopFlag::new())
        .unwrap();
    match outcome.conclude().unwrap().end {
        End::StepsFailed(lines) => assert!(lines[0].contains("step(s) failed: b/"), "{lines:?}"),
        other => panic!("expected failed steps: {other:?}"),
    }
}

#[test]
fn an_existing_run_directory_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), "y").unwrap();
    let kept = Arc::new(Kept::default());
    let err = Lab::prepare(plan(&["a=mock"], dir.path()), kept)
        .err()
        .expect("a non-empty run directory is refused");
    assert!(
        err.to_string().contains("--run-dir") && err.to_string().contains("not empty"),
        "{err}"
    );
}
