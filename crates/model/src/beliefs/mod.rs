//! What the tutor believes about a learner on each concept, how sure it is,
//! why it changed its mind, and how that history is replayed under new rules.
//!
//! Pure rules only: the store persists rows and the pointer between them, and
//! calls these functions with explicit instants.
//!
//! # Rows never change
//! A belief row is never updated into a different claim. Every change (a check,
//! a decay, a re-derivation, a retirement) yields a **new** row; the caller
//! inserts it and points the previous row's `superseded_by` at it, the only
//! column that is ever written after insert. Current beliefs are the rows
//! nothing superseded ([`current`]).
//!
//! # Confidence: a Beta posterior over verdicts
//! Each subject carries Beta(α, β), starting from the uniform prior
//! Beta([`PRIOR_ALPHA`], [`PRIOR_BETA`]) = Beta(1, 1). A check adds its verdict
//! as evidence: right = one success (α + 1), wrong = one failure (β + 1),
//! partial = half of each (α + ½, β + ½). Confidence is the posterior mean
//! α / (α + β). Why Beta:
//! * it needs few observations: one check already moves the mean (1 right →
//!   0.67, 1 wrong → 0.33), and the prior keeps one check from reading as certainty;
//! * "partial" as half a success is the natural reading of a half-right answer
//!   and needs no extra parameter;
//! * the mean is a ranking of how likely the next check is passed, which is
//!   exactly what calibration (docs/mechanisms.md §8) then tests against verdicts; until that
//!   says "calibrated", treat it as a ranking, not a probability.
//!
//! # Claims and thresholds
//! * `understands` when confidence ≥ [`UNDERSTANDS_AT`] (0.6);
//! * `struggles with` when confidence ≤ [`STRUGGLES_AT`] (0.4);
//! * `is still learning` in between.
//!
//! With the Beta(1, 1) prior a single right check (0.67) or wrong check (0.33)
//! makes a claim, as a tutor would after one clear answer; a single partial
//! (0.50) or a wrong followed by a right (0.50) does not. The middle band is
//! 0.2 wide so that one more verdict of the other kind (±0.08 to ±0.17 at
//! small counts) is needed to flip a claim, not just a rounding.
//!
//! # Decay
//! A belief untouched for [`DECAY_AFTER_DAYS`] days loses [`DECAY_FACTOR`]'s
//! complement (15 %) of its confidence and is flagged for the next check to
//! reconfirm. α is scaled by the factor and the removed mass moved to β
//! (α' = 0.85 α, β' = β + 0.15 α), so the confidence drops by exactly 15 %
//! while α + β (how much evidence a next check weighs against) is unchanged:
//! a later check moves the belief as far as it would have before the decay.
//! The claim is recomputed from the new confidence. The next check clears the flag.
//!
//! # Re-derivation
//! [`rederive`] replays checks in time order under today's rules (the caller
//! re-routes them with [`route_check`] first) and returns one row per subject.
//! The caller retires each current row ([`retire`]: a new row, reason "retired")
//! and inserts the re-derived ones; no episode is touched.

mod routing;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use crate::episodes::Verdict;
use crate::lang::canonical_key;

pub use routing::{
    Routing, SENTENCE_WORDS, Via, concept_names, reads_as_sentence, reads_as_utterance,
    route_check, route_in_map,
};

/// Version of the belief rules. v1 took a check's topic as given (the article's
/// first rule, which produced "understands ask me the questions"); v2 routes by
/// name through the evaluation and keeps utterances as evidence.
pub const RULES_VERSION: u32 = 2;

pub const PRIOR_ALPHA: f64 = 1.0;
pub const PRIOR_BETA: f64 = 1.0;
pub const UNDERSTANDS_AT: f64 = 0.6;
pub const STRUGGLES_AT: f64 = 0.4;
pub const DECAY_AFTER_DAYS: i64 = 45;
pub const DECAY_FACTOR: f64 = 0.85;

/// What can be wrong with the rows handed to these rules.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The current belief passed in is about another subject than the check.
    #[error("belief is about {belief:?} but the check is about {check:?}")]
    SubjectMismatch { belief: String, check: String },
    /// A decay factor outside [0, 1] or not a number: a configuration error.
    #[error("decay factor {factor} is not in [0, 1]")]
    BadDecayFactor { factor: f64 },
    /// A stored posterior that no rule could have produced (negative, zero or not finite).
    #[error("belief {id:?} has an impossible posterior Beta({alpha}, {beta})")]
    BadPosterior {
        id: Option<i64>,
        alpha: f64,
        beta: f64,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// What the tutor thinks of the learner on one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    Understands,
    StillLearning,
    StrugglesWith,
    /// End of a chain: retired before a re-derivation. Never current.
    Retired,
}

