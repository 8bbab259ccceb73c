//! Folding, diffing, the drill-down table and speedscope export on fixed `perf script`
//! fixtures with known answers.

use dbdelta_profile::drill::symbol_deltas;
use dbdelta_profile::render::{diff_lines, diff_svg, flamegraph_svg, speedscope_json};
use dbdelta_profile::{drill_down, fold_perf_script, Folded, Shares};

fn fixture(name: &str) -> Folded {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    fold_perf_script(&std::fs::read_to_string(path).unwrap())
}

const ROOT: &str = "__libc_start_call_main;main";

#[test]
fn folding_strips_offsets_names_unknown_frames_and_keeps_one_event() {
    let f = fixture("base.perf-script");
    let expected = format!(
        "{ROOT};[postgres] 2\n{ROOT};exec;rec;rec;leaf 2\n{ROOT};exec;scan 4\n{ROOT};parse 2\n"
    );
    // The page-faults sample (second event type) is not folded in.
    assert_eq!(f.to_text(), expected);
    assert_eq!(f.total(), 10);
    // 2 of the 10 cpu-clock samples end in an unknown frame: 2 of 42 user-space frames.
    assert_eq!(f.stats.unknown_user_frames, 2);
    assert_eq!(f.stats.user_frames, 4 * 4 + 2 * 6 + 2 * 3 + 2 * 3);
    // Folded text round-trips.
    assert_eq!(Folded::parse(&f.to_text()).unwrap().stacks, f.stacks);
}

#[test]
fn real_postgres_stacks_fold_root_first() {
    let f = fixture("postgres-15.perf-script");
    assert_eq!(f.total(), 12);
    assert!(f.stacks.keys().any(
        |s| s.starts_with("__libc_start_call_main;main;PostmasterMain;")
            && s.contains(";PostgresMain;")
    ));
    // Kernel frames are kept, leaf last.
    assert!(f
        .stacks
        .keys()
        .any(|s| s.ends_with("_raw_spin_unlock_irqrestore_[k]")));
}

#[test]
fn inclusive_shares_count_recursive_frames_once() {
    let base = Shares::from_folded(&fixture("base.perf-script"));
    assert_eq!(base.total, 10);
    assert_eq!(base.inclusive_pct("main"), 100.0);
    assert_eq!(base.inclusive_pct("exec"), 60.0);
    // rec appears twice on 2 stacks: 20 %, not 40 %.
    assert_eq!(base.inclusive_pct("rec"), 20.0);
    assert_eq!(base.self_pct("rec"), 0.0);
    assert_eq!(base.self_pct("scan"), 40.0);
    assert_eq!(base.path_pct(&format!("{ROOT};exec;rec")), 20.0);
    assert_eq!(base.path_pct(&format!("{ROOT};exec;rec;rec")), 20.0);
    let target = Shares::from_folded(&fixture("target.perf-script"));
    assert_eq!(target.total, 20);
    assert_eq!(target.inclusive_pct("rec"), 60.0);
    assert_eq!(target.inclusive_pct("leaf"), 60.0);
    assert_eq!(target.inclusive_pct("exec"), 80.0);
}

#[test]
fn symbol_deltas_rank_by_change() {
    let base = Shares::from_folded(&fixture("base.perf-script"));
    let target = Shares::from_folded(&fixture("target.perf-script"));
    let d = symbol_deltas(&base, &target);
    let ranked: Vec<(&str, f64)> = d.iter().map(|s| (s.function.as_str(), s.delta())).collect();
    assert_eq!(
        ranked,
        vec![
            ("leaf", 40.0),
            ("rec", 40.0),
            ("exec", 20.0),
            ("scan", -20.0),
            ("[postgres]", -10.0),
            ("parse", -10.0),
            ("__libc_start_call_main", 0.0),
            ("main", 0.0),
        ]
    );
}

