//! The files kept per profiled step, the diff pass over a run and `explain`.
//!
//! Layout under a run directory: `profiles/<target>/<NNN>-<label>.dop<N>.folded` (folded
//! stacks, the interchange format), `.svg` (flamegraph), `.speedscope.json`, `.json`
//! ([`ProfileInfo`]), and `….diff-vs-<base>.svg` beside a non-base target's files.
//! `profiles/NO-PROFILES.txt` says why a run asked for profiles and has none.

use crate::drill::{drill_down, DrillTable};
use crate::fold::{fold_perf_script, Folded};
use crate::perf::{Callgraph, ProfileTargets, Recording};
use crate::render::{diff_svg, flamegraph_svg, speedscope_json};
use crate::ProfileError;
use dbdelta_model::glob::glob_match;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// File written when profiling was asked for but could not be done.
pub const NO_PROFILES: &str = "NO-PROFILES.txt";

/// Profile options of a run (validated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSettings {
    /// Samples per second (perf -F).
    pub freq: u32,
    /// Stack walking.
    pub callgraph: Callgraph,
    /// Step globs to profile (name or label); empty = every measured step.
    pub steps: Vec<String>,
}

impl ProfileSettings {
    /// Validates the `--profile-*` options.
    pub fn new(freq: u32, callgraph: Callgraph, steps: Vec<String>) -> Result<Self, ProfileError> {
        if !(1..=20_000).contains(&freq) {
            return Err(ProfileError::BadOption {
                flag: "--profile-freq",
                value: freq.to_string(),
                why: "give samples per second between 1 and 20000 (99 is the usual choice)",
            });
        }
        if let Some(bad) = steps.iter().find(|s| s.trim().is_empty()) {
            return Err(ProfileError::BadOption {
                flag: "--profile-steps",
                value: format!("'{bad}'"),
                why: "give comma-separated step globs such as 'point-query,update-*'",
            });
        }
        Ok(ProfileSettings {
            freq,
            callgraph,
            steps,
        })
    }

    /// True when a step with this name and label is to be profiled.
    pub fn wants(&self, name: &str, label: &str) -> bool {
        self.steps.is_empty()
            || self
                .steps
                .iter()
                .any(|g| glob_match(g, name) || glob_match(g, label))
    }
}

/// Where and how to profile one step.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSpec {
    /// perf's path.
    pub perf: PathBuf,
    /// `profiles/<target>`.
    pub dir: PathBuf,
    /// Target name.
    pub target: String,
    /// Step name.
    pub step: String,
    /// Step label.
    pub label: String,
    /// Run order of the step.
    pub order: u32,
    /// Client threads.
    pub threads: u32,
    /// Options.
    pub settings: ProfileSettings,
}

impl ProfileSpec {
    /// `<NNN>-<label>.dop<N>`.
    pub fn stem(&self) -> String {
        format!(
            "{:03}-{}.dop{}",
            self.order,
            file_safe(&self.label),
            self.threads
        )
    }

    /// Starts perf on the targets with its events disabled until [`Recording::enable`]
    /// (see [`Recording::start_disabled`]).
    pub fn start_disabled(&self, targets: &ProfileTargets) -> Result<Recording, ProfileError> {
        let _ = std::fs::create_dir_all(&self.dir);
        let data = self.dir.join(format!("{}.perf.data", self.stem()));
        Recording::start_disabled(
            &self.perf,
            targets,
            self.settings.freq,
            self.settings.callgraph,
            &data,
        )
    }

    /// Starts perf on the targets.
    pub fn start(&self, targets: &ProfileTargets) -> Result<Recording, ProfileError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| ProfileError::io(&self.dir, e))?;
        let data = self.dir.join(format!("{}.perf.data", self.stem()));
        Recording::start(
            &self.perf,
            targets,
            self.settings.freq,
            self.settings.callgraph,
            &data,
        )
    }
}

