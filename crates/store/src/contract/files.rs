//! The files' contract: versions, pages and passages.

use super::fixtures::*;
use crate::{Engine, Error, StoreExt};
use tm_model::files::FileAdded;

/// The same bytes store nothing, other bytes replace, a removal marks; the
/// current version's pages become passages that full text finds.
pub fn files_are_versioned_and_split_into_passages(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/files");
    let pages = vec!["# Osmosis\nOsmosis moves water across a membrane.".to_string()];
    let first = store
        .write(|tx| tx.add_file(&s, "cells.md", b"v1", "markdown", &pages, t(1, 0)))
        .unwrap();
    let FileAdded::New {
        version: v1,
        replaced: None,
    } = first
    else {
        panic!("a first upload is a new version: {first:?}")
    };
    assert_eq!((v1.version, v1.pages), (1, 1));
    let same = store
        .write(|tx| tx.add_file(&s, "cells.md", b"v1", "markdown", &pages, t(1, 5)))
        .unwrap();
    assert!(matches!(same, FileAdded::Unchanged(_)), "{same:?}");
    assert_eq!(store.pages(v1.id).unwrap(), pages);
    let passages = store.version_passages(v1.id).unwrap();
    assert_eq!(passages.len(), 1);
    assert_eq!((passages[0].1.page, passages[0].1.line), (1, 1));
    let hits = store
        .passage_hits(&s, &["osmosis".to_string()], 10)
        .unwrap();
    assert_eq!(
        hits.iter().map(|h| h.0).collect::<Vec<_>>(),
        [passages[0].0]
    );
    assert!(hits[0].1 > 0.0, "scores are positive: {hits:?}");

    let pages2 = vec!["# Diffusion\nDiffusion spreads solutes.".to_string()];
    let second = store
        .write(|tx| tx.add_file(&s, "cells.md", b"v2", "markdown", &pages2, t(2, 0)))
        .unwrap();
    let FileAdded::New {
        version: v2,
        replaced: Some(old),
    } = second
    else {
        panic!("other bytes replace: {second:?}")
    };
    assert_eq!((old, v2.version), (v1.id, 2));
    let versions = store.file_versions(&s).unwrap();
    assert_eq!(versions.len(), 2);
    assert!(versions[0].replaced_at.is_some() && versions[1].is_current());
    assert!(
        store
            .passage_hits(&s, &["osmosis".to_string()], 10)
            .unwrap()
            .is_empty(),
        "a replaced version is no longer the material"
    );
    assert_eq!(store.current_passages(&s).unwrap().len(), 1);
    let removed = store
        .write(|tx| tx.remove_file(&s, "cells.md", t(3, 0)))
        .unwrap();
    assert!(removed.removed_at.is_some());
    assert!(store.current_passages(&s).unwrap().is_empty());
    assert_eq!(
        store.current_version(&s, "cells.md").unwrap().map(|v| v.id),
        Some(v2.id)
    );
    let gone = store.write(|tx| tx.remove_file(&s, "nothing.md", t(3, 0)));
    assert!(matches!(gone, Err(Error::UnknownFile { .. })), "{gone:?}");
}
