//! `--config dbdelta.toml`: the same options as the flags, plus `[[target]]` tables.
//! `examples/dbdelta.toml` sets every key (a test keeps it so).
//!
//! ```toml
//! suite = "sysbench"
//! scale = "quick"
//! threads = [1, 4]
//! [[target]]
//! name = "wal"
//! spec = "sqlite?journal_mode=WAL&synchronous=NORMAL"
//! [[target]]
//! name = "pg15"
//! engine = "postgres"
//! path = "/usr/lib/postgresql/15/bin"
//! params = { shared_buffers = "1GB" }
//! ```

use crate::flags::ScaleArg;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The config file's content.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub suite: Option<String>,
    pub scale: Option<ScaleArg>,
    pub tables: Option<u32>,
    pub table_size: Option<u64>,
    pub threads: Option<Vec<u32>>,
    pub read_secs: Option<f64>,
    pub write_secs: Option<f64>,
    pub insert_secs: Option<f64>,
    pub warmup_secs: Option<f64>,
    pub round_warmup_secs: Option<f64>,
    pub turn_ms: Option<f64>,
    pub settle_secs: Option<f64>,
    pub steps: Option<Vec<String>>,
    pub seed: Option<u64>,
    pub prepared: Option<bool>,
    pub base: Option<String>,
    pub database: Option<String>,
    pub rate: Option<f64>,
    pub device: Option<String>,
    pub os_metrics: Option<bool>,
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetTable>,
}

/// One `[[target]]` table: either `spec` (the command-line form) or its parts.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetTable {
    pub name: String,
    pub spec: Option<String>,
    pub engine: Option<String>,
    pub path: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
}

impl TargetTable {
    /// The `NAME=SPEC` text this table stands for.
    pub fn to_spec_text(&self, file: &Path) -> Result<String> {
        let where_ = || format!("{}: [[target]] '{}'", file.display(), self.name);
        let mut text = match (&self.spec, &self.engine) {
            (Some(spec), None) => {
                if self.path.is_some() || self.url.is_some() {
                    bail!(
                        "{}: give either spec or engine/path/url, not both",
                        where_()
                    );
                }
                spec.clone()
            }
            (None, Some(engine)) => match (&self.path, &self.url) {
                (Some(_), Some(_)) => bail!("{}: give path or url, not both", where_()),
                (Some(p), None) => format!("{engine}:{p}"),
                (None, Some(u)) => {
                    let rest = u.split_once("://").map(|(_, r)| r).unwrap_or(u);
                    format!("{engine}://{rest}")
                }
                (None, None) => engine.clone(),
            },
            (Some(_), Some(_)) => bail!("{}: give either spec or engine, not both", where_()),
            (None, None) => bail!("{}: needs spec = \"ENGINE…\" or engine = \"…\"", where_()),
        };
        if !self.params.is_empty() {
            let joined: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| match v {
                    toml::Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            text.push(if text.contains('?') { '&' } else { '?' });
            text.push_str(&joined.join("&"));
        }
        Ok(format!("{}={text}", self.name))
    }
}

/// Reads and parses a config file; errors name the file and what is wrong.
pub fn load(path: &Path) -> Result<ConfigFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--config {}: cannot read the file", path.display()))?;
    parse(&text, path)
}

/// Parses the text of config file `path` (named in errors).
pub fn parse(text: &str, path: &Path) -> Result<ConfigFile> {
    toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "--config {}: invalid configuration: {}",
            path.display(),
            e.to_string().trim()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_tables_become_specs() {
        let cfg: ConfigFile = toml::from_str(
            r#"
            threads = [1, 4]
            [[target]]
            name = "wal"
            spec = "sqlite?journal_mode=WAL"
            [[target]]
            name = "pg15"
            engine = "postgres"
            path = "/usr/lib/postgresql/15/bin"
            params = { shared_buffers = "1GB", max_connections = 200 }
            "#,
        )
        .unwrap();
        let p = Path::new("x.toml");
        assert_eq!(
            cfg.targets[0].to_spec_text(p).unwrap(),
            "wal=sqlite?journal_mode=WAL"
        );
        assert_eq!(
            cfg.targets[1].to_spec_text(p).unwrap(),
            "pg15=postgres:/usr/lib/postgresql/15/bin?max_connections=200&shared_buffers=1GB"
        );
    }

    #[test]
    fn the_example_sets_every_key_and_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dbdelta.toml");
        let cfg = load(&path).expect("examples/dbdelta.toml loads");
        // Every option is set: a key added to ConfigFile without the example fails here.
        let json = serde_json::to_value(&cfg).expect("config serializes");
        let obj = json.as_object().expect("an object");
        for (key, value) in obj {
            assert!(
                !value.is_null(),
                "examples/dbdelta.toml does not set '{key}'"
            );
        }
        // Every key of [[target]] appears in some table, and every table is a valid spec.
        let mut seen = std::collections::BTreeSet::new();
        for t in &cfg.targets {
            t.to_spec_text(&path)
                .expect("the example's targets are valid");
            let v = serde_json::to_value(t).expect("target serializes");
            for (key, value) in v.as_object().expect("an object") {
                let set = match value {
                    serde_json::Value::Null => false,
                    serde_json::Value::Object(m) => !m.is_empty(),
                    _ => true,
                };
                if set {
                    seen.insert(key.clone());
                }
            }
        }
        let all = serde_json::to_value(TargetTable::default()).expect("target serializes");
        for key in all.as_object().expect("an object").keys() {
            assert!(
                seen.contains(key),
                "no [[target]] of the example sets '{key}'"
            );
        }
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(toml::from_str::<ConfigFile>("treads = [1]").is_err());
    }
}