/// What was kept for one profiled step (`<stem>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileInfo {
    /// Target name.
    pub target: String,
    /// Step name.
    pub step: String,
    /// Step label.
    pub label: String,
    /// Client threads.
    pub threads: u32,
    /// File stem `<NNN>-<label>.dop<N>`.
    pub stem: String,
    /// Samples collected.
    pub samples: u64,
    /// Samples per second asked of perf.
    pub freq: u32,
    /// Stack walking used.
    pub callgraph: Callgraph,
    /// Folded stacks file, relative to the target's profile directory.
    #[serde(default)]
    pub folded: Option<String>,
    /// Flamegraph SVG file.
    #[serde(default)]
    pub svg: Option<String>,
    /// speedscope JSON file.
    #[serde(default)]
    pub speedscope: Option<String>,
    /// Percent of user-space frames perf could not name.
    #[serde(default)]
    pub unresolved_pct: f64,
    /// Why the profile is missing or partial (perf missing, not permitted, no symbols…).
    #[serde(default)]
    pub note: Option<String>,
    /// Statements the step executed in the window (for CPU per statement).
    #[serde(default)]
    pub queries: u64,
}

impl ProfileInfo {
    /// Server CPU µs per statement estimated from the samples: each cpu-clock sample stands
    /// for 1/freq s of CPU.
    pub fn cpu_us_per_stmt(&self) -> Option<f64> {
        (self.queries > 0 && self.freq > 0 && self.samples > 0)
            .then(|| self.samples as f64 / f64::from(self.freq) * 1e6 / self.queries as f64)
    }
}

impl ProfileInfo {
    fn empty(spec: &ProfileSpec) -> Self {
        ProfileInfo {
            target: spec.target.clone(),
            step: spec.step.clone(),
            label: spec.label.clone(),
            threads: spec.threads,
            stem: spec.stem(),
            samples: 0,
            freq: spec.settings.freq,
            callgraph: spec.settings.callgraph,
            folded: None,
            svg: None,
            speedscope: None,
            unresolved_pct: 0.0,
            note: None,
            queries: 0,
        }
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ProfileError> {
    std::fs::write(path, bytes).map_err(|e| ProfileError::io(path, e))
}

/// Writes `<stem>.json` saying why this step has no profile.
pub fn record_failure(spec: &ProfileSpec, why: &str) -> ProfileInfo {
    let mut info = ProfileInfo::empty(spec);
    info.note = Some(why.to_string());
    let _ = std::fs::create_dir_all(&spec.dir);
    let _ = write(
        &spec.dir.join(format!("{}.json", info.stem)),
        &serde_json::to_vec_pretty(&info).unwrap_or_default(),
    );
    info
}

/// Folds a step's `perf script` text and keeps folded stacks, flamegraph, speedscope JSON
/// and `<stem>.json`; `queries` is the step's statement count. Never fails: problems end up
/// in the note.
pub fn keep_profile(spec: &ProfileSpec, script: &str, queries: u64) -> ProfileInfo {
    let folded = fold_perf_script(script);
    let mut info = ProfileInfo::empty(spec);
    info.queries = queries;
    let stem = info.stem.clone();
    info.samples = folded.total();
    info.unresolved_pct = folded.stats.unknown_pct();
    let mut notes = Vec::new();
    if info.samples == 0 {
        notes.push("perf recorded no samples (the server was idle, or the window was too short for --profile-freq)".to_string());
    }
    if info.unresolved_pct > 20.0 {
        notes.push(format!(
            "{:.0}% of user-space frames have no symbol: install the server's debug symbols (e.g. postgresql-15-dbgsym, mariadb-server-core-dbgsym) or build it with symbols",
            info.unresolved_pct
        ));
    }
    let name = |ext: &str| format!("{stem}.{ext}");
    match write(&spec.dir.join(name("folded")), folded.to_text().as_bytes()) {
        Ok(()) => info.folded = Some(name("folded")),
        Err(e) => notes.push(e.to_string()),
    }
    let title = format!("{} {} dop{}", spec.target, spec.label, spec.threads);
    match flamegraph_svg(&folded, &title) {
        Ok(Some(svg)) => match write(&spec.dir.join(name("svg")), &svg) {
            Ok(()) => info.svg = Some(name("svg")),
            Err(e) => notes.push(e.to_string()),
        },
        Ok(None) => {}
        Err(e) => notes.push(e.to_string()),
    }
    if info.samples > 0 {
        let json = speedscope_json(&folded, &title);
        match write(
            &spec.dir.join(name("speedscope.json")),
            &serde_json::to_vec(&json).unwrap_or_default(),
        ) {
            Ok(()) => info.speedscope = Some(name("speedscope.json")),
            Err(e) => notes.push(e.to_string()),
        }
    }
    if !notes.is_empty() {
        info.note = Some(notes.join("; "));
    }
    let _ = write(
        &spec.dir.join(name("json")),
        &serde_json::to_vec_pretty(&info).unwrap_or_default(),
    );
    info
}

/// The file-name rule of step labels, shared with the run directory's result files.
pub use dbdelta_model::result::file_safe;

/// Every `<stem>.json` of one target's profile directory.
pub fn load_infos(dir: &Path) -> Vec<ProfileInfo> {
    let mut v: Vec<ProfileInfo> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p.to_string_lossy().ends_with(".speedscope.json")
        })
        .filter_map(|p| serde_json::from_slice(&std::fs::read(p).ok()?).ok())
        .collect();
    v.sort_by(|a: &ProfileInfo, b| a.stem.cmp(&b.stem));
    v
}