impl Claim {
    /// The claim for a confidence, by the thresholds in the module docs.
    pub fn for_confidence(confidence: f64) -> Claim {
        if confidence >= UNDERSTANDS_AT {
            Claim::Understands
        } else if confidence <= STRUGGLES_AT {
            Claim::StrugglesWith
        } else {
            Claim::StillLearning
        }
    }

    /// Stable text, also how the claim reads before its subject.
    pub fn as_str(self) -> &'static str {
        match self {
            Claim::Understands => "understands",
            Claim::StillLearning => "is still learning",
            Claim::StrugglesWith => "struggles with",
            Claim::Retired => "retired",
        }
    }

    pub fn parse(s: &str) -> Option<Claim> {
        [
            Claim::Understands,
            Claim::StillLearning,
            Claim::StrugglesWith,
            Claim::Retired,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// One belief row as stored. `id` and `superseded_by` are the store's; every
/// other field is fixed at insert.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BeliefRow {
    pub id: Option<i64>,
    /// Canonical key of the concept's name, or of the unmapped topic.
    pub subject_key: String,
    /// Display name (the concept's name, or the topic as written).
    pub concept: Option<String>,
    /// The subject is a topic outside the concept map.
    pub unmapped: bool,
    pub claim: Claim,
    pub confidence: f64,
    pub alpha: f64,
    pub beta: f64,
    /// Episode ids of the checks behind this belief, ascending.
    pub support: Vec<i64>,
    pub created_at: DateTime<Utc>,
    /// Why this row exists: "check 2026-09-18 wrong", "decayed", "retired",
    /// "re-derived under rules v2".
    pub reason: String,
    /// Decayed and waiting for a check to reconfirm it.
    pub flagged: bool,
    /// The row that replaced this one; `None` while it is current.
    pub superseded_by: Option<i64>,
}

/// A row to insert: `id` and `superseded_by` are `None`.
pub type NewBelief = BeliefRow;

/// A recorded check, routed: what the rules need from a check episode.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFact {
    pub episode_id: i64,
    pub at: DateTime<Utc>,
    pub verdict: Verdict,
    pub routing: Routing,
}

/// A recorded check before routing: lets a re-derivation route again under
/// today's map and word lists.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCheck {
    pub episode_id: i64,
    pub at: DateTime<Utc>,
    pub verdict: Verdict,
    pub topic: String,
    pub evaluation: Option<String>,
}

impl RecordedCheck {
    /// Routes this check against `concepts` (names and aliases) under today's rules.
    pub fn fact(&self, concepts: &[&str]) -> CheckFact {
        CheckFact {
            episode_id: self.episode_id,
            at: self.at,
            verdict: self.verdict,
            routing: route_check(&self.topic, self.evaluation.as_deref(), concepts),
        }
    }
}

/// What a routed check is about: (subject key, display name, unmapped), or
/// `None` for evidence only. The store looks the current belief up by this key.
///
/// An unmapped topic and a concept of the same name share a key on purpose:
/// when "osmosis" joins the map, the next check continues the topic's belief
/// (same posterior, same support) and the new row is no longer marked unmapped.
pub fn subject_of(routing: &Routing) -> Option<(String, String, bool)> {
    match routing {
        Routing::Concept { name, .. } => Some((canonical_key(name), name.clone(), false)),
        Routing::UnmappedTopic { topic } => Some((canonical_key(topic), topic.clone(), true)),
        Routing::EvidenceOnly { .. } => None,
    }
}

/// The verdict as Beta evidence: (successes, failures).
pub fn evidence(verdict: Verdict) -> (f64, f64) {
    match verdict {
        Verdict::Right => (1.0, 0.0),
        Verdict::Partial => (0.5, 0.5),
        Verdict::Wrong => (0.0, 1.0),
    }
}

/// Mastery predicted before a check, for calibration (docs/mechanisms.md §8): the current
/// belief's confidence, or the prior mean when there is none.
pub fn predicted_mastery(current: Option<&BeliefRow>) -> f64 {
    match current {
        Some(b) if b.claim != Claim::Retired => b.confidence,
        _ => PRIOR_ALPHA / (PRIOR_ALPHA + PRIOR_BETA),
    }
}

fn posterior(row: &BeliefRow) -> Result<(f64, f64)> {
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    if ok(row.alpha) && ok(row.beta) && row.alpha + row.beta > 0.0 {
        Ok((row.alpha, row.beta))
    } else {
        Err(Error::BadPosterior {
            id: row.id,
            alpha: row.alpha,
            beta: row.beta,
        })
    }
}

