//! Help whose defaults come from the code: the scale presets (`Scale::defaults`), the
//! built-in suites' `[quick]` presets and the constants `spec.rs` resolves with are written
//! into `run --help` (and `prepare --help`) when the command is built, so the help cannot
//! drift from what a run does. The flags' doc comments hold the prose; this adds the numbers.

use crate::flags::Cli;
use crate::spec::{
    DEFAULT_DATABASE, DEFAULT_DATA_DIR, DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SUITE, DEFAULT_TARGETS,
};
use clap::{Arg, Command, CommandFactory};
use dbdelta_model::{IbenchOptions, QuickPreset, Scale, ScaleDefaults, QUICK_SETTLE_SECS};
use dbdelta_workload::suite::BUILTIN;
use dbdelta_workload::Suite;

/// The whole command line with the defaults filled into the help of `run` and `prepare`.
pub fn command() -> Command {
    let mut cmd = Cli::command();
    for name in ["run", "prepare"] {
        if cmd.find_subcommand(name).is_some() {
            // The later of two values wins (`--read-secs 1 --read-secs 0.1`), so a script can
            // append overrides to a command line (the docs test does).
            cmd = cmd.mut_subcommand(name, |c| with_defaults(c).args_override_self(true));
        }
    }
    cmd
}

/// The built-in suites that have their own `[quick]` preset, in `BUILTIN` order.
fn quick_presets() -> Vec<(&'static str, QuickPreset)> {
    BUILTIN
        .iter()
        .filter_map(|(name, _)| Some((*name, Suite::load(name).ok()?.quick?)))
        .collect()
}

/// Seconds as the help writes them: `0.2`, `2`, `300`.
fn secs(v: f64) -> String {
    format!("{v}")
}

/// `"2 at --scale quick (sysbench: 0.2), 300 at --scale full"` for one field of the presets.
fn per_scale(field: impl Fn(&ScaleDefaults) -> String) -> String {
    let quick = Scale::Quick.defaults();
    let full = Scale::Full.defaults();
    let mut text = format!("Default: {} at --scale quick", field(&quick));
    let own: Vec<String> = quick_presets()
        .iter()
        .map(|(name, p)| (name, field(&quick.with(p))))
        .filter(|(_, v)| *v != field(&quick))
        .map(|(name, v)| format!("{name}: {v}"))
        .collect();
    if !own.is_empty() {
        text.push_str(&format!(" ({})", own.join("; ")));
    }
    text.push_str(&format!(", {} at --scale full.", field(&full)));
    text
}

/// `--scale`'s help: what each preset sets.
fn scale_help() -> String {
    let q = Scale::Quick.defaults();
    let f = Scale::Full.defaults();
    let mut text = format!(
        "Default: quick. quick: {} table(s) x {} rows, {} s per step after a {} s warm-up, {} \
         round(s), settle {} s",
        q.tables,
        q.table_size,
        secs(q.read_secs),
        secs(q.warmup_secs),
        q.rounds,
        secs(QUICK_SETTLE_SECS)
    );
    for (name, p) in quick_presets() {
        let d = q.with(&p);
        text.push_str(&format!(
            "; {name} at quick: {} interleaved rounds of {} s (reads), {} s (writes) after a \
             {} s warm-up ({} s in later rounds)",
            d.rounds,
            secs(d.read_secs),
            secs(d.write_secs),
            secs(d.warmup_secs),
            secs(d.round_warmup_secs)
        ));
    }
    text.push_str(&format!(
        ". full (the published configuration): {} table(s) x {} rows, reads {} s, writes {} \
         s, inserts {} s, warm-up {} s, settle min(1200, 60 + rows/1e6) s.",
        f.tables,
        f.table_size,
        secs(f.read_secs),
        secs(f.write_secs),
        secs(f.insert_secs),
        secs(f.warmup_secs)
    ));
    text
}

/// Appends `extra` to an argument's help (its doc comment).
fn append(arg: Arg, extra: &str) -> Arg {
    let base = arg.get_help().map(ToString::to_string).unwrap_or_default();
    // clap drops a doc comment's final period; the sentence after needs it back.
    let text = match base.trim_end() {
        "" => extra.to_string(),
        b if b.ends_with('.') => format!("{b} {extra}"),
        b => format!("{b}. {extra}"),
    };
    arg.help(text)
}

