//! The profiles section of the HTML report: when a run directory has `profiles/`, each
//! profiled step gets links to every target's flamegraph and differential flamegraph (vs the
//! base) and its drill-down table; when the run asked for profiles and has none, the reason
//! (`profiles/NO-PROFILES.txt`, e.g. perf missing) is shown instead.

use crate::data::ReportData;
use crate::load::RunData;
use crate::markup::esc;
use crate::ReportOptions;
use dbdelta_profile::store::{explain, file_safe, load_infos, ProfileInfo, NO_PROFILES};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Most rows of the grew/shrank function lists under each drill-down table.
const TOP: usize = 8;

/// The anchor of a profiled step (`prof-<dop>-<label>`), for links from the QPS tables.
pub fn anchor(label: &str, threads: u32) -> String {
    format!("prof-{threads}-{}", file_safe(label))
}

/// The steps (label, threads) that have a profile of any target, for linking table rows.
pub fn profiled_steps(data: &ReportData) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    for col in &data.columns {
        let Some(run) = data.runs.get(col.run) else {
            continue;
        };
        for info in load_infos(&run.dir.join("profiles").join(col.name())) {
            if info.samples > 0 {
                out.insert((info.label, info.threads));
            }
        }
    }
    out
}

/// Where links to files of `run` point: relative to the run directory when the report is
/// written into it (`opts.link_dir` = `None`), else the run directory as given.
pub(crate) fn link_prefix(run: &RunData, opts: &ReportOptions) -> String {
    match &opts.link_dir {
        None => String::new(),
        Some(from) => {
            let to: PathBuf = std::fs::canonicalize(&run.dir).unwrap_or_else(|_| run.dir.clone());
            let from = std::fs::canonicalize(from).unwrap_or_else(|_| from.clone());
            match to.strip_prefix(&from) {
                Ok(rel) if rel.as_os_str().is_empty() => String::new(),
                Ok(rel) => format!("{}/", rel.display()),
                Err(_) => format!("{}/", to.display()),
            }
        }
    }
}

/// Percent-encodes the characters of a file name that break a relative URL.
pub fn href(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        match c {
            '%' => out.push_str("%25"),
            '#' => out.push_str("%23"),
            '?' => out.push_str("%3F"),
            ' ' => out.push_str("%20"),
            c => out.push(c),
        }
    }
    esc(&out)
}

/// Renders the section (nothing when no run asked for profiles).
pub fn section(o: &mut String, data: &ReportData, opts: &ReportOptions) {
    let mut body = String::new();
    for (ri, run) in data.runs.iter().enumerate() {
        let profiles = run.dir.join("profiles");
        if !profiles.is_dir() {
            continue;
        }
        if let Ok(why) = std::fs::read_to_string(profiles.join(NO_PROFILES)) {
            let _ = writeln!(
                body,
                "<p class=\"warn\">No profiles: {}</p>",
                esc(why.trim())
            );
            continue;
        }
        let cols: Vec<&crate::Column> = data.columns.iter().filter(|c| c.run == ri).collect();
        let Some(base) = cols.first() else { continue };
        let names: Vec<String> = cols.iter().map(|c| c.name().to_string()).collect();
        run_section(&mut body, &profiles, run, base.name(), &names, opts);
    }
    if body.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"profiles\">Server CPU profiles</h2>\n<p class=\"note\">perf samples of the server's on-CPU stacks during each profiled step (profiling slows the server down a little). Each step links every target's flamegraph and the differential flamegraph against the base (red = share grew, blue = shrank; open the SVG to zoom and search). The drill-down table follows the call path from the top of the call tree into the children where the share of samples grew most: <i>a - function</i> names each level, then one row per target with the percent of samples in that function including its children.</p>\n");
    o.push_str(&body);
}

