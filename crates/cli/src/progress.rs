//! Progress on stderr: for each measured step of a suite a live bar on a terminal (step
//! counter, round, phase, rate, ETA) and, when its rounds are over, one summary line per
//! target with the step counter and the time left (always, so logs show what happened);
//! `--verbose` adds a line per round. Steps outside a suite's sequence (the Insert
//! Benchmark, query sets) print a line per measurement. The lab's notes, warnings and
//! errors go to stderr; the report to stdout.

use crate::console::{counter, human, round_line, summary};
use dbdelta_lab::{BuildEvent, LabProgress};
use dbdelta_model::StepResult;
use dbdelta_runner::{Progress, StepStart};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Width of the step label column; longer labels widen it for the rest of the run.
const LABEL_WIDTH: usize = 28;

/// indicatif-backed progress.
pub struct Bars {
    state: Mutex<State>,
    quiet: bool,
    verbose: bool,
}

/// A measured step of a suite whose rounds are running.
struct Step {
    index: usize,
    total: usize,
    label: String,
    threads: u32,
    rounds: u32,
    targets: usize,
    estimate: Duration,
    /// Estimated time of the steps after this one.
    after: Duration,
    started: Instant,
    results: Vec<StepResult>,
}

#[derive(Default)]
struct State {
    /// The live bar: of the suite's step, or of one measurement outside a suite.
    bar: Option<ProgressBar>,
    step: Option<Step>,
    /// Warm-up, and warm-up plus window, of the measurement running now.
    phases: (Duration, Duration),
    /// When the first step began, and the estimated time of the steps finished since: with
    /// the time they took, their ratio scales the estimate of what is left (settles, slow
    /// rounds).
    first: Option<Instant>,
    planned_done: Duration,
    /// Time from the first step's start to the end of the last finished one.
    actual_done: Duration,
    target_width: usize,
    label_width: usize,
}

impl State {
    /// How much slower than planned the run goes (1 before the first step ends).
    fn pace(&self) -> f64 {
        if self.planned_done.is_zero() {
            return 1.0;
        }
        (self.actual_done.as_secs_f64() / self.planned_done.as_secs_f64()).clamp(0.5, 5.0)
    }
}

/// The value behind a lock, also when a thread panicked holding it (progress only draws).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Bars {
    /// Progress on stderr; `quiet` hides the bar but keeps the lines, `verbose` adds a line
    /// per round.
    pub fn new(quiet: bool, verbose: bool) -> Self {
        Bars {
            state: Mutex::new(State {
                label_width: LABEL_WIDTH,
                ..State::default()
            }),
            quiet,
            verbose,
        }
    }

    fn new_bar(&self, length: u64, template: &str) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(
            Some(length.max(1)),
            if self.quiet {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar
    }
}

/// Prints a line above the live bar, or plainly without one.
fn println(state: &State, line: &str) {
    match state.bar.as_ref() {
        Some(b) if !b.is_hidden() => b.println(line),
        _ => eprintln!("{line}"),
    }
}

impl LabProgress for Bars {
    fn note(&self, text: &str) {
        println(&lock(&self.state), text);
    }

    fn warning(&self, text: &str) {
        println(&lock(&self.state), &format!("warning: {text}"));
    }

    fn error(&self, text: &str) {
        println(&lock(&self.state), &format!("error: {text}"));
    }

    fn report(&self, text: &str) -> std::io::Result<()> {
        crate::output::write_stdout(text)
    }

    fn build(&self, event: BuildEvent<'_>) {
        crate::build_cmd::show(event);
    }
}

impl Progress for Bars {
    fn sequence_step_started(&self, s: &StepStart<'_>) {
        let mut state = lock(&self.state);
        state.first.get_or_insert_with(Instant::now);
        let longest = s.steps.iter().map(|p| p.label.len()).max().unwrap_or(0);
        state.label_width = state.label_width.max(longest);
        let bar = self.new_bar(
            s.plan.estimate.as_millis() as u64,
            "{prefix:.bold} [{bar:30.cyan/blue}] {msg}",
        );
        bar.set_prefix(format!(
            "step {}/{} {} dop={}",
            s.index, s.total, s.plan.label, s.plan.threads
        ));
        if let Some(old) = state.bar.replace(bar) {
            old.finish_and_clear();
        }
        state.step = Some(Step {
            index: s.index,
            total: s.total,
            label: s.plan.label.clone(),
            threads: s.plan.threads,
            rounds: s.plan.rounds,
            targets: s.targets.max(1),
            estimate: s.plan.estimate,
            after: s.remaining.saturating_sub(s.plan.estimate),
            started: Instant::now(),
            results: Vec::new(),
        });
    }

