//! The small per-subject set the next turn reads first: current beliefs, the
//! map's hub concepts, recent salient episodes, and the honest check sentence.
//!
//! It is a derived cache, rebuilt each night and replaced, never history. Its
//! [`Stamp`] says what it was built from: when the subject's chain head or
//! newest map snapshot differs, the set is stale and a reader recomputes what
//! it would have taken from it.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::beliefs::BeliefRow;
use crate::episodes::Kind;
use crate::map::ConceptMap;

/// Hub concepts kept (by centrality).
pub const HUBS: usize = 5;
/// Salient episodes kept.
pub const SALIENT: usize = 10;
/// How far back a salient episode may lie.
pub const SALIENT_DAYS: i64 = 30;
/// The least salience that counts as salient: a check or more (0.60).
pub const SALIENT_AT: f64 = 0.6;

/// What the set was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The seq of the subject's chain head (0: none): any append changes it.
    pub head_seq: i64,
    /// The id of the newest concept-map snapshot (0: none).
    pub map: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WsBelief {
    pub about: String,
    pub concept: String,
    pub claim: String,
    pub confidence: f64,
    pub flagged: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WsEpisode {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub kind: Kind,
    pub salience: f64,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkingSet {
    pub at: DateTime<Utc>,
    pub stamp: Stamp,
    pub beliefs: Vec<WsBelief>,
    pub hubs: Vec<String>,
    pub salient: Vec<WsEpisode>,
    /// Checks recorded and linked, and the sentence saying so, under the map
    /// of `stamp` (what the block prints when not every check is linked).
    pub checks_recorded: usize,
    pub checks_linked: usize,
    pub honest_checks: Option<String>,
}

impl WorkingSet {
    /// Whether the set still describes the subject whose current stamp is `now`.
    pub fn fresh(&self, now: Stamp) -> bool {
        self.stamp == now
    }
}

/// Builds the set. `recent` is any slice of the subject's episodes; those in
/// the last [`SALIENT_DAYS`] days before `at` with salience ≥ [`SALIENT_AT`]
/// are kept, most salient then newest first.
#[allow(clippy::too_many_arguments)]
pub fn build(
    at: DateTime<Utc>,
    stamp: Stamp,
    beliefs: &[BeliefRow],
    map: &ConceptMap,
    recent: &[WsEpisode],
    checks_recorded: usize,
    checks_linked: usize,
    honest_checks: Option<String>,
) -> WorkingSet {
    let mut hubs: Vec<(&str, f64)> = map
        .nodes()
        .iter()
        .map(|n| (n.name.as_str(), n.centrality))
        .collect();
    hubs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let since = at - Duration::days(SALIENT_DAYS);
    let mut salient: Vec<&WsEpisode> = recent
        .iter()
        .filter(|e| {
            e.kind != Kind::Consolidation && e.salience >= SALIENT_AT && e.at > since && e.at <= at
        })
        .collect();
    salient.sort_by(|a, b| {
        b.salience
            .total_cmp(&a.salience)
            .then(b.at.cmp(&a.at))
            .then(b.id.cmp(&a.id))
    });
    let mut beliefs: Vec<WsBelief> = beliefs
        .iter()
        .filter(|b| b.superseded_by.is_none() && b.claim != crate::beliefs::Claim::Retired)
        .map(|b| WsBelief {
            about: b.subject_key.clone(),
            concept: b.concept.clone().unwrap_or_else(|| b.subject_key.clone()),
            claim: b.claim.as_str().to_string(),
            confidence: b.confidence,
            flagged: b.flagged,
        })
        .collect();
    beliefs.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.about.cmp(&b.about))
    });
    WorkingSet {
        at,
        stamp,
        beliefs,
        hubs: hubs
            .into_iter()
            .take(HUBS)
            .map(|(n, _)| n.to_string())
            .collect(),
        salient: salient.into_iter().take(SALIENT).cloned().collect(),
        checks_recorded,
        checks_linked,
        honest_checks,
    }
}
