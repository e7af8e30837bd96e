//! Memory as citation through the brain (SPEC §7): the recalled memories are
//! saved on the answer, a true "in July we …" is traced to the July memory
//! (not read as "not in your notes"), and the stance is saved.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use tm_brain::Brain;
use tm_brain::grounding::{saved_grounding, saved_recalled};
use tm_embed::HashEmbedder;
use tm_model::grounding::{Passage, Source, Stance};
use tm_store::Store;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn sample(dir: &std::path::Path) -> Brain {
    let db = dir.join("g.db");
    let mut store = Store::open(&db).unwrap();
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    ));
    tm_brain::import::import_file(&mut store, path, &mut |_, _| {}).unwrap();
    drop(store);
    let brain = Brain::open(db, Arc::new(HashEmbedder::new())).unwrap();
    brain.embed_missing("ana/cell-biology").unwrap();
    brain
}

const ANSWER: &str = "In July we covered that eukaryotic cells contain a nucleus and membrane-bound organelles. \
    Ribosomes build proteins from amino acids. \
    Plants also have chloroplasts that turn light into sugar. Anything else?";

#[test]
fn an_answer_keeps_its_memories_and_its_claims_are_traced_to_them_and_to_file_lines() {
    let dir = tempfile::tempdir().unwrap();
    let brain = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let block = brain
        .block("ana/cell-biology", "What did we cover in July?", now, None)
        .unwrap();
    let recalled: Vec<i64> = block.recalled.iter().map(|r| r.id).collect();
    assert!(!recalled.is_empty());
    let cells = {
        let subject = brain.subject("ana/cell-biology").unwrap();
        let store = brain.store().unwrap();
        store
            .file_versions(&subject)
            .unwrap()
            .into_iter()
            .find(|v| v.name == "cells.md" && v.replaced_at.is_none())
            .unwrap()
    };
    let passages = [Passage {
        file: "cells.md".into(),
        version_id: cells.id,
        page: 1,
        line: 24,
        text: "**Ribosomes** are small structures in the cytoplasm that build proteins from amino acids.".into(),
    }];

    let answered = brain
        .answer("ana/cell-biology", ANSWER, now, &recalled, &passages)
        .unwrap();
    let g = &answered.grounding;
    assert_eq!(g.traces.len(), 3, "the closing question is not a claim");
    match &g.traces[0].source {
        Some(Source::Memory { label, id, .. }) => {
            assert_eq!(label, "memory of 12 Jul");
            assert!(recalled.contains(id));
        }
        other => panic!("the July claim should cite the July memory: {other:?}"),
    }
    assert_eq!(
        g.traces[1].source.as_ref().map(Source::label).as_deref(),
        Some("cells.md p. 1 line 24")
    );
    assert!(g.traces[2].source.is_none());
    assert_eq!(g.stance, Stance::Partial);
    assert_eq!(answered.cites, vec![("cells.md".to_string(), 1)]);

    // Both facts are saved on the answer episode, which cites the current file.
    let store = brain.store().unwrap();
    let mut want = recalled.clone();
    want.sort_unstable();
    want.dedup();
    let mut saved = saved_recalled(&store, answered.episode_id).unwrap();
    saved.sort_unstable();
    assert_eq!(saved, want);
    assert_eq!(
        saved_grounding(&store, answered.episode_id)
            .unwrap()
            .as_ref(),
        Some(g)
    );
    let episode = store
        .episodes_by_ids(&[answered.episode_id])
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(episode.text, ANSWER);
    assert_eq!(episode.evidence.len(), 1);
    assert_eq!(episode.evidence[0].version, cells.id);
}

#[test]
fn without_the_recalled_memories_the_july_claim_is_untraced() {
    let dir = tempfile::tempdir().unwrap();
    let brain = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let answered = brain
        .answer("ana/cell-biology", ANSWER, now, &[], &[])
        .unwrap();
    assert!(answered.grounding.traces.iter().all(|t| t.source.is_none()));
    assert_eq!(answered.grounding.stance, Stance::Couldnt);
    let store = brain.store().unwrap();
    assert!(
        saved_recalled(&store, answered.episode_id)
            .unwrap()
            .is_empty(),
        "no memory, no `recalled` annotation (it would mark a narration)"
    );
}

#[test]
fn unknown_episodes_and_non_answers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let brain = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let question_id = {
        let subject = brain.subject("ana/cell-biology").unwrap();
        let store = brain.store().unwrap();
        store
            .episode_by_external_id(&subject, "e1")
            .unwrap()
            .unwrap()
            .id
    };
    let answer_id = {
        let subject = brain.subject("ana/cell-biology").unwrap();
        let store = brain.store().unwrap();
        store
            .episode_by_external_id(&subject, "e2")
            .unwrap()
            .unwrap()
            .id
    };
    assert!(matches!(
        brain.record_answer("ana/cell-biology", 999_999, &[], now),
        Err(tm_brain::Error::NotFound(_))
    ));
    assert!(matches!(
        brain.record_answer("ana/cell-biology", question_id, &[], now),
        Err(tm_brain::Error::Invalid(_))
    ));
    match brain.record_answer("ana/cell-biology", answer_id, &[question_id, 888_888], now) {
        Err(tm_brain::Error::NotFound(m)) => assert!(m.contains("888888"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        brain.grounding("ana/nothing", answer_id, "x y", &[], &[], now),
        Err(tm_brain::Error::NotFound(_))
    ));
    // Nothing was written by the refused calls.
    let store = brain.store().unwrap();
    assert!(store.annotations(answer_id).unwrap().is_empty());
}

#[test]
fn an_answer_that_retold_a_memory_is_not_a_memory_of_its_own_month() {
    let dir = tempfile::tempdir().unwrap();
    let brain = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let july: Vec<i64> = brain
        .block("ana/cell-biology", "What did we cover in July?", now, None)
        .unwrap()
        .recalled
        .iter()
        .map(|r| r.id)
        .collect();
    // Retells the July answer (no narration wording: only its grounding tells).
    let retold =
        "Eukaryotic cells contain a nucleus and membrane-bound organelles such as mitochondria.";
    assert!(!tm_model::recall::narrates_period(retold));
    let a = brain
        .answer("ana/cell-biology", retold, now, &july, &[])
        .unwrap();
    assert!(matches!(
        a.grounding.traces[0].source,
        Some(Source::Memory { .. })
    ));
    // Had the same memories in its prompt but did not use them.
    let fresh = "Chloroplasts capture light energy inside plant leaves.";
    let b = brain
        .answer(
            "ana/cell-biology",
            fresh,
            at("2026-11-20T10:05:00Z"),
            &july,
            &[],
        )
        .unwrap();
    assert!(b.grounding.traces.iter().all(|t| t.source.is_none()));

    let november = brain
        .block(
            "ana/cell-biology",
            "What did we cover in November?",
            at("2026-11-25T10:00:00Z"),
            None,
        )
        .unwrap();
    let ids: Vec<i64> = november.recalled.iter().map(|r| r.id).collect();
    assert!(ids.contains(&b.episode_id), "{ids:?}");
    assert!(
        !ids.contains(&a.episode_id),
        "the retelling of July is not a November memory: {ids:?}"
    );
}
