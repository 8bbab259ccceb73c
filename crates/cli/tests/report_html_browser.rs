//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
//! scripts/test.sh) opens `dbdelta report --format html` of the committed fixture run (it has
//! known regressions, improvements and failed steps) from a file, offline, and
//!
//! - takes a screenshot, kept at `<target>/tmp/report-html-browser/report.png` (the path is
//!   printed, for CI artifacts);
//! - logs no console message (the page has no scripts; any message is an error);
//! - in a copy of the page with a probe script added, every chart SVG has a non-zero size,
//!   red and green cells exist and are colored, and no resource failed to load.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// Added as the first element of `<head>`: collects errors (script errors, failed
/// resource loads, console.error) before the page's own content runs.
const PROBE_HEAD: &str = "<script>window.__errs=[];\
window.addEventListener('error',function(e){window.__errs.push(String(e.message||(e.target&&(e.target.src||e.target.href))||'error'))},true);\
var __ce=console.error;console.error=function(){window.__errs.push(Array.from(arguments).join(' '));__ce.apply(console,arguments)};</script>";

/// Added before `</body>`: writes the measurements into the DOM as JSON.
const PROBE_TAIL: &str = "<script>(function(){\
var r={charts:[],lo:0,hi:0,fail:0,lo_bg:'',hi_bg:'',overlaps:[],legends:0,errors:window.__errs};\
function hit(a,b){return a.left<b.right&&a.right>b.left&&a.top<b.bottom&&a.bottom>b.top}\
document.querySelectorAll('svg.chart').forEach(function(s){var t=s.querySelector('text[y=\"13\"][font-weight=bold]');if(!t)return;var tb=t.getBoundingClientRect();\
s.querySelectorAll('rect[height=\"3\"]').forEach(function(x){r.legends++;[x,x.nextElementSibling].forEach(function(e){if(e&&hit(e.getBoundingClientRect(),tb)){r.overlaps.push(t.textContent+': '+e.textContent)}})})});\
document.querySelectorAll('svg.chart').forEach(function(s){var b=s.getBoundingClientRect();r.charts.push([b.width,b.height])});\
r.lo=document.querySelectorAll('td.lo').length;r.hi=document.querySelectorAll('td.hi').length;\
r.fail=document.querySelectorAll('td.fail').length;\
var lo=document.querySelector('td.lo');if(lo){r.lo_bg=getComputedStyle(lo).backgroundColor}\
var hi=document.querySelector('td.hi');if(hi){r.hi_bg=getComputedStyle(hi).backgroundColor}\
var p=document.createElement('pre');p.id='dbdelta-probe';p.textContent=JSON.stringify(r);document.body.appendChild(p)})();</script>";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/sysbench-3t")
}

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(p) = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        }) {
            return p;
        }
    }
    panic!(
        "headless Chromium is needed for this test and was not found on PATH: install it \
         (Debian/Ubuntu: apt-get install chromium; scripts/test.sh does this)"
    );
}

/// Runs Chromium headless with a fresh profile directory; kills it after two minutes.
fn run_chromium(chrome: &Path, profile: &Path, args: &[String]) -> Output {
    let mut cmd = std::process::Command::new(chrome);
    cmd.args([
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("start chromium");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("chromium output"),
        Err(_) => {
            // Only the browser this test started.
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
            panic!("chromium did not finish within 120 s: {args:?}");
        }
    }
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let chrome = chromium();
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html-browser");
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).expect("mkdir");
    let page = out_dir.join("report.html");
    Command::cargo_bin("dbdelta")
        .expect("binary")
        .arg("report")
        .arg(fixture())
        .args(["--format", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).expect("report written");

    // 1. Screenshot of the page as written, with Chromium's console logging on.
    let shot = out_dir.join("report.png");
    let out = run_chromium(
        &chrome,
        &out_dir.join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,3000".into(),
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            url(&page),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {} ({e}); chromium said:\n{stderr}",
            shot.display()
        )
    });
    assert!(png.starts_with(b"\x89PNG"), "not a PNG: {}", shot.display());
    assert!(
        png.len() > 20_000,
        "screenshot looks empty: {} bytes",
        png.len()
    );
    println!("report screenshot: {}", shot.display());
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    // 2. The probed copy: sizes, colors and errors, read back from the DOM.
    let probed = html
        .replacen("<head>", &format!("<head>\n{PROBE_HEAD}"), 1)
        .replacen("</body>", &format!("{PROBE_TAIL}</body>"), 1);
    let probe_page = out_dir.join("probe.html");
    std::fs::write(&probe_page, probed).expect("write probe page");
    let out = run_chromium(
        &chrome,
        &out_dir.join("profile-probe"),
        &[
            "--window-size=1400,3000".into(),
            "--dump-dom".into(),
            url(&probe_page),
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"dbdelta-probe\">")
        .unwrap_or_else(|| panic!("probe did not run; DOM:\n{}", &dom[..dom.len().min(2000)]));
    let json = &dom[start + "<pre id=\"dbdelta-probe\">".len()..];
    let json = &json[..json.find("</pre>").expect("probe end")];
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let probe: serde_json::Value = serde_json::from_str(&json).expect("probe JSON");

    assert_eq!(probe["errors"], serde_json::json!([]), "page errors");
    let charts = probe["charts"].as_array().expect("charts");
    // Two relative-QPS charts (dop 1 and 4) and one throughput-vs-threads chart per step.
    assert!(charts.len() >= 3, "charts: {charts:?}");
    for (i, c) in charts.iter().enumerate() {
        let (w, h) = (c[0].as_f64().unwrap_or(0.0), c[1].as_f64().unwrap_or(0.0));
        assert!(w > 50.0 && h > 50.0, "chart {i} has size {w}x{h}");
    }
    // Line-chart legends never overlap their chart's title.
    assert!(
        probe["legends"].as_u64().unwrap_or(0) >= 3,
        "no chart legends found: {probe}"
    );
    assert_eq!(
        probe["overlaps"],
        serde_json::json!([]),
        "legend over title"
    );
    // The fixture: wal is slower on range steps and faster on writes; two steps failed.
    assert!(
        probe["lo"].as_u64().unwrap_or(0) > 0,
        "no red cells: {probe}"
    );
    assert!(
        probe["hi"].as_u64().unwrap_or(0) > 0,
        "no green cells: {probe}"
    );
    assert!(
        probe["fail"].as_u64().unwrap_or(0) >= 2,
        "failed cells: {probe}"
    );
    assert_eq!(
        probe["lo_bg"], "rgb(244, 199, 195)",
        "red cells are colored"
    );
    assert_eq!(
        probe["hi_bg"], "rgb(198, 239, 206)",
        "green cells are colored"
    );
}
