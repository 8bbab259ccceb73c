//! Build recipes: the compiler choices that make one build differ from another.
//!
//! A recipe is written as `key=value` pairs, the same in a target's query
//! (`postgres-build:15?cflags=-O3&lto=on`) and in `dbdelta build --recipe 'cflags=-O3&lto=on'`
//! (there `,` also separates pairs when a recipe key follows it: `cflags=-O3,lto=on`).
//!
//! | key | values | effect |
//! |---|---|---|
//! | `cflags` | compiler flags, e.g. `-O3` | replace the default `-O2` (an `-O` level is added when none is given) |
//! | `lto` | `on`, `off` | `-flto=auto` when compiling and linking |
//! | `march` | `native` or an architecture name (`x86-64-v3`) | `-march=VALUE` |
//! | `frame_pointers` | `on`, `off` | `-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer` |
//! | `pgo` | a suite name, e.g. `sysbench` | two-pass profile-guided build trained by that suite |

use sha2::{Digest, Sha256};

/// The recipe keys, in canonical (sorted) order.
pub const KEYS: &[&str] = &["cflags", "frame_pointers", "lto", "march", "pgo"];

/// Flags `frame_pointers=on` adds.
pub const FRAME_POINTER_FLAGS: &str = "-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer";

/// Characters a `cflags` value may hold: flags, values, paths; never shell syntax.
fn cflag_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '=' | '+' | ',' | '.' | ':' | '/')
}

/// How a build is compiled. `Default` is Debian-like `-O2` with nothing else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipe {
    /// Compiler flags replacing the default `-O2`, whitespace-normalized.
    pub cflags: Option<String>,
    /// Link-time optimization.
    pub lto: bool,
    /// `-march=` value (`native`, `x86-64-v3`, …).
    pub march: Option<String>,
    /// Keep frame pointers (cheap, complete `perf --call-graph fp` stacks).
    pub frame_pointers: bool,
    /// Profile-guided optimization trained by this dbdelta suite.
    pub pgo: Option<String>,
}

/// A recipe key or value that is not accepted; the message names it and the valid choices.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    /// A key that is not a recipe key.
    #[error("unknown build recipe key '{key}': the keys are {}", KEYS.join(", "))]
    UnknownKey {
        /// The key as given.
        key: String,
    },
    /// A pair without `=`.
    #[error("build recipe '{pair}' has no value: write key=value, e.g. cflags=-O3 or lto=on")]
    NoValue {
        /// The pair as given.
        pair: String,
    },
    /// A key given twice.
    #[error("build recipe key '{key}' is given twice: give it once")]
    Repeated {
        /// The key.
        key: String,
    },
    /// A value the key does not take.
    #[error("build recipe {key}={value} is invalid: {expected}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// What the key takes.
        expected: String,
    },
}

fn bad(key: &str, value: &str, expected: &str) -> RecipeError {
    RecipeError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: expected.to_string(),
    }
}

fn on_off(key: &str, value: &str) -> Result<bool, RecipeError> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(bad(key, value, "give on or off")),
    }
}

/// Whether `key` is a recipe key (the other parameters of a `postgres-build:` target are
/// server settings).
pub fn is_key(key: &str) -> bool {
    KEYS.contains(&key)
}

/// Whether `key` looks like a misspelt recipe key (`frame_pointer`, `cflag`, `march_native`),
/// which must not silently become a server setting.
pub fn near_key(key: &str) -> Option<&'static str> {
    if is_key(key) {
        return None;
    }
    let k = key.to_ascii_lowercase().replace('-', "_");
    KEYS.iter()
        .copied()
        .find(|r| k.starts_with(r) || r.starts_with(k.as_str()) || edit_distance(&k, r) <= 2)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

impl Recipe {
    /// Parses `key=value` pairs separated by `&`, or by `,` when a recipe key and `=` follow
    /// (so `cflags=-O3,lto=on` is two pairs but `cflags=-Wl,-O1` is one).
    pub fn parse(text: &str) -> Result<Recipe, RecipeError> {
        let mut pairs = Vec::new();
        for part in split_pairs(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (k, v) = part.split_once('=').ok_or_else(|| RecipeError::NoValue {
                pair: part.to_string(),
            })?;
            pairs.push((k.trim().to_string(), v.trim().to_string()));
        }
        Recipe::from_pairs(&pairs)
    }

