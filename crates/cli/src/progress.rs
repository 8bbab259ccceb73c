//! Progress on stderr: a bar per step while it runs (on a terminal), one summary line per
//! finished step (always, so logs show what happened), and the lab's notes, warnings and
//! errors; the brief report goes to stdout.

use dbdelta_lab::{BuildEvent, LabProgress};
use dbdelta_model::{StepResult, StepStatus};
use dbdelta_runner::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// indicatif-backed progress.
pub struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    /// Warm-up, and warm-up plus window: past the second a paced step drains its backlog.
    phases: Mutex<(Duration, Duration)>,
    quiet: bool,
}

/// The value behind a lock, also when a thread panicked holding it (progress only draws).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Bars {
    /// Bars on stderr; `quiet` hides the bars but keeps the summary lines.
    pub fn new(quiet: bool) -> Self {
        Bars {
            bar: Mutex::new(None),
            phases: Mutex::new((Duration::ZERO, Duration::ZERO)),
            quiet,
        }
    }

    fn println(&self, line: &str) {
        match lock(&self.bar).as_ref() {
            Some(b) if !b.is_hidden() => b.println(line),
            _ => eprintln!("{line}"),
        }
    }
}

impl LabProgress for Bars {
    fn note(&self, text: &str) {
        eprintln!("{text}");
    }

    fn warning(&self, text: &str) {
        eprintln!("warning: {text}");
    }

    fn error(&self, text: &str) {
        eprintln!("error: {text}");
    }

    fn report(&self, text: &str) -> std::io::Result<()> {
        crate::output::write_stdout(text)
    }

    fn build(&self, event: BuildEvent<'_>) {
        crate::build_cmd::show(event);
    }
}

impl Progress for Bars {
    fn step_started(
        &self,
        target: &str,
        label: &str,
        threads: u32,
        warmup: Duration,
        window: Duration,
    ) {
        let total = (warmup + window).as_millis().max(1) as u64;
        let bar = ProgressBar::with_draw_target(
            Some(total),
            if self.quiet {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(
            ProgressStyle::with_template("{prefix:.bold} [{bar:30.cyan/blue}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(format!("[{target}] {label} dop={threads}"));
        *lock(&self.phases) = (warmup, warmup + window);
        *lock(&self.bar) = Some(bar);
    }

    fn step_tick(&self, elapsed: Duration, queries: u64) {
        if let Some(b) = lock(&self.bar).as_ref() {
            b.set_position(elapsed.as_millis() as u64);
            let (warmup, end) = *lock(&self.phases);
            let phase = if elapsed < warmup {
                "warm-up"
            } else if elapsed < end {
                "measuring"
            } else {
                "draining the backlog"
            };
            let rate = queries as f64 / elapsed.as_secs_f64().max(1e-3);
            b.set_message(format!(
                "{phase} {:.1}s  {rate:.0} q/s",
                elapsed.as_secs_f64()
            ));
        }
    }

    fn step_finished(&self, r: &StepResult) {
        if let Some(b) = lock(&self.bar).take() {
            b.finish_and_clear();
        }
        let line = match &r.status {
            StepStatus::Failed { reason } => format!(
                "[{}] {:<32} dop={:<3} FAILED: {reason}",
                r.target, r.label, r.threads
            ),
            StepStatus::Stalled { reason } => format!(
                "[{}] {:<32} dop={:<3} STALLED: {reason}",
                r.target, r.label, r.threads
            ),
            status => format!(
                "[{}] {:<32} dop={:<3} {:>10.0} {:<7} p95 {:>9.1} us{}",
                r.target,
                r.label,
                r.threads,
                r.throughput.value,
                r.throughput.unit.name(),
                r.latency.p95_us,
                if *status == StepStatus::Interrupted {
                    "  (interrupted)"
                } else {
                    ""
                }
            ),
        };
        eprintln!("{line}");
    }

    fn message(&self, text: &str) {
        self.println(text);
    }
}
