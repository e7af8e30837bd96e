//! The nightly loop's bookkeeping contract.

use super::fixtures::*;
use crate::{Engine, StoreExt};
use tm_model::episodes::Kind;
use tm_model::map::ConceptMap;
use tm_model::nightly::working_set::Stamp;
use tm_model::nightly::{SelfModelInput, calibrate, compose, working_set};

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
