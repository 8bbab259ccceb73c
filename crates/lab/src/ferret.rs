//! Managed FerretDB targets (`NAME=ferretdb:?backend=sqlite`): FerretDB is built (or found
//! in the build cache) before anything runs, with the build's phases shown, so a cold
//! build's minutes never count against a target's start.

use crate::error::LabError;
use crate::plan::Target;
use crate::progress::{BuildEvent, LabProgress};
use dbdelta_ferretdb::kind::for_spec;
use dbdelta_ferretdb::spec::ENGINE;
use dbdelta_ferretdb::FerretSpec;
use dbdelta_source_build::Event;

/// Builds the FerretDB of every `ferretdb:` target (a cache hit is instant).
pub fn materialize(targets: &[Target], progress: &dyn LabProgress) -> Result<(), LabError> {
    for t in targets.iter().filter(|t| t.engine == ENGINE) {
        let ferret = FerretSpec::parse(t).map_err(LabError::Target)?;
        let mut open = false;
        let mut on = |e: Event<'_>| match e {
            Event::Note(s) => progress.build(BuildEvent::Note(s)),
            Event::PhaseStarted(p) => {
                progress.build(BuildEvent::PhaseStarted(p));
                open = true;
            }
            Event::PhaseDone(_, took) => {
                progress.build(BuildEvent::PhaseDone(took));
                open = false;
            }
        };
        let built = for_spec(&ferret, None, &mut on);
        if open {
            progress.build(BuildEvent::PhaseFailed);
        }
        let built = built.map_err(|e| LabError::BuildTarget {
            target: t.name.clone(),
            source: Box::new(LabError::Input(e.to_string())),
        })?;
        progress.note(&format!(
            "[{}] FerretDB {}: {}",
            t.name,
            built.info.version,
            built.binary.display()
        ));
    }
    Ok(())
}
