//! The entry of the `target_spec` fuzz target (`fuzz/` at the repository root) and of its
//! corpus regression test. Not part of the model API.

use crate::target::{Location, TargetSpec};

/// Parses `data` (as UTF-8, lossily) as a `--target` value and uses everything a parsed
/// spec offers: parameters, the redacted text and the JSON form stored in manifests.
/// Panics only on a bug.
pub fn target_spec(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(spec) = TargetSpec::parse(&text) else {
        return;
    };
    assert!(!spec.name.is_empty() && !spec.engine.is_empty());
    for (k, _) in &spec.params {
        assert!(
            spec.param(k).is_some(),
            "parameter {k:?} given but not found"
        );
    }
    let redacted = spec.redacted();
    if let Location::Url {
        password: Some(p), ..
    } = &spec.location
    {
        assert!(redacted.contains(":***@"), "the password is not masked");
        let _ = p.expose().len();
    }
    let json = serde_json::to_string(&spec).expect("a target spec serializes");
    assert!(!json.is_empty());
}
