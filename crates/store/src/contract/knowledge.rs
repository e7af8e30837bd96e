//! The concept map's and beliefs' contract.

use super::fixtures::*;
use crate::{Engine, StoreExt};
use chrono::{DateTime, Utc};
use tm_model::beliefs::{BeliefRow, Claim};
use tm_model::map::{ConceptMap, ExtractedConcept};
use tm_model::subject::Subject;

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
