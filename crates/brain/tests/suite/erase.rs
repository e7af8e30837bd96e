//! Forget on request: erasing a learner removes every text they left and
//! everything derived from it, the chain still verifies (and says so), no
//! byte of the text stays in the database file or its log, and another
//! learner's memory is untouched, byte for byte.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use tm_brain::block::BlockRequest;
use tm_brain::{Brain, Scope};
use tm_model::episodes::ChainState;

use crate::common;

/// In every text a learner can leave.
const CANARY: &str = "Zqxv7731Canary";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn history(learner: &str, mark: &str) -> String {
    let file = format!(
        "# Cells {mark}\n\n## Osmosis\n\n**Osmosis** is the diffusion of water across a membrane {mark}.\n\n## Diffusion\n\n**Diffusion** spreads particles out {mark}.\n"
    );
    [
        serde_json::json!({"type":"subject","learner":learner,"subject":"cells","title":format!("Cells {mark}"),"timezone":"Europe/Berlin"}),
        serde_json::json!({"type":"file","at":"2026-03-02T09:00:00Z","name":format!("notes{mark}.md"),"content":file}),
        serde_json::json!({"id":format!("q1{mark}"),"type":"learner","at":"2026-03-03T09:00:00Z","text":format!("What is osmosis? {mark}")}),
        serde_json::json!({"id":"a1","type":"tutor","at":"2026-03-03T09:01:00Z","text":format!("Osmosis moves water across a membrane {mark}."),"cites":[{"file":format!("notes{mark}.md"),"page":1}]}),
        serde_json::json!({"type":"check","at":"2026-03-04T09:00:00Z","topic":"Osmosis","verdict":"wrong","evaluation":format!("Mixed it up with diffusion {mark}")}),
        serde_json::json!({"type":"quiz","at":"2026-03-05T09:00:00Z","title":format!("Membranes {mark}"),"score":3,"max":5,"concepts":["Osmosis"]}),
        serde_json::json!({"type":"learner","at":"2026-03-06T09:00:00Z","text":format!("Remember that in our class we call osmosis the water walk {mark}")}),
    ]
    .map(|l| l.to_string())
    .join("\n")
}

fn contains_folded(bytes: &[u8], needle: &str) -> bool {
    let hay = String::from_utf8_lossy(bytes).to_lowercase();
    hay.contains(&needle.to_lowercase())
}

