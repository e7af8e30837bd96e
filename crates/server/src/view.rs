//! What does a subject's report show? One serialisable view: the brain's
//! subject report (`tm_brain::report`: readiness, checks, calibration, stale
//! citations, answers that could not answer, activity by month) plus what
//! the page draws beyond it — the map's nodes and edges by teaching order,
//! each belief's history row by row, and the chain's verification state. The
//! JSON report route serves it as is; the web page renders it.

use crate::error::ApiResult;
use chrono::{DateTime, Utc};
use serde::Serialize;
use tm_brain::Brain;
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::ChainReport;
use tm_model::subject::Subject;
use utoipa::ToSchema;

/// Readiness bands of a concept (the model's readiness levels).
pub fn band(readiness: f64) -> &'static str {
    if readiness >= tm_model::map::readiness::CONFIRMED {
        "ready"
    } else if readiness >= tm_model::map::readiness::EXPLAINED {
        "explained"
    } else {
        "named"
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReportView {
    pub subject: String,
    pub title: String,
    /// The concept map's nodes, for drawing.
    pub concepts: Vec<ConceptView>,
    /// Teaching order: layers of concept keys, prerequisites first.
    pub layers: Vec<Vec<String>>,
    /// Current beliefs with every row of their history.
    pub beliefs: Vec<BeliefView>,
    #[schema(value_type = Object)]
    pub chain: ChainReport,
    pub episodes: u64,
    /// The brain's subject report (readiness, checks, calibration, stale
    /// citations, answers that could not answer, activity by month).
    #[schema(value_type = Object)]
    pub report: tm_model::nightly::Report,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConceptView {
    pub key: String,
    pub name: String,
    pub layer: u32,
    pub centrality: f64,
    pub readiness: f64,
    /// named | explained | ready
    pub band: String,
    /// Keys of the concepts it builds on.
    pub builds_on: Vec<String>,
    /// Teaching notes, oldest first.
    pub taught: Vec<String>,
    pub gist: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BeliefView {
    /// Anchor-safe id of the belief.
    pub anchor: String,
    pub about: String,
    pub claim: String,
    pub confidence: f64,
    pub flagged: bool,
    /// Every row, oldest first.
    pub history: Vec<BeliefStep>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BeliefStep {
    pub at: DateTime<Utc>,
    pub claim: String,
    pub confidence: f64,
    pub reason: String,
}

fn anchor(key: &str) -> String {
    let mut s = String::with_capacity(key.len());
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    // Keys in other scripts fold to nothing; their hash keeps them apart.
    let h = &tm_model::lang::canonical_key(key);
    let digest = hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(h.as_bytes())[..4]);
    format!("{}-{digest}", s.trim_matches('-'))
}

/// The anchor of the history of the belief about `key`.
pub fn belief_anchor(key: &str) -> String {
    format!("belief-{}", anchor(key))
}

fn steps(rows: &[BeliefRow]) -> Vec<BeliefStep> {
    rows.iter()
        .map(|r| BeliefStep {
            at: r.created_at,
            claim: r.claim.as_str().to_string(),
            confidence: r.confidence,
            reason: r.reason.clone(),
        })
        .collect()
}

/// Gathers the report of one subject.
pub fn gather(brain: &Brain, subject: &Subject, at: DateTime<Utc>) -> ApiResult<ReportView> {
    let map = brain.map(subject)?;
    let order = tm_model::map::teaching_order(&map);
    let concepts = map
        .nodes()
        .iter()
        .map(|n| ConceptView {
            key: n.key.clone(),
            name: n.name.clone(),
            layer: n.layer,
            centrality: n.centrality,
            readiness: n.readiness,
            band: band(n.readiness).to_string(),
            builds_on: n.builds_on.iter().map(|e| e.to.clone()).collect(),
            taught: n.taught.clone(),
            gist: n.gist.clone(),
        })
        .collect();
    let mut beliefs = Vec::new();
    for b in brain.beliefs(subject)?.current {
        let history = brain.belief_history(subject, &b.subject_key)?;
        beliefs.push(BeliefView {
            anchor: belief_anchor(&b.subject_key),
            about: b.concept.clone().unwrap_or_else(|| b.subject_key.clone()),
            claim: b.claim.as_str().to_string(),
            confidence: b.confidence,
            flagged: b.flagged,
            history: steps(&history),
        });
    }
    let chain = brain.verify(subject, None)?;
    Ok(ReportView {
        subject: subject.key.to_string(),
        title: subject.title.clone(),
        concepts,
        layers: order.layers,
        beliefs,
        episodes: brain.episode_count(subject)?,
        chain,
        report: brain.report(subject, at)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_safe_and_distinct() {
        let a = belief_anchor("cell membrane");
        assert!(a.starts_with("belief-cell-membrane-"), "{a}");
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        assert_ne!(belief_anchor("ميتوكوندريا"), belief_anchor("خلية"));
    }
}
