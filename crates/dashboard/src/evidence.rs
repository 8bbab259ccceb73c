//! A change point's evidence page: the runs on either side of it with links to their reports,
//! the verdict of the two runs compared as `dbdelta report BEFORE AFTER` compares them (two
//! runs never pair: unpaired statistics with the between-run variance), and, where both runs
//! profiled the step, the differential flamegraph and the `explain` drill-down table, made
//! from the folded stacks in the run directories.

use crate::collect::{Change, SeriesData};
use crate::page::{num, pvalue, shell};
use crate::runs::{link, RunDirs};
use dbdelta_profile::render::diff_svg;
use dbdelta_profile::store::load_infos;
use dbdelta_profile::{drill_down, Folded};
use dbdelta_report::markup::esc;
use dbdelta_report::verdict::{render_html, verdicts};
use dbdelta_report::{load_run, ReportData, RunData};
use std::fmt::Write;
use std::path::Path;

/// Most rows of the grew/shrank lists under the drill-down table (as the HTML report).
const TOP: usize = 8;

/// What a page found: whether it has a verdict and a differential flamegraph.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// The file name of the differential flamegraph, beside the page.
    pub flamegraph: Option<String>,
    /// The verdict of the two runs compared was computed.
    pub verdict: bool,
}

/// Writes `<dir>/<stem>.html` (and `<stem>.diff.svg` when both sides were profiled) for the
/// change points of one series at one run (`changes`, not empty, all with the same run).
pub fn write(
    dir: &Path,
    s: &SeriesData,
    changes: &[&Change],
    run_dirs: &RunDirs,
) -> Result<Found, std::io::Error> {
    let Some(c) = changes.first().copied() else {
        return Ok(Found::default());
    };
    let stem = c.stem(s);
    let k = &s.key;
    let (before, after) = (&s.runs[c.before], &s.runs[c.at]);
    let mut found = Found::default();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<nav><a href=\"../index.html\">All series</a> › <a href=\"../series/{}.html\">{} {} dop={}</a></nav>",
        esc(&s.id),
        esc(&k.target),
        esc(&k.label),
        k.threads
    );
    let _ = writeln!(
        o,
        "<h1>{} {} dop={}: change at run {}</h1>\n<p>Host {}, suite {}. Change points found by E-Divisive means (as <code>dbdelta detect</code>):</p>\n<table class=\"changes\"><tr><th>metric</th><th>change</th><th>mean before</th><th>mean after</th><th>magnitude</th><th>p</th></tr>",
        esc(&k.target),
        esc(&k.label),
        k.threads,
        esc(&after.run_id),
        esc(&k.host),
        esc(&k.suite)
    );
    for c in changes {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n {}\">{}</td><td class=\"n\">{} ({} runs)</td><td class=\"n\">{} ({} runs)</td><td class=\"n\">{:.3}</td><td class=\"n\">{}</td></tr>",
            c.measure.name(),
            if c.worse() { "worse" } else { "better" },
            c.percent(),
            num(c.cp.mean_before),
            c.cp.len_before,
            num(c.cp.mean_after),
            c.cp.len_after,
            c.cp.magnitude(),
            pvalue(c.cp.pvalue)
        );
    }
    o.push_str("</table>\n");
    o.push_str("<h2>The runs on either side</h2>\n<table><tr><th></th><th>run</th><th>started</th><th>version</th><th>build</th><th>report</th></tr>\n");
    let before_dir = run_dirs.find(&before.run_id);
    let after_dir = run_dirs.find(&after.run_id);
    for (side, run, d) in [
        ("before", before, &before_dir),
        ("after", after, &after_dir),
    ] {
        let report = match d {
            Some(d) if d.join("report.html").is_file() => format!(
                "<a class=\"run\" href=\"{}\">report.html</a>",
                link(dir, &d.join("report.html"))
            ),
            Some(d) => format!(
                "<a class=\"run\" href=\"{}\">run directory</a>",
                link(dir, d)
            ),
            None => "run directory not found (give its parent with --runs)".to_string(),
        };
        let _ = writeln!(
            o,
            "<tr><td>{side}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{report}</td></tr>",
            esc(&run.run_id),
            esc(&run.started),
            esc(&run.version),
            esc(&run.build)
        );
    }
    o.push_str("</table>\n<h2>The two runs compared</h2>\n");
    let (Some(bd), Some(ad)) = (&before_dir, &after_dir) else {
        o.push_str("<p class=\"note\">No verdict and no profiles: the run directories of both runs are needed (<code>dbdelta history --html DIR --runs RUNS_DIR</code>).</p>\n");
        std::fs::write(dir.join(format!("{stem}.html")), page(s, changes, &o))?;
        return Ok(found);
    };
    match compare(bd, ad, &k.target, &k.label, k.threads) {
        Ok((headline, table)) => {
            found.verdict = true;
            let _ = writeln!(
                o,
                "<p>As <code>dbdelta report BEFORE AFTER --rename 1:{t}=before --rename 2:{t}=after</code> compares them (rounds of two runs never pair: unpaired, with the between-run variance): <b>{}</b></p>\n{table}",
                esc(&headline),
                t = esc(&k.target)
            );
        }
        Err(why) => {
            let _ = writeln!(o, "<p class=\"warn\">No verdict: {}</p>", esc(&why));
        }
    }
    o.push_str("<h2>Server CPU profiles of the step</h2>\n");
    match profiles(bd, ad, &k.target, &k.label, k.threads) {
        Ok((before_f, after_f)) => {
            let title = format!(
                "{} {} dop{}: run {} vs {}",
                k.target, k.label, k.threads, after.run_id, before.run_id
            );
            match diff_svg(&before_f, &after_f, &title) {
                Ok(Some(svg)) => {
                    let name = format!("{stem}.diff.svg");
                    std::fs::write(dir.join(&name), svg)?;
                    let _ = writeln!(
                        o,
                        "<p><a class=\"flamegraph\" href=\"{}\">Differential flamegraph</a>: widths from the run after, red = more samples than the run before, blue = fewer (normalised; open it to zoom and search).</p>",
                        dbdelta_report::profiles::href(&name)
                    );
                    found.flamegraph = Some(name);
                }
                Ok(None) => {
                    o.push_str("<p class=\"note\">A profile of one side has no samples.</p>\n")
                }
                Err(e) => {
                    let _ = writeln!(o, "<p class=\"warn\">{}</p>", esc(&e.to_string()));
                }
            }
            let table = drill_down(
                &format!("{} dop{}", k.label, k.threads),
                ("before", &before_f),
                &[("after", &after_f)],
                1.0,
            );
            let _ = writeln!(o, "<pre class=\"drill\">{}</pre>", esc(&table.render(TOP)));
        }
        Err(why) => {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(&why));
        }
    }
    std::fs::write(dir.join(format!("{stem}.html")), page(s, changes, &o))?;
    Ok(found)
}