#[test]
fn erasing_a_learner_forgets_every_text_and_keeps_the_chain_verifiable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.db");
    let loc = tm_store::postgres::cluster::location(&path);
    let sqlite = !tm_store::is_postgres(loc.as_str());
    let mut brain = Brain::open(loc.as_str(), Arc::new(tm_embed::HashEmbedder::new())).unwrap();
    brain.set_cap(std::time::Duration::from_secs(120));
    for (learner, mark) in [("ana", CANARY), ("ben", "")] {
        brain
            .import_bytes(
                "h.jsonl",
                history(learner, mark).as_bytes(),
                None,
                &mut |_, _, _| {},
            )
            .unwrap();
    }
    let ana = brain.subject("ana/cells").unwrap();
    let ben = brain.subject("ben/cells").unwrap();
    // A night runs over both: its log, working set and self-model hold text too.
    brain
        .nightly(
            at("2026-03-07T03:00:00Z"),
            &tm_brain::nightly::NightlyOptions::default(),
            &mut |_, _| {},
        )
        .unwrap();
    let ask = || {
        BlockRequest::new(
            "What did I get wrong about osmosis?",
            at("2026-03-08T10:00:00Z"),
            chrono_tz::UTC,
            1200,
        )
    };
    let ben_before = brain.block(&ben, ask()).unwrap().block;
    let ana_before = brain.block(&ana, ask()).unwrap().block;
    assert!(
        ana_before.contains(CANARY),
        "the canary is recalled before: {ana_before}"
    );
    let head_before = brain.verify(&ana, None).unwrap().head_hash;
    if sqlite {
        // The search below can find it: before, the file and its log hold it.
        let raw: Vec<u8> = ["e.db", "e.db-wal"]
            .iter()
            .flat_map(|f| std::fs::read(dir.path().join(f)).unwrap_or_default())
            .collect();
        assert!(contains_folded(&raw, CANARY));
    }
    let episodes = brain.episode_count(&ana).unwrap();

    let erased = brain
        .erase(
            &Scope::Learner("ana".into()),
            "ticket 4711",
            at("2026-03-09T12:00:00Z"),
        )
        .unwrap();
    assert_eq!(erased.subjects, vec!["ana/cells"]);
    assert_eq!(erased.erasure.episodes, episodes);
    assert_eq!(erased.erasure.scope, "learner");

    // The chain verifies, says what was erased, and its head did not move.
    let report = brain.verify(&ana, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(
        (report.verified, report.erased, report.erased_v1),
        (episodes, episodes, 0)
    );
    assert_eq!(report.head_hash, head_before);
    assert_eq!(report.erasures.len(), 1);
    assert_eq!(report.erasures[0].reference, "ticket 4711");

    // The log keeps every position, each marked erased, with no content.
    let log = brain.episodes(&ana, 1, 100).unwrap();
    assert_eq!(log.len() as u64, episodes);
    assert!(
        log.iter()
            .all(|e| e.erased && e.text.is_empty() && e.summary.is_empty())
    );
    assert!(brain.file_versions(&ana).unwrap().is_empty());

    // Nothing of it reaches a block any more; the other learner's block is
    // byte for byte what it was.
    let ana_after = brain.block(&ana, ask()).unwrap().block;
    assert!(!ana_after.contains(CANARY), "{ana_after}");
    assert_eq!(brain.block(&ben, ask()).unwrap().block, ben_before);
    assert_eq!(brain.verify(&ben, None).unwrap().erased, 0);

    // A re-embedding finds nothing of the erased episodes to embed again.
    assert_eq!(brain.reembed(&ana, &mut |_, _| {}).unwrap().embedded, 0);

    // A new event after the erasure continues the same chain.
    brain
        .record(
            &ana,
            &[tm_model::events::Event::from_json(serde_json::json!(
                {"type":"learner","at":"2026-03-10T09:00:00Z","text":"Hello again"}
            ))
            .unwrap()],
        )
        .unwrap();
    let report = brain.verify(&ana, None).unwrap();
    assert_eq!(
        (report.state, report.verified),
        (ChainState::Intact, episodes + 1)
    );

    if !sqlite {
        println!(
            "skipped: the raw-file canary search runs on SQLite only (PostgreSQL's files are the server's)"
        );
        return;
    }
    drop(brain);
    // No byte of the text in the database file or its write-ahead log.
    for file in ["e.db", "e.db-wal", "e.db-shm", "e.db-journal"] {
        let p = dir.path().join(file);
        if let Ok(bytes) = std::fs::read(&p) {
            assert!(
                !contains_folded(&bytes, CANARY),
                "{file} still holds the canary"
            );
        }
    }
    // The full-text indexes are consistent after the deletes.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "INSERT INTO episode_fts (episode_fts) VALUES ('integrity-check');
         INSERT INTO passage_fts (passage_fts) VALUES ('integrity-check');",
    )
    .unwrap();
    // And the append-only rules still hold outside an erasure.
    for sql in [
        "UPDATE episodes SET text = 'x' WHERE id = (SELECT MIN(id) FROM episodes)",
        "UPDATE episodes SET erased_by = 1, summary = '', text = '', concepts = '[]', evidence = '[]', data = '{}', external_id = NULL, import_key = NULL, salt = NULL WHERE erased_by IS NULL",
        "DELETE FROM beliefs",
        "DELETE FROM concept_maps",
        "DELETE FROM erasures",
    ] {
        assert!(c.execute_batch(sql).is_err(), "refused: {sql}");
    }
}

