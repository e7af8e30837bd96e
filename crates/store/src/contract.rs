//! The store contract: what every engine must do, checked through the
//! traits alone (no SQL), so one suite serves every engine. An engine's test
//! file runs it with [`store_contract!`](crate::store_contract), giving an
//! expression that makes a fresh engine (and whatever must outlive it):
//!
//! ```ignore
//! tm_store::store_contract!({
//!     let dir = tempfile::tempdir().unwrap();
//!     let engine = tm_store::sqlite::SqliteEngine::open(dir.path().join("c.db")).unwrap();
//!     (dir, std::sync::Arc::new(engine) as std::sync::Arc<dyn tm_store::Engine>)
//! });
//! ```
//!
//! What stays engine-specific (and is tested beside each engine): that the
//! database itself refuses an UPDATE or DELETE of an episode behind the
//! interface's back, migrations of old files, and the full-text ranking's
//! exact scores (only their order is the contract).

use crate::{Engine, Error, Store, StoreExt, Tx, checkpoint, verify};
use chrono::{DateTime, Duration, TimeZone, Utc};
use tm_model::beliefs::{BeliefRow, Claim};
use tm_model::episodes::{ChainState, Evidence, Kind, NewEpisode, VersionRef, salience};
use tm_model::files::FileAdded;
use tm_model::map::{ConceptMap, ExtractedConcept};
use tm_model::nightly::working_set::{self, Stamp};
use tm_model::nightly::{SelfModelInput, calibrate, compose};
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::{Claim as Taking, Owner};

/// Runs every contract check as its own `#[test]` against the engine `$make`
/// evaluates to: a `(guard, Arc<dyn Engine>)` pair, the guard kept alive for
/// the test (a temporary folder, a throwaway server).
#[macro_export]
macro_rules! store_contract {
    ($make:expr) => {
        $crate::store_contract!(@tests $make;
            appends_form_one_verified_chain,
            a_failed_transaction_leaves_nothing,
            external_ids_are_unique_within_a_subject,
            import_keys_find_their_episode,
            concurrent_writers_never_fork_a_chain,
            subjects_keep_their_time_zone,
            files_are_versioned_and_split_into_passages,
            full_text_concepts_and_pools,
            full_text_ranks_the_newest_hits_past_the_bound,
            vectors_are_stored_per_model,
            annotations_are_appended,
            maps_are_snapshots,
            beliefs_are_superseded_never_changed,
            nightly_bookkeeping,
            tenants_own_learners_and_keys,
            imports_are_recorded
        );
    };
    (@tests $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let (_guard, engine) = $make;
                $crate::contract::$name(&*engine);
            }
        )*
    };
}

fn t(day: u32, minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, 9, 0, 0).unwrap() + Duration::minutes(minute)
}

fn subject(store: &mut dyn Store, key: &str) -> Subject {
    let key = SubjectKey::parse(key).unwrap();
    store
        .write(|tx| tx.ensure_subject(Owner::Operator, &key, "Cells", Some("en"), t(1, 0)))
        .unwrap()
}

fn episode(i: usize, text: &str) -> NewEpisode {
    let kind = if i.is_multiple_of(3) {
        Kind::Check
    } else {
        Kind::Question
    };
    let mut data = serde_json::Map::new();
    if kind == Kind::Check {
        data.insert("topic".into(), "osmosis".into());
        data.insert("verdict".into(), "wrong".into());
    }
    NewEpisode {
        kind,
        at: t(1, i as i64),
        salience: salience(kind, None),
        summary: format!("episode {i}"),
        text: text.to_string(),
        concepts: vec![format!("Organelle {}", i % 3)],
        evidence: Vec::new(),
        data,
        external_id: None,
        import_key: None,
        salt: None,
    }
}

fn fill(store: &mut dyn Store, s: &Subject, n: usize) -> Vec<i64> {
    store
        .write(|tx| {
            (0..n)
                .map(|i| {
                    tx.append(s, &episode(i, &format!("What does organelle {i} do?")))
                        .map(|a| a.id)
                })
                .collect::<crate::Result<Vec<_>>>()
        })
        .unwrap()
}

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