/// The new row a check produces, or `None` when the check is evidence only.
///
/// `current` is the subject's current belief, if any (a retired row counts as
/// none: a re-derivation starts afresh). The new row's support is the old one
/// plus this episode; its flag is cleared.
pub fn apply_check(current: Option<&BeliefRow>, check: &CheckFact) -> Result<Option<NewBelief>> {
    let Some((key, name, unmapped)) = subject_of(&check.routing) else {
        return Ok(None);
    };
    let current = current.filter(|b| b.claim != Claim::Retired);
    let (alpha, beta, mut support) = match current {
        Some(b) if b.subject_key != key => {
            return Err(Error::SubjectMismatch {
                belief: b.subject_key.clone(),
                check: key,
            });
        }
        Some(b) => {
            let (a, bt) = posterior(b)?;
            (a, bt, b.support.clone())
        }
        None => (PRIOR_ALPHA, PRIOR_BETA, Vec::new()),
    };
    let (s, f) = evidence(check.verdict);
    let (alpha, beta) = (alpha + s, beta + f);
    if let Err(i) = support.binary_search(&check.episode_id) {
        support.insert(i, check.episode_id);
    }
    let confidence = alpha / (alpha + beta);
    Ok(Some(BeliefRow {
        id: None,
        subject_key: key,
        concept: Some(name),
        unmapped,
        claim: Claim::for_confidence(confidence),
        confidence,
        alpha,
        beta,
        support,
        created_at: check.at,
        reason: format!(
            "check {} {}",
            check.at.format("%Y-%m-%d"),
            check.verdict.as_str()
        ),
        flagged: false,
        superseded_by: None,
    }))
}

/// The decayed row for a belief untouched for `days_untouched` days at `at`,
/// or `None` when it was touched more recently (or is retired).
///
/// Running it twice for the same instant decays once: the decayed row is
/// itself "touched" at `at`.
pub fn decay(
    current: &BeliefRow,
    at: DateTime<Utc>,
    days_untouched: i64,
    factor: f64,
) -> Result<Option<NewBelief>> {
    if current.claim == Claim::Retired || at - current.created_at < Duration::days(days_untouched) {
        return Ok(None);
    }
    if !(0.0..=1.0).contains(&factor) {
        return Err(Error::BadDecayFactor { factor });
    }
    let (alpha, beta) = posterior(current)?;
    let new_alpha = alpha * factor;
    let new_beta = beta + alpha * (1.0 - factor);
    let confidence = new_alpha / (new_alpha + new_beta);
    Ok(Some(BeliefRow {
        id: None,
        claim: Claim::for_confidence(confidence),
        confidence,
        alpha: new_alpha,
        beta: new_beta,
        created_at: at,
        reason: "decayed".to_string(),
        flagged: true,
        superseded_by: None,
        ..current.clone()
    }))
}

/// The tombstone that ends a chain before a re-derivation: same subject,
/// evidence and confidence, claim [`Claim::Retired`], reason "retired". The
/// caller points the retired row at it (and may point it at the subject's
/// re-derived row so the history walk continues).
pub fn retire(current: &BeliefRow, at: DateTime<Utc>) -> NewBelief {
    BeliefRow {
        id: None,
        claim: Claim::Retired,
        created_at: at,
        reason: "retired".to_string(),
        flagged: false,
        superseded_by: None,
        ..current.clone()
    }
}

/// Replays `checks` in time order (ties by episode id) under today's rules,
/// with decay between checks as the nightly loop would have applied it, and
/// returns one row per subject (ordered by subject key), reason
/// "re-derived under rules v<RULES_VERSION>".
///
/// A re-derived row's `created_at` is the instant of the last event it
/// reflects, not the moment of re-derivation: a rule change is not evidence, so
/// the decay clock keeps running from the learner's last check.
pub fn rederive(checks: &[CheckFact]) -> Vec<NewBelief> {
    let mut ordered: Vec<&CheckFact> = checks.iter().collect();
    ordered.sort_by_key(|c| (c.at, c.episode_id));
    let mut state: BTreeMap<String, BeliefRow> = BTreeMap::new();
    for check in ordered {
        let Some((key, _, _)) = subject_of(&check.routing) else {
            continue;
        };
        let mut current = state.get(&key).cloned();
        if let Some(b) = &current {
            // Rows built here always hold a valid posterior, so decay cannot fail.
            if let Ok(Some(decayed)) = decay(b, check.at, DECAY_AFTER_DAYS, DECAY_FACTOR) {
                current = Some(decayed);
            }
        }
        if let Ok(Some(next)) = apply_check(current.as_ref(), check) {
            state.insert(key, next);
        }
    }
    state
        .into_values()
        .map(|row| BeliefRow {
            reason: format!("re-derived under rules v{RULES_VERSION}"),
            ..row
        })
        .collect()
}