/// One learner's history with the canary in one check only (its topic, an
/// unmapped one, and its evaluation), or without that check.
fn with_one_check(with: bool) -> String {
    let mut lines = vec![
        serde_json::json!({"type":"subject","learner":"cy","subject":"cells","title":"Cells"}),
        serde_json::json!({"type":"file","at":"2026-03-02T09:00:00Z","name":"notes.md","content":"# Cells\n\n## Osmosis\n\n**Osmosis** is the diffusion of water across a membrane.\n\n## Diffusion\n\n**Diffusion** spreads particles out.\n"}),
        serde_json::json!({"type":"check","at":"2026-03-04T09:00:00Z","topic":"Osmosis","verdict":"right"}),
        serde_json::json!({"type":"check","at":"2026-03-04T10:00:00Z","topic":"Diffusion","verdict":"wrong"}),
    ];
    if with {
        lines.push(serde_json::json!({"id":"bad","type":"check","at":"2026-03-04T11:00:00Z","topic":format!("the {CANARY} cycle"),"verdict":"wrong","evaluation":format!("Said {CANARY} again")}));
        lines.push(serde_json::json!({"type":"check","at":"2026-03-04T11:30:00Z","topic":"Osmosis","verdict":"wrong","evaluation":format!("Wrote {CANARY} for osmosis")}));
    }
    lines.push(serde_json::json!({"type":"learner","at":"2026-03-05T09:00:00Z","text":"What is diffusion?"}));
    lines.push(serde_json::json!({"type":"learner","at":"2026-04-24T09:00:00Z","text":"Back after a break."}));
    lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn erasing_one_check_re_derives_beliefs_and_map_as_if_it_never_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.db");
    let loc = tm_store::postgres::cluster::location(&path);
    let sqlite = !tm_store::is_postgres(loc.as_str());
    let reference_loc = tm_store::postgres::cluster::location(dir.path().join("ref.db"));
    let embedder = Arc::new(tm_embed::HashEmbedder::new());
    let brain = Brain::open(loc.as_str(), embedder.clone()).unwrap();
    let reference = Brain::open(reference_loc.as_str(), embedder).unwrap();
    for (b, with) in [(&brain, true), (&reference, false)] {
        b.import_bytes(
            "h.jsonl",
            with_one_check(with).as_bytes(),
            None,
            &mut |_, _, _| {},
        )
        .unwrap();
        // A night over the checks' day (its consolidation quotes them), the
        // next, and one 50 days on that decays the beliefs (its log names
        // them: the canary topic among them).
        for t in [
            "2026-03-05T03:00:00Z",
            "2026-03-06T03:00:00Z",
            "2026-04-25T03:00:00Z",
        ] {
            b.nightly(at(t), &Default::default(), &mut |_, _| {})
                .unwrap();
        }
    }
    let cy = brain.subject("cy/cells").unwrap();
    let before = brain.verify(&cy, None).unwrap();
    let bad = brain.episode_by_external_id(&cy, "bad").unwrap().unwrap();
    assert!(
        common::portable_beliefs(&brain, &cy)
            .iter()
            .any(|b| b.to_string().contains(CANARY)),
        "a belief holds the canary (the unmapped topic as written)"
    );

    if sqlite {
        // The night's log names the decayed beliefs, the canary topic too.
        let c = rusqlite::Connection::open(&path).unwrap();
        let logged: String = c
            .query_row("SELECT group_concat(summary) FROM nightly_runs", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(logged.contains(CANARY), "{logged}");
    }

    // Bad input first: an unknown seq, a file, a reason too long.
    assert!(matches!(
        brain.erase_episode(&cy, 999, "", "", at("2026-05-01T00:00:00Z")),
        Err(tm_brain::Error::NotFound(_))
    ));
    assert!(matches!(
        brain.erase_episode(&cy, 1, "", "", at("2026-05-01T00:00:00Z")),
        Err(tm_brain::Error::WrongKind(_))
    ));
    assert!(matches!(
        brain.erase_episode(
            &cy,
            bad.seq,
            &"r".repeat(201),
            "",
            at("2026-05-01T00:00:00Z")
        ),
        Err(tm_brain::Error::TooLarge(_))
    ));
    assert_eq!(
        brain.verify(&cy, None).unwrap().erased,
        0,
        "nothing erased by refusals"
    );

    // Both checks that hold the canary go, one request each.
    let second = bad.seq + 1;
    let erased = brain
        .erase_episode(
            &cy,
            bad.seq,
            "a wrong fact",
            "ticket 9",
            at("2026-05-01T00:00:00Z"),
        )
        .unwrap();
    assert_eq!(erased.erasure.scope, "episode");
    assert_eq!(erased.erasure.target, format!("cy/cells#{}", bad.seq));
    assert_eq!(erased.erasure.reason, "a wrong fact");
    assert_eq!(
        erased.erasure.episodes, 2,
        "the check and its day's consolidation"
    );
    brain
        .erase_episode(
            &cy,
            second,
            "a wrong fact",
            "ticket 9",
            at("2026-05-01T00:00:01Z"),
        )
        .unwrap();
    assert!(matches!(
        brain.erase_episode(&cy, bad.seq, "", "", at("2026-05-01T00:00:02Z")),
        Err(tm_brain::Error::NotFound(_))
    ));

    let after = brain.verify(&cy, None).unwrap();
    assert_eq!(after.state, ChainState::Intact, "{after:?}");
    assert_eq!((after.head_hash, after.erased), (before.head_hash, 3));
    assert_eq!(after.erasures.len(), 2);
    assert_eq!(after.erasures[0].reason, "a wrong fact");
    let log = brain.episodes(&cy, 1, 100).unwrap();
    assert_eq!(log.iter().filter(|e| e.erased).count(), 3);
    assert!(
        log.iter()
            .any(|e| !e.erased && e.kind.as_str() == "question")
    );

    // Beliefs and map are what a store that never had the checks holds.
    let r = reference.subject("cy/cells").unwrap();
    let mine = common::portable_beliefs(&brain, &cy);
    assert!(!mine.is_empty());
    assert_eq!(mine, common::portable_beliefs(&reference, &r));
    let map = |b: &Brain, s| {
        let mut v = serde_json::to_value(b.map(s).unwrap()).unwrap();
        // Version ids are each store's own.
        for n in v["nodes"].as_array_mut().unwrap() {
            for src in n["sources"].as_array_mut().unwrap() {
                src["version"] = serde_json::Value::Null;
            }
        }
        v
    };
    assert_eq!(map(&brain, &cy), map(&reference, &r));
    assert!(!map(&brain, &cy).to_string().contains(CANARY));

    if !sqlite {
        println!(
            "skipped: the raw-file canary search runs on SQLite only (PostgreSQL's files are the server's)"
        );
        return;
    }
    drop(brain);
    for file in ["one.db", "one.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(file)) {
            assert!(
                !contains_folded(&bytes, CANARY),
                "{file} still holds the canary"
            );
        }
    }
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("INSERT INTO episode_fts (episode_fts) VALUES ('integrity-check');")
        .unwrap();
}