/// A subject is created once, keeps its fields, and takes a time zone.
pub fn subjects_keep_their_time_zone(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/zone");
    let key = s.key.clone();
    let again = store
        .write(|tx| tx.ensure_subject(Owner::Operator, &key, "Another title", None, t(5, 0)))
        .unwrap();
    assert_eq!(again, s, "an existing subject is returned as it is");
    assert_eq!(s.title, "Cells");
    assert_eq!(s.timezone, None);
    store
        .write(|tx| tx.set_timezone(&s, chrono_tz::Europe::Berlin))
        .unwrap();
    let s = store.subject(&key).unwrap().unwrap();
    assert_eq!(s.timezone, Some(chrono_tz::Europe::Berlin));
    assert!(store.subjects().unwrap().iter().any(|x| x.key == key));
    let missing = SubjectKey::parse("nobody/nothing").unwrap();
    assert_eq!(store.subject(&missing).unwrap(), None);
}

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

/// Past [`TERM_HITS_BOUND`](crate::TERM_HITS_BOUND) hits only the newest are
/// ranked, in both kinds of query (one word; a word and a phrase of two), and
/// equal scores come in id order.
pub fn full_text_ranks_the_newest_hits_past_the_bound(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/bound");
    let old = 50;
    let ids = store
        .write(|tx| {
            let mut ids = Vec::new();
            for i in 0..old + crate::TERM_HITS_BOUND {
                // The oldest hold the words more often: ranked, they would win.
                let text = if i < old {
                    "osmosis osmosis osmosis on the salty side"
                } else {
                    "osmosis moves water"
                };
                ids.push(tx.append(&s, &episode(i + 1, text))?.id);
            }
            Ok::<_, Error>(ids)
        })
        .unwrap();
    for terms in [vec!["osmosis"], vec!["osmosis", "salty-side"]] {
        let terms: Vec<String> = terms.into_iter().map(String::from).collect();
        let hits = store.term_hits(&s, &terms, 10).unwrap();
        let found: Vec<i64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(found, ids[old..old + 10], "{terms:?}: {hits:?}");
        assert!(hits.windows(2).all(|w| w[0].1 == w[1].1 && w[0].1 > 0.0));
        let all = store.term_hits(&s, &terms, usize::MAX >> 2).unwrap();
        assert_eq!(all.len(), crate::TERM_HITS_BOUND, "{terms:?}");
    }
    // Under the bound every hit is ranked: the oldest come first.
    let few = subject(&mut *store, "bo/bound");
    let few_ids = store
        .write(|tx| {
            let mut ids = Vec::new();
            for (i, text) in ["osmosis moves water", "osmosis osmosis osmosis", "osmosis"]
                .iter()
                .enumerate()
            {
                ids.push(tx.append(&few, &episode(i + 1, text))?.id);
            }
            Ok::<_, Error>(ids)
        })
        .unwrap();
    let hits = store.term_hits(&few, &["osmosis".to_string()], 10).unwrap();
    let found: Vec<i64> = hits.iter().map(|h| h.0).collect();
    assert_eq!(found[0], few_ids[1], "{hits:?}");
    assert_eq!(found.len(), 3);
}

