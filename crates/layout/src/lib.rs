//! The shape of the source tree, checked as a test: which module of a crate uses which.
//!
//! Each crate's modules are its files (`lib.rs`, `foo.rs`, `foo/mod.rs`, `foo/bar.rs`); an edge
//! A → B means A names a path (`use crate::b::…`, `super::b::…`, or an inline `crate::b::f()`)
//! that lands in B. References up to an ancestor (`use super::*`, `use crate::Item` from a
//! child) are the tree itself, not a dependency, and are left out; a re-export in an ancestor
//! (`pub use b::Item`) is followed to the module that defines the item, so a sibling reached
//! through its parent's facade still counts. Test code (`#[cfg(test)]` modules) is left out.
//! A cycle is two or more files that reach each other: the smallest unit one cannot read
//! without the other.

#![deny(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module of a crate: its path from the crate root (`[]` for `lib.rs`/`main.rs`) and its
/// source with comments and test modules removed.
#[derive(Debug, Clone)]
pub struct Module {
    /// The module path below the crate root, e.g. `["mux", "event_loop"]`.
    pub path: Vec<String>,
    /// The file it was read from.
    pub file: PathBuf,
    /// Source text without comments, string contents and `#[cfg(test)]` modules.
    pub code: String,
}

/// A crate's modules and the edges between them.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Modules by path.
    pub modules: BTreeMap<Vec<String>, Module>,
    /// Edges from a module to the modules it uses (ancestors excluded).
    pub edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

/// Reads every `.rs` file under `src` and maps it to its module path.
pub fn read_modules(src: &Path) -> std::io::Result<Vec<Module>> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let Some(last) = parts.pop() else { continue };
        let stem = last.trim_end_matches(".rs").to_string();
        // Binaries under src/bin are crates of their own.
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
            parts.push(stem);
        }
        let text = std::fs::read_to_string(&file)?;
        out.push(Module {
            path: parts,
            file,
            code: strip(&text),
        });
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// Removes comments, the contents of string and char literals, and every item marked
/// `#[cfg(test)]` (with its braces), so that only production code is read.
pub fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
            && !ident_before(b, i)
        {
            // Raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\'') or a lifetime ('a): only literals are skipped.
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            // Multi-byte UTF-8 is copied whole.
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    drop_test_items(&out)
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Cuts each `#[cfg(test)]` item: from the attribute to the end of the item's braces (or its
/// `;`).
fn drop_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let b = after.as_bytes();
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, &c) in b.iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a module names that starts with `crate`, `super` or `self` (inside `use` trees
/// too), as segments with the leading keyword resolved against the module's own path.
pub fn named_paths(module: &Module) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let code = &module.code;
    // `use` trees: expanded to their leaves.
    for stmt in use_statements(code) {
        let mut leaves = Vec::new();
        expand_use(&stmt, Vec::new(), &mut leaves);
        for leaf in leaves {
            if let Some(p) = resolve(&module.path, &leaf) {
                out.push(p);
            }
        }
    }
    // Inline paths: crate::a::b, super::a, self::a.
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':') && is_ident(chars[i]) {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                segs.push(chars[s..j].iter().collect::<String>());
                if j + 2 < chars.len()
                    && chars[j] == ':'
                    && chars[j + 1] == ':'
                    && is_ident(chars[j + 2])
                {
                    j += 2;
                } else {
                    break;
                }
            }
            if segs.len() > 1 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
                if let Some(p) = resolve(&module.path, &segs) {
                    out.push(p);
                }
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The text of every `use …;` statement (with `pub`/`pub(crate)` forms), without `use` and `;`.
fn use_statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while let Some(k) = code[i..].find("use ") {
        let at = i + k;
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        if word_start {
            if let Some(end) = code[at..].find(';') {
                out.push(code[at + 4..at + end].to_string());
                i = at + end;
                continue;
            }
        }
        i = at + 4;
    }
    out
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its leaf paths.
fn expand_use(tree: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    let tree = tree.strip_prefix("::").unwrap_or(tree);
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let mut base = prefix.clone();
        base.extend(
            head.split("::")
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().to_string()),
        );
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        for part in split_top(inner) {
            expand_use(&part, base.clone(), out);
        }
    } else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        let mut p = prefix;
        p.extend(
            path.split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
        );
        out.push(p);
    }
}

fn split_top(inner: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// Resolves a path's leading `crate`/`super`/`self` against the module it stands in; other
/// paths (external crates, `std`) give `None`.
fn resolve(here: &[String], segs: &[String]) -> Option<Vec<String>> {
    let mut segs = segs.iter();
    let first = segs.next()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let mut b = here.to_vec();
            b.pop()?;
            b
        }
        _ => return None,
    };
    for s in segs {
        if s == "super" {
            base.pop()?;
        } else if s != "self" && s != "*" {
            base.push(s.clone());
        }
    }
    Some(base)
}