fn load_folded(dir: &Path, info: &ProfileInfo) -> Option<Folded> {
    let text = std::fs::read_to_string(dir.join(info.folded.as_ref()?)).ok()?;
    Folded::parse(&text).ok()
}

/// Writes a differential flamegraph `<stem>.diff-vs-<base>.svg` beside every profile of
/// each non-base target that the base also has; returns the files written.
pub fn write_diffs(profiles: &Path, base: &str, targets: &[String]) -> Vec<PathBuf> {
    let base_dir = profiles.join(base);
    let base_infos = load_infos(&base_dir);
    let mut written = Vec::new();
    for t in targets.iter().filter(|t| t.as_str() != base) {
        let dir = profiles.join(t);
        for info in load_infos(&dir) {
            let Some(b) = base_infos.iter().find(|b| b.stem == info.stem) else {
                continue;
            };
            let (Some(before), Some(after)) = (load_folded(&base_dir, b), load_folded(&dir, &info))
            else {
                continue;
            };
            let title = format!("{t} vs {base}: {} dop{}", info.label, info.threads);
            if let Ok(Some(svg)) = diff_svg(&before, &after, &title) {
                let path = dir.join(format!("{}.diff-vs-{}.svg", info.stem, file_safe(base)));
                if write(&path, &svg).is_ok() {
                    written.push(path);
                }
            }
        }
    }
    written
}

/// For a version series (`targets` in order, oldest first): the differential flamegraph of
/// every target against the one before it, `<stem>.diff-vs-<previous>.svg`, where the one
/// before is not `base` (that diff is [`write_diffs`]'s); returns the files written.
pub fn write_adjacent_diffs(profiles: &Path, base: &str, targets: &[String]) -> Vec<PathBuf> {
    targets
        .windows(2)
        .filter(|w| w[0] != base && w[1] != base)
        .flat_map(|w| write_diffs(profiles, &w[0], std::slice::from_ref(&w[1])))
        .collect()
}

