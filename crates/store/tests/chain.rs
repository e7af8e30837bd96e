//! The chain detects what it promises to detect: any edited field at its seq,
//! deleted and reordered rows, truncation and rewrites against a checkpoint,
//! and it survives concurrent writers without forking.

use chrono::{Duration, TimeZone, Utc};
use proptest::prelude::*;
use rusqlite::params;
use tm_model::episodes::{Break, ChainState, Evidence, Kind, NewEpisode, VersionRef, salience};
use tm_model::subject::{Subject, SubjectKey};
use tm_store::prelude::*;
use tm_store::sqlite::SqliteStore;
use tm_store::{StoreExt, checkpoint, verify};

fn key() -> SubjectKey {
    SubjectKey::parse("ana/cells").unwrap()
}

fn episode(i: usize) -> NewEpisode {
    let mut data = serde_json::Map::new();
    data.insert("n".into(), (i as i64).into());
    NewEpisode {
        kind: if i.is_multiple_of(3) {
            Kind::Check
        } else {
            Kind::Question
        },
        at: Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap() + Duration::minutes(i as i64),
        salience: salience(Kind::Question, None),
        summary: format!("question {i}"),
        text: format!("What is organelle number {i}?"),
        concepts: vec![format!("organelle {}", i % 4)],
        evidence: if i.is_multiple_of(5) {
            vec![Evidence {
                file: "cells.md".into(),
                version: VersionRef::Id(1),
                page: Some(2),
                sha256: "ab".repeat(32),
            }]
        } else {
            vec![]
        },
        data,
        external_id: i.is_multiple_of(2).then(|| format!("e{i}")),
        import_key: None,
        salt: None,
    }
}

fn filled(n: usize) -> (SqliteStore, Subject) {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let subject = store
        .write(|tx| {
            let s = tx.ensure_subject(
                tm_store::Owner::Operator,
                &key(),
                "Cells",
                Some("en"),
                Utc::now(),
            )?;
            for i in 0..n {
                tx.append(&s, &episode(i))?;
            }
            Ok(s)
        })
        .unwrap();
    (store, subject)
}

fn drop_triggers(store: &SqliteStore) {
    store
        .raw_connection()
        .execute_batch("PRAGMA foreign_keys = OFF; DROP TRIGGER episodes_no_update; DROP TRIGGER episodes_no_delete;")
        .unwrap();
}

fn first_break(store: &SqliteStore, subject: &Subject) -> Option<Break> {
    verify(store, subject, None).unwrap().first_break
}

#[test]
fn an_untouched_chain_is_intact() {
    let (store, subject) = filled(50);
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Intact);
    assert_eq!(report.verified, 50);
    assert_eq!(report.head_seq, 50);
}

#[test]
fn the_database_refuses_update_and_delete() {
    let (store, _) = filled(3);
    let conn = store.raw_connection();
    let upd = conn.execute("UPDATE episodes SET text = 'x' WHERE seq = 2", []);
    assert!(upd.unwrap_err().to_string().contains("append-only"));
    let del = conn.execute("DELETE FROM episodes WHERE seq = 2", []);
    assert!(del.unwrap_err().to_string().contains("append-only"));
    let upd_ann = conn.execute("UPDATE annotations SET kind = 'x'", []);
    assert!(upd_ann.is_ok(), "no annotation rows yet, so nothing fires");
}

/// Each way an attacker with SQL access can edit one stored field.
const TAMPERS: &[&str] = &[
    "UPDATE episodes SET kind = CASE kind WHEN 'question' THEN 'answer' ELSE 'question' END WHERE seq = ?1",
    "UPDATE episodes SET at = at + 1 WHERE seq = ?1",
    "UPDATE episodes SET salience = salience + 0.01 WHERE seq = ?1",
    "UPDATE episodes SET summary = summary || ' ' WHERE seq = ?1",
    "UPDATE episodes SET text = 'What is a nucleus?' WHERE seq = ?1",
    "UPDATE episodes SET concepts = '[\"nucleus\"]' WHERE seq = ?1",
    "UPDATE episodes SET evidence = '[]' || '' WHERE seq = ?1 AND evidence != '[]'",
    "UPDATE episodes SET evidence = '[{\"file\":\"x.md\",\"version\":9,\"sha256\":\"00\"}]' WHERE seq = ?1",
    "UPDATE episodes SET data = '{\"n\":-1}' WHERE seq = ?1",
    "UPDATE episodes SET external_id = 'forged' WHERE seq = ?1",
    "UPDATE episodes SET external_id = NULL WHERE seq = ?1 AND external_id IS NOT NULL",
    "UPDATE episodes SET prev_hash = zeroblob(32) WHERE seq = ?1",
    "UPDATE episodes SET hash = zeroblob(32) WHERE seq = ?1",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_edited_field_breaks_the_chain_at_exactly_that_seq(
        n in 2usize..40,
        row in any::<prop::sample::Index>(),
        tamper in 0..TAMPERS.len(),
    ) {
        let (store, subject) = filled(n);
        drop_triggers(&store);
        let seq = row.index(n) + 1;
        let changed = store.raw_connection().execute(TAMPERS[tamper], params![seq as i64]).unwrap();
        let b = first_break(&store, &subject);
        if changed == 0 {
            // The edit did not apply to this row (e.g. it had no evidence): nothing to find.
            prop_assert_eq!(b, None);
        } else {
            prop_assert_eq!(b, Some(Break::Content { seq: seq as u64 }));
        }
    }
}

