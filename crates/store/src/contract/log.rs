//! The episode log's contract: one verified chain, atomic transactions, external ids and import keys, concurrent writers, annotations, import records.

use super::fixtures::*;
use crate::{Engine, Error, StoreExt, Tx, checkpoint, verify};
use tm_model::episodes::{ChainState, Evidence, VersionRef};

/// Appends read back as written, in one chain that verifies, with the head
/// and a checkpoint that agree.
pub fn appends_form_one_verified_chain(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/chain");
    let (seq0, _) = store.head(&s).unwrap();
    assert_eq!(seq0, 0, "an empty chain starts at 0");
    let mut e = episode(1, "Why does the membrane let water through?");
    e.evidence = vec![Evidence {
        file: "cells.md".into(),
        version: VersionRef::Id(7),
        page: Some(2),
        sha256: "ab".repeat(32),
    }];
    e.external_id = Some("e1".into());
    let first = store.write(|tx| tx.append(&s, &e)).unwrap();
    let ids = fill(&mut *store, &s, 5);
    assert_eq!(first.seq, 1);
    assert_eq!(store.episode_count(&s).unwrap(), 6);
    let all = store.episodes(&s, 1, 100).unwrap();
    assert_eq!(
        all.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let got = &all[0];
    assert_eq!(
        (
            got.kind,
            got.at,
            &got.text,
            &got.evidence,
            &got.concepts,
            &got.external_id
        ),
        (
            e.kind,
            e.at,
            &e.text,
            &e.evidence,
            &e.concepts,
            &e.external_id
        )
    );
    assert_eq!(got.hash, first.hash);
    assert_eq!(store.episodes(&s, 3, 2).unwrap().len(), 2);
    let by_ids = store.subject_episodes_by_ids(&s, &ids[..2]).unwrap();
    assert_eq!(by_ids.iter().map(|e| e.id).collect::<Vec<_>>(), ids[..2]);
    assert_eq!(store.episodes_by_ids(&[ids[0], -5]).unwrap().len(), 1);
    assert_eq!(
        store.episode_at_seq(&s, 2).unwrap().map(|e| e.id),
        Some(ids[0])
    );
    assert_eq!(
        store
            .episode_by_external_id(&s, "e1")
            .unwrap()
            .map(|e| e.seq),
        Some(1)
    );
    let report = verify(&*store, &s, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!((report.verified, report.head_seq), (6, 6));
    let cp = checkpoint(&*store, &s).unwrap();
    assert_eq!(cp.head_hash, report.head_hash);
    assert_eq!(
        verify(&*store, &s, Some(&cp)).unwrap().state,
        ChainState::Intact
    );
    let other = subject(&mut *store, "bo/chain");
    assert!(
        store
            .subject_episodes_by_ids(&other, &ids)
            .unwrap()
            .is_empty()
    );
}

/// A transaction whose closure fails writes nothing, and the caller gets
/// the closure's own error.
pub fn a_failed_transaction_leaves_nothing(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/rollback");
    fill(&mut *store, &s, 2);
    let head = store.head(&s).unwrap();
    let r: crate::Result<()> = store.write(|tx| {
        let a = tx.append(&s, &episode(9, "lost"))?;
        tx.annotate(a.id, "x", t(2, 0), &serde_json::json!({}))?;
        Err(Error::Unsupported("the caller changed its mind".into()))
    });
    assert!(
        matches!(&r, Err(Error::Unsupported(m)) if m == "the caller changed its mind"),
        "{r:?}"
    );
    assert_eq!(store.head(&s).unwrap(), head);
    assert_eq!(store.episode_count(&s).unwrap(), 2);
}

/// An external id names one episode of a subject; another subject may use it.
pub fn external_ids_are_unique_within_a_subject(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/ids");
    let mut e = episode(1, "first");
    e.external_id = Some("q1".into());
    store.write(|tx| tx.append(&s, &e)).unwrap();
    let again = store.write(|tx| tx.append(&s, &e));
    assert!(
        matches!(again, Err(Error::ExternalIdTaken { seq: 1, .. })),
        "{again:?}"
    );
    let other = subject(&mut *store, "bo/ids");
    store.write(|tx| tx.append(&other, &e)).unwrap();
}

/// An import key finds the episode it was recorded with, in its subject only.
pub fn import_keys_find_their_episode(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/keys");
    let mut e = episode(1, "keyed");
    e.import_key = Some([7; 32]);
    let a = store.write(|tx| tx.append(&s, &e)).unwrap();
    assert_eq!(
        store.episode_by_import_key(&s, &[7; 32]).unwrap(),
        Some((a.id, a.seq))
    );
    assert_eq!(store.episode_by_import_key(&s, &[8; 32]).unwrap(), None);
    let other = subject(&mut *store, "bo/keys");
    assert_eq!(store.episode_by_import_key(&other, &[7; 32]).unwrap(), None);
}

/// Writers on several connections at once append to one chain without a
/// gap, a fork or a lost write.
pub fn concurrent_writers_never_fork_a_chain(engine: &dyn Engine) {
    let s = subject(&mut *engine.connect().unwrap(), "ana/concurrent");
    let (writers, each) = (4usize, 25usize);
    std::thread::scope(|scope| {
        for w in 0..writers {
            let s = s.clone();
            let mut store = engine.connect().unwrap();
            scope.spawn(move || {
                for i in 0..each {
                    let e = episode(w * each + i, &format!("writer {w} turn {i}"));
                    store.write(|tx| tx.append(&s, &e)).unwrap();
                }
            });
        }
    });
    let store = engine.connect().unwrap();
    let n = (writers * each) as u64;
    assert_eq!(store.episode_count(&s).unwrap(), n);
    let seqs: Vec<u64> = store
        .episodes(&s, 1, usize::MAX)
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>());
    assert_eq!(verify(&*store, &s, None).unwrap().state, ChainState::Intact);
}

/// Facts learned later are appended beside an episode, oldest first.
pub fn annotations_are_appended(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/notes");
    let ids = fill(&mut *store, &s, 2);
    store
        .write(|tx| {
            tx.annotate(
                ids[0],
                "recalled",
                t(2, 0),
                &serde_json::json!({"ids": [1]}),
            )?;
            tx.annotate(
                ids[0],
                "grounding",
                t(2, 1),
                &serde_json::json!({"stance": "couldnt"}),
            )
        })
        .unwrap();
    let notes = store.annotations(ids[0]).unwrap();
    assert_eq!(
        notes.iter().map(|a| a.kind.as_str()).collect::<Vec<_>>(),
        ["recalled", "grounding"]
    );
    assert_eq!(notes[1].data["stance"], "couldnt");
    assert_eq!(store.annotations_of_kind(&s, "grounding").unwrap().len(), 1);
    assert_eq!(store.annotated_ids(&s, &ids, "recalled").unwrap(), [ids[0]]);
    let other = subject(&mut *store, "bo/notes");
    assert!(
        store
            .annotated_ids(&other, &ids, "recalled")
            .unwrap()
            .is_empty()
    );
}

/// A history file's checksum is recorded per subject.
pub fn imports_are_recorded(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/imports");
    assert!(!store.imported(&s, "abc").unwrap());
    store
        .write(|tx: &mut dyn Tx| tx.record_import(&s, "abc", "h.jsonl", t(1, 0), 3, 3))
        .unwrap();
    assert!(store.imported(&s, "abc").unwrap());
    let other = subject(&mut *store, "bo/imports");
    assert!(!store.imported(&other, "abc").unwrap());
}
