//! The recall index's contract: full text, concepts, pools and vectors.

use super::fixtures::*;
use crate::{Engine, Error, StoreExt};
use tm_model::episodes::Kind;

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
    // Store-wide, the most first.
    assert_eq!(
        store.store_vector_models().unwrap(),
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
