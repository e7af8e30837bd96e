//! Passage retrieval over a subject's current files.

use crate::common;

use tm_brain::passages::{embed_missing, passages};
use tm_embed::HashEmbedder;

const HISTORY: &str = r####"{"type":"subject","learner":"ana","subject":"bio","title":"Bio"}
{"type":"file","at":"2026-03-02T09:00:00Z","name":"cells.md","content":"# Cells\n\n## Osmosis\nOsmosis is the diffusion of water across a membrane.\nWater moves toward more dissolved particles.\n\n## Ribosomes\nRibosomes build proteins from amino acids.\n"}
{"type":"file","at":"2026-03-02T09:01:00Z","name":"old.md","content":"## Photosynthesis\nPhotosynthesis turns light into sugar in the chloroplast.\n"}
{"type":"file","at":"2026-03-03T09:00:00Z","name":"cells.md","content":"# Cells v2\n\n## Ribosomes\nRibosomes build proteins; they read messenger RNA.\n"}
{"type":"file_removed","at":"2026-03-04T09:00:00Z","name":"old.md"}
{"type":"file","at":"2026-03-05T09:00:00Z","name":"energy.md","content":"## Mitochondria\nMitochondria release energy from glucose as ATP.\n"}
"####;

#[test]
fn retrieval_quotes_current_files_with_page_and_line() {
    let mut store = common::memory();
    common::import(&mut *store, HISTORY).unwrap();
    let subject = common::subject(&*store, "ana/bio");
    let e = HashEmbedder::new();
    // The record path embedded every passage of the versions it stored:
    // nothing is left for a catch-up.
    assert_eq!(
        embed_missing(&mut *store, &e, &subject, &mut |_| {}).unwrap(),
        0
    );

    let got = passages(&*store, &e, &subject, "What do ribosomes build?", 3).unwrap();
    assert_eq!(got[0].file, "cells.md");
    assert!(got[0].text.contains("messenger RNA"), "{got:?}");
    assert_eq!((got[0].page, got[0].line), (1, 3));
    // The replaced version and the removed file are not the material any more.
    let osmosis = passages(&*store, &e, &subject, "osmosis water", 5).unwrap();
    assert!(
        osmosis.iter().all(|p| !p.text.contains("Osmosis")),
        "{osmosis:?}"
    );
    let photo = passages(&*store, &e, &subject, "photosynthesis chloroplast", 5).unwrap();
    assert!(
        photo.iter().all(|p| !p.text.contains("chloroplast")),
        "{photo:?}"
    );
    let atp = passages(&*store, &e, &subject, "Where does ATP come from?", 1).unwrap();
    assert!(atp[0].text.contains("Mitochondria"), "{atp:?}");
}
