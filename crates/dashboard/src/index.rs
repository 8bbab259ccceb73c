//! The index page: every series (suite × target × step × threads, per host) with a sparkline
//! of its QPS and its newest change point, filtered by a few lines of inline script.

use crate::chart::sparkline;
use crate::collect::{Measure, SeriesData};
use crate::page::{num, pvalue, shell};
use crate::time::date;
use dbdelta_report::markup::esc;
use std::fmt::Write;

/// Hides the rows that do not match the text box or the check boxes.
const FILTER_JS: &str = "(function(){var q=document.getElementById('q'),c=document.getElementById('changed'),n=document.getElementById('newest'),shown=document.getElementById('shown');\
function f(){var s=q.value.toLowerCase(),k=0;document.querySelectorAll('#series tbody tr').forEach(function(r){\
var ok=r.textContent.toLowerCase().indexOf(s)>=0&&(!c.checked||r.getAttribute('data-change')==='1')&&(!n.checked||r.getAttribute('data-new')==='1');\
r.style.display=ok?'':'none';if(ok)k++});shown.textContent=k}\
q.addEventListener('input',f);c.addEventListener('change',f);n.addEventListener('change',f);f()})();";

/// The index of `series`.
pub fn render(series: &[SeriesData]) -> String {
    let runs: std::collections::BTreeSet<&str> = series
        .iter()
        .flat_map(|s| s.runs.iter().map(|r| r.run_id.as_str()))
        .collect();
    let newest = series
        .iter()
        .filter_map(|s| s.runs.last()?.unix)
        .fold(f64::NEG_INFINITY, f64::max);
    let changed = series.iter().filter(|s| !s.changes.is_empty()).count();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<h1>dbdelta results history</h1>\n<p>{} series over {} run(s){}; {changed} series have change points. Each series is one target name, step and thread count on one host; the sparkline is its QPS (● = newest change point: red worse, green better).</p>",
        series.len(),
        runs.len(),
        if newest.is_finite() {
            format!(", newest {}", date(newest))
        } else {
            String::new()
        }
    );
    o.push_str("<div id=\"filter\"><input type=\"text\" id=\"q\" placeholder=\"filter: suite, target, step, host…\" aria-label=\"filter\"> <label><input type=\"checkbox\" id=\"changed\"> with change points</label> <label><input type=\"checkbox\" id=\"newest\"> changed at the newest run</label> <span class=\"note\"><span id=\"shown\"></span> shown</span></div>\n");
    o.push_str("<table id=\"series\"><thead><tr><th>suite</th><th>target</th><th>step</th><th>dop</th><th>host</th><th>runs</th><th>QPS (newest)</th><th>QPS over runs</th><th>newest change</th></tr></thead>\n<tbody>\n");
    for s in series {
        let k = &s.key;
        let qps: Vec<f64> = s
            .runs
            .iter()
            .filter_map(|r| r.stat(Measure::Qps).map(|st| st.mean))
            .collect();
        let newest_change = s.newest_change();
        let is_new = newest_change.is_some_and(|c| c.at + 1 == s.runs.len());
        // The sparkline plots the runs that have QPS: its index of the change.
        let spark_at = newest_change.map(|c| {
            let i = s.runs[..c.at]
                .iter()
                .filter(|r| r.stat(Measure::Qps).is_some())
                .count();
            (i, c.worse())
        });
        let change = newest_change.map_or(String::new(), |c| {
            format!(
                "<a class=\"{}\" href=\"evidence/{}.html\">{} {}</a> <span class=\"note\">p={} at {}</span>{}",
                if c.worse() { "worse" } else { "better" },
                esc(&c.stem(s)),
                c.measure.name(),
                c.percent(),
                pvalue(c.cp.pvalue),
                esc(&s.runs[c.at].run_id),
                if is_new {
                    "<span class=\"new\">newest run</span>"
                } else {
                    ""
                }
            )
        });
        let _ = writeln!(
            o,
            "<tr data-change=\"{}\" data-new=\"{}\"><td>{}</td><td><a href=\"series/{}.html\">{}</a> <span class=\"note\">{}</span></td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{change}</td></tr>",
            u8::from(newest_change.is_some()),
            u8::from(is_new),
            esc(&k.suite),
            esc(&s.id),
            esc(&k.target),
            esc(&s.engine),
            esc(&k.label),
            k.threads,
            esc(&k.host),
            s.runs.len(),
            qps.last().map_or("-".to_string(), |v| num(*v)),
            sparkline(&qps, spark_at)
        );
    }
    o.push_str("</tbody></table>\n");
    shell("dbdelta results history", &o, Some(FILTER_JS))
}
