//! The article's two scenarios at prompt level, and the time cap.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;
use tm_brain::block::{BlockRequest, build, build_with_cap};
use tm_brain::recall::Recaller;
use tm_embed::HashEmbedder;
use tm_model::subject::SubjectKey;
use tm_store::Store;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

/// The sample subject imported and embedded in a database file under `dir`:
/// its path, the recaller, an open store and the subject.
fn sample(dir: &std::path::Path) -> (std::path::PathBuf, Arc<Recaller>, Store, tm_store::Subject) {
    let db = dir.join("b.db");
    let mut store = Store::open(&db).unwrap();
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    ));
    tm_brain::import::import_file(&mut store, path, &mut |_, _| {}).unwrap();
    let recaller = Arc::new(Recaller::new(Arc::new(HashEmbedder::new())));
    let subject = store
        .require_subject(&SubjectKey::parse("ana/cell-biology").unwrap())
        .unwrap();
    recaller
        .embed_missing(&mut store, &subject, &mut |_, _| {})
        .unwrap();
    (db, recaller, store, subject)
}

fn request(q: &str) -> BlockRequest {
    BlockRequest {
        question: q.into(),
        at: at("2026-11-20T10:00:00Z"),
        tz: chrono_tz::UTC,
        budget: 1200,
        design: tm_model::block::Design::Full,
    }
}

#[test]
fn the_july_memories_reach_the_prompt_and_an_empty_month_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, recaller, store, subject) = sample(dir.path());

    let july = build(
        &store,
        &recaller,
        &subject,
        &request("What did we cover in July?"),
    )
    .unwrap();
    assert_eq!(july.mode, "record");
    let ids: Vec<&str> = july
        .recalled
        .iter()
        .filter_map(|r| r.external_id.as_deref())
        .collect();
    for id in ["e20", "e21", "e24"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(
        july.recalled
            .iter()
            .all(|r| r.at.format("%Y-%m").to_string() == "2026-07"),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"e29"),
        "the September narration of July is not a July memory"
    );
    assert!(july.tokens <= 1200);

    let may = build(&store, &recaller, &subject, &request("¿Qué vimos en mayo?")).unwrap();
    assert!(may.window.as_ref().unwrap().empty);
    assert!(
        may.recalled.is_empty(),
        "nothing recalled from outside the month"
    );
    assert!(
        may.block
            .contains("There is no record of any work with this student in May 2026."),
        "{}",
        may.block
    );
    // … and describes no session: no earlier-work section at all.
    assert!(
        !may.block.contains(tm_model::block::EPISODES_HEADER),
        "{}",
        may.block
    );
}

#[test]
fn a_changed_citation_is_labelled_and_a_block_past_its_cap_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (db, recaller, store, subject) = sample(dir.path());
    // Answers before 1 Oct cite cells.md version 1, replaced that day.
    let b = build(
        &store,
        &recaller,
        &subject,
        &request("What does the cell membrane do?"),
    )
    .unwrap();
    let changed: Vec<_> = b
        .recalled
        .iter()
        .filter(|r| r.citation == "changed")
        .collect();
    assert!(!changed.is_empty(), "{:?}", b.recalled);
    assert!(changed.iter().all(|r| r.kind == "answer"));
    assert!(
        b.block
            .contains("[note: the file cited here has since been replaced or removed]")
    );
    assert!(
        b.recalled
            .iter()
            .filter(|r| r.kind == "check")
            .all(|r| r.citation == "unverifiable")
    );

    let dropped = build_with_cap(
        db,
        recaller,
        subject,
        request("What is a cell?"),
        Duration::ZERO,
    )
    .unwrap();
    assert!(dropped.dropped && dropped.block.is_empty());
}

#[test]
fn the_brain_builds_a_block_by_subject_name_and_names_an_unknown_subject() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _recaller, store, _subject) = sample(dir.path());
    drop(store);
    let mut brain = tm_brain::Brain::open(db, Arc::new(HashEmbedder::new())).unwrap();
    brain.set_budget(300);
    let b = brain
        .block(
            "ana/cell-biology",
            "What did we cover in July?",
            at("2026-11-20T10:00:00Z"),
            None,
        )
        .unwrap();
    assert!(!b.dropped);
    assert_eq!(b.mode, "record");
    assert!(b.tokens <= 300 && b.tokens > 0, "{}", b.tokens);
    let wide = brain
        .block(
            "ana/cell-biology",
            "What did we cover in July?",
            at("2026-11-20T10:00:00Z"),
            Some(1200),
        )
        .unwrap();
    assert!(wide.tokens > b.tokens);

    match brain.block(
        "ana/astronomy",
        "What is a star?",
        at("2026-11-20T10:00:00Z"),
        None,
    ) {
        Err(tm_brain::Error::NotFound(m)) => assert!(m.contains("ana/astronomy"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert!(matches!(
        brain.block("not a key", "?", at("2026-11-20T10:00:00Z"), None),
        Err(tm_brain::Error::BadKey(_))
    ));
}

#[test]
fn the_four_designs_differ_only_in_what_fills_the_slot() {
    use tm_model::block::Design;
    let dir = tempfile::tempdir().unwrap();
    let (_db, recaller, store, subject) = sample(dir.path());
    let q = "What have I got wrong so far?";
    let with = |design| {
        build(
            &store,
            &recaller,
            &subject,
            &BlockRequest {
                design,
                ..request(q)
            },
        )
        .unwrap()
    };
    let plain = with(Design::Plain);
    assert!(plain.block.is_empty() && plain.recalled.is_empty());
    let window = with(Design::Window);
    assert!(!window.block.contains("SUBJECT MAP"), "{}", window.block);
    assert!(!window.block.contains("WHAT YOU CURRENTLY BELIEVE"));
    assert!(window.recalled.len() <= 20 && !window.recalled.is_empty());
    assert!(
        window
            .recalled
            .iter()
            .all(|r| r.kind != "file" && r.kind != "quiz")
    );
    let episodes = with(Design::Episodes);
    assert_eq!(episodes.mode, "ordinary");
    assert!(!episodes.block.contains("SUBJECT MAP"));
    assert!(!episodes.block.contains("WHAT YOU CURRENTLY BELIEVE"));
    assert!(!episodes.recalled.is_empty());
    let full = with(Design::Full);
    assert_eq!(full.mode, "record");
    assert!(
        full.block.contains("WHAT YOU CURRENTLY BELIEVE"),
        "{}",
        full.block
    );
    for b in [&window, &episodes, &full] {
        assert!(b.tokens <= 1200);
    }
}
