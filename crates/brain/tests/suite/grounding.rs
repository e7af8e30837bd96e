//! Memory as citation through the brain (docs/mechanisms.md §7): the recalled memories are
//! saved on the answer, a true "in July we …" is traced to the July memory
//! (not read as "not in your notes"), and the stance is saved.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use tm_brain::Brain;
use tm_brain::grounding::{saved_grounding, saved_recalled};
use tm_embed::HashEmbedder;
use tm_model::grounding::{Passage, Source, Stance};
use tm_model::subject::Subject;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn sample(dir: &std::path::Path) -> (Brain, Subject) {
    let db = tm_store::postgres::cluster::location(dir.join("g.db")).keep();
    let mut brain = Brain::open(&db, Arc::new(HashEmbedder::new())).unwrap();
    brain.set_cap(std::time::Duration::from_secs(120));
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    ));
    brain.import_file(path, &mut |_, _, _| {}).unwrap();
    let subject = brain.subject("ana/cell-biology").unwrap();
    (brain, subject)
}

fn block(brain: &Brain, s: &Subject, q: &str, at: DateTime<Utc>) -> tm_brain::block::Block {
    brain.block(s, brain.block_request(s, q, at, None)).unwrap()
}

fn saved(brain: &Brain, id: i64) -> (Vec<i64>, Option<tm_model::grounding::Grounding>) {
    brain
        .with_store(|s| Ok((saved_recalled(&*s, id)?, saved_grounding(&*s, id)?)))
        .unwrap()
}

const ANSWER: &str = "In July we covered that eukaryotic cells contain a nucleus and membrane-bound organelles. \
    Ribosomes build proteins from amino acids. \
    Plants also have chloroplasts that turn light into sugar. Anything else?";

#[test]
fn an_answer_keeps_its_memories_and_its_claims_are_traced_to_them_and_to_file_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (brain, subject) = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let block = block(&brain, &subject, "What did we cover in July?", now);
    let recalled: Vec<i64> = block.recalled.iter().map(|r| r.id).collect();
    assert!(!recalled.is_empty());
    let cells = {
        brain
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
        .answer(&subject, ANSWER, now, &recalled, &passages)
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
    let mut want = recalled.clone();
    want.sort_unstable();
    want.dedup();
    let (mut saved_ids, saved_g) = saved(&brain, answered.episode_id);
    saved_ids.sort_unstable();
    assert_eq!(saved_ids, want);
    assert_eq!(saved_g.as_ref(), Some(g));
    let episode = brain
        .episodes_by_ids(&[answered.episode_id])
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(episode.text, ANSWER);
    assert_eq!(episode.evidence.len(), 1);
    assert_eq!(
        episode.evidence[0].version,
        tm_model::episodes::VersionRef::Number(cells.version)
    );
}

#[test]
fn without_the_recalled_memories_the_july_claim_is_untraced() {
    let dir = tempfile::tempdir().unwrap();
    let (brain, subject) = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let answered = brain.answer(&subject, ANSWER, now, &[], &[]).unwrap();
    assert!(answered.grounding.traces.iter().all(|t| t.source.is_none()));
    assert_eq!(answered.grounding.stance, Stance::Couldnt);
    assert!(
        saved(&brain, answered.episode_id).0.is_empty(),
        "no memory, no `recalled` annotation (it would mark a narration)"
    );
}

#[test]
fn unknown_episodes_and_non_answers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (brain, subject) = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let id = |ext: &str| {
        brain
            .episode_by_external_id(&subject, ext)
            .unwrap()
            .unwrap()
            .id
    };
    let (question_id, answer_id) = (id("e1"), id("e2"));
    assert!(matches!(
        brain.record_answer(&subject, 999_999, &[], now),
        Err(tm_brain::Error::NotFound(_))
    ));
    assert!(matches!(
        brain.record_answer(&subject, question_id, &[], now),
        Err(tm_brain::Error::WrongKind(_))
    ));
    match brain.record_answer(&subject, answer_id, &[question_id, 888_888], now) {
        Err(tm_brain::Error::NotFound(m)) => assert!(m.contains("888888"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        brain.subject("ana/nothing"),
        Err(tm_brain::Error::UnknownSubject(_))
    ));
    assert!(matches!(
        brain.grounding(&subject, question_id, "x y", &[], &[], now),
        Err(tm_brain::Error::WrongKind(_))
    ));
    // Nothing was written by the refused calls.
    let notes = brain.with_store(|s| Ok(s.annotations(answer_id)?)).unwrap();
    assert!(notes.is_empty());
}

#[test]
fn an_answer_that_retold_a_memory_is_not_a_memory_of_its_own_month() {
    let dir = tempfile::tempdir().unwrap();
    let (brain, subject) = sample(dir.path());
    let now = at("2026-11-20T10:00:00Z");
    let july: Vec<i64> = block(&brain, &subject, "What did we cover in July?", now)
        .recalled
        .iter()
        .map(|r| r.id)
        .collect();
    // Retells the July answer (no narration wording: only its grounding tells).
    let retold =
        "Eukaryotic cells contain a nucleus and membrane-bound organelles such as mitochondria.";
    assert!(!tm_model::recall::narrates_period(retold));
    let a = brain.answer(&subject, retold, now, &july, &[]).unwrap();
    assert!(matches!(
        a.grounding.traces[0].source,
        Some(Source::Memory { .. })
    ));
    // Had the same memories in its prompt but did not use them.
    let fresh = "Chloroplasts capture light energy inside plant leaves.";
    let b = brain
        .answer(&subject, fresh, at("2026-11-20T10:05:00Z"), &july, &[])
        .unwrap();
    assert!(b.grounding.traces.iter().all(|t| t.source.is_none()));

    let november = block(
        &brain,
        &subject,
        "What did we cover in November?",
        at("2026-11-25T10:00:00Z"),
    );
    let ids: Vec<i64> = november.recalled.iter().map(|r| r.id).collect();
    assert!(ids.contains(&b.episode_id), "{ids:?}");
    assert!(
        !ids.contains(&a.episode_id),
        "the retelling of July is not a November memory: {ids:?}"
    );
}