/// The drill-down tables of the steps matching `step` (a glob on name or label), base vs
/// `targets`, optionally one thread count.
pub fn explain(
    profiles: &Path,
    base: &str,
    targets: &[String],
    step: &str,
    threads: Option<u32>,
) -> Result<Vec<DrillTable>, ProfileError> {
    if !profiles.is_dir() {
        return Err(ProfileError::NotFound(format!(
            "{}: this run has no profiles; run with --profile",
            profiles.display()
        )));
    }
    let base_dir = profiles.join(base);
    let infos: Vec<ProfileInfo> = load_infos(&base_dir)
        .into_iter()
        .filter(|i| glob_match(step, &i.step) || glob_match(step, &i.label))
        .filter(|i| threads.is_none_or(|d| d == i.threads))
        .collect();
    if infos.is_empty() {
        return Err(ProfileError::NotFound(format!(
            "--step {step}: no profile of the base target {base} matches; profiled steps are in {}",
            base_dir.display()
        )));
    }
    let mut tables = Vec::new();
    for info in infos {
        let Some(b) = load_folded(&base_dir, &info) else {
            continue;
        };
        let mut others: Vec<(String, Folded)> = Vec::new();
        let mut per_op = vec![info.cpu_us_per_stmt()];
        let mut notes: Vec<String> = info.note.iter().map(|n| format!("{base}: {n}")).collect();
        for t in targets.iter().filter(|t| t.as_str() != base) {
            let dir = profiles.join(t);
            let infos = load_infos(&dir);
            let Some(i) = infos.iter().find(|i| i.stem == info.stem) else {
                continue;
            };
            if let Some(f) = load_folded(&dir, i) {
                others.push((t.clone(), f));
                per_op.push(i.cpu_us_per_stmt());
                notes.extend(i.note.iter().map(|n| format!("{t}: {n}")));
            }
        }
        let refs: Vec<(&str, &Folded)> = others.iter().map(|(n, f)| (n.as_str(), f)).collect();
        let title = format!("{} dop{}", info.label, info.threads);
        let mut table = drill_down(&title, (base, &b), &refs, 1.0);
        table.cpu_us_per_stmt = per_op;
        table.notes = notes;
        tables.push(table);
    }
    Ok(tables)
}

/// Writes `profiles/NO-PROFILES.txt` with the reason.
pub fn write_no_profiles(profiles: &Path, why: &str) -> Result<(), ProfileError> {
    std::fs::create_dir_all(profiles).map_err(|e| ProfileError::io(profiles, e))?;
    write(
        &profiles.join(NO_PROFILES),
        format!("--profile was given but no profiles were taken: {why}\n").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_validate_and_select_steps() {
        let err = ProfileSettings::new(0, Callgraph::Fp, vec![]).unwrap_err();
        assert!(err.to_string().starts_with("--profile-freq 0:"), "{err}");
        let err = ProfileSettings::new(99, Callgraph::Fp, vec![" ".into()]).unwrap_err();
        assert!(err.to_string().starts_with("--profile-steps"), "{err}");
        let s = ProfileSettings::new(99, Callgraph::Dwarf, vec!["update-*".into()]).unwrap();
        assert!(s.wants("update-index", "update-index_range=100"));
        assert!(!s.wants("point-query", "point-query_range=100"));
        let all = ProfileSettings::new(99, Callgraph::Fp, vec![]).unwrap();
        assert!(all.wants("scan", "scan_range=100"));
    }

    #[test]
    fn nothing_to_sample_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProfileSpec {
            perf: PathBuf::from("/usr/bin/perf"),
            dir: dir.path().to_path_buf(),
            target: "t".into(),
            step: "point-query".into(),
            label: "point-query_range=100".into(),
            order: 31,
            threads: 4,
            settings: ProfileSettings::new(99, Callgraph::Fp, vec![]).unwrap(),
        };
        assert_eq!(spec.stem(), "031-point-query_range=100.dop4");
        let err = spec.start(&ProfileTargets::Pids(vec![])).unwrap_err();
        assert!(err.to_string().contains("no server process"), "{err}");
        let info = record_failure(&spec, "why");
        assert_eq!(info.note.as_deref(), Some("why"));
        assert_eq!(load_infos(dir.path()), vec![info]);
    }
}
