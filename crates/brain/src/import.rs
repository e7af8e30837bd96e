//! Importing a history file (docs/formats.md, v1): parsed whole, then recorded
//! through the one record path ([`crate::record`]) in one transaction.
//! A file imported before (same bytes) is recognised at once; a longer
//! version of it adds only its new events.

use crate::history;
use crate::record::{Indexing, Paths, Recorded, Source, Target, record};
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::Path;
use tm_store::{Owner, Store};

/// Imports a history file from disk. File events with a `path` are read
/// relative to the history file's folder and confined to it.
pub fn import_file(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    path: &Path,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    import_file_with(store, ix, path, false, None, progress)
}

/// [`import_file`], with `outside` letting a file event's `path` lead out of
/// the history's folder (the operator's `import --allow-outside`), and
/// `owner` saying whose learner the history's subject is (`None`: the one
/// owner with a live subject of that name, else the operator's).
pub fn import_file_with(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    path: &Path,
    outside: bool,
    owner: Option<Owner>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    // A bare name's parent is empty: `record` reads that as the current folder.
    let base = path.parent().unwrap_or(Path::new("."));
    let paths = if outside {
        Paths::Anywhere(base)
    } else {
        Paths::Beside(base)
    };
    import_bytes_as(
        store,
        ix,
        &path.display().to_string(),
        &bytes,
        paths,
        owner,
        progress,
    )
}

/// Imports a history given as bytes; `source` names it in errors and in the
/// import record, `paths` says where its files' paths may lead (a folder
/// given as `Some` confines them to it; `None` refuses them).
pub fn import_bytes<'p>(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    source: &str,
    bytes: &[u8],
    paths: impl Into<Paths<'p>>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    import_bytes_as(store, ix, source, bytes, paths, None, progress)
}

/// [`import_bytes`] into `owner`'s learner (`None`: the one owner with a
/// live subject of that name, else the operator's).
pub fn import_bytes_as<'p>(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    source: &str,
    bytes: &[u8],
    paths: impl Into<Paths<'p>>,
    owner: Option<Owner>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    let history = history::parse(source, bytes)?;
    let src = Source {
        name: source.to_string(),
        sha256: hex::encode(Sha256::digest(bytes)),
    };
    record(
        store,
        ix,
        Target::Line(&history.subject, owner),
        &history.events,
        paths.into(),
        Some(&src),
        progress,
    )
    .map_err(|e| history.at_line(source, e))
}
