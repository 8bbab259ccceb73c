//! The dashboard in a real browser: headless Chromium (Debian's `chromium`, installed by
//! scripts/test.sh) opens the index and a series page of a small synthetic history from
//! `file://`, offline, and
//!
//! - logs no console message on either page;
//! - on the index, the filter hides the rows that do not match;
//! - on the series page, every change point's link resolves to an evidence page that exists,
//!   and so does that page's differential flamegraph link.

mod common;

use common::synthetic::{Plant, Synthetic};
use dbdelta_dashboard::{build, Options, RunDirs};
use dbdelta_history::Filter;
use dbdelta_inference::DetectOptions;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// Added as the first element of `<head>`: collects script errors, failed loads and
/// console.error before the page's own content runs.
const PROBE_HEAD: &str = "<script>window.__errs=[];\
window.addEventListener('error',function(e){window.__errs.push(String(e.message||(e.target&&(e.target.src||e.target.href))||'error'))},true);\
var __ce=console.error;console.error=function(){window.__errs.push(Array.from(arguments).join(' '));__ce.apply(console,arguments)};</script>";

/// Added before `</body>`: resolves every link and runs the filter, then writes the result
/// into the DOM as JSON.
const PROBE_TAIL: &str = "<script>(function(){\
var r={errors:window.__errs,cp:[],links:[],rows:-1,shown:-1,charts:0};\
document.querySelectorAll('a.cp').forEach(function(a){r.cp.push(new URL(a.getAttribute('href'),document.baseURI).href)});\
document.querySelectorAll('a.evidence,a.flamegraph').forEach(function(a){r.links.push(a.href)});\
r.charts=document.querySelectorAll('svg.chart').length;\
var q=document.getElementById('q');if(q){r.rows=document.querySelectorAll('#series tbody tr').length;q.value='scan_range';q.dispatchEvent(new Event('input'));\
r.shown=Array.from(document.querySelectorAll('#series tbody tr')).filter(function(t){return t.style.display!=='none'}).length}\
var p=document.createElement('pre');p.id='dbdelta-probe';p.textContent=JSON.stringify(r);document.body.appendChild(p)})();</script>";

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
        "--window-size=1400,2000",
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

/// The console messages Chromium logged while loading `page`.
fn console(chrome: &Path, work: &Path, page: &Path) -> Vec<String> {
    let out = run_chromium(
        chrome,
        &work.join("profile-console"),
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
            url(page),
        ],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("</html>"),
        "chromium rendered nothing for {}",
        page.display()
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// Loads a probed copy of `page` (beside it, so relative links resolve the same) and returns
/// the probe's JSON.
fn probe(chrome: &Path, work: &Path, page: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).expect("page");
    let probed = html
        .replacen("<head>", &format!("<head>\n{PROBE_HEAD}"), 1)
        .replacen("</body>", &format!("{PROBE_TAIL}</body>"), 1);
    let copy = page.with_file_name("probe.html");
    std::fs::write(&copy, probed).expect("write probe page");
    let out = run_chromium(
        chrome,
        &work.join("profile-probe"),
        &["--dump-dom".into(), url(&copy)],
    );
    let _ = std::fs::remove_file(&copy);
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
    serde_json::from_str(&json).expect("probe JSON")
}

/// The file a `file://` URL names (percent-decoded), without its fragment.
fn file_of(u: &str) -> PathBuf {
    let path = u
        .strip_prefix("file://")
        .unwrap_or_else(|| panic!("not a file URL: {u}"));
    let path = path.split('#').next().unwrap_or(path);
    let mut out = Vec::new();
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&path[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8(out).expect("utf-8 path"))
}

#[test]
fn dashboard_opens_from_file_urls_without_errors_and_its_links_resolve() {
    let chrome = chromium();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-browser");
    let _ = std::fs::remove_dir_all(&work);
    let runs = work.join("runs");
    let site = work.join("site");
    let mut h = Synthetic::new(30, &["point-query_range=100", "scan_range=100"]);
    h.plant = Some(Plant {
        label: "point-query_range=100".into(),
        at: 20,
        factor: 0.8,
    });
    h.profiled = vec![19, 20];
    h.versions = vec![(0, "15.4".into()), (20, "15.5".into())];
    let points = h.write_runs(&runs);
    let opts = Options {
        filter: Filter::default(),
        detect: DetectOptions::default(),
        runs: RunDirs::new(vec![runs]),
    };
    build(&points, &site, &opts).expect("dashboard");

    let index = site.join("index.html");
    assert_eq!(console(&chrome, &work, &index), Vec::<String>::new());
    let p = probe(&chrome, &work, &index);
    assert_eq!(p["errors"], serde_json::json!([]), "index errors: {p}");
    assert_eq!(p["rows"], 2, "{p}");
    assert_eq!(
        p["shown"], 1,
        "the filter 'scan_range' leaves one series: {p}"
    );

    let page = std::fs::read_dir(site.join("series"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("pg-point-query"))
        .expect("series page");
    assert_eq!(console(&chrome, &work, &page), Vec::<String>::new());
    let p = probe(&chrome, &work, &page);
    assert_eq!(
        p["errors"],
        serde_json::json!([]),
        "series page errors: {p}"
    );
    assert_eq!(p["charts"], 5, "QPS, p95, p99, CPU/op and by version: {p}");
    let cps = p["cp"].as_array().expect("change point links");
    assert!(!cps.is_empty(), "no change point marked: {p}");
    for u in cps.iter().chain(p["links"].as_array().expect("links")) {
        let u = u.as_str().expect("url");
        let f = file_of(u);
        assert!(f.is_file(), "{u} does not resolve to a file");
    }
    assert!(
        p["links"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u.as_str().unwrap_or("").ends_with(".diff.svg")),
        "no differential flamegraph link: {p}"
    );
}