fn page(s: &SeriesData, changes: &[&Change], body: &str) -> String {
    let what: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {}", c.measure.name(), c.percent()))
        .collect();
    let title = format!(
        "{} {} dop={}: {}",
        s.key.target,
        s.key.label,
        s.key.threads,
        what.join(", ")
    );
    shell(&title, body, None)
}

/// One run with only `target`, renamed to `side`.
fn one_target(dir: &Path, target: &str, side: &str) -> Result<RunData, String> {
    let mut run = load_run(dir).map_err(|e| e.to_string())?;
    run.manifest.targets.retain(|t| t.name == target);
    run.results.retain(|r| r.target == target);
    run.rename_target(target, side).map_err(|e| e.to_string())?;
    Ok(run)
}

/// The verdict of `after` against `before` for the step (a sentence) and the report's
/// verdict tables of every step the two runs share.
fn compare(
    before: &Path,
    after: &Path,
    target: &str,
    label: &str,
    threads: u32,
) -> Result<(String, String), String> {
    let runs = vec![
        one_target(before, target, "before")?,
        one_target(after, target, "after")?,
    ];
    let data = ReportData::from_runs(runs, Some("before")).map_err(|e| e.to_string())?;
    let cells = verdicts(&data);
    let cell = cells
        .iter()
        .find(|c| c.label == label && c.threads == threads)
        .ok_or_else(|| format!("the runs do not both have {label} at dop={threads}"))?;
    let headline = match (&cell.comparison, cell.no_interval()) {
        (Some(x), _) => format!(
            "after/before QPS {:.3}, 95 % interval [{:.3}, {:.3}], p = {}: {}",
            x.ratio,
            x.low,
            x.high,
            pvalue(x.p),
            x.verdict.name()
        ),
        (None, Some(why)) => match cell.bare_ratio {
            Some(r) => format!("after/before QPS {r:.3} ({why})"),
            None => why,
        },
        (None, None) => "no comparison".to_string(),
    };
    Ok((headline, render_html(&data, &cells)))
}

/// The folded stacks of the step on both sides, or why there are none.
fn profiles(
    before: &Path,
    after: &Path,
    target: &str,
    label: &str,
    threads: u32,
) -> Result<(Folded, Folded), String> {
    let side = |run: &Path, name: &str| -> Result<Folded, String> {
        let dir = run.join("profiles").join(target);
        let info = load_infos(&dir)
            .into_iter()
            .find(|i| i.label == label && i.threads == threads && i.folded.is_some())
            .ok_or_else(|| {
                format!("The run {name} the change did not profile this step (run with --profile to see where the time went).")
            })?;
        let file = dir.join(info.folded.as_deref().unwrap_or_default());
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        Folded::parse(&text).map_err(|e| format!("{}: {e}", file.display()))
    };
    Ok((side(before, "before")?, side(after, "after")?))
}
