//! The large-history measurement of `bench/dashboard.sh`: writes a synthetic SQLite history
//! of `--runs` runs × `--steps` steps (one target, a 10 % drop planted in one step at 80 % of
//! the runs), then times what `dbdelta history --store FILE --html DIR` does: reading every
//! point back from the store and writing the site. Prints `key=value` lines.
//!
//! cargo run --release -p dbdelta-dashboard --example history_bench -- --runs 10000 --steps 42 --dir /tmp/dash

#[path = "../tests/common/synthetic.rs"]
mod synthetic;

use dbdelta_dashboard::{build, Options, RunDirs};
use dbdelta_engine::{EngineError, ErrorKind};
use dbdelta_history::{open_store, Filter};
use dbdelta_inference::DetectOptions;
use std::path::PathBuf;
use std::time::Instant;
use synthetic::{Plant, Synthetic};

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// CPU seconds (user + system) of this process so far, every thread included: fields 14 and
/// 15 of /proc/self/stat, in USER_HZ ticks (100 per second on Linux, fixed by its ABI).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = arg("--runs", "10000").parse()?;
    let steps: usize = arg("--steps", "42").parse()?;
    let dir = PathBuf::from(arg("--dir", "/tmp/dbdelta-dashboard-bench"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let labels: Vec<String> = (0..steps)
        .map(|i| format!("step-{i:02}_range=100"))
        .collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let mut h = Synthetic::new(runs, &refs);
    h.every_hours = 6.0;
    h.plant = Some(Plant {
        label: labels[steps / 2].clone(),
        at: runs * 4 / 5,
        factor: 0.9,
    });
    h.versions = vec![(0, "15.4".into()), (runs / 2, "15.5".into())];

    let t = Instant::now();
    let no_pg = |_: &dbdelta_model::TargetSpec| -> Result<Box<dyn dbdelta_engine::Connection>, EngineError> {
        Err(EngineError::new(ErrorKind::Config, "the bench uses a SQLite store"))
    };
    let store_path = dir.join("history.sqlite");
    let mut store = open_store(&store_path.to_string_lossy(), &no_pg)?;
    let points = h.points();
    store.add(&points)?;
    drop(points);
    println!("generate_secs={:.1}", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let cpu0 = cpu_secs();
    let points = store.points()?;
    let read = t.elapsed().as_secs_f64();
    let site = dir.join("site");
    let opts = Options {
        filter: Filter::default(),
        detect: DetectOptions::default(),
        runs: RunDirs::new(vec![dir.join("runs")]),
    };
    let summary = build(&points, &site, &opts)?;
    let total = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    let mut site_bytes = 0u64;
    for sub in ["", "series", "evidence"] {
        for e in std::fs::read_dir(site.join(sub))?.flatten() {
            if e.path().is_file() {
                site_bytes += e.metadata()?.len();
            }
        }
    }
    println!("runs={runs}");
    println!("steps={steps}");
    println!("points={}", points.len());
    println!("series={}", summary.series);
    println!("change_points={}", summary.changes);
    println!("evidence_pages={}", summary.evidence);
    println!("read_store_secs={read:.1}");
    println!("render_secs={:.1}", total - read);
    println!("total_secs={total:.1}");
    println!("total_cpu_secs={cpu:.1}");
    println!("index_bytes={}", summary.index_bytes);
    println!("site_bytes={site_bytes}");
    Ok(())
}