#[test]
fn erasing_one_teaching_note_takes_its_concept_and_leaves_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let loc = tm_store::postgres::cluster::location(dir.path().join("t.db"));
    let brain = Brain::open(loc.as_str(), Arc::new(tm_embed::HashEmbedder::new())).unwrap();
    let history = [
        serde_json::json!({"type":"subject","learner":"di","subject":"cells"}),
        serde_json::json!({"type":"file","at":"2026-03-02T09:00:00Z","name":"notes.md","content":"# Cells\n\n## Osmosis\n\n**Osmosis** is the diffusion of water across a membrane.\n"}),
        serde_json::json!({"id":"t1","type":"learner","at":"2026-03-03T09:00:00Z","text":format!("Remember that in our class we call the {CANARY} the powerhouse of the cell")}),
        serde_json::json!({"id":"q1","type":"learner","at":"2026-03-03T10:00:00Z","text":"What is osmosis?"}),
    ]
    .map(|l| l.to_string())
    .join("\n");
    brain
        .import_bytes("h.jsonl", history.as_bytes(), None, &mut |_, _, _| {})
        .unwrap();
    let di = brain.subject("di/cells").unwrap();
    let names = |b: &Brain| -> Vec<String> {
        b.map(&di)
            .unwrap()
            .nodes()
            .iter()
            .map(|n| n.name.clone())
            .collect()
    };
    assert!(
        names(&brain).iter().any(|n| n.contains(CANARY)),
        "{:?}",
        names(&brain)
    );
    let t1 = brain.episode_by_external_id(&di, "t1").unwrap().unwrap();
    brain
        .erase_episode(
            &di,
            t1.seq,
            "pasted by mistake",
            "",
            at("2026-03-04T00:00:00Z"),
        )
        .unwrap();
    assert_eq!(names(&brain), vec!["Osmosis".to_string()]);
    assert!(
        !serde_json::to_string(&brain.map(&di).unwrap())
            .unwrap()
            .contains(CANARY)
    );
    let q1 = brain.episode_by_external_id(&di, "q1").unwrap().unwrap();
    assert_eq!(q1.text, "What is osmosis?");
    assert_eq!(brain.verify(&di, None).unwrap().state, ChainState::Intact);
}