/// The current beliefs among `rows`: nothing superseded them and they are not retired.
pub fn current(rows: &[BeliefRow]) -> Vec<&BeliefRow> {
    rows.iter()
        .filter(|r| r.superseded_by.is_none() && r.claim != Claim::Retired)
        .collect()
}

/// How a learner's checks were routed: the honest numbers behind a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub recorded: usize,
    /// Routed to a concept of the map.
    pub linked: usize,
    pub evidence_only: usize,
    /// Routed to a short topic outside the map (a belief marked unmapped).
    pub unmapped: usize,
}

impl CheckCounts {
    pub fn tally<'a>(routings: impl IntoIterator<Item = &'a Routing>) -> Self {
        let mut c = CheckCounts::default();
        for r in routings {
            c.recorded += 1;
            match r {
                Routing::Concept { .. } => c.linked += 1,
                Routing::UnmappedTopic { .. } => c.unmapped += 1,
                Routing::EvidenceOnly { .. } => c.evidence_only += 1,
            }
        }
        c
    }
}

fn checks(n: usize) -> String {
    if n == 1 {
        "1 check is".to_string()
    } else {
        format!("{n} checks are")
    }
}

fn are(n: usize) -> &'static str {
    if n == 1 { "is" } else { "are" }
}

/// One English sentence saying what the checks became, or `None` when none is
/// recorded (nothing to say, and nothing is invented).
pub fn honest_sentence(c: &CheckCounts) -> Option<String> {
    if c.recorded == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if c.unmapped > 0 {
        parts.push(format!(
            "{} {} about topics outside the map",
            c.unmapped,
            are(c.unmapped)
        ));
    }
    if c.evidence_only > 0 {
        parts.push(format!(
            "{} {} kept as evidence only",
            c.evidence_only,
            are(c.evidence_only)
        ));
    }
    let recorded = checks(c.recorded);
    Some(if c.linked == 0 {
        if parts.is_empty() || c.evidence_only == c.recorded {
            format!("{recorded} recorded, but none could yet be linked to a concept in the map.")
        } else {
            format!(
                "{recorded} recorded, but none could yet be linked to a concept in the map; {}.",
                parts.join(", ")
            )
        }
    } else if c.linked == c.recorded {
        if c.recorded == 1 {
            "1 check is recorded, linked to a concept in the map.".to_string()
        } else {
            format!("{recorded} recorded, all linked to concepts in the map.")
        }
    } else {
        format!(
            "{recorded} recorded; {} {} linked to concepts in the map, {}.",
            c.linked,
            are(c.linked),
            parts.join(", ")
        )
    })
}

/// Most episode ids a history line lists before saying how many more.
const HISTORY_EPISODES: usize = 10;

/// The chain of one subject as lines, oldest first (by id; rows without an
/// id keep their order after those with one). The date is the instant the row
/// reflects: for a re-derived row, its last check, so it may read earlier than
/// the "retired" line before it.
/// `2026-03-02 struggles with osmosis (0.33) — check 2026-03-02 wrong [episodes 12]`.
pub fn render_history(rows: &[BeliefRow]) -> Vec<String> {
    let mut ordered: Vec<&BeliefRow> = rows.iter().collect();
    ordered.sort_by_key(|r| (r.id.is_none(), r.id));
    ordered
        .into_iter()
        .map(|r| {
            let name = r.concept.as_deref().unwrap_or(&r.subject_key);
            let what = match r.claim {
                Claim::Retired => format!("retired: {name}"),
                claim => format!("{} {name}", claim.as_str()),
            };
            let mut line = format!(
                "{} {what} ({:.2}) — {}",
                r.created_at.format("%Y-%m-%d"),
                r.confidence,
                r.reason
            );
            if r.unmapped {
                line.push_str(" (topic not in the map)");
            }
            if r.flagged {
                line.push_str(" (to reconfirm)");
            }
            if !r.support.is_empty() {
                let shown: Vec<String> = r
                    .support
                    .iter()
                    .take(HISTORY_EPISODES)
                    .map(i64::to_string)
                    .collect();
                let more = r.support.len().saturating_sub(HISTORY_EPISODES);
                line.push_str(&format!(" [episodes {}", shown.join(", ")));
                if more > 0 {
                    line.push_str(&format!(" and {more} more"));
                }
                line.push(']');
            }
            line
        })
        .collect()
}