/// Recall's pools: terms, concepts, recency, windows, the light facts.
pub fn full_text_concepts_and_pools(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/pools");
    let ids = store
        .write(|tx| {
            let mut ids = Vec::new();
            for (i, text) in [
                "Osmosis moves water through the membrane",
                "Ribosomes build proteins",
                "Check on osmosis: wrong. Water moves to the salty side",
                "The nucleus holds DNA",
            ]
            .iter()
            .enumerate()
            {
                ids.push(tx.append(&s, &episode(i + 1, text))?.id);
            }
            Ok::<_, Error>(ids)
        })
        .unwrap();
    let hits = store
        .term_hits(&s, &["ribosomes".to_string(), "nucleus".to_string()], 10)
        .unwrap();
    let mut found: Vec<i64> = hits.iter().map(|h| h.0).collect();
    found.sort();
    assert_eq!(found, [ids[1], ids[3]]);
    assert!(hits.iter().all(|h| h.1 > 0.0));
    let hostile = store
        .term_hits(&s, &["\" OR s1 NEAR(".to_string(), "*".to_string()], 10)
        .unwrap();
    assert!(
        hostile.is_empty(),
        "query syntax in a term is text: {hostile:?}"
    );
    assert!(store.term_hits(&s, &[], 10).unwrap().is_empty());
    // Counting is the hits without their order, up to the limit.
    assert_eq!(store.term_count(&s, "osmosis", 10).unwrap(), 2);
    assert_eq!(store.term_count(&s, "osmosis", 1).unwrap(), 1);
    assert_eq!(store.term_count(&s, "\" OR s1 NEAR(", 10).unwrap(), 0);
    // A word's other forms: the subject's words from a prefix on, in byte
    // order, and never another subject's.
    assert_eq!(
        store.terms_with_prefix(&s, "mo", &|_| true, 10).unwrap(),
        ["moves"],
        "words of the subject that start with the prefix"
    );
    assert_eq!(
        store.terms_with_prefix(&s, "osmo", &|_| true, 10).unwrap(),
        ["osmosis"]
    );
    assert_eq!(
        store.terms_with_prefix(&s, "\" OR", &|_| true, 10).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        store.terms_with_prefix(&s, "", &|_| true, 10).unwrap(),
        Vec::<String>::new()
    );
    let other = subject(&mut *store, "bo/pools");
    assert_eq!(store.term_count(&other, "osmosis", 10).unwrap(), 0);
    store
        .write(|tx| {
            tx.append(&other, &episode(9, "Mosses and motors"))
                .map(|_| ())
        })
        .unwrap();
    assert_eq!(
        store.terms_with_prefix(&s, "mo", &|_| true, 10).unwrap(),
        ["moves"]
    );
    assert_eq!(
        store
            .terms_with_prefix(&other, "mo", &|_| true, 10)
            .unwrap(),
        ["mosses", "motors"]
    );
    assert_eq!(
        store
            .terms_with_prefix(&other, "mo", &|w| w != "mosses", 1)
            .unwrap(),
        ["motors"]
    );
    assert_eq!(
        store.terms_with_prefix(&other, "mo", &|_| true, 1).unwrap(),
        ["mosses"]
    );
    assert!(
        store
            .term_hits(&other, &["ribosomes".to_string()], 10)
            .unwrap()
            .is_empty()
    );

    let keys = store.concept_keys(&s).unwrap();
    assert_eq!(keys, ["organelle 0", "organelle 1", "organelle 2"]);
    let touching = store
        .concept_ids(&s, &["organelle 1".to_string()], 10)
        .unwrap();
    assert_eq!(touching, [ids[3], ids[0]], "newest first");
    // Several concepts: their episodes once each, newest first, up to the limit.
    let (one, two) = ("organelle 1".to_string(), "organelle 2".to_string());
    let mut both = store
        .concept_ids(&s, std::slice::from_ref(&two), 10)
        .unwrap();
    both.extend(&touching);
    both.sort_unstable_by(|a, b| b.cmp(a));
    both.dedup();
    assert!(both.len() > touching.len());
    assert_eq!(
        store
            .concept_ids(&s, &[one.clone(), two.clone(), one.clone()], 10)
            .unwrap(),
        both
    );
    assert_eq!(store.concept_ids(&s, &[two, one], 2).unwrap(), both[..2]);
    assert_eq!(
        store.recent_ids(&s, t(1, 3), 10).unwrap(),
        [ids[2], ids[1], ids[0]]
    );
    assert_eq!(
        store.window_ids(&s, t(1, 2), t(1, 4), 10).unwrap(),
        [ids[2], ids[1]]
    );
    let facts = store.candidate_facts(&s, &ids).unwrap();
    assert_eq!(facts.len(), 4);
    // Every read by ids is keyed by the subject too: another subject's
    // episodes never come back (and on a sharded database the query stays
    // on one shard).
    assert!(store.candidate_facts(&other, &ids).unwrap().is_empty());
    assert!(store.texts(&other, &ids).unwrap().is_empty());
    let check = facts.iter().find(|f| f.id == ids[2]).unwrap();
    assert_eq!(check.kind, Kind::Check);
    assert_eq!(
        (check.topic.as_deref(), check.verdict.as_deref()),
        (Some("osmosis"), Some("wrong"))
    );
    assert_eq!(
        store.texts(&s, &ids[1..2]).unwrap()[0].1,
        "Ribosomes build proteins"
    );
}