/// An erasure whose process dies after its commit, before its compaction:
/// `verify` names the compaction still owed, and the next open of the store,
/// by any process, finishes it before anything is served, leaving no byte of
/// the erased text in the files.
#[test]
fn an_erasure_cut_short_after_its_commit_is_finished_by_the_next_open() {
    use tm_store::StoreExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let loc = tm_store::postgres::cluster::location(&path);
    let sqlite = !tm_store::is_postgres(loc.as_str());
    let brain = Brain::open(loc.as_str(), Arc::new(tm_embed::HashEmbedder::new())).unwrap();
    brain
        .import_bytes(
            "h.jsonl",
            history("ana", CANARY).as_bytes(),
            None,
            &mut |_, _, _| {},
        )
        .unwrap();
    let ana = brain.subject("ana/cells").unwrap();
    drop(brain);
    let raw = || -> Vec<u8> {
        ["k.db", "k.db-wal", "k.db-shm", "k.db-journal"]
            .iter()
            .flat_map(|f| std::fs::read(dir.path().join(f)).unwrap_or_default())
            .collect()
    };

    // The erasure commits; the process "dies" before its compaction.
    let engine = tm_store::open(loc.as_str()).unwrap();
    let mut store = engine.connect().unwrap();
    let erasure = store
        .write(|tx| {
            tx.erase(
                &tm_model::episodes::NewErasure {
                    at: at("2026-03-09T12:00:00Z"),
                    scope: "learner".into(),
                    target: "ana".into(),
                    reference: "ticket 9".into(),
                    reason: String::new(),
                },
                std::slice::from_ref(&ana),
            )
        })
        .unwrap();
    let report = tm_store::verify(&*store, &ana, None).unwrap();
    assert_eq!(report.compaction_owed, vec![erasure.id], "{report:?}");
    let note = report.erasure_note().unwrap();
    assert!(note.contains("COMPACTION NOT FINISHED"), "{note}");
    if sqlite {
        assert!(
            contains_folded(&raw(), CANARY),
            "before the compaction the files still hold the erased text"
        );
    }
    drop(store);
    drop(engine);

    // The next open finishes it.
    let brain = Brain::open(loc.as_str(), Arc::new(tm_embed::HashEmbedder::new())).unwrap();
    let report = brain.verify(&ana, None).unwrap();
    assert!(report.compaction_owed.is_empty(), "{report:?}");
    assert_eq!(report.state, ChainState::Intact);
    assert!(!report.erasure_note().unwrap().contains("COMPACTION"));
    drop(brain);
    if !sqlite {
        println!(
            "skipped: the raw-file canary search runs on SQLite only (PostgreSQL's files are the server's)"
        );
        return;
    }
    assert!(
        !contains_folded(&raw(), CANARY),
        "the files still hold the canary"
    );
}
