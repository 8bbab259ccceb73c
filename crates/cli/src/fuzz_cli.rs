//! The fuzz entry over the whole command line: fuzz bytes become an argv (a subcommand,
//! flags taken from clap's own definition of it, values from a dictionary of extreme and
//! odd values or raw bytes), parsed as `dbdelta` parses it, and a `run` resolved into its
//! plan (`spec::resolve`) and put through the lab's disk check, all without running
//! anything. Driven for a long time by `fuzz_cli_args_for_a_while` (below, ignored by
//! default; see fuzz/README.md) and by the corpus test on fixed inputs.

use crate::flags::{Cli, Command};
use clap::{CommandFactory, Parser};

/// Values a hostile or careless user might type, for any flag or parameter.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-0",
    "0.0001",
    "0.5",
    "1.5",
    "10",
    "100",
    "4096",
    "4097",
    "65535",
    "100000",
    "1000000",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999",
    "99999999999s",
    "1e9",
    "1e20",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "",
    " ",
    ",",
    "1,1",
    "1,2,4",
    "0,1",
    "1,,2",
    "1%",
    "150%",
    "1T",
    "16383T",
    "64K",
    "1G",
    "true",
    "no",
    "maybe",
    "*",
    "point-query*",
    "readrandom",
    "fillseq",
    "tpcc",
    "select-only",
    "workload-e",
    "update-*",
    "sysbench",
    "kv",
    "ycsb",
    "tpcb",
    "ibench",
    "quick",
    "full",
    "spec",
    "throughput",
    "/nonexistent/x",
    "/tmp",
    "/dev/null",
    ".",
    "..",
    "x.sqlite",
    "regression>5%",
    "a=b",
    "1:a=b",
    "0.9,1.1",
    "\u{0}",
    "é%2",
];

/// Whole numbers from 0 to `u32::MAX`, which every integer flag parses.
const WHOLE: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "10",
    "100",
    "1000",
    "4096",
    "4097",
    "10000",
    "10001",
    "65535",
    "100000",
    "100001",
    "1000000",
    "1000001",
    "2147483647",
    "4294967295",
];

/// Engines and locations for `--target NAME=SPEC`.
const ENGINES: &[&str] = &[
    "mock",
    "sqlite",
    "sqlite:",
    "sqlite:/nonexistent/dir/x.db",
    "rocksdb",
    "rocksdb:/tmp/dbdelta-fuzz-rocks",
    "postgres:/usr/lib/postgresql/15/bin",
    "postgres://u:p@127.0.0.1:1/db",
    "mysql:/usr/sbin",
    "mysql://root@127.0.0.1:1/db",
    "clickhouse://127.0.0.1:1",
    "chdb",
    "postgres-build:15",
    "nosuch",
];

/// Parameter names of target specs, across engines.
const PARAMS: &[&str] = &[
    "latency",
    "dist",
    "error_rate",
    "fail_rate",
    "seed",
    "journal_mode",
    "synchronous",
    "cache_size",
    "mmap_size",
    "busy_timeout",
    "page_size",
    "write_buffer_size",
    "max_write_buffer_number",
    "max_background_jobs",
    "block_size",
    "bytes_per_sync",
    "target_file_size_base",
    "max_bytes_for_level_base",
    "bloom_bits",
    "compression",
    "connect_timeout",
    "statement_timeout",
    "max_connections",
    "shared_buffers",
    "bind-address",
    "lib",
];

/// Reads the fuzz bytes as a stream of choices; past the end every choice is 0.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn more(&self) -> bool {
        self.at < self.data.len()
    }
    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[usize::from(self.byte()) % from.len()]
    }
    /// A value: mostly from the dictionary, sometimes raw bytes, a target spec or a list;
    /// often a whole number every integer flag parses (so that clap lets the argv through
    /// and the resolution behind it is reached).
    fn value(&mut self) -> String {
        match self.byte() % 8 {
            3..=5 => self.pick(WHOLE).to_string(),
            0 => {
                let n = usize::from(self.byte() % 16);
                let end = (self.at + n).min(self.data.len());
                let raw = String::from_utf8_lossy(&self.data[self.at.min(end)..end]).into_owned();
                self.at = end;
                raw
            }
            1 => self.target(),
            2 => format!("{},{}", self.pick(VALUES), self.pick(VALUES)),
            _ => self.pick(VALUES).to_string(),
        }
    }
    /// A `NAME=ENGINE[?k=v&…]` text.
    fn target(&mut self) -> String {
        let name = self.pick(&["a", "b", "a", "", "x/y"]);
        let mut t = format!("{name}={}", self.pick(ENGINES));
        for i in 0..self.byte() % 3 {
            t.push(if i == 0 { '?' } else { '&' });
            t.push_str(self.pick(PARAMS));
            t.push('=');
            t.push_str(self.pick(VALUES));
        }
        t
    }
}

/// How far an input got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// clap refused the argv.
    Refused,
    /// Parsed; not a `run`, or its resolution refused it.
    Parsed,
    /// A `run` resolved into a plan.
    Resolved,
}

