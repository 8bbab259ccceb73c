//! The client-core flags (`--connections`, `--active`, `--connect-rate`, timeouts), checked
//! into the options the runner reads. Whether this machine can hold them is the lab's
//! check (`dbdelta_lab::capacity`).

use crate::flags::RunArgs;
use anyhow::{bail, Result};
use dbdelta_model::options::ClientOptions;

/// Longest timeout accepted, in seconds (a day): beyond it a typo, not a benchmark.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Validates the connection flags into the options the runner reads.
pub(crate) fn client_options(args: &RunArgs) -> Result<ClientOptions> {
    let d = ClientOptions::default();
    if args.active == Some(0) {
        bail!("--active 0 is invalid: give the number of connections that run the workload (>= 1)");
    }
    Ok(ClientOptions {
        active: args.active,
        connect_rate: match args.connect_rate {
            Some(r) if !(r.is_finite() && (1.0..=1e6).contains(&r)) => {
                bail!("--connect-rate {r} is invalid: give new connections per second from 1 to 1000000")
            }
            Some(r) => r,
            None => d.connect_rate,
        },
        connect_timeout_secs: timeout(
            "--connect-timeout",
            args.connect_timeout,
            d.connect_timeout_secs,
        )?,
        statement_timeout_secs: timeout(
            "--statement-timeout",
            args.statement_timeout,
            d.statement_timeout_secs,
        )?,
        max_error_rate: match &args.max_error_rate {
            None => d.max_error_rate,
            Some(text) => parse_rate(text)?,
        },
    })
}

/// `--max-error-rate`: a fraction in [0, 1) or a percentage (`1%`).
fn parse_rate(text: &str) -> Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v.is_finite() && (0.0..1.0).contains(&v) => Ok(v),
        _ => bail!(
            "--max-error-rate {text} is invalid: give the share of events that may fail, from 0 to below 1 (e.g. 0.01) or a percentage (e.g. 1%)"
        ),
    }
}

fn timeout(flag: &str, v: Option<f64>, default: f64) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT_SECS => Ok(s),
        Some(s) => bail!("{flag} {s} is invalid: give seconds > 0 and at most {MAX_TIMEOUT_SECS}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_and_rates_are_bounded() {
        let mut a = RunArgs {
            statement_timeout: Some(1e30),
            ..RunArgs::default()
        };
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--statement-timeout"));
        a.statement_timeout = Some(2.0);
        a.connect_rate = Some(0.0);
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--connect-rate"));
        a.connect_rate = None;
        a.active = Some(0);
        assert!(client_options(&a)
            .unwrap_err()
            .to_string()
            .contains("--active"));
    }
}