/// Vectors are kept per embedder and replaced, never part of the chain.
pub fn vectors_are_stored_per_model(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/vectors");
    let ids = fill(&mut *store, &s, 3);
    assert_eq!(store.count_missing_vectors(&s, "m").unwrap(), 3);
    let before = store.vector_stamp(&s, "m").unwrap();
    store
        .write(|tx| {
            tx.put_vectors(
                &s,
                "m",
                &[(ids[0], vec![1.0, 0.0]), (ids[1], vec![0.0, 1.0])],
            )
        })
        .unwrap();
    assert_ne!(store.vector_stamp(&s, "m").unwrap(), before);
    assert_eq!(
        store.vectors(&s, "m").unwrap(),
        [(ids[0], vec![1.0, 0.0]), (ids[1], vec![0.0, 1.0])]
    );
    assert_eq!(store.count_missing_vectors(&s, "m").unwrap(), 1);
    let missing = store.episodes_missing_vectors(&s, "m", 10).unwrap();
    assert_eq!(missing.iter().map(|m| m.0).collect::<Vec<_>>(), [ids[2]]);
    // A new episode's vector moves the stamp by one, and is all that lies
    // after the old stamp's max id.
    let two = store.vector_stamp(&s, "m").unwrap();
    assert_eq!(two.1, ids[1]);
    store
        .write(|tx| tx.put_vectors(&s, "m", &[(ids[2], vec![0.6, 0.8])]))
        .unwrap();
    let three = store.vector_stamp(&s, "m").unwrap();
    assert_eq!((three.0 - two.0, three.1), (1, ids[2]));
    assert_eq!(
        store.vectors_after(&s, "m", two.1).unwrap(),
        [(ids[2], vec![0.6, 0.8])]
    );
    store
        .write(|tx| tx.put_vectors(&s, "other", &[(ids[0], vec![0.5, 0.5])]))
        .unwrap();
    assert_eq!(
        store.vector_models(&s).unwrap(),
        [("m".to_string(), 2), ("other".to_string(), 1)]
    );

    let pages = vec!["Osmosis moves water.".to_string()];
    let version = store
        .write(|tx| tx.add_file(&s, "a.md", b"a", "markdown", &pages, t(1, 0)))
        .unwrap()
        .version()
        .clone();
    let (pid, _) = store.version_passages(version.id).unwrap()[0].clone();
    assert_eq!(
        store.passages_missing_vectors(&s, "m", 10).unwrap().len(),
        1
    );
    store
        .write(|tx| tx.put_passage_vectors("m", &[(pid, vec![0.25, 0.75])]))
        .unwrap();
    assert_eq!(
        store.passage_vectors(&s, "m").unwrap(),
        [(pid, vec![0.25, 0.75])]
    );
    assert!(
        store
            .passages_missing_vectors(&s, "m", 10)
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.passages_by_ids(&s, &[pid, -1]).unwrap()[0].0, pid);
    let other = subject(&mut *store, "bo/passages");
    assert!(store.passages_by_ids(&other, &[pid]).unwrap().is_empty());
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

/// The newest snapshot is the map; every save is a new one.
pub fn maps_are_snapshots(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/map");
    assert_eq!(store.latest_map(&s).unwrap(), None);
    assert_eq!(store.latest_map_id(&s).unwrap(), None);
    let mut map = ConceptMap::new();
    map.merge_file(
        "cells.md",
        Some(1),
        &[ExtractedConcept {
            name: "Osmosis".into(),
            gist: "Water moves across a membrane.".into(),
            definition: "Osmosis is the movement of water.".into(),
            pages: vec![1],
            ..Default::default()
        }],
        &|_, _| 0.0,
        f32::INFINITY,
    );
    store
        .write(|tx| tx.save_map(&s, t(1, 0), "first", &ConceptMap::new()))
        .unwrap();
    let first = store.latest_map_id(&s).unwrap();
    store
        .write(|tx| tx.save_map(&s, t(1, 1), "second", &map))
        .unwrap();
    let second = store.latest_map_id(&s).unwrap();
    assert!(second > first);
    assert_eq!(store.latest_map(&s).unwrap(), Some(map));
    let (_, map_stamp) = store.subject_stamp(&s).unwrap();
    assert_eq!(Some(map_stamp), second);
}

fn belief(s: &Subject, claim: Claim, confidence: f64, about: &str, at: DateTime<Utc>) -> BeliefRow {
    BeliefRow {
        id: None,
        subject_key: about.to_string(),
        concept: Some(about.to_string()),
        unmapped: false,
        claim,
        confidence,
        alpha: 1.0,
        beta: 1.0,
        support: vec![],
        created_at: at,
        reason: format!("check on {} of {}", about, s.key),
        flagged: false,
        superseded_by: None,
    }
}

/// A change of mind is a new row; the old one points at it.
pub fn beliefs_are_superseded_never_changed(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/beliefs");
    let first = store
        .write(|tx| {
            tx.insert_belief(
                &s,
                &belief(&s, Claim::StillLearning, 0.4, "osmosis", t(1, 0)),
                None,
            )?;
            tx.insert_belief(
                &s,
                &belief(&s, Claim::Understands, 0.9, "diffusion", t(1, 1)),
                None,
            )
        })
        .unwrap();
    let old = store.current_belief(&s, "osmosis").unwrap().unwrap();
    let new = store
        .write(|tx| {
            tx.insert_belief(
                &s,
                &belief(&s, Claim::StrugglesWith, 0.2, "osmosis", t(2, 0)),
                old.id,
            )
        })
        .unwrap();
    let current = store.current_beliefs(&s).unwrap();
    assert_eq!(
        current.iter().map(|b| b.id).collect::<Vec<_>>(),
        [Some(first), Some(new)],
        "by confidence, highest first"
    );
    let history = store.belief_history(&s, "osmosis").unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].superseded_by, Some(new));
    assert_eq!(history[1].claim, Claim::StrugglesWith);
    let twice = store.write(|tx| {
        tx.insert_belief(
            &s,
            &belief(&s, Claim::Understands, 0.9, "osmosis", t(3, 0)),
            old.id,
        )
    });
    assert!(twice.is_err(), "a belief is superseded once");
}

