//! Renders a run directory in one format: `cargo run -p dbdelta-report --example render_run -- RUN_DIR html`.

use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: render_run RUN_DIR [FORMAT]")?;
    let format: Format = args.next().unwrap_or_else(|| "html".into()).parse()?;
    let data = ReportData::from_runs(vec![load_run(std::path::Path::new(&dir))?], None)?;
    print!("{}", render(&data, format, &ReportOptions::default())?);
    Ok(())
}
