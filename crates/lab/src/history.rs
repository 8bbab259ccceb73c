//! The results history: which store a command uses, and indexing a run directory in it.

use crate::error::LabError;
use dbdelta_history::{open_store, points_of_run, Store};
use dbdelta_report::load_run;
use std::path::Path;

/// The store a command uses: the flag, else `$DBDELTA_STORE`, else the default file.
pub fn store_spec(flag: Option<&str>) -> Result<String, LabError> {
    if let Some(s) = flag {
        return Ok(s.to_string());
    }
    if let Some(s) = std::env::var("DBDELTA_STORE")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Ok(s);
    }
    Ok(dbdelta_history::default_store_path()?
        .to_string_lossy()
        .into_owned())
}

/// Opens the store of [`store_spec`].
/// A SQLite file named by `--store` or `$DBDELTA_STORE` must be in a directory that exists:
/// a typo is refused (naming the flag), not created; only the default file's directory is.
pub fn open(flag: Option<&str>) -> Result<Box<dyn Store>, LabError> {
    let spec = store_spec(flag)?;
    let is_url = spec.starts_with("postgres://") || spec.starts_with("postgresql://");
    if !is_url {
        let chosen = flag.is_some()
            || std::env::var("DBDELTA_STORE")
                .ok()
                .is_some_and(|s| !s.is_empty());
        if let Some(dir) = Path::new(&spec)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            if chosen && !dir.is_dir() {
                let from = if flag.is_some() {
                    "--store"
                } else {
                    "$DBDELTA_STORE"
                };
                return Err(crate::error::input!(
                    "{from} {spec}: directory {} does not exist; give a file in an existing \
                     directory (or create it first)",
                    dir.display()
                ));
            }
        }
    }
    open_store(&spec, &crate::registry::history_connection)
        .map_err(|e| LabError::HistoryOpen(Box::new(e.into())))
}

/// Indexes run directory `dir` in `store`: (results of the run, results newly added).
pub fn index_dir(store: &mut dyn Store, dir: &Path) -> Result<(usize, usize), LabError> {
    let run = load_run(dir)?;
    let id = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    let points = points_of_run(&id, &run.manifest, &run.results);
    let added = store.add(&points)?;
    Ok((points.len(), added))
}

/// Indexes a finished run in the history of `flag` (see [`store_spec`]): the results
/// indexed and the store's description.
pub fn index_run(flag: Option<&str>, dir: &Path) -> Result<(usize, String), LabError> {
    let mut s = open(flag)?;
    let (n, _) = index_dir(s.as_mut(), dir)?;
    Ok((n, s.describe()))
}