fn run_section(
    o: &mut String,
    profiles: &Path,
    run: &RunData,
    base: &str,
    names: &[String],
    opts: &ReportOptions,
) {
    let prefix = link_prefix(run, opts);
    let infos: Vec<(String, Vec<ProfileInfo>)> = names
        .iter()
        .map(|n| (n.clone(), load_infos(&profiles.join(n))))
        .collect();
    // Every profiled step in run order (the stem starts with the step's order number).
    let mut steps: Vec<(String, String, u32)> = infos
        .iter()
        .flat_map(|(_, v)| {
            v.iter()
                .map(|i| (i.stem.clone(), i.label.clone(), i.threads))
        })
        .collect();
    steps.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
    steps.dedup();
    if steps.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">The run was profiled, but no step has a profile in {}.</p>",
            esc(&profiles.display().to_string())
        );
        return;
    }
    for (stem, label, threads) in steps {
        let _ = writeln!(
            o,
            "<h3 id=\"{}\">{} dop={threads}</h3>\n<p>",
            anchor(&label, threads),
            esc(&label)
        );
        let mut links = Vec::new();
        let mut notes = Vec::new();
        for (target, list) in &infos {
            let Some(info) = list.iter().find(|i| i.stem == stem) else {
                continue;
            };
            let dir = format!("{prefix}profiles/{}/", target);
            match &info.svg {
                Some(svg) => links.push(format!(
                    "<a href=\"{}\">{} flamegraph</a> ({} samples)",
                    href(&format!("{dir}{svg}")),
                    esc(target),
                    info.samples
                )),
                None => links.push(format!("{}: no flamegraph", esc(target))),
            }
            let diff = format!("{stem}.diff-vs-{}.svg", file_safe(base));
            if target != base && profiles.join(target).join(&diff).is_file() {
                links.push(format!(
                    "<a href=\"{}\">{} vs {} differential flamegraph</a>",
                    href(&format!("{dir}{diff}")),
                    esc(target),
                    esc(base)
                ));
            }
            // A series also has each version against the one before it (the run writes these
            // for three targets or more; the first pair is the diff against the base).
            let before = names
                .iter()
                .position(|n| n == target)
                .and_then(|k| k.checked_sub(1))
                .map(|k| &names[k]);
            if let Some(prev) = before.filter(|p| p.as_str() != base) {
                let adjacent = format!("{stem}.diff-vs-{}.svg", file_safe(prev));
                if profiles.join(target).join(&adjacent).is_file() {
                    links.push(format!(
                        "<a class=\"adjacent-diff\" href=\"{}\">{} vs {} differential flamegraph</a>",
                        href(&format!("{dir}{adjacent}")),
                        esc(target),
                        esc(prev)
                    ));
                }
            }
            if let Some(ss) = &info.speedscope {
                links.push(format!(
                    "<a href=\"{}\">{} speedscope JSON</a>",
                    href(&format!("{dir}{ss}")),
                    esc(target)
                ));
            }
            if let Some(n) = &info.note {
                notes.push(format!("{target}: {n}"));
            }
        }
        o.push_str(&links.join(" · "));
        o.push_str("</p>\n");
        for n in notes {
            let _ = writeln!(o, "<p class=\"warn\">{}</p>", esc(&n));
        }
        if names.len() < 2 {
            continue;
        }
        let others: Vec<String> = names.iter().filter(|n| *n != base).cloned().collect();
        // The label is matched as a glob: escape nothing, but match only this thread count.
        match explain(profiles, base, &others, &label, Some(threads)) {
            Ok(tables) => {
                for t in tables
                    .iter()
                    .filter(|t| t.title == format!("{label} dop{threads}"))
                {
                    let _ = writeln!(o, "<pre class=\"drill\">{}</pre>", esc(&t.render(TOP)));
                }
            }
            Err(e) => {
                let _ = writeln!(
                    o,
                    "<p class=\"note\">No drill-down table: {}</p>",
                    esc(&e.to_string())
                );
            }
        }
    }
}
