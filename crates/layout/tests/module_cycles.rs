//! No crate of the workspace has a cycle between its modules (files): each file can be read
//! knowing only the files below it.

use dbdelta_layout::{show, ModuleGraph};
use std::path::Path;

#[test]
fn no_crate_has_a_module_cycle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut report = String::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&crates)
        .expect("crates dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut checked = 0;
    for dir in dirs {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let g = ModuleGraph::of_crate(&src).expect("reading sources");
        checked += 1;
        for cycle in g.cycles() {
            let names: Vec<String> = cycle.iter().map(|p| show(p)).collect();
            report.push_str(&format!(
                "{}: {}\n",
                dir.file_name().unwrap_or_default().to_string_lossy(),
                names.join(" <-> ")
            ));
            for m in &cycle {
                let to: Vec<String> = g.edges[m]
                    .iter()
                    .filter(|t| cycle.contains(t))
                    .map(|t| show(t))
                    .collect();
                report.push_str(&format!("    {} -> {}\n", show(m), to.join(", ")));
            }
        }
    }
    assert!(
        checked >= 10,
        "expected the workspace's crates under {}",
        crates.display()
    );
    assert!(report.is_empty(), "module cycles:\n{report}");
}
