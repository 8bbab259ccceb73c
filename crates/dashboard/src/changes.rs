//! Change points of every measure of every series, found with the same E-Divisive means
//! detector as `dbdelta detect` (Apache Otava's method), on as many threads as the host has.

use crate::collect::{Change, Measure, SeriesData};
use dbdelta_inference::{detect, DetectOptions};

/// Fills [`SeriesData::changes`] of every series. A run without a measure (CPU not
/// measured) is left out of that measure's series, as `dbdelta detect` does.
pub fn find(series: &mut [SeriesData], opts: &DetectOptions) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let chunk = series.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for part in series.chunks_mut(chunk) {
            scope.spawn(move || {
                for s in part {
                    s.changes = of_series(s, opts);
                }
            });
        }
    });
}

fn of_series(s: &SeriesData, opts: &DetectOptions) -> Vec<Change> {
    let mut out = Vec::new();
    for m in Measure::ALL {
        let idx: Vec<usize> = (0..s.runs.len())
            .filter(|&i| s.runs[i].stat(m).is_some())
            .collect();
        let values: Vec<f64> = idx
            .iter()
            .filter_map(|&i| s.runs[i].stat(m).map(|v| v.mean))
            .collect();
        for cp in detect(&values, opts) {
            out.push(Change {
                measure: m,
                at: idx[cp.index],
                before: idx[cp.index - 1],
                cp,
            });
        }
    }
    out.sort_by_key(|c| (c.at, c.measure));
    out
}