/// Builds an argv from `data` and runs it through parsing and, for `run`, plan resolution
/// and the disk check. Panics only on a bug.
pub fn cli_args(data: &[u8]) -> Reached {
    let argv = argv(data);
    let Ok(cli) = Cli::try_parse_from(&argv) else {
        return Reached::Refused;
    };
    if let Command::Run(args) = cli.command {
        // Never measure: only what happens before the run directory exists.
        if args.config.is_some() {
            return Reached::Parsed;
        }
        if let Ok(plan) = crate::spec::resolve(&args) {
            let _ = dbdelta_lab::disk::ensure_room(&plan);
            return Reached::Resolved;
        }
    }
    Reached::Parsed
}

/// The argv `data` stands for: half the inputs are a `run`, the rest any subcommand.
pub fn argv(data: &[u8]) -> Vec<String> {
    let mut b = Bytes { data, at: 0 };
    let root = Cli::command();
    let subs: Vec<&clap::Command> = root.get_subcommands().collect();
    let first = usize::from(b.byte());
    let mut sub = match first < 128 {
        true => subs[0],
        false => subs[first % subs.len()],
    };
    let mut argv = vec!["dbdelta".to_string(), sub.get_name().to_string()];
    // A subcommand of the subcommand (`suites show`).
    let nested: Vec<&clap::Command> = sub.get_subcommands().collect();
    if !nested.is_empty() && !b.byte().is_multiple_of(4) {
        sub = nested[usize::from(b.byte()) % nested.len()];
        argv.push(sub.get_name().to_string());
    }
    let flags: Vec<&clap::Arg> = sub
        .get_arguments()
        .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        .collect();
    // A run gets a mock target and one cheap step unless the bytes choose otherwise, so most
    // inputs reach resolution rather than stopping at a missing piece.
    if sub.get_name() == "run" && !b.byte().is_multiple_of(4) {
        argv.extend(["-t".to_string(), "m=mock".to_string()]);
    }
    while b.more() && argv.len() < 40 {
        let Some(&arg) = flags.get(usize::from(b.byte()) % flags.len().max(1)) else {
            argv.push(b.value());
            continue;
        };
        match arg.get_long() {
            Some(long) => argv.push(format!("--{long}")),
            None => {
                // A positional argument.
                argv.push(b.value());
                continue;
            }
        }
        let takes_value = arg.get_num_args().is_none_or(|n| n.takes_values())
            && !matches!(
                arg.get_action(),
                clap::ArgAction::SetTrue | clap::ArgAction::SetFalse | clap::ArgAction::Count
            );
        if takes_value {
            let v = if arg.get_id() == "targets" {
                b.target()
            } else {
                b.value()
            };
            argv.push(v);
        }
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// xorshift64*: the driver's inputs, reproducible from the seed it prints.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn argv_builds_flags_of_the_chosen_subcommand() {
        // Subcommand 0 (run), the mock target kept, then flag choices.
        let argv = argv(&[0, 1, 0, 5, 3, 9]);
        assert_eq!(&argv[..4], ["dbdelta", "run", "-t", "m=mock"]);
        assert!(argv.len() > 4, "{argv:?}");
    }

    /// The long run: `DBDELTA_FUZZ_SECS` seconds (default 20) of random inputs; inputs that
    /// panic are written to `DBDELTA_FUZZ_OUT` (default a temporary directory) and fail the
    /// test. Run it with `cargo test -p dbdelta --bin dbdelta fuzz_cli_args_for_a_while --
    /// --ignored --nocapture`.
    #[test]
    #[ignore]
    fn fuzz_cli_args_for_a_while() {
        let secs: u64 = std::env::var("DBDELTA_FUZZ_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        let seed: u64 = std::env::var("DBDELTA_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        let out = std::env::var("DBDELTA_FUZZ_OUT")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| std::env::temp_dir().join("dbdelta-fuzz-cli"));
        std::fs::create_dir_all(&out).unwrap();
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let (start, mut state) = (Instant::now(), seed | 1);
        let (mut execs, mut crashes) = (0u64, 0u64);
        let (mut refused, mut parsed, mut resolved) = (0u64, 0u64, 0u64);
        while start.elapsed() < Duration::from_secs(secs) {
            // Up to about ten flags: more, and nearly every argv has one value clap refuses.
            let len = (next(&mut state) % 28) as usize;
            let data: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
            execs += 1;
            match std::panic::catch_unwind(|| cli_args(&data)) {
                Ok(Reached::Refused) => refused += 1,
                Ok(Reached::Parsed) => parsed += 1,
                Ok(Reached::Resolved) => resolved += 1,
                Err(_) => {
                    crashes += 1;
                    std::fs::write(out.join(format!("crash-{execs}")), &data).unwrap();
                }
            }
        }
        std::panic::set_hook(quiet);
        println!(
            "fuzz cli_args: seed {seed}, {} s, {execs} execs: {refused} refused by clap, \
             {parsed} parsed (refused by resolution, or not a run), {resolved} runs resolved \
             into a plan; {crashes} crashes, inputs of crashes in {}",
            start.elapsed().as_secs(),
            out.display()
        );
        assert_eq!(crashes, 0, "see {}", out.display());
    }
}
