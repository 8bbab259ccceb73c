//! The server-CPU-per-operation verdict: paired rounds in windows of their own give target/base
//! of the server's CPU µs per operation an interval, ▲ for less CPU; rounds in turns (no costs
//! of their own) stay out; without two such rounds the section is absent.

mod common;

use common::result;
use dbdelta_inference::{Evidence, Verdict};
use dbdelta_model::os::OpCosts;
use dbdelta_model::{Group, StepResult, TurnsInfo};
use dbdelta_report::cpu_verdict::cpu_verdicts;
use dbdelta_report::{render, Format, ReportOptions};

fn round(target: &str, k: u32, qps: f64, cpu_us: f64, in_turns: bool) -> StepResult {
    let mut r = result(target, "point-query_range=100", 1, Group::Point, 1, qps);
    r.repeat = k;
    r.turns = in_turns.then(|| TurnsInfo {
        slice_ms: 10.0,
        targets: 2,
        wall_secs: 2.0,
        turn_secs: 1.0,
        ..TurnsInfo::default()
    });
    r.costs = Some(OpCosts {
        cpu_o: 0.0,
        cs_o: 0.0,
        r_o: None,
        rkb_o: None,
        wkb_o: None,
        o_s: qps,
        host_cpu_us_op: cpu_us * 1.5,
        server_cpu_us_op: Some(cpu_us),
        client_cpu_us_op: 5.0,
        proxy_cpu_us_op: None,
        server_cs_op: None,
        server_rkb_op: None,
        server_wkb_op: None,
    });
    r
}

#[test]
fn less_cpu_per_operation_is_an_improvement_from_paired_own_windows() {
    // The host drifts by ±10 % from round to round; b costs 10 % less CPU in every round
    // and runs at the same rate. Round 5 was in turns: its (absurd) costs must not count.
    let drift = [1.0, 1.10, 0.92, 1.05, 0.95, 1.02];
    let mut rs = Vec::new();
    for (k, d) in drift.iter().enumerate() {
        let k = k as u32 + 1;
        let jitter = 1.0 + 0.002 * (f64::from(k) - 3.0);
        let in_turns = k == 5;
        let b_cpu = if in_turns { 400.0 } else { 36.0 * d * jitter };
        rs.push(round("a", k, 1000.0, 40.0 * d, in_turns));
        rs.push(round("b", k, 1000.0, b_cpu, in_turns));
    }
    let data = common::two_target_data(rs.clone());
    let cells = cpu_verdicts(&data);
    assert_eq!(cells.len(), 1, "{cells:?}");
    let c = cells[0].comparison.unwrap();
    assert_eq!(c.evidence, Evidence::Paired { pairs: 5 });
    assert_eq!(c.verdict, Verdict::Improvement, "{c:?}");
    assert!(c.low > 0.89 && c.high < 0.91, "{c:?}");
    let opts = ReportOptions::default();
    let text = render(&data, Format::Text, &opts).unwrap();
    assert!(text.contains("\nServer CPU per operation: "), "{text}");
    assert!(
        text.contains("\tpoint-query_range=100\t0.900 [") && text.contains("]▲"),
        "{text}"
    );
    let md = render(&data, Format::Markdown, &opts).unwrap();
    assert!(
        md.contains("## Server CPU per operation relative to a"),
        "{md}"
    );
    let html = render(&data, Format::Html, &opts).unwrap();
    let at = html
        .find("<h2 id=\"cpu-verdicts\">Server CPU per operation relative to a</h2>")
        .unwrap_or_else(|| panic!("no CPU verdict section:\n{html}"));
    let section = &html[at..];
    assert!(
        section
            .find("</body>")
            .is_some_and(|end| section[..end].contains("<td class=\"v hi\" title=\"improvement")),
        "the improvement is colored in the section, before the page ends:\n{section}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(&data, Format::Json, &opts).unwrap()).unwrap();
    let cell = &json["cpu_verdicts"][0];
    assert_eq!(cell["target"], "b", "{cell}");
    assert_eq!(cell["verdict"], "improvement", "{cell}");

    // One round in a window of its own is no interval: no section.
    let one: Vec<StepResult> = rs.into_iter().filter(|r| r.repeat >= 5).collect();
    let data = common::two_target_data(one);
    assert!(cpu_verdicts(&data).is_empty());
    let text = render(&data, Format::Text, &opts).unwrap();
    assert!(!text.contains("Server CPU per operation"), "{text}");
    let html = render(&data, Format::Html, &opts).unwrap();
    assert!(!html.contains("cpu-verdicts"), "{html}");
    let json = render(&data, Format::Json, &opts).unwrap();
    assert!(!json.contains("cpu_verdicts"), "{json}");
}