#[test]
fn a_deleted_row_is_a_missing_seq() {
    let (store, subject) = filled(10);
    drop_triggers(&store);
    store
        .raw_connection()
        .execute("DELETE FROM episodes WHERE seq = 4", [])
        .unwrap();
    assert_eq!(
        first_break(&store, &subject),
        Some(Break::MissingSeq {
            expected: 4,
            found: 5
        })
    );
    store
        .raw_connection()
        .execute("DELETE FROM episodes WHERE seq = 1", [])
        .unwrap();
    assert_eq!(
        first_break(&store, &subject),
        Some(Break::MissingSeq {
            expected: 1,
            found: 2
        })
    );
}

#[test]
fn swapped_rows_are_reported_as_reordered() {
    let (store, subject) = filled(10);
    drop_triggers(&store);
    store
        .raw_connection()
        .execute_batch(
            "UPDATE episodes SET seq = -1 WHERE seq = 6;
             UPDATE episodes SET seq = 6 WHERE seq = 7;
             UPDATE episodes SET seq = 7 WHERE seq = -1;",
        )
        .unwrap();
    assert_eq!(
        first_break(&store, &subject),
        Some(Break::Reordered {
            seq: 6,
            written_as: 7
        })
    );
}

#[test]
fn a_consistently_rehashed_row_breaks_the_next_link() {
    let (mut store, subject) = filled(8);
    drop_triggers(&store);
    // Rewrite seq 3 and recompute its hash properly: only the link from seq 4 can tell.
    let e3 = store.episodes(&subject, 3, 1).unwrap().remove(0);
    let (prev, salt): (Vec<u8>, Vec<u8>) = store
        .raw_connection()
        .query_row(
            "SELECT prev_hash, salt FROM episodes WHERE seq = 3",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // A forger who knows the encoding (v2: the digest of the new text under
    // the row's salt, then the hash over it).
    let fields = tm_model::episodes::EpisodeFields {
        subject: "ana/cells",
        seq: 3,
        kind: e3.kind.as_str(),
        at_ms: e3.at.timestamp_millis(),
        salience: e3.salience,
        summary: &e3.summary,
        text: "I never asked this",
        concepts_json: &serde_json::to_string(&e3.concepts).unwrap(),
        evidence_json: &serde_json::to_string(&e3.evidence).unwrap(),
        data_json: &serde_json::to_string(&e3.data).unwrap(),
        external_id: e3.external_id.as_deref(),
        salt: Some(&salt),
        digest: None,
    };
    let digest = tm_model::episodes::content_digest(&fields, &salt);
    let forged = tm_model::episodes::episode_hash(&fields, prev.as_slice().try_into().unwrap());
    store
        .raw_connection()
        .execute(
            "UPDATE episodes SET text = 'I never asked this', digest = ?2, hash = ?1 WHERE seq = 3",
            params![forged.as_slice(), digest.as_slice()],
        )
        .unwrap();
    match first_break(&store, &subject) {
        Some(Break::Link { seq: 4, .. }) => {}
        other => panic!("expected a link break at 4, got {other:?}"),
    }
    let _ = &mut store;
}

#[test]
fn checkpoints_catch_truncation_and_whole_rewrites() {
    let (store, subject) = filled(12);
    let cp = checkpoint(&store, &subject).unwrap();
    assert_eq!(cp.seq, 12);
    assert_eq!(
        verify(&store, &subject, Some(&cp)).unwrap().state,
        ChainState::Intact
    );

    drop_triggers(&store);
    // Truncation: the chain that is left is internally valid.
    store
        .raw_connection()
        .execute("DELETE FROM episodes WHERE seq > 9", [])
        .unwrap();
    assert_eq!(
        first_break(&store, &subject),
        None,
        "without a checkpoint truncation is invisible"
    );
    let report = verify(&store, &subject, Some(&cp)).unwrap();
    assert_eq!(
        report.first_break,
        Some(Break::Truncated {
            checkpoint_seq: 12,
            head_seq: 9
        })
    );
}

#[test]
fn a_whole_rewrite_is_caught_only_by_the_checkpoint() {
    let (store, subject) = filled(6);
    let cp = checkpoint(&store, &subject).unwrap();
    // Rebuild the same subject's chain with one episode changed: a fresh
    // store whose chain is internally perfect.
    let mut other = SqliteStore::open_in_memory().unwrap();
    let s2 = other
        .write(|tx| {
            let s = tx.ensure_subject(
                tm_store::Owner::Operator,
                &key(),
                "Cells",
                Some("en"),
                Utc::now(),
            )?;
            for i in 0..6 {
                let mut e = episode(i);
                if i == 2 {
                    e.text = "rewritten".into();
                }
                tx.append(&s, &e)?;
            }
            Ok(s)
        })
        .unwrap();
    assert_eq!(first_break(&other, &s2), None);
    match verify(&other, &s2, Some(&cp)).unwrap().first_break {
        Some(Break::CheckpointMismatch { seq: 6, .. }) => {}
        b => panic!("expected a checkpoint mismatch, got {b:?}"),
    }
    let _ = store;
}

#[test]
fn concurrent_writers_leave_one_gapless_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let subject = {
        let mut s = SqliteStore::open(&path).unwrap();
        s.write(|tx| {
            tx.ensure_subject(tm_store::Owner::Operator, &key(), "Cells", None, Utc::now())
        })
        .unwrap()
    };
    let threads = 8;
    let per_thread = 60;
    std::thread::scope(|scope| {
        for t in 0..threads {
            let path = path.clone();
            let subject = subject.clone();
            scope.spawn(move || {
                let mut store = SqliteStore::open(&path).unwrap();
                for i in 0..per_thread {
                    let mut e = episode(t * 1000 + i);
                    e.external_id = Some(format!("t{t}-{i}"));
                    store.write(|tx| tx.append(&subject, &e)).unwrap();
                }
            });
        }
    });
    let store = SqliteStore::open(&path).unwrap();
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(report.verified, (threads * per_thread) as u64);
    assert_eq!(
        store.episode_count(&subject).unwrap(),
        (threads * per_thread) as u64
    );
}

