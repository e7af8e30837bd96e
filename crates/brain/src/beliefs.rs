//! Beliefs as the brain keeps them: counted honestly and re-derived from the
//! recorded checks under today's rules, never by touching an episode.

use crate::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use tm_model::beliefs::{
    CheckCounts, RecordedCheck, Routing, concept_names, honest_sentence, rederive as replay, retire,
};
use tm_model::episodes::Episode;
use tm_model::episodes::{Kind, Verdict};
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;
use tm_store::{Reader, Store, StoreExt};

/// Every check of the subject, in time order, as the rules read it.
pub fn recorded_checks(store: &dyn Reader, subject: &Subject) -> Result<Vec<RecordedCheck>> {
    Ok(recorded_checks_in(&store.episodes_of_kind(
        subject,
        Kind::Check,
        DateTime::<Utc>::MAX_UTC,
    )?))
}

/// A check episode's verdict, if it records one.
pub fn verdict_of(e: &Episode) -> Option<Verdict> {
    match e.data.get("verdict").and_then(|v| v.as_str()) {
        Some("right") => Some(Verdict::Right),
        Some("partial") => Some(Verdict::Partial),
        Some("wrong") => Some(Verdict::Wrong),
        _ => None,
    }
}

/// The checks among `episodes`, in time order, as the rules read them.
pub fn recorded_checks_in(episodes: &[Episode]) -> Vec<RecordedCheck> {
    let mut checks = Vec::new();
    for e in episodes.iter().filter(|e| e.kind == Kind::Check) {
        let Some(verdict) = verdict_of(e) else {
            continue;
        };
        checks.push(RecordedCheck {
            episode_id: e.id,
            at: e.at,
            verdict,
            topic: e
                .data
                .get("topic")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string(),
            evaluation: e
                .data
                .get("evaluation")
                .and_then(|v| v.as_str())
                .map(str::to_string),
        });
    }
    checks.sort_by_key(|c| (c.at, c.episode_id));
    checks
}

/// How the subject's checks route under today's map and rules, and the sentence
/// that says so honestly ("32 checks are recorded, but none could yet be linked…").
#[derive(Debug, Clone, Serialize)]
pub struct Counts {
    pub recorded: usize,
    pub linked: usize,
    pub evidence_only: usize,
    pub unmapped: usize,
    pub sentence: Option<String>,
}

pub fn counts(store: &dyn Reader, subject: &Subject, map: &ConceptMap) -> Result<Counts> {
    Ok(counts_of(&recorded_checks(store, subject)?, map))
}

/// [`counts`] over checks already read.
pub fn counts_of(checks: &[RecordedCheck], map: &ConceptMap) -> Counts {
    let names = concept_names(map);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let routings: Vec<Routing> = checks.iter().map(|c| c.fact(&names).routing).collect();
    let c = CheckCounts::tally(&routings);
    Counts {
        recorded: c.recorded,
        linked: c.linked,
        evidence_only: c.evidence_only,
        unmapped: c.unmapped,
        sentence: honest_sentence(&c),
    }
}

/// What a re-derivation did.
#[derive(Debug, Clone, Serialize)]
pub struct Rederived {
    pub retired: usize,
    pub derived: usize,
    pub checks: usize,
}

/// Retires every current belief (a new "retired" row each; nothing deleted) and
/// replays every recorded check in time order under today's rules and map.
/// Touches no episode.
pub fn rederive(store: &mut dyn Store, subject: &Subject, at: DateTime<Utc>) -> Result<Rederived> {
    let map = crate::map::load(&*store, subject)?;
    let names = concept_names(&map);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let checks = recorded_checks(store, subject)?;
    let facts: Vec<_> = checks.iter().map(|c| c.fact(&names)).collect();
    let rows = replay(&facts);
    store.write_with(|tx| {
        tx.lock_subject(subject)?;
        let mut current = tx.current_beliefs(subject)?;
        // Retired in the order of what they are about, so the rows a
        // re-derivation writes do not depend on confidences.
        current.sort_by(|a, b| a.subject_key.cmp(&b.subject_key));
        for b in &current {
            tx.insert_belief(subject, &retire(b, at), b.id)?;
        }
        for r in &rows {
            tx.insert_belief(subject, r, None)?;
        }
        Ok::<_, crate::Error>(Rederived {
            retired: current.len(),
            derived: rows.len(),
            checks: checks.len(),
        })
    })
}