    /// Builds a recipe from `(key, value)` pairs; every key must be a recipe key.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<Recipe, RecipeError> {
        let mut r = Recipe::default();
        let mut seen: Vec<&str> = Vec::new();
        for (k, v) in pairs {
            let key = k.as_str();
            if !is_key(key) {
                return Err(RecipeError::UnknownKey { key: k.clone() });
            }
            if seen.contains(&key) {
                return Err(RecipeError::Repeated { key: k.clone() });
            }
            seen.push(key);
            match key {
                "cflags" => r.cflags = Some(check_cflags(v)?),
                "lto" => r.lto = on_off(key, v)?,
                "frame_pointers" => r.frame_pointers = on_off(key, v)?,
                "march" => {
                    if v.is_empty()
                        || !v
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    {
                        return Err(bad(
                            key,
                            v,
                            "give native or an architecture name such as x86-64-v3",
                        ));
                    }
                    r.march = Some(v.clone());
                }
                "pgo" => {
                    if v.is_empty()
                        || !v
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                    {
                        return Err(bad(
                            key,
                            v,
                            "give the name of a built-in suite to train with, e.g. pgo=sysbench",
                        ));
                    }
                    r.pgo = Some(v.clone());
                }
                _ => return Err(RecipeError::UnknownKey { key: k.clone() }),
            }
        }
        Ok(r)
    }

    /// The recipe as sorted `key=value` pairs joined by `&`, defaults left out; `default`
    /// when nothing differs from a plain `-O2` build. Equal recipes give equal text.
    pub fn canonical(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.cflags {
            parts.push(format!("cflags={c}"));
        }
        if self.frame_pointers {
            parts.push("frame_pointers=on".to_string());
        }
        if self.lto {
            parts.push("lto=on".to_string());
        }
        if let Some(m) = &self.march {
            parts.push(format!("march={m}"));
        }
        if let Some(p) = &self.pgo {
            parts.push(format!("pgo={p}"));
        }
        if parts.is_empty() {
            "default".to_string()
        } else {
            parts.join("&")
        }
    }

    /// The compiler flags of the final build (without the PGO pass flags).
    pub fn cflags(&self) -> String {
        let mut flags = match &self.cflags {
            Some(c) if c.split_whitespace().any(|t| t.starts_with("-O")) => c.clone(),
            Some(c) => format!("-O2 {c}"),
            None => "-O2".to_string(),
        };
        if self.frame_pointers {
            flags.push(' ');
            flags.push_str(FRAME_POINTER_FLAGS);
        }
        if let Some(m) = &self.march {
            flags.push_str(&format!(" -march={m}"));
        }
        if self.lto {
            flags.push_str(" -flto=auto");
        }
        flags
    }

    /// Linker flags: LTO and PGO need the compile flags at link time too.
    pub fn ldflags(&self, cflags: &str) -> String {
        if self.lto || self.pgo.is_some() {
            cflags.to_string()
        } else {
            String::new()
        }
    }
}

