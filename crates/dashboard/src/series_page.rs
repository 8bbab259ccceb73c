//! One series' page: its change points (each linked to its evidence), QPS, p95, p99 and CPU
//! per operation over runs with each run's interval, the series by version relative to the
//! oldest when its target changed version, and its newest runs.

use crate::chart::{by_version, over_runs, Dot, Mark};
use crate::collect::{Measure, SeriesData};
use crate::evidence::Found;
use crate::page::{num, pvalue, shell};
use crate::time::date;
use dbdelta_inference::DetectOptions;
use dbdelta_report::markup::esc;
use std::fmt::Write;

/// Most runs listed in the table (newest first); the charts show every run.
pub const MAX_ROWS: usize = 200;

/// The page of `s`; `found` holds what the evidence page of each changed run (by index) has.
pub fn render(s: &SeriesData, found: &[(usize, Found)], opts: &DetectOptions) -> String {
    let k = &s.key;
    let mut o = String::new();
    let _ = writeln!(o, "<nav><a href=\"../index.html\">All series</a></nav>");
    let _ = writeln!(
        o,
        "<h1>{} {} dop={}</h1>\n<p>Suite {}, host {}, engine {}: {} run(s){}. Change points: E-Divisive means as <code>dbdelta detect</code> finds them (p ≤ {}, window {}, magnitude &gt; {}, min segment {}).</p>",
        esc(&k.target),
        esc(&k.label),
        k.threads,
        esc(&k.suite),
        esc(&k.host),
        esc(&s.engine),
        s.runs.len(),
        span(s),
        opts.max_pvalue,
        opts.window,
        opts.min_magnitude,
        opts.min_segment
    );
    changes_table(&mut o, s, found);
    for m in Measure::ALL {
        let dots: Vec<Dot> = (0..s.runs.len())
            .filter_map(|i| {
                let r = &s.runs[i];
                let st = r.stat(m)?;
                let ci = st.interval.map_or(String::new(), |(lo, hi)| {
                    format!(" [{}, {}]", num(lo), num(hi))
                });
                Some(Dot {
                    x: s.x(i),
                    y: st.mean,
                    interval: st.interval,
                    tip: format!(
                        "{} · {} · version {} · {} · {} {}{ci} ({} repeat(s))",
                        r.run_id,
                        r.started,
                        if r.version.is_empty() {
                            "unknown"
                        } else {
                            &r.version
                        },
                        r.build,
                        m.name(),
                        num(st.mean),
                        r.repeats
                    ),
                })
            })
            .collect();
        if dots.is_empty() {
            continue;
        }
        let marks: Vec<Mark> = s
            .changes
            .iter()
            .filter(|c| c.measure == m)
            .map(|c| Mark {
                x: s.x(c.at),
                label: format!("{} p={}", c.percent(), pvalue(c.cp.pvalue)),
                href: format!("../evidence/{}.html", esc(&c.stem(s))),
                worse: c.worse(),
            })
            .collect();
        o.push_str(&over_runs(m.title(), &dots, &marks, s.timed()));
        o.push('\n');
    }
    versions(&mut o, s);
    runs_table(&mut o, s);
    shell(
        &format!("{} {} dop={}", k.target, k.label, k.threads),
        &o,
        None,
    )
}

fn span(s: &SeriesData) -> String {
    match (s.runs.first(), s.runs.last()) {
        (Some(a), Some(b)) if s.timed() => format!(
            " from {} to {}",
            date(a.unix.unwrap_or_default()),
            date(b.unix.unwrap_or_default())
        ),
        _ => String::new(),
    }
}