#[test]
fn a_reused_external_id_is_refused_and_nothing_is_written() {
    let (mut store, subject) = filled(4);
    let mut e = episode(99);
    e.external_id = Some("e2".into());
    let err = store.write(|tx| {
        tx.append(&subject, &episode(100))
            .and_then(|_| tx.append(&subject, &e))
    });
    assert!(err.unwrap_err().to_string().contains("e2"));
    assert_eq!(
        store.episode_count(&subject).unwrap(),
        4,
        "the whole transaction rolled back"
    );
}

/// A row of the wrong SQLite type (SQLite keeps whatever it is given) is a
/// break at its own position, never a failure of the whole check.
#[test]
fn a_row_of_the_wrong_type_is_a_break_at_its_position() {
    for (tamper, seq) in [
        ("UPDATE episodes SET at = 'yesterday' WHERE seq = 7", 7),
        ("UPDATE episodes SET text = X'FF00FE' WHERE seq = 12", 12),
        ("UPDATE episodes SET salience = 'high' WHERE seq = 3", 3),
        ("UPDATE episodes SET hash = 'abc' WHERE seq = 20", 20),
    ] {
        let (store, subject) = filled(30);
        drop_triggers(&store);
        store.raw_connection().execute_batch(tamper).unwrap();
        let report = verify(&store, &subject, None).unwrap();
        match report.first_break {
            Some(Break::Unreadable { seq: at, reason }) => {
                assert_eq!(at, seq, "{tamper}: {reason}");
                assert!(!reason.is_empty());
            }
            other => panic!("{tamper}: {other:?}"),
        }
        assert_eq!(report.head_seq, seq - 1, "{tamper}");
        assert_eq!(report.state, tm_model::episodes::ChainState::Broken);
    }
}