/// The night's run log, its caches and its citation bookkeeping.
pub fn nightly_bookkeeping(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/night");
    let ids = fill(&mut *store, &s, 4);
    assert!(
        store
            .active_subjects(t(1, 0), t(1, 10))
            .unwrap()
            .iter()
            .any(|a| a.id == s.id)
    );
    assert!(
        !store
            .active_subjects(t(2, 0), t(3, 0))
            .unwrap()
            .iter()
            .any(|a| a.id == s.id)
    );
    assert_eq!(
        store.episodes_between(&s, t(1, 0), t(1, 2)).unwrap().len(),
        2
    );
    assert_eq!(
        store
            .episodes_of_kind(&s, Kind::Check, t(1, 10))
            .unwrap()
            .len(),
        2
    );
    assert_eq!(store.episode_counts(&s, t(1, 10)).unwrap()["check"], 2);
    assert!(!store.nightly_ran(&s, "2026-03-01").unwrap());
    store
        .write(|tx| tx.record_nightly(&s, "2026-03-01", t(2, 0), &serde_json::json!({"ran": 1})))
        .unwrap();
    assert!(store.nightly_ran(&s, "2026-03-01").unwrap());
    assert!(
        store
            .write(|tx| tx.record_nightly(&s, "2026-03-01", t(2, 0), &serde_json::json!({})))
            .is_err(),
        "a night runs once per subject and day"
    );

    let (head_seq, map_id) = store.subject_stamp(&s).unwrap();
    assert_eq!((head_seq, map_id), (4, 0));
    let ws = working_set::build(
        t(2, 0),
        Stamp {
            head_seq,
            map: map_id,
        },
        &[],
        &ConceptMap::new(),
        &[],
        2,
        0,
        Some("2 checks are recorded".into()),
    );
    let calibration = calibrate(&[]);
    let model = compose(&SelfModelInput {
        at: t(2, 0),
        episodes: store.episode_counts(&s, t(2, 0)).unwrap(),
        beliefs: 0,
        flagged: 0,
        checks_recorded: 2,
        checks_linked: 0,
        calibration: &calibration,
        stale_citations: 0,
        unverifiable: 0,
    });
    store
        .write(|tx| {
            tx.put_working_set(&s, t(2, 0), &ws)?;
            tx.put_self_model(&s, t(2, 0), &model)?;
            tx.put_self_model(&s, t(2, 1), &model)
        })
        .unwrap();
    assert_eq!(store.working_set(&s).unwrap(), Some(ws));
    assert_eq!(store.self_model(&s).unwrap(), Some(model));

    let batch = store.citation_batch(&s, t(2, 0), 3).unwrap();
    assert_eq!(
        batch
            .iter()
            .map(|(e, c)| (e.id, c.is_none()))
            .collect::<Vec<_>>(),
        [(ids[0], true), (ids[1], true), (ids[2], true)],
        "never checked first, oldest first"
    );
    store
        .write(|tx| {
            tx.record_citation_check(&s, ids[0], t(2, 0), "unverifiable", "unverifiable")?;
            tx.record_citation_check(&s, ids[1], t(2, 0), "changed", "changed: removed")?;
            tx.record_citation_check(&s, ids[1], t(2, 1), "changed", "changed: removed")
        })
        .unwrap();
    let next = store.citation_batch(&s, t(2, 2), 4).unwrap();
    assert_eq!(
        next[0].0.id, ids[2],
        "the unchecked come before the checked"
    );
    assert_eq!(next[2].0.id, ids[0], "then the longest since checked");
    assert_eq!(
        next[2].1.as_ref().map(|c| c.status.as_str()),
        Some("unverifiable")
    );
    assert_eq!(store.citation_checks(&s, "changed").unwrap().len(), 1);
    assert_eq!(store.citation_status_counts(&s).unwrap()["changed"], 1);
    let months = store.activity_by_month(&s).unwrap();
    assert!(months.iter().all(|m| m.0 == "2026-03"), "{months:?}");
    assert_eq!(months.iter().map(|m| m.3).sum::<usize>(), 4);
}

