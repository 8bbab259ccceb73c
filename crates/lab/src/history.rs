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
pub fn open(flag: Option<&str>) -> Result<Box<dyn Store>, LabError> {
    let spec = store_spec(flag)?;
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