fn changes_table(o: &mut String, s: &SeriesData, found: &[(usize, Found)]) {
    if s.changes.is_empty() {
        o.push_str("<p>No change points.</p>\n");
        return;
    }
    o.push_str("<h2>Change points</h2>\n<table class=\"changes\"><tr><th>metric</th><th>change</th><th>p</th><th>magnitude</th><th>before → after</th><th>version</th><th>evidence</th></tr>\n");
    for c in s.changes.iter().rev() {
        let (b, a) = (&s.runs[c.before], &s.runs[c.at]);
        let stem = esc(&c.stem(s));
        let mut evidence =
            format!("<a class=\"evidence\" href=\"../evidence/{stem}.html\">evidence</a>");
        let flamegraph = found
            .iter()
            .find(|(at, _)| *at == c.at)
            .and_then(|(_, f)| f.flamegraph.as_ref());
        if let Some(f) = flamegraph {
            let _ = write!(
                evidence,
                " · <a class=\"flamegraph\" href=\"../evidence/{}\">differential flamegraph</a>",
                dbdelta_report::profiles::href(f)
            );
        }
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n {}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td><td>{} → {}</td><td>{} → {}</td><td>{evidence}</td></tr>",
            c.measure.name(),
            if c.worse() { "worse" } else { "better" },
            c.percent(),
            pvalue(c.cp.pvalue),
            c.cp.magnitude(),
            esc(&b.run_id),
            esc(&a.run_id),
            esc(&b.version),
            esc(&a.version)
        );
    }
    o.push_str("</table>\n");
}

/// Mean of each measure per version (in order of first appearance), relative to the oldest.
fn versions(o: &mut String, s: &SeriesData) {
    let mut order: Vec<&str> = Vec::new();
    for r in &s.runs {
        if !r.version.is_empty() && !order.contains(&r.version.as_str()) {
            order.push(&r.version);
        }
    }
    if order.len() < 2 {
        return;
    }
    let mean = |v: &str, m: Measure| -> Option<f64> {
        let xs: Vec<f64> = s
            .runs
            .iter()
            .filter(|r| r.version == v)
            .filter_map(|r| r.stat(m).map(|st| st.mean))
            .collect();
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    };
    let rel = |v: &str, m: Measure| -> Option<f64> {
        let base = mean(order[0], m)?;
        mean(v, m).map(|x| x / base)
    };
    let rows: Vec<(String, f64)> = order
        .iter()
        .filter_map(|v| rel(v, Measure::Qps).map(|r| (v.to_string(), r)))
        .collect();
    let _ = writeln!(
        o,
        "<h2>By version</h2>\n<p>Mean of the runs of each version relative to the oldest version, {}.</p>",
        esc(order[0])
    );
    o.push_str(&by_version("QPS relative to the oldest version", &rows));
    o.push_str("\n<table class=\"versions\"><tr><th>version</th><th>runs</th>");
    for m in Measure::ALL {
        let _ = write!(o, "<th>{}</th>", m.name());
    }
    o.push_str("</tr>\n");
    for v in &order {
        let n = s.runs.iter().filter(|r| r.version == *v).count();
        let _ = write!(o, "<tr><td>{}</td><td class=\"n\">{n}</td>", esc(v));
        for m in Measure::ALL {
            let cell = rel(v, m).map_or("-".to_string(), |r| format!("{r:.3}"));
            let _ = write!(o, "<td class=\"n\">{cell}</td>");
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

fn runs_table(o: &mut String, s: &SeriesData) {
    let _ = writeln!(o, "<h2>Runs</h2>");
    if s.runs.len() > MAX_ROWS {
        let _ = writeln!(
            o,
            "<p class=\"note\">The newest {MAX_ROWS} of {} runs; <code>dbdelta history --step '{}' --threads {}</code> lists them all.</p>",
            s.runs.len(),
            esc(&s.key.label),
            s.key.threads
        );
    }
    o.push_str("<table class=\"runs\"><tr><th>started</th><th>run</th><th>version</th><th>build</th><th>repeats</th>");
    for m in Measure::ALL {
        let _ = write!(o, "<th>{}</th>", m.name());
    }
    o.push_str("</tr>\n");
    for r in s.runs.iter().rev().take(MAX_ROWS) {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>",
            esc(&r.started),
            esc(&r.run_id),
            esc(&r.version),
            esc(&r.build),
            r.repeats
        );
        for m in Measure::ALL {
            let cell = r.stat(m).map_or("-".to_string(), |st| match st.interval {
                Some((lo, hi)) => format!("{} [{}, {}]", num(st.mean), num(lo), num(hi)),
                None => num(st.mean),
            });
            let _ = write!(o, "<td class=\"n\">{cell}</td>");
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}