/// Keys belong to tenants; learner names are per owner; a subject erased
/// whole is retired and frees its name.
pub fn tenants_own_learners_and_keys(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let key = store
        .write(|tx| tx.add_api_key("acme", "aaaabbbbcccc", &"d".repeat(64), false, t(1, 0)))
        .unwrap();
    assert_eq!((key.tenant.as_str(), key.admin), ("acme", false));
    let owner = store.key_by_prefix("aaaabbbbcccc").unwrap().unwrap();
    assert_eq!((owner.tenant.as_str(), owner.revoked), ("acme", false));
    assert_eq!(owner.sha256, "d".repeat(64));
    assert!(store.api_keys().unwrap().iter().any(|k| k.id == key.id));
    let revoked = store
        .write(|tx| tx.revoke_api_key("aaaabbbbcccc", t(2, 0)))
        .unwrap()
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(t(2, 0)));
    let again = store
        .write(|tx| tx.revoke_api_key("aaaabbbbcccc", t(3, 0)))
        .unwrap()
        .unwrap();
    assert_eq!(again.revoked_at, Some(t(2, 0)), "the first instant stays");
    assert!(
        store
            .key_by_prefix("aaaabbbbcccc")
            .unwrap()
            .unwrap()
            .revoked
    );
    assert!(
        store
            .write(|tx| tx.revoke_api_key("nope", t(3, 0)))
            .unwrap()
            .is_none()
    );

    let acme = owner.tenant_id;
    let zoe_key = SubjectKey::parse("zoe/cells").unwrap();
    let make = |store: &mut dyn Store, owner: Owner| {
        store
            .write(|tx| tx.ensure_subject(owner, &zoe_key, "Cells", Some("en"), t(1, 0)))
            .unwrap()
    };
    let zoe = make(&mut *store, Owner::Tenant(acme));
    assert_eq!(zoe.owner, Owner::Tenant(acme));
    assert_eq!(
        store
            .tenant_subjects(acme)
            .unwrap()
            .iter()
            .map(|s| s.key.to_string())
            .collect::<Vec<_>>(),
        ["zoe/cells"]
    );
    let other = store
        .write(|tx| tx.add_api_key("globex", "eeeeffff0000", &"e".repeat(64), true, t(1, 0)))
        .unwrap();
    let globex = store
        .key_by_prefix(&other.prefix)
        .unwrap()
        .unwrap()
        .tenant_id;
    // Learner names are per tenant: globex has a zoe of its own.
    let theirs = make(&mut *store, Owner::Tenant(globex));
    assert_ne!(theirs.id, zoe.id);
    assert_eq!(
        make(&mut *store, Owner::Tenant(acme)),
        zoe,
        "found, not made again"
    );
    assert_eq!(
        store.subject_of(Owner::Tenant(acme), &zoe_key).unwrap(),
        Some(zoe.clone())
    );
    assert_eq!(
        store.subject_of(Owner::Tenant(globex), &zoe_key).unwrap(),
        Some(theirs.clone())
    );
    assert_eq!(store.subject_of(Owner::Operator, &zoe_key).unwrap(), None);
    match store.subject(&zoe_key) {
        Err(e @ Error::AmbiguousSubject { .. }) => {
            let said = e.to_string();
            assert!(
                said.contains("tenant acme") && said.contains("tenant globex"),
                "{said}"
            );
        }
        other => panic!("the operator's lookup of a shared name: {other:?}"),
    }
    // A learner the operator made becomes a tenant's when assigned, unless
    // the tenant has one of that name.
    let cli = subject(&mut *store, "cli-made/cells");
    assert_eq!(cli.owner, Owner::Operator);
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("cli-made", "globex", t(1, 0)))
            .unwrap(),
        Some(Taking::Mine)
    );
    assert_eq!(
        store.subject(&cli.key).unwrap().map(|s| s.owner),
        Some(Owner::Tenant(globex))
    );
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("cli-made", "acme", t(1, 0)))
            .unwrap(),
        None,
        "the operator has no cli-made any more, nor has acme"
    );
    subject(&mut *store, "zoe/notes");
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("zoe", "acme", t(1, 0)))
            .unwrap(),
        Some(Taking::Taken),
        "acme has a zoe already"
    );
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("nobody", "acme", t(1, 0)))
            .unwrap(),
        None
    );
    // A subject erased whole is retired: it stays found (its chain and the
    // erasure are kept) until a new subject takes its name.
    let erasure = tm_model::episodes::NewErasure {
        at: t(2, 0),
        scope: "learner".into(),
        target: "zoe".into(),
        reference: String::new(),
        reason: String::new(),
    };
    store
        .write(|tx| tx.erase(&erasure, std::slice::from_ref(&zoe)))
        .unwrap();
    let retired = store
        .subject_of(Owner::Tenant(acme), &zoe_key)
        .unwrap()
        .unwrap();
    assert_eq!((retired.id, retired.retired), (zoe.id, true));
    let again = make(&mut *store, Owner::Tenant(acme));
    assert!(again.id != zoe.id && !again.retired);
    assert_eq!(
        store.subject_of(Owner::Tenant(acme), &zoe_key).unwrap(),
        Some(again.clone())
    );
    assert_eq!(
        store
            .tenant_subjects(acme)
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        [again.id],
        "a name lists the subject it resolves to"
    );
    assert_eq!(
        store
            .subjects()
            .unwrap()
            .iter()
            .filter(|s| s.key == zoe_key)
            .count(),
        3,
        "the operator lists every subject, the retired one too"
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
