//! The keys in which two plans differ, each with both values: what the segments' barrier
//! and `dbdelta merge` say when segments ran different plans.

use serde_json::Value;

/// The keys in which two plan descriptions differ, each with both values (at most three,
/// then how many more): `options.threads: [8] here, [16] there`.
pub fn plan_difference(here: &Value, there: &Value) -> String {
    let mut a = Vec::new();
    let mut b = Vec::new();
    flatten("", here, &mut a);
    flatten("", there, &mut b);
    let keys: std::collections::BTreeSet<&String> =
        a.iter().chain(b.iter()).map(|(k, _)| k).collect();
    let value = |v: &[(String, String)], k: &str| {
        v.iter()
            .find(|(key, _)| key == k)
            .map_or("(none)".to_string(), |(_, v)| v.clone())
    };
    let diffs: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (value(&a, k), value(&b, k));
            (x != y).then(|| format!("{k}: {x} here, {y} there"))
        })
        .collect();
    match diffs.len() {
        0 => "the plans differ".to_string(),
        n if n <= 3 => diffs.join("; "),
        n => format!("{} (and {} more)", diffs[..3].join("; "), n - 3),
    }
}

/// Flattens JSON to `key.sub` → value text; arrays stay whole (`[8, 16]`).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        _ => out.push((prefix.to_string(), v.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_named_with_both_values() {
        let a =
            json!({"options": {"threads": [8], "seed": 1, "read_secs": 2.0}, "suite": "sysbench"});
        let b =
            json!({"options": {"threads": [16], "seed": 1, "read_secs": 3.0}, "suite": "sysbench"});
        let d = plan_difference(&a, &b);
        assert!(d.contains("options.threads: [8] here, [16] there"), "{d}");
        assert!(d.contains("options.read_secs: 2.0 here, 3.0 there"), "{d}");
        assert!(!d.contains("seed"), "{d}");
        let many = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        assert!(plan_difference(&many, &json!({})).ends_with("(and 1 more)"));
    }
}
