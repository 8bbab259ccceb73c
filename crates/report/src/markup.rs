//! The one markup layer of the reports (the shape of hyperfine's `MarkupExporter`): a section
//! builds its table once, as a [`Grid`] or as [`Line`]s, and one writer per format lays it out
//! as text, Markdown or HTML. Escaping ([`esc`], [`md`]), the threshold rule that marks a ratio
//! ([`beyond`]) and the short form of a failure reason ([`shorten`]) live here, so that every
//! format module depends on this one and none on another.

pub use crate::digits::{number, ratio, significant, RATIO};
use crate::table::Cell;
use crate::ReportOptions;
use dbdelta_model::Group;
use serde::Serialize;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Keeps text from breaking a Markdown table: pipes escaped, line breaks flattened.
pub fn md(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// How a ratio compares with the thresholds, judged on the printed value so a cell showing
/// 0.95 is always marked: `Some(false)` at or below `low`, `Some(true)` at or above `high`.
pub fn beyond(value: f64, opts: &ReportOptions) -> Option<bool> {
    let shown: f64 = ratio(value, 2).parse().unwrap_or(value);
    const EPS: f64 = 1e-9;
    if shown <= opts.low + EPS {
        Some(false)
    } else if shown >= opts.high - EPS {
        Some(true)
    } else {
        None
    }
}

/// The first line of a failure reason, cut to `chars` characters with `…` where cut; with
/// `mark_more_lines` a reason of several lines also gets the `…` (a Markdown cell has no
/// tooltip that would show the rest).
pub fn shorten(reason: &str, chars: usize, mark_more_lines: bool) -> String {
    let first_line = reason.lines().next().unwrap_or_default().trim();
    let whole = !mark_more_lines || first_line.len() == reason.trim().len();
    if first_line.chars().count() <= chars && whole {
        return first_line.to_string();
    }
    let cut: String = first_line.chars().take(chars).collect();
    format!("{}…", cut.trim_end())
}

/// A cell's background, as the published HTML colors it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// No color.
    None,
    /// Bottom quartile, below 95 % of the insert-rate target, or significantly slower
    /// (#FF9A9A).
    Red,
    /// Top quartile, or significantly faster (#81FFA6).
    Green,
    /// QPS of a step that failed the insert-rate SLA (#D7D7D7).
    Gray,
    /// Relative value above 1.05 (#81FFF9).
    Blue,
    /// Relative value below 0.95, or a wrong result (#FFDD81).
    Yellow,
    /// The target row of the insert-rate table (gray, #D7D7D7; no marker in text).
    Target,
}

impl Color {
    fn hex(self) -> Option<&'static str> {
        match self {
            Color::None => None,
            Color::Red => Some("#FF9A9A"),
            Color::Green => Some("#81FFA6"),
            Color::Gray | Color::Target => Some("#D7D7D7"),
            Color::Blue => Some("#81FFF9"),
            Color::Yellow => Some("#FFDD81"),
        }
    }

    /// The plain-text marker of the color, for layouts whose text does not say it already.
    fn marker(self) -> &'static str {
        match self {
            Color::None | Color::Target => "",
            Color::Red => " (r)",
            Color::Green => " (g)",
            Color::Gray => " (sla)",
            Color::Blue => " (b)",
            Color::Yellow => " (y)",
        }
    }

    /// The HTML attribute that paints the background, empty without a color.
    fn style(self) -> String {
        self.hex()
            .map_or(String::new(), |hex| format!(" style=\"background:{hex}\""))
    }
}

/// One cell: its text and background.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridCell {
    /// The printed value (`-` when not measured, `failed` when the step failed).
    pub text: String,
    /// The number, when there is one.
    pub value: Option<f64>,
    /// Background color.
    pub color: Color,
}

impl GridCell {
    /// A cell without a number.
    pub fn missing(text: &str) -> Self {
        GridCell::colored(text.to_string(), Color::None)
    }

    /// A text cell with a color.
    pub fn colored(text: String, color: Color) -> Self {
        GridCell {
            text,
            value: None,
            color,
        }
    }

