//! `dbdelta run --dry-run`: the resolved plan in words — targets and their engines, the
//! schedule, warm-ups and windows, every measured step with its rounds and estimated time —
//! without starting, building or loading anything.

use crate::console::human;
use dbdelta_lab::plan::{OutDir, RunPlan};
use dbdelta_report::console::{align, trimmed};
use dbdelta_runner::planned_steps;
use std::fmt::Write;
use std::time::Duration;

/// The plan as text for stdout.
pub fn describe(plan: &RunPlan) -> String {
    let o = &plan.options;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dbdelta run --dry-run: nothing is started, built, loaded or written.\n"
    );
    let mut rows = vec![vec![
        "target".to_string(),
        "engine".to_string(),
        "spec".to_string(),
    ]];
    for t in &plan.targets {
        rows.push(vec![
            if t.name == plan.base {
                format!("{} (base)", t.name)
            } else {
                t.name.clone()
            },
            t.engine.clone(),
            t.redacted(),
        ]);
    }
    out.push_str(&align(&rows));
    let _ = writeln!(
        out,
        "\nsuite {} at --scale {}: {} table(s) of {} rows, threads {}",
        o.suite,
        o.scale.name(),
        o.tables,
        o.table_size,
        o.threads
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let _ = writeln!(
        out,
        "output: {}",
        match &plan.out {
            OutDir::Under(p) => format!("a new directory under {}", p.display()),
            OutDir::Exact(p) => p.display().to_string(),
        }
    );
    if let Some(qs) = &plan.queryset {
        let _ = writeln!(
            out,
            "query set {} ({} run(s) of each query per target, the first one cold); its duration depends on the queries",
            qs.set.name, qs.repeat
        );
        return out;
    }
    if let Some(ib) = &plan.ibench {
        let _ = writeln!(
            out,
            "Insert Benchmark: {} client(s), load {} rows, {} rows per write step, {} s per query step; its duration depends on the engines' insert rates",
            ib.clients,
            ib.rows_load,
            ib.rows_write,
            trimmed(ib.query_secs)
        );
        return out;
    }
    let s = plan.schedule;
    let interleaved = plan.targets.len() > 1 && !s.sequential && !s.reuse_load;
    // Engines are not opened here: their kinds say whether they take turns.
    let unfit: Vec<&str> = plan
        .targets
        .iter()
        .filter(|t| !t.kind().fit_for_turns())
        .map(|t| t.name.as_str())
        .collect();
    let steps = planned_steps(
        &plan.suite,
        o,
        if interleaved { plan.targets.len() } else { 1 },
        if interleaved { s.rounds } else { 1 },
        unfit.is_empty(),
    );
    let secs = |d: Duration| format!("{} s", trimmed(d.as_secs_f64()));
    if interleaved {
        let _ = writeln!(
            out,
            "schedule: {} round(s) per step, targets interleaved (A B, B A, …); {}",
            s.rounds,
            match o.turn_ms {
                Some(_) if !unfit.is_empty() => format!(
                    "one window per target in every round ({} cannot take turns: MySQL/MariaDB servers measured slower and noisier in turns)",
                    unfit.join(", ")
                ),
                Some(ms) => format!(
                    "rounds before the last share one window in turns of {} ms (except writes on engines with background work, paced, counted or profiled steps), the last one window per target",
                    trimmed(ms)
                ),
                None => "one window per target".to_string(),
            }
        );
    } else {
        let _ = writeln!(
            out,
            "schedule: one target after another, {} whole run(s) each{}",
            s.repeats,
            if s.reuse_load {
                " (--reuse-load: one load per target)"
            } else {
                ""
            }
        );
    }
    let warmup = Duration::from_secs_f64(o.warmup_secs.max(0.0));
    let _ = writeln!(
        out,
        "warm-up {} (later rounds {}); windows: reads {} s, writes {} s, inserts {} s\n",
        secs(warmup),
        o.round_warmup_secs
            .map_or_else(|| secs(warmup), |w| format!("{} s", trimmed(w))),
        trimmed(o.read_secs),
        trimmed(o.write_secs),
        trimmed(o.insert_secs),
    );
    let mut rows = vec![vec![
        "#".to_string(),
        "step".to_string(),
        "dop".to_string(),
        "rounds".to_string(),
        "window".to_string(),
        "in turns".to_string(),
        "estimate".to_string(),
    ]];
    for (i, p) in steps.iter().enumerate() {
        rows.push(vec![
            (i + 1).to_string(),
            p.label.clone(),
            p.threads.to_string(),
            p.rounds.to_string(),
            secs(p.window),
            if p.in_turns { "yes" } else { "no" }.to_string(),
            human(p.estimate),
        ]);
    }
    out.push_str(&align(&rows));
    let per_run: Duration = steps.iter().map(|p| p.estimate).sum();
    let total = if interleaved {
        per_run
    } else {
        per_run * (plan.targets.len() as u32 * s.repeats.max(1))
    };
    let _ = writeln!(
        out,
        "\n{} measured step(s), estimated {} of measuring (loads and settles come on top)",
        steps.len(),
        human(total)
    );
    out
}
