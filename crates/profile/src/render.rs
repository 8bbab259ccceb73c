//! Flamegraph and differential flamegraph SVGs (inferno) and speedscope JSON.

use crate::fold::Folded;
use std::collections::HashMap;

/// Why inferno could not draw a flamegraph or fold a differential.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// inferno's flamegraph writer failed.
    #[error("flamegraph: {0}")]
    Flamegraph(#[source] std::io::Error),
    /// inferno's differential folder failed.
    #[error("differential: {0}")]
    Differential(#[source] std::io::Error),
}

/// An interactive flamegraph SVG of a profile; `None` when it has no samples.
pub fn flamegraph_svg(folded: &Folded, title: &str) -> Result<Option<Vec<u8>>, RenderError> {
    if folded.total() == 0 {
        return Ok(None);
    }
    draw(&folded.to_text(), title, None).map(Some)
}

/// The differential folded lines `stack before after`, `before` scaled to `after`'s total
/// (difffolded.pl -n), sorted.
pub fn diff_lines(before: &Folded, after: &Folded) -> Result<String, RenderError> {
    let opts = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    let (b, a) = (before.to_text(), after.to_text());
    let mut out = Vec::new();
    inferno::differential::from_readers(opts, b.as_bytes(), a.as_bytes(), &mut out)
        .map_err(RenderError::Differential)?;
    let text = String::from_utf8_lossy(&out);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.sort_unstable();
    Ok(lines.join("\n"))
}

/// A differential flamegraph: widths from `after`, red = grew, blue = shrank (normalised by
/// sample count); `None` when either side has no samples.
pub fn diff_svg(
    before: &Folded,
    after: &Folded,
    title: &str,
) -> Result<Option<Vec<u8>>, RenderError> {
    if before.total() == 0 || after.total() == 0 {
        return Ok(None);
    }
    let lines = diff_lines(before, after)?;
    let subtitle = "red = more samples than the base, blue = fewer (normalised)";
    draw(&lines, title, Some(subtitle)).map(Some)
}

/// inferno's flamegraph of folded (or differential folded) lines, counted in samples, laid
/// out deterministically so the same profile gives the same file.
fn draw(lines: &str, title: &str, subtitle: Option<&str>) -> Result<Vec<u8>, RenderError> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.subtitle = subtitle.map(str::to_string);
    opts.count_name = "samples".to_string();
    opts.deterministic = true;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.lines(), &mut out)
        .map_err(RenderError::Flamegraph)?;
    Ok(out)
}

/// speedscope's file format: one sampled profile, stacks root first, weighted by samples.
pub fn speedscope_json(folded: &Folded, name: &str) -> serde_json::Value {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut frames: Vec<serde_json::Value> = Vec::new();
    let mut samples: Vec<Vec<usize>> = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    for (stack, &n) in &folded.stacks {
        let ids = stack
            .split(';')
            .map(|f| {
                *index.entry(f).or_insert_with(|| {
                    frames.push(serde_json::json!({ "name": f }));
                    frames.len() - 1
                })
            })
            .collect();
        samples.push(ids);
        weights.push(n);
    }
    serde_json::json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "version": "0.0.1",
        "name": name,
        "activeProfileIndex": 0,
        "exporter": "dbdelta",
        "shared": { "frames": frames },
        "profiles": [{
            "type": "sampled",
            "name": name,
            "unit": "none",
            "startValue": 0,
            "endValue": folded.total(),
            "samples": samples,
            "weights": weights,
        }],
    })
}