    /// A number and its printed form.
    pub fn num(value: f64, text: String) -> Self {
        GridCell {
            text,
            value: Some(value),
            color: Color::None,
        }
    }
}

/// How a [`Grid`] is laid out: each report family's bytes are fixed by its golden files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// The Insert Benchmark's published tables: tab-separated text with color markers,
    /// right-aligned Markdown columns with bold or struck-through colored cells.
    #[default]
    Colored,
    /// Tables whose cell text carries its own marks (▲ ▼ ✗): space-aligned text columns,
    /// plain Markdown, notes under the title.
    Marked,
}

/// A titled table with a first column of row names: a section built once, laid out by
/// [`Grid::text`], [`Grid::markdown`], [`Grid::html`] and [`Grid::csv`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// Title.
    pub title: String,
    /// Lines under the title.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// The heading of the row-name column.
    #[serde(skip)]
    pub corner: String,
    /// Column headings after the row-name column.
    pub columns: Vec<String>,
    /// (row name, cells); a row may have fewer cells than there are columns.
    pub rows: Vec<(String, Vec<GridCell>)>,
    /// What the colors mean.
    pub legend: String,
    /// How the formats lay it out.
    #[serde(skip)]
    pub layout: Layout,
}

impl Grid {
    /// The headings with the row-name column first.
    fn header(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.corner.as_str()).chain(self.columns.iter().map(String::as_str))
    }

    /// Plain text: tab-separated with color markers ([`Layout::Colored`]), or columns aligned
    /// with spaces under the title and its notes ([`Layout::Marked`]).
    pub fn text(&self, out: &mut String) {
        match self.layout {
            Layout::Colored => {
                let _ = writeln!(out, "{}", self.title);
                let _ = writeln!(out, "{}", self.header().collect::<Vec<_>>().join("\t"));
                for (name, cells) in &self.rows {
                    let texts: Vec<String> = cells
                        .iter()
                        .map(|c| format!("{}{}", c.text, c.color.marker()))
                        .collect();
                    let _ = writeln!(out, "{name}\t{}", texts.join("\t"));
                }
                if !self.legend.is_empty() {
                    let _ = writeln!(out, "{}", self.legend);
                }
                out.push('\n');
            }
            Layout::Marked => {
                let _ = write!(out, "\n{}\n", self.title);
                for n in &self.notes {
                    let _ = writeln!(out, "  {n}");
                }
                let lines: Vec<Vec<&str>> = std::iter::once(self.header().collect())
                    .chain(self.rows.iter().map(|(name, cells)| {
                        std::iter::once(name.as_str())
                            .chain(cells.iter().map(|c| c.text.as_str()))
                            .collect()
                    }))
                    .collect();
                let cols = lines.iter().map(Vec::len).max().unwrap_or(0);
                let widths: Vec<usize> = (0..cols)
                    .map(|c| {
                        lines
                            .iter()
                            .filter_map(|r| r.get(c))
                            .map(|t| t.chars().count())
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                for r in &lines {
                    let line: Vec<String> = r
                        .iter()
                        .enumerate()
                        .map(|(i, t)| format!("{t:<w$}", w = widths[i]))
                        .collect();
                    let _ = writeln!(out, "{}", line.join("  ").trim_end());
                }
            }
        }
    }

    /// GitHub Markdown: a `###` section with right-aligned numbers, colored cells bold (gray
    /// struck through) and pipes in text turned into `/` ([`Layout::Colored`]); or a `##`
    /// section with its notes and escaped text ([`Layout::Marked`]).
    pub fn markdown(&self, out: &mut String) {
        let colored = self.layout == Layout::Colored;
        let text = |t: &str| {
            if colored {
                t.replace('|', "/")
            } else {
                md(t)
            }
        };
        if colored {
            let _ = writeln!(out, "### {}\n", text(&self.title));
        } else {
            let _ = write!(out, "## {}\n\n", text(&self.title));
        }
        for n in &self.notes {
            let _ = writeln!(out, "{}\n", text(n));
        }
        let head: Vec<String> = if colored {
            self.header().map(str::to_string).collect()
        } else {
            self.header().map(text).collect()
        };
        let _ = writeln!(out, "| {} |", head.join(" | "));
        if colored {
            let _ = writeln!(out, "|---|{}", "---:|".repeat(self.columns.len()));
        } else {
            let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
        }
        for (name, cells) in &self.rows {
            let texts: Vec<String> =
                std::iter::once(if colored { name.clone() } else { text(name) })
                    .chain(cells.iter().map(|c| {
                        let t = text(&c.text);
                        match c.color {
                            _ if !colored => t,
                            Color::None | Color::Target => t,
                            Color::Gray => format!("~~{t}~~"),
                            _ => format!("**{t}**{}", c.color.marker()),
                        }
                    }))
                    .collect();
            let _ = writeln!(out, "| {} |", texts.join(" | "));
        }
        if !self.legend.is_empty() {
            // Gray cells are struck through here, not marked "(sla)" as in text.
            let _ = writeln!(
                out,
                "\n{}",
                self.legend.replace("(sla)", "(struck through)")
            );
        }
        out.push('\n');
    }

    /// An `<h2>` section with its notes, the table with colored cells and the legend.
    pub fn html(&self, out: &mut String) {
        let _ = writeln!(out, "<h2>{}</h2>", esc(&self.title));
        for n in &self.notes {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(n));
        }
        out.push_str(match self.layout {
            Layout::Colored => "<table>\n<tr>",
            Layout::Marked => "<table><tr>",
        });
        for h in self.header() {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>\n");
        for (name, cells) in &self.rows {
            let _ = write!(out, "<tr><td>{}</td>", esc(name));
            for c in cells {
                let _ = write!(out, "<td{}>{}</td>", c.color.style(), esc(&c.text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        if !self.legend.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", esc(&self.legend));
        }
    }

    /// Comma-separated values: the header line and one line per row, texts as printed.
    pub fn csv(&self, out: &mut String) {
        let _ = writeln!(out, "{}", self.header().collect::<Vec<_>>().join(","));
        for (name, cells) in &self.rows {
            let texts: Vec<&str> = cells.iter().map(|c| c.text.as_str()).collect();
            let _ = writeln!(out, "{name},{}", texts.join(","));
        }
    }
}

/// Longest failure reason shown in a Markdown cell; the full text is in the JSON report.
const MD_REASON_CHARS: usize = 40;

/// Longest failure reason shown in an HTML cell; the full text is its tooltip.
const HTML_REASON_CHARS: usize = 60;

/// One cell of a [`Line`], as the section means it; each writer decides how it looks.
#[derive(Debug, Clone)]
pub enum Out {
    /// Text (a step label, a target name).
    Text(String),
    /// A failure's full reason: Markdown trims it (a cell is one line), HTML shows it whole
    /// in a failure cell.
    Reason(String),
    /// A step's QPS-table cell (value, failure, not run, not supported) with its decimals.
    Step(Cell, usize),
    /// A measured figure with its decimals.
    Num(f64, usize),
    /// A short word where a figure would be (`-`, `remote`).
    Word(&'static str),
    /// A relative cost (target / base): more is worse, marked by the thresholds.
    Costlier(f64),
    /// A statistic of relative QPS: colored by the thresholds in HTML, plain in Markdown.
    Shaded(f64),
    /// A share of the row's best in percent (`None`: not priced); the best is highlighted
    /// in HTML.
    Share(Option<f64>),
}

/// One row of a section's table built once for Markdown and HTML. A row whose cells stop
/// early is padded with empty cells to the table's width.
#[derive(Debug, Clone)]
pub struct Line {
    /// The cells, key columns (step, target, …) first.
    pub cells: Vec<Out>,
}

impl Line {
    /// A line whose first cells are the texts `keys`.
    pub fn keyed<const N: usize>(keys: [&str; N], cells: impl IntoIterator<Item = Out>) -> Line {
        Line {
            cells: keys
                .into_iter()
                .map(|k| Out::Text(k.to_string()))
                .chain(cells)
                .collect(),
        }
    }
}

/// The lines of one step (a row of the QPS table) under its group: HTML heads each group
/// with a row of its own.
#[derive(Debug, Clone)]
pub struct Block {
    /// The group of the step.
    pub group: Group,
    /// The step's lines, one per target that has one.
    pub lines: Vec<Line>,
}

/// The Markdown writer of [`Line`]s and cells.
pub struct Markdown<'o> {
    /// The thresholds of the marked ratios.
    pub opts: &'o ReportOptions,
}

impl Markdown<'_> {
    /// Every line of `blocks` (Markdown has no group rows).
    pub fn blocks(&self, out: &mut String, blocks: &[Block], width: usize) {
        for line in blocks.iter().flat_map(|b| &b.lines) {
            self.line(out, line, width);
        }
    }

    /// `| cell | … |` with `width` cells, empty ones after a short row (`width` 0: the
    /// line's own cells).
    pub fn line(&self, out: &mut String, line: &Line, width: usize) {
        out.push('|');
        for c in &line.cells {
            let _ = write!(out, " {} |", self.out(c));
        }
        out.push_str(&" |".repeat(width.saturating_sub(line.cells.len())));
        out.push('\n');
    }

    /// The text of one cell.
    pub fn out(&self, c: &Out) -> String {
        match *c {
            Out::Text(ref t) => md(t),
            Out::Reason(ref r) => md(r.trim()),
            Out::Step(ref c, decimals) => Markdown::cell(c, decimals, None),
            Out::Num(v, d) => number(v, d),
            Out::Word(w) => w.to_string(),
            Out::Costlier(v) => format!("{}{}", ratio(v, 2), self.threshold_marker(v)),
            Out::Shaded(v) => ratio(v, 2),
            Out::Share(p) => p.map_or_else(|| "NA".into(), |p| format!("{p:.1}")),
        }
    }

    /// One QPS-table cell; `mark` follows values (▼/▲, `?`), `†` marks an interrupted step.
    pub fn cell(c: &Cell, decimals: usize, mark: Option<&str>) -> String {
        match c {
            Cell::Value { value, interrupted } => {
                let mut s = number(*value, decimals);
                if let Some(m) = mark {
                    s.push_str(m);
                }
                if *interrupted {
                    s.push_str(" †");
                }
                s
            }
            Cell::Failed { reason } => format!("fail ({})", Markdown::reason(reason)),
            Cell::Missing => "NA".to_string(),
            Cell::NotSupported { reason } => format!("n/s ({})", Markdown::reason(reason)),
        }
    }

    /// A failure reason short and safe for a cell.
    pub fn reason(reason: &str) -> String {
        md(&shorten(reason, MD_REASON_CHARS, true))
    }

    /// The fixed-threshold marker of a relative cost (costs have no interval): ▲ costlier,
    /// ▼ cheaper.
    pub fn threshold_marker(&self, value: f64) -> &'static str {
        match beyond(value, self.opts) {
            Some(false) => " ▼",
            Some(true) => " ▲",
            None => "",
        }
    }
}

/// The HTML writer of [`Line`]s and cells.
pub struct Html<'o> {
    /// The thresholds of the colored ratios.
    pub opts: &'o ReportOptions,
}

impl Html<'_> {
    /// The `<tr>` rows of `blocks` with a group row spanning `span` columns where the group
    /// changes; `width` is the number of cells of a full row (a short row ends in one
    /// spanning empty cell). With `head_empty` a step without lines still heads its group.
    pub fn blocks(
        &self,
        out: &mut String,
        blocks: &[Block],
        span: usize,
        width: usize,
        head_empty: bool,
    ) {
        let mut last = None;
        for b in blocks {
            if b.lines.is_empty() && !head_empty {
                continue;
            }
            if last != Some(b.group) {
                last = Some(b.group);
                Html::group_row(out, b.group, span);
            }
            for line in &b.lines {
                self.line(out, line, width);
            }
        }
    }

    /// One `<tr>` row of `width` cells (`width` 0: the line's own cells).
    pub fn line(&self, out: &mut String, line: &Line, width: usize) {
        out.push_str("<tr>");
        for c in &line.cells {
            out.push_str(&self.out(c));
        }
        let rest = width.saturating_sub(line.cells.len());
        if rest > 0 {
            let _ = write!(out, "<td colspan=\"{rest}\"></td>");
        }
        out.push_str("</tr>\n");
    }

    /// The `<td>` of one cell.
    pub fn out(&self, c: &Out) -> String {
        let value = |value| Cell::Value {
            value,
            interrupted: false,
        };
        match *c {
            Out::Text(ref t) => format!("<td>{}</td>", esc(t)),
            Out::Reason(ref r) => format!("<td class=\"fail\">{}</td>", esc(r)),
            Out::Step(ref c, decimals) => Html::cell(c, decimals),
            Out::Num(v, d) => format!("<td class=\"n\">{}</td>", number(v, d)),
            Out::Word(w) => format!("<td class=\"na\">{w}</td>"),
            Out::Costlier(v) => self.td(&value(v), RATIO, Some(true)),
            Out::Shaded(v) => self.td(&value(v), RATIO, Some(false)),
            Out::Share(Some(p)) => {
                let class = if p >= 99.95 { "n hi" } else { "n" };
                format!("<td class=\"{class}\">{p:.1}</td>")
            }
            Out::Share(None) => "<td class=\"na\">NA</td>".to_string(),
        }
    }

    /// The plain `<td>` of a QPS-table cell.
    pub fn cell(c: &Cell, decimals: usize) -> String {
        Html::titled_td(c, decimals, None, None)
    }

    /// A table cell (`<td>`) for a cell; `Some(worse_high)` colors a ratio by the thresholds,
    /// with the colors inverted for costs (where more is worse).
    pub fn td(&self, c: &Cell, decimals: usize, worse_high: Option<bool>) -> String {
        let good = match c {
            Cell::Value { value, .. } => worse_high
                .and_then(|worse_high| beyond(*value, self.opts).map(|high| high != worse_high)),
            _ => None,
        };
        Html::titled_td(c, decimals, good, None)
    }

    /// A table cell with a tooltip on value cells; `good` colors a value green (`Some(true)`)
    /// or red (`Some(false)`).
    pub fn titled_td(c: &Cell, decimals: usize, good: Option<bool>, title: Option<&str>) -> String {
        match c {
            Cell::Value { value, interrupted } => {
                let class = match good {
                    Some(true) => "n hi",
                    Some(false) => "n lo",
                    None => "n",
                };
                let text = number(*value, decimals);
                let title = title.map_or(String::new(), |t| format!(" title=\"{}\"", esc(t)));
                format!(
                    "<td{title} class=\"{class}\">{text}{}</td>",
                    if *interrupted { " †" } else { "" }
                )
            }
            Cell::Failed { reason } => format!(
                "<td class=\"fail\" title=\"{}\">fail: {}</td>",
                esc(reason),
                esc(&shorten(reason, HTML_REASON_CHARS, false))
            ),
            Cell::Missing => "<td class=\"na\">NA</td>".to_string(),
            Cell::NotSupported { reason } => format!(
                "<td class=\"na\" title=\"{}\">not supported</td>",
                esc(reason)
            ),
        }
    }

    /// The row that heads a group's steps.
    pub fn group_row(out: &mut String, group: Group, span: usize) {
        let _ = writeln!(
            out,
            "<tr class=\"g\"><th colspan=\"{span}\">{} queries</th></tr>",
            group.name()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_markers_use_printed_value() {
        let o = ReportOptions::default();
        let m = Markdown { opts: &o };
        assert_eq!(m.threshold_marker(0.9504), " ▼");
        assert_eq!(m.threshold_marker(0.9551), "");
        assert_eq!(m.threshold_marker(1.0451), " ▲");
        assert_eq!(m.threshold_marker(1.0449), "");
        assert_eq!(m.threshold_marker(f64::INFINITY), " ▲");
    }

    #[test]
    fn reasons_are_short_and_safe() {
        let truncate = |r: &str| shorten(r, MD_REASON_CHARS, true);
        assert_eq!(truncate("SQLITE_BUSY"), "SQLITE_BUSY");
        let long = "a".repeat(60);
        assert_eq!(truncate(&long), format!("{}…", "a".repeat(40)));
        assert_eq!(truncate("first\nsecond"), "first…");
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(shorten("first\nsecond", HTML_REASON_CHARS, false), "first");
    }
}