    fn sequence_step_finished(&self) {
        let mut state = lock(&self.state);
        let Some(step) = state.step.take() else {
            return;
        };
        state.planned_done += step.estimate;
        state.actual_done = state.first.map_or(Duration::ZERO, |t| t.elapsed());
        // Targets in the order they first reported, each with its rounds.
        let mut targets: Vec<(&str, Vec<&StepResult>)> = Vec::new();
        for r in &step.results {
            match targets.iter_mut().find(|(t, _)| *t == r.target) {
                Some((_, rs)) => rs.push(r),
                None => targets.push((&r.target, vec![r])),
            }
        }
        let width = targets
            .iter()
            .map(|(t, _)| t.len())
            .max()
            .unwrap_or(0)
            .max(state.target_width);
        state.target_width = width;
        let left = step.after.mul_f64(state.pace());
        let count = counter(step.index, step.total);
        let n = targets.len();
        let mut lines = Vec::new();
        for (k, (target, rounds)) in targets.iter().enumerate() {
            let mut line = format!(
                "{count} {:<lw$} dop={:<3} {target:<width$}  {}",
                step.label,
                step.threads,
                summary(rounds),
                lw = state.label_width,
            );
            if k + 1 == n && step.index < step.total {
                line.push_str(&format!("  ~{} left", human(left)));
            }
            lines.push(line);
        }
        if let Some(b) = state.bar.take() {
            b.finish_and_clear();
        }
        for line in lines {
            println(&state, &line);
        }
    }

    fn step_started(
        &self,
        target: &str,
        label: &str,
        threads: u32,
        warmup: Duration,
        window: Duration,
    ) {
        let mut state = lock(&self.state);
        state.phases = (warmup, warmup + window);
        if state.step.is_some() {
            return;
        }
        // A measurement outside a suite's sequence gets its own bar.
        let bar = self.new_bar(
            (warmup + window).as_millis() as u64,
            "{prefix:.bold} [{bar:30.cyan/blue}] {msg}",
        );
        bar.set_prefix(format!("[{target}] {label} dop={threads}"));
        if let Some(old) = state.bar.replace(bar) {
            old.finish_and_clear();
        }
    }

    fn step_tick(&self, elapsed: Duration, queries: u64) {
        let state = lock(&self.state);
        let Some(b) = state.bar.as_ref() else {
            return;
        };
        let (warmup, end) = state.phases;
        let phase = if elapsed < warmup {
            "warm-up"
        } else if elapsed < end {
            "measuring"
        } else {
            "draining the backlog"
        };
        let rate = queries as f64 / elapsed.as_secs_f64().max(1e-3);
        match &state.step {
            Some(step) => {
                let in_step = step.started.elapsed();
                if in_step > step.estimate {
                    b.set_length(in_step.as_millis() as u64);
                }
                b.set_position(in_step.as_millis() as u64);
                let round = (step.results.len() / step.targets + 1).min(step.rounds as usize);
                let left =
                    (step.after + step.estimate.saturating_sub(in_step)).mul_f64(state.pace());
                b.set_message(format!(
                    "round {round}/{} {phase} {rate:.0} q/s  ~{} left",
                    step.rounds,
                    human(left)
                ));
            }
            None => {
                b.set_position(elapsed.as_millis() as u64);
                b.set_message(format!(
                    "{phase} {:.1}s  {rate:.0} q/s",
                    elapsed.as_secs_f64()
                ));
            }
        }
    }

    fn step_finished(&self, r: &StepResult) {
        let mut state = lock(&self.state);
        let width = state.target_width.max(r.target.len());
        match state.step.as_mut() {
            Some(step) => {
                step.results.push(r.clone());
                let round = step.results.iter().filter(|o| o.target == r.target).count();
                if self.verbose {
                    println(&state, &round_line(r, width, Some(round)));
                }
            }
            None => {
                if let Some(b) = state.bar.take() {
                    b.finish_and_clear();
                }
                println(&state, &round_line(r, width, None));
            }
        }
    }

    fn message(&self, text: &str) {
        println(&lock(&self.state), text);
    }
}
