//! Progress on stderr: a bar per step while it runs (on a terminal), and one summary line
//! per finished step (always, so logs show what happened).

use dbdelta_model::{StepResult, StepStatus};
use dbdelta_runner::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::RefCell;
use std::time::Duration;

/// indicatif-backed progress.
pub struct Bars {
    bar: RefCell<Option<ProgressBar>>,
    warmup: RefCell<Duration>,
    /// Warm-up plus window: past it a paced step drains its backlog.
    end: RefCell<Duration>,
    quiet: bool,
}

impl Bars {
    /// Bars on stderr; `quiet` hides the bars but keeps the summary lines.
    pub fn new(quiet: bool) -> Self {
        Bars {
            bar: RefCell::new(None),
            warmup: RefCell::new(Duration::ZERO),
            end: RefCell::new(Duration::ZERO),
            quiet,
        }
    }

    fn println(&self, line: &str) {
        match self.bar.borrow().as_ref() {
            Some(b) if !b.is_hidden() => b.println(line),
            _ => eprintln!("{line}"),
        }
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
        *self.warmup.borrow_mut() = warmup;
        *self.end.borrow_mut() = warmup + window;
        *self.bar.borrow_mut() = Some(bar);
    }

    fn step_tick(&self, elapsed: Duration, queries: u64) {
        if let Some(b) = self.bar.borrow().as_ref() {
            b.set_position(elapsed.as_millis() as u64);
            let phase = if elapsed < *self.warmup.borrow() {
                "warm-up"
            } else if elapsed < *self.end.borrow() {
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
        if let Some(b) = self.bar.borrow_mut().take() {
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