impl ModuleGraph {
    /// Builds the graph of one crate from its `src` directory.
    pub fn of_crate(src: &Path) -> std::io::Result<ModuleGraph> {
        let mut g = ModuleGraph::default();
        for m in read_modules(src)? {
            g.modules.insert(m.path.clone(), m);
        }
        let reexports = g.reexports();
        let paths: Vec<Vec<String>> = g.modules.keys().cloned().collect();
        for from in &paths {
            let module = &g.modules[from];
            let mut to = BTreeSet::new();
            for p in named_paths(module) {
                let target = g.land(&p, &reexports, 0);
                if &target != from && !is_ancestor(&target, from) {
                    to.insert(target);
                }
            }
            g.edges.insert(from.clone(), to);
        }
        Ok(g)
    }

    /// `pub use` re-exports of each module: (module, item name) → the full path it points to.
    fn reexports(&self) -> BTreeMap<(Vec<String>, String), Vec<String>> {
        let mut out = BTreeMap::new();
        for (path, m) in &self.modules {
            // Only `pub use` statements re-export.
            let code = &m.code;
            let mut i = 0;
            while let Some(k) = code[i..].find("pub") {
                let at = i + k;
                let rest = &code[at + 3..];
                let rest_trim = rest.trim_start();
                let rest_trim = if rest_trim.starts_with('(') {
                    rest_trim
                        .find(')')
                        .map_or("", |e| rest_trim[e + 1..].trim_start())
                } else {
                    rest_trim
                };
                if let Some(body) = rest_trim.strip_prefix("use ") {
                    if let Some(end) = body.find(';') {
                        let mut leaves = Vec::new();
                        expand_use(&body[..end], Vec::new(), &mut leaves);
                        for leaf in leaves {
                            let Some(name) = leaf.last().cloned() else {
                                continue;
                            };
                            let name = body[..end]
                                .split(" as ")
                                .nth(1)
                                .map(|a| a.trim().trim_end_matches('}').trim().to_string())
                                .filter(|a| leaf.len() == 1 || !a.contains(','))
                                .unwrap_or(name);
                            let full = match leaf.first().map(String::as_str) {
                                Some("crate" | "super" | "self") => resolve(path, &leaf),
                                // `pub use child::X` is relative to this module (2018 paths
                                // resolve a local module first).
                                Some(first) if self.modules.contains_key(&child(path, first)) => {
                                    let mut full = path.clone();
                                    full.extend(leaf.iter().cloned());
                                    Some(full)
                                }
                                _ => None,
                            };
                            if let Some(full) = full {
                                out.insert((path.clone(), name), full);
                            }
                        }
                    }
                }
                i = at + 3;
            }
        }
        out
    }

    /// The module a full path lands in: the longest prefix that is a module, following a
    /// re-export when the next segment is an item re-exported there.
    fn land(
        &self,
        p: &[String],
        reexports: &BTreeMap<(Vec<String>, String), Vec<String>>,
        depth: usize,
    ) -> Vec<String> {
        let mut best = Vec::new();
        for n in (0..=p.len()).rev() {
            if self.modules.contains_key(&p[..n]) {
                best = p[..n].to_vec();
                break;
            }
        }
        if depth < 8 {
            if let Some(next) = p.get(best.len()) {
                if let Some(full) = reexports.get(&(best.clone(), next.clone())) {
                    let mut target = full.clone();
                    target.extend(p[best.len() + 1..].iter().cloned());
                    return self.land(&target, reexports, depth + 1);
                }
            }
        }
        best
    }

    /// The strongly connected groups of two or more modules (Tarjan), each sorted.
    pub fn cycles(&self) -> Vec<Vec<Vec<String>>> {
        let nodes: Vec<&Vec<String>> = self.modules.keys().collect();
        let index_of: BTreeMap<&Vec<String>, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let adj: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.edges
                    .get(*n)
                    .map(|s| s.iter().filter_map(|t| index_of.get(t).copied()).collect())
                    .unwrap_or_default()
            })
            .collect();
        let mut t = Tarjan {
            adj: &adj,
            index: vec![None; nodes.len()],
            low: vec![0; nodes.len()],
            on: vec![false; nodes.len()],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in 0..nodes.len() {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        let mut out: Vec<Vec<Vec<String>>> = t
            .out
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<Vec<String>> = c.into_iter().map(|i| nodes[i].clone()).collect();
                c.sort();
                c
            })
            .collect();
        out.sort();
        out
    }
}

fn child(path: &[String], name: &str) -> Vec<String> {
    let mut c = path.to_vec();
    c.push(name.to_string());
    c
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() < b.len() && b.starts_with(a)
}

struct Tarjan<'a> {
    adj: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    out: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on[v] = true;
        for &w in &self.adj[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on[w] => self.low[v] = self.low[v].min(iw),
                _ => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            self.out.push(comp);
        }
    }
}

/// Renders a module path for messages: `crate` for the root, else `a::b`.
pub fn show(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}
