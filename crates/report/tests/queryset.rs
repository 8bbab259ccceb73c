//! Golden files of the query-set report, from a real run of examples/fulltext on SQLite,
//! PostgreSQL 15 and MariaDB 10.11 (`tests/data/queryset-fulltext.json`).

mod common;

use common::{check_golden, data_dir};
use dbdelta_model::queryset::QuerySetResult;
use dbdelta_report::queryset::{html, json, markdown, text, QuerySetReport};

fn report(base: Option<&str>) -> QuerySetReport {
    let bytes = std::fs::read(data_dir().join("queryset-fulltext.json")).unwrap();
    let result: QuerySetResult = serde_json::from_slice(&bytes).unwrap();
    QuerySetReport::new(result, base)
}

#[test]
fn text_markdown_html() {
    let r = report(None);
    assert_eq!(r.base, "lite");
    assert!(r.mismatches.is_empty());
    let expected = data_dir().join("expected");
    check_golden(&expected.join("queryset-fulltext.txt"), &text(&r));
    check_golden(&expected.join("queryset-fulltext.md"), &markdown(&r));
    check_golden(&expected.join("queryset-fulltext.html"), &html(&r));
}

#[test]
fn another_base_reorders_and_inverts() {
    let lite = report(None);
    let pg = report(Some("pg"));
    assert_eq!(pg.result.targets[0].name, "pg");
    let speed = |r: &QuerySetReport, q: &str, t: &str| {
        r.speed
            .iter()
            .find(|c| c.query == q && c.target == t)
            .and_then(|c| c.speed)
            .unwrap()
    };
    // lite relative to pg is the inverse of pg relative to lite.
    let a = speed(&lite, "q1-common-word", "pg");
    let b = speed(&pg, "q1-common-word", "lite");
    assert!((a * b - 1.0).abs() < 1e-9, "{a} {b}");
    let j: serde_json::Value = serde_json::from_str(&json(&pg)).unwrap();
    assert_eq!(j["report"]["base"], "pg");
    assert!(j["sections"].as_array().unwrap().len() >= 3);
}