/// Splits on `&`, and on `,` when the text after it starts with `KEY=` for a recipe key.
fn split_pairs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let split = match c {
            '&' => true,
            ',' => {
                let rest = &text[i + 1..];
                KEYS.iter().any(|k| {
                    rest.trim_start()
                        .strip_prefix(k)
                        .is_some_and(|r| r.starts_with('='))
                })
            }
            _ => false,
        };
        if split {
            out.push(&text[start..i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out
}

/// Validates `cflags`: compiler flags only, no shell syntax, whitespace normalized.
fn check_cflags(v: &str) -> Result<String, RecipeError> {
    if let Some(c) = v.chars().find(|c| !cflag_char_ok(*c)) {
        return Err(bad(
            "cflags",
            v,
            &format!(
                "'{}' is not allowed (no shell metacharacters or quotes): give compiler flags such as -O3 or '-O2 -fno-plt'",
                c.escape_default()
            ),
        ));
    }
    let tokens: Vec<&str> = v.split_whitespace().collect();
    if tokens.is_empty() {
        return Err(bad("cflags", v, "give compiler flags such as -O3"));
    }
    if let Some(t) = tokens.iter().find(|t| !t.starts_with('-')) {
        return Err(bad(
            "cflags",
            v,
            &format!("'{t}' is not a compiler flag: each flag starts with '-'"),
        ));
    }
    Ok(tokens.join(" "))
}

/// The first 12 hex digits of SHA-256 over the parts, each on its own line. Stable across
/// runs and versions of dbdelta (the cache key).
pub fn hash12(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    crate::hex(&h.finalize()[..6])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_separators() {
        let a = Recipe::parse("cflags=-O3&lto=on").unwrap();
        let b = Recipe::parse("cflags=-O3,lto=on").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.cflags.as_deref(), Some("-O3"));
        assert!(a.lto);
        // A comma inside a flag stays in the flag.
        let c = Recipe::parse("cflags=-O2 -Wl,-O1").unwrap();
        assert_eq!(c.cflags.as_deref(), Some("-O2 -Wl,-O1"));
    }

    #[test]
    fn canonical_is_sorted_and_skips_defaults() {
        let a = Recipe::parse("pgo=sysbench&lto=on&frame_pointers=on&cflags=-O3").unwrap();
        let b = Recipe::parse("cflags=-O3 ,frame_pointers=yes,lto=on,pgo=sysbench").unwrap();
        assert_eq!(
            a.canonical(),
            "cflags=-O3&frame_pointers=on&lto=on&pgo=sysbench"
        );
        assert_eq!(a.canonical(), b.canonical());
        assert_eq!(Recipe::parse("lto=off").unwrap().canonical(), "default");
        assert_eq!(Recipe::parse("").unwrap().canonical(), "default");
        assert_eq!(
            Recipe::parse("cflags=-O3   -fno-plt").unwrap().canonical(),
            "cflags=-O3 -fno-plt"
        );
    }

    #[test]
    fn hash_is_stable() {
        // A fixed value: changing it invalidates every user's build cache.
        assert_eq!(hash12(&["a", "b"]), hash12(&["a", "b"]));
        assert_eq!(hash12(&["a", "b"]).len(), 12);
        assert_eq!(
            hash12(&["debian:postgresql-15=15.18", "default"]),
            "96d16350a6b1"
        );
        assert_ne!(hash12(&["ab", ""]), hash12(&["a", "b"]));
        let x = Recipe::parse("lto=on&cflags=-O3").unwrap().canonical();
        let y = Recipe::parse("cflags=-O3,lto=on").unwrap().canonical();
        assert_eq!(hash12(&[&x]), hash12(&[&y]));
    }

    #[test]
    fn flags() {
        let r = Recipe::parse("cflags=-O3&frame_pointers=on&march=native&lto=on").unwrap();
        assert_eq!(
            r.cflags(),
            "-O3 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -march=native -flto=auto"
        );
        assert_eq!(r.ldflags(&r.cflags()), r.cflags());
        assert_eq!(Recipe::default().cflags(), "-O2");
        assert_eq!(Recipe::default().ldflags("-O2"), "");
        assert_eq!(
            Recipe::parse("cflags=-fno-plt").unwrap().cflags(),
            "-O2 -fno-plt"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        for (text, needle) in [
            ("cflags=-O3;rm -rf /", "cflags"),
            ("cflags=-O3 $(id)", "cflags"),
            ("cflags=O3", "cflags"),
            ("cflags=", "cflags"),
            ("lto=maybe", "lto"),
            ("frame_pointers=2", "frame_pointers"),
            ("march=", "march"),
            ("pgo=../x", "pgo"),
        ] {
            let e = Recipe::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let e = Recipe::parse("opt=3").unwrap_err().to_string();
        assert!(
            e.contains("'opt'") && e.contains("cflags, frame_pointers, lto, march, pgo"),
            "{e}"
        );
        assert!(matches!(
            Recipe::parse("lto"),
            Err(RecipeError::NoValue { .. })
        ));
        assert!(matches!(
            Recipe::parse("lto=on&lto=off"),
            Err(RecipeError::Repeated { .. })
        ));
    }

    #[test]
    fn near_keys() {
        assert_eq!(near_key("frame_pointer"), Some("frame_pointers"));
        assert_eq!(near_key("cflag"), Some("cflags"));
        assert_eq!(near_key("frame-pointers"), Some("frame_pointers"));
        assert_eq!(near_key("shared_buffers"), None);
        assert_eq!(near_key("work_mem"), None);
        assert_eq!(near_key("lto"), None);
    }
}
