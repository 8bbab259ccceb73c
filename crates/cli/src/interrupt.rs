//! The signal handler: SIGINT (Ctrl-C) and SIGTERM go to the lab, which stops the run and
//! closes it by a deadline (`dbdelta_lab::interrupt`); this module only watches for them
//! and tells the person what happens.

use dbdelta_lab::interrupt::{on_signal, Interruption};
use dbdelta_runner::StopFlag;
use signal_hook::consts::{SIGINT, SIGTERM};

/// Installs the handler for SIGINT and SIGTERM and returns the flag the run checks.
pub fn install() -> StopFlag {
    let stop = StopFlag::new();
    let flag = stop.clone();
    let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]);
    match signals {
        Ok(mut signals) => {
            let spawned = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        on_signal(sig, &flag, tell);
                    }
                });
            if let Err(e) = spawned {
                eprintln!("warning: cannot watch for Ctrl-C ({e}): an interrupt ends the run without a report");
            }
        }
        Err(e) => eprintln!(
            "warning: cannot watch for Ctrl-C ({e}): an interrupt ends the run without a report"
        ),
    }
    stop
}

fn tell(what: Interruption) {
    match what {
        Interruption::Again => eprintln!("\ninterrupted again: closing now"),
        Interruption::Stopping { sigterm } => {
            let name = if sigterm { "SIGTERM" } else { "Ctrl-C" };
            eprintln!(
                "\n{name}: stopping; the results measured so far are kept (again to close at once)"
            );
        }
        Interruption::DeadlinePassed => {
            eprintln!("the current phase did not end in time: closing the run now")
        }
    }
}
