//! What sharing the host cost the rounds in turns: the line beside the noise floor, the
//! per-step figures in the JSON, and the warning when the rates in turns fall below 0.8×
//! those of a window of one's own.

mod common;

use common::{manifest, result};
use dbdelta_model::{Group, RunStatus, StepResult, TurnsInfo};
use dbdelta_report::{contention, render, Format, ReportData, ReportOptions, RunData};

/// Four rounds of one step on targets a and b: the first a window each at 1000/s, the
/// others in turns at `in_turns`/s, each turn 0.2 s of which 0.05 s was taken by other
/// processes; round 3 was measured again once and a's round 4 window was extended.
fn rounds(in_turns: f64) -> ReportData {
    let mut rs: Vec<StepResult> = Vec::new();
    for k in 1..=4u32 {
        for t in ["a", "b"] {
            let value = if k == 1 { 1000.0 } else { in_turns };
            let mut r = result(t, "point-query_range=100", 1, Group::Point, 1, value);
            r.repeat = k;
            r.turns = (k > 1).then_some(TurnsInfo {
                slice_ms: 10.0,
                targets: 2,
                wall_secs: 0.4,
                turn_secs: 0.2,
                lost_secs: 0.05,
                waited_secs: None,
                retries: u32::from(k == 3),
            });
            r.extended_secs = (k == 4 && t == "a").then_some(0.3);
            rs.push(r);
        }
    }
    let run = RunData {
        dir: "run".into(),
        manifest: manifest(&["a", "b"], RunStatus::Complete),
        results: rs,
        warnings: Vec::new(),
    };
    ReportData::from_runs(vec![run], None).unwrap()
}

#[test]
fn the_line_beside_the_noise_floor_says_what_turns_cost() {
    let data = rounds(700.0);
    let costs = contention::costs(data.results());
    assert_eq!(costs.len(), 2, "{costs:?}");
    for c in &costs {
        assert!((c.ratio.unwrap() - 0.7).abs() < 1e-9, "{c:?}");
        assert!((c.lost_share - 0.25).abs() < 1e-9, "{c:?}");
        assert_eq!((c.rounds, c.retries), (3, 1), "{c:?}");
    }
    let line = contention::line(data.results()).unwrap();
    for part in [
        "rates in turns 0.70× those of a window of their own (median of 2",
        "other processes held the CPU for 25.0 % of the targets' turns",
        "1 round(s) measured again",
        "1 window(s) extended",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    assert!(text.contains(&format!("{line}.")), "{text}");
    let json = render(&data, Format::Json, &ReportOptions::default()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["turns"].as_array().map(Vec::len), Some(2), "{json}");
    assert!((doc["turns"][0]["ratio"].as_f64().unwrap() - 0.7).abs() < 1e-9);
    // Below 0.8: one warning, on the console (the CLI prints the warnings) and in the JSON.
    let warned: Vec<&String> = data
        .warnings
        .iter()
        .filter(|w| w.contains("in turns the targets ran at 0.70×"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", data.warnings);
    assert!(doc["warnings"].to_string().contains("0.70×"), "{json}");
}

#[test]
fn server_targets_are_named_charged_whole_with_what_their_chains_waited() {
    let mut data = rounds(950.0);
    // Two servers, charged whole (nothing lost): a's chain waited 0.1 s of each 0.2 s of
    // turns; b's server threads could not be read in round 3.
    for r in data.runs[0].results.iter_mut() {
        let read = !(r.target == "b" && r.repeat == 3);
        r.server_waits_read = Some(read);
        if let Some(t) = r.turns.as_mut() {
            t.lost_secs = 0.0;
            t.waited_secs = (read && r.target == "a").then_some(0.1);
        }
    }
    let costs = contention::costs(data.results());
    let read: Vec<(&str, Option<bool>, Option<f64>)> = costs
        .iter()
        .map(|c| (c.target.as_str(), c.server_waits_read, c.waited_share))
        .collect();
    assert_eq!(
        read,
        vec![("a", Some(true), Some(0.5)), ("b", Some(false), None)]
    );
    let line = contention::line(data.results()).unwrap();
    for part in [
        "server targets (a, b) are charged their turns whole",
        "waited for a CPU in 50.0 % of them (median), not taken off",
        "the server's CPU waits of b were not read",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    // Servers only: no embedded share of the turns other processes held.
    assert!(!line.contains("other processes held"), "{line}");
    // Embedded targets: no such parts.
    let embedded = contention::line(rounds(950.0).results()).unwrap();
    assert!(!embedded.contains("were not read") && !embedded.contains("server targets"));
}

#[test]
fn rates_in_turns_near_their_own_windows_raise_no_warning() {
    let data = rounds(950.0);
    assert!(contention::warning(data.results()).is_none());
    assert!(data.warnings.iter().all(|w| !w.contains("in turns")));
    assert!(contention::line(data.results())
        .unwrap()
        .contains("rates in turns 0.95×"));
}

#[test]
fn without_turns_there_is_no_line() {
    let mut r = result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0);
    r.repeat = 1;
    let run = RunData {
        dir: "run".into(),
        manifest: manifest(&["a", "b"], RunStatus::Complete),
        results: vec![r],
        warnings: Vec::new(),
    };
    let data = ReportData::from_runs(vec![run], None).unwrap();
    assert!(contention::line(data.results()).is_none());
    let json = render(&data, Format::Json, &ReportOptions::default()).unwrap();
    assert!(!json.contains("\"contention\""), "{json}");
}

#[test]
fn rates_in_turns_far_above_their_own_windows_are_warned_of_too() {
    let data = rounds(2000.0);
    let w = contention::warning(data.results()).expect("a warning above 1.5x");
    assert!(w.contains("2.00×") && w.contains("above 1.5"), "{w}");
}
