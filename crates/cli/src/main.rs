//! `dbdelta`: thin main — parse, run, one error sink, a deliberate exit code.
//!
//! Exit codes: 0 success; 1 a `--fail-on` threshold was breached; 2 bad input or an error
//! (the message names the flag or file and the fix); 3 the run completed but a step, load or
//! settle failed (timeout, server error; the reason is in the report); 130 interrupted by
//! Ctrl-C (SIGINT), 143 by SIGTERM; either way the run directory holds what finished and its
//! reports.
#![deny(missing_docs)]

mod app;
mod bounds;
mod build_cmd;
mod ci_summary;
mod config;
mod connections;
mod console;
mod dry_run;
mod fetch_cmd;
mod flags;
#[cfg(test)]
mod fuzz_cli;
#[cfg(test)]
mod fuzz_corpus;
#[cfg(test)]
mod fuzzing;
mod help;
mod history_admin;
mod history_cmd;
mod interrupt;
mod merge_cmd;
mod output;
mod prepare_cmd;
mod profile_cmd;
mod profile_on_change;
mod progress;
mod resolve_flags;
mod segment_flags;
mod spec;
mod suites_cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = match app::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            // An error after Ctrl-C (the run was being cut) still exits as interrupted.
            match dbdelta_lab::interrupt::exit_code_after_error() {
                Some(code) => ExitCode::from(code),
                None => ExitCode::from(2),
            }
        }
    };
    // Every engine dropped by now stopped its server; this catches one that was not (one
    // rule: nothing dbdelta started outlives it, whatever the exit).
    dbdelta_kit::running::stop_all(std::time::Duration::from_secs(3));
    code
}