#[test]
fn drill_down_follows_the_tower_then_the_change() {
    let (b, t) = (fixture("base.perf-script"), fixture("target.perf-script"));
    let table = drill_down("step dop1", ("base", &b), &[("slow", &t)], 1.0);
    let names: Vec<&str> = table.nodes.iter().map(|n| n.function.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "__libc_start_call_main",
            "main",
            "exec",
            "rec",
            "rec",
            "leaf"
        ]
    );
    let pcts: Vec<Vec<f64>> = table.nodes.iter().map(|n| n.pct.clone()).collect();
    assert_eq!(
        pcts,
        vec![
            vec![100.0, 100.0],
            vec![100.0, 100.0],
            vec![60.0, 80.0],
            vec![20.0, 60.0],
            vec![20.0, 60.0],
            vec![20.0, 60.0],
        ]
    );
    assert_eq!(
        table.profiles,
        vec![("base".to_string(), 10), ("slow".to_string(), 20)]
    );
    let text = table.render(3);
    let expected = "\
step dop1: percent of samples in the function including its children
a - __libc_start_call_main
b - main
c - exec
d - rec
e - rec
f - leaf
target   samples      a      b      c      d      e      f
base          10  100.0  100.0   60.0   20.0   20.0   20.0
slow          20  100.0  100.0   80.0   60.0   60.0   60.0

user-space functions whose share grew most, then shrank most, slow vs base (inclusive %, Δ points):
function       base     slow        Δ
leaf           20.0     60.0    +40.0
rec            20.0     60.0    +40.0
exec           60.0     80.0    +20.0
scan           40.0     20.0    -20.0
[postgres]     20.0     10.0    -10.0
";
    assert_eq!(text, expected, "\n{text}");
    // With statement counts, each profile row also gives server CPU µs per statement.
    let mut with_ops = table.clone();
    with_ops.cpu_us_per_stmt = vec![Some(10.0), None];
    let text = with_ops.render(0);
    assert!(text.contains("target   samples   µs/stmt      a"), "{text}");
    assert!(text.contains("base          10      10.0  100.0"), "{text}");
    assert!(text.contains("slow          20         -  100.0"), "{text}");
}

#[test]
fn drill_down_stops_where_nothing_differs() {
    let b = fixture("base.perf-script");
    let table = drill_down("same", ("a", &b), &[("b", &b)], 1.0);
    // Nothing grew: no path to follow, and the table says so.
    assert!(table.nodes.is_empty());
    assert!(table.render(3).contains("no call path's share grew"));
}

#[test]
fn a_base_without_samples_is_not_drilled_into() {
    let t = fixture("target.perf-script");
    let empty = Folded::parse("").expect("empty folded");
    let table = drill_down("idle", ("base", &empty), &[("slow", &t)], 1.0);
    assert!(table.nodes.is_empty(), "{:?}", table.nodes);
    let text = table.render(3);
    assert!(
        text.contains("(base recorded no samples in this step: shares cannot be compared"),
        "{text}"
    );
}

#[test]
fn differential_normalises_the_base_to_the_target_total() {
    let (b, t) = (fixture("base.perf-script"), fixture("target.perf-script"));
    let lines = diff_lines(&b, &t).unwrap();
    let expected = [
        format!("{ROOT};[postgres] 4 2"),
        format!("{ROOT};exec;rec;rec;leaf 4 12"),
        format!("{ROOT};exec;scan 8 4"),
        format!("{ROOT};parse 4 2"),
    ]
    .join("\n");
    assert_eq!(lines, expected);
    let svg = String::from_utf8(diff_svg(&b, &t, "diff").unwrap().unwrap()).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("leaf"), "{svg}");
    // Grown frames are red, shrunk ones blue.
    assert!(svg.contains("rgb(255,"), "no red frame");
    assert!(svg.contains(",255)"), "no blue frame");
    let plain = String::from_utf8(flamegraph_svg(&b, "plain").unwrap().unwrap()).unwrap();
    assert!(
        plain.contains("exec") && plain.contains("10 samples"),
        "{plain}"
    );
    assert!(flamegraph_svg(&Folded::default(), "empty")
        .unwrap()
        .is_none());
}

#[test]
fn speedscope_export_is_root_first_and_weighted() {
    let b = fixture("base.perf-script");
    let j = speedscope_json(&b, "base");
    let frames = j["shared"]["frames"].as_array().unwrap();
    let p = &j["profiles"][0];
    assert_eq!(p["type"], "sampled");
    let samples = p["samples"].as_array().unwrap();
    let weights = p["weights"].as_array().unwrap();
    assert_eq!(samples.len(), weights.len());
    assert_eq!(weights.iter().map(|w| w.as_u64().unwrap()).sum::<u64>(), 10);
    let first: Vec<&str> = samples[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            frames[i.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(first, vec!["__libc_start_call_main", "main", "[postgres]"]);
    assert_eq!(p["endValue"], 10);
}