/// Fills the defaults into the help of one run-like subcommand.
fn with_defaults(cmd: Command) -> Command {
    let published = IbenchOptions::published(1);
    let quick = IbenchOptions::quick(1);
    let defaults: Vec<(&str, String)> = vec![
        ("suite", format!("Default: {DEFAULT_SUITE}.")),
        (
            "targets",
            format!("Default: {}.", DEFAULT_TARGETS.join(" and ")),
        ),
        ("scale", scale_help()),
        ("tables", per_scale(|d| d.tables.to_string())),
        ("table_size", per_scale(|d| d.table_size.to_string())),
        ("threads", "Default: 1.".to_string()),
        ("read_secs", per_scale(|d| secs(d.read_secs))),
        ("write_secs", per_scale(|d| secs(d.write_secs))),
        ("insert_secs", per_scale(|d| secs(d.insert_secs))),
        ("warmup_secs", per_scale(|d| secs(d.warmup_secs))),
        (
            "round_warmup_secs",
            format!(
                "{} When --warmup-secs is given: that.",
                per_scale(|d| secs(d.round_warmup_secs))
            ),
        ),
        (
            "repeat",
            format!(
                "{} With --sequential: 1.",
                per_scale(|d| d.rounds.to_string()).replacen(
                    "Default: ",
                    "Default for interleaved rounds: ",
                    1
                )
            ),
        ),
        (
            "turn_ms",
            format!("Default: {}.", secs(crate::spec::DEFAULT_TURN_MS)),
        ),
        ("seed", format!("Default: {DEFAULT_SEED}.")),
        ("out", format!("Default: {DEFAULT_OUT}.")),
        ("database", format!("Default: {DEFAULT_DATABASE}.")),
        ("data_dir", format!("Default: {DEFAULT_DATA_DIR}.")),
        (
            "rows_load",
            format!(
                "Default: {} at --scale full (published), {} at --scale quick.",
                published.rows_load, quick.rows_load
            ),
        ),
        (
            "rows_write",
            format!(
                "Default: {} at --scale full (published), {} at --scale quick.",
                published.rows_write, quick.rows_write
            ),
        ),
        (
            "query_secs",
            format!(
                "Default: {} at --scale full (published), {} at --scale quick.",
                secs(published.query_secs),
                secs(quick.query_secs)
            ),
        ),
    ];
    let mut cmd = cmd;
    for (id, extra) in defaults {
        if cmd.get_arguments().any(|a| a.get_id().as_str() == id) {
            cmd = cmd.mut_arg(id, |a| append(a, &extra));
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run --help` as a user sees it.
    fn run_help() -> String {
        let mut cmd = command();
        let run = cmd.find_subcommand_mut("run").expect("run is a subcommand");
        run.render_long_help().to_string()
    }

    /// The `[quick]` table of a suite file, read with the toml crate (not with the code the
    /// help is built from), as `key → value`.
    fn quick_table(file: &str) -> Option<toml::Table> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../suites")
            .join(file);
        let text = std::fs::read_to_string(&path).expect("suite file readable");
        let doc: toml::Table = text.parse().expect("suite file is TOML");
        doc.get("quick").and_then(|q| q.as_table()).cloned()
    }

    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn help_shows_the_sysbench_quick_preset_from_its_file() {
        let help = flat(&run_help());
        let q = quick_table("sysbench.toml").expect("sysbench has a [quick] preset");
        let num = |k: &str| match &q[k] {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => format!("{f}"),
            other => panic!("{k}: {other}"),
        };
        for (key, sentence) in [
            (
                "rounds",
                format!("sysbench at quick: {} interleaved rounds", num("rounds")),
            ),
            (
                "read_secs",
                format!("rounds of {} s (reads)", num("read_secs")),
            ),
            (
                "warmup_secs",
                format!("after a {} s warm-up", num("warmup_secs")),
            ),
            (
                "round_warmup_secs",
                format!("({} s in later rounds)", num("round_warmup_secs")),
            ),
        ] {
            assert!(
                help.contains(&sentence),
                "{key}: '{sentence}' not in:\n{help}"
            );
        }
        // --repeat and --round-warmup-secs name the preset's values.
        assert!(
            help.contains(&format!("1 at --scale quick (sysbench: {};", num("rounds"))),
            "{help}"
        );
        assert!(
            help.contains(&format!("(sysbench: {};", num("round_warmup_secs"))),
            "{help}"
        );
    }

    #[test]
    fn every_builtin_quick_preset_is_in_the_help() {
        let help = flat(&run_help());
        for (name, _) in BUILTIN {
            if let Some(q) = quick_table(&format!("{name}.toml")) {
                if let Some(toml::Value::Integer(rounds)) = q.get("rounds") {
                    assert!(
                        help.contains(&format!("{name} at quick: {rounds} interleaved rounds")),
                        "{name}'s quick rounds not in the help"
                    );
                }
            }
        }
    }

    #[test]
    fn help_shows_the_constants_the_run_resolves_with() {
        let help = flat(&run_help());
        let q = Scale::Quick.defaults();
        let f = Scale::Full.defaults();
        for expected in [
            format!("Default: {DEFAULT_OUT}."),
            "Default: quick.".to_string(),
            format!("Default: {DEFAULT_SUITE}."),
            format!("Default: {DEFAULT_SEED}."),
            format!("Default: {}.", crate::spec::DEFAULT_TURN_MS),
            format!("{} rows", q.table_size),
            format!("{} rows", f.table_size),
            format!("reads {} s, writes {} s", f.read_secs, f.write_secs),
            format!(
                "Default: {} at --scale full (published)",
                IbenchOptions::published(1).rows_load
            ),
        ] {
            assert!(help.contains(&expected), "'{expected}' not in:\n{help}");
        }
        // The stale claims of issue 30 are gone.
        for stale in [
            "5 at --scale quick",
            "quick: 0.1",
            "2 s per step, 1 s warm-up",
            "Closed-loop steps on embedded engines",
        ] {
            assert!(!help.contains(stale), "stale '{stale}' still in the help");
        }
    }

    #[test]
    fn the_resolved_plan_agrees_with_the_help() {
        // What the help says the default sysbench quick run does is what spec.rs resolves.
        let args = crate::flags::RunArgs::default();
        let plan = crate::spec::resolve(&args).expect("the default run resolves");
        let q = quick_table("sysbench.toml").expect("sysbench has a [quick] preset");
        assert_eq!(
            i64::from(plan.schedule.rounds),
            q["rounds"].as_integer().expect("rounds is an integer")
        );
        assert_eq!(
            plan.options.read_secs,
            q["read_secs"].as_float().expect("read_secs is a number")
        );
        assert_eq!(
            plan.options.round_warmup_secs,
            q["round_warmup_secs"].as_float()
        );
        assert_eq!(plan.options.turn_ms, Some(crate::spec::DEFAULT_TURN_MS));
        assert_eq!(plan.options.seed, DEFAULT_SEED);
        assert_eq!(plan.options.suite, DEFAULT_SUITE);
    }
}
