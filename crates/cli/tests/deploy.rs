//! The Kubernetes manifests of deploy/kubernetes/ validate against Kubernetes' schema, with
//! the schemas PyPI's kubernetes-validate ships (no network); a broken manifest fails it.

mod common;

use std::path::{Path, PathBuf};

/// kubernetes-validate in the venv scripts/test.sh creates ($DBDELTA_KUBERNETES_VALIDATE).
fn validator() -> Option<PathBuf> {
    let path = std::env::var_os("DBDELTA_KUBERNETES_VALIDATE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/dbdelta-venv/bin/kubernetes-validate"));
    let shown = path.to_string_lossy().to_string();
    common::require(&[shown.as_str()], "pip install kubernetes-validate").then_some(path)
}

fn validate(tool: &Path, file: &Path) -> std::process::Output {
    std::process::Command::new(tool)
        .args(["--strict", "--quiet"])
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn the_kubernetes_manifests_validate() {
    let Some(tool) = validator() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    for f in &files {
        let out = validate(&tool, f);
        assert!(
            out.status.success(),
            "{}: {}{}",
            f.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The Indexed Job names the index the segment flag is made of.
    let job = std::fs::read_to_string(dir.join("segments-job.yaml")).unwrap();
    assert!(job.contains("completionMode: Indexed") && job.contains("JOB_COMPLETION_INDEX + 1"));
    // A manifest the schema refuses fails the check.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(
        &bad,
        job.replace("completionMode: Indexed", "completionMode: 7"),
    )
    .unwrap();
    assert!(!validate(&tool, &bad).status.success());
}
