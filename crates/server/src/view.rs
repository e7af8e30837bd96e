//! What does a subject's report show? One serialisable view, gathered from
//! the stores in one pass: the concept map laid out by teaching order, the
//! current beliefs with their history, episodes month by month, the
//! calibration of predicted mastery against verdicts, stale citations,
//! questions with no answer, and the chain's verification state. The JSON
//! report route serves it as is; the web page renders it.

use crate::error::ApiResult;
use chrono::{DateTime, Datelike, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::Kind;
use tm_store::{ChainReport, Store, Subject};
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
    /// Centrality-weighted readiness of the material (0–1).
    pub readiness: f64,
    pub concepts: Vec<ConceptView>,
    /// Teaching order: layers of concept keys, prerequisites first.
    pub layers: Vec<Vec<String>>,
    pub beliefs: Vec<BeliefView>,
    pub months: Vec<MonthView>,
    pub calibration: CalibrationView,
    pub stale: Vec<EpisodeRef>,
    pub unanswered: Vec<EpisodeRef>,
    #[schema(value_type = Object)]
    pub chain: ChainReport,
    pub episodes: u64,
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

#[derive(Debug, Serialize, ToSchema)]
pub struct MonthView {
    /// `YYYY-MM`.
    pub month: String,
    pub total: usize,
    /// Episodes by kind.
    pub kinds: BTreeMap<String, usize>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CalibrationView {
    /// Checks that carried a predicted mastery.
    pub checks: usize,
    /// Reliability curve: one point per non-empty bin of predicted mastery.
    pub bins: Vec<CalibrationBin>,
    /// Expected calibration error over the bins (None without checks).
    pub ece: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CalibrationBin {
    pub from: f64,
    pub to: f64,
    pub count: usize,
    pub predicted: f64,
    /// Share of right verdicts (partial counts half).
    pub observed: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodeRef {
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub summary: String,
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
pub fn gather(store: &Store, subject: &Subject) -> ApiResult<ReportView> {
    let map = tm_brain::map::load(store.latest_map(subject)?.as_deref())?;
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
    for b in store.current_beliefs(subject)? {
        let history = store.belief_history(subject, &b.subject_key)?;
        beliefs.push(BeliefView {
            anchor: belief_anchor(&b.subject_key),
            about: b.concept.clone().unwrap_or_else(|| b.subject_key.clone()),
            claim: b.claim.as_str().to_string(),
            confidence: b.confidence,
            flagged: b.flagged,
            history: steps(&history),
        });
    }
    let episodes = store.episodes(subject, 1, usize::MAX)?;
    let versions = store.file_versions(subject)?;
    let mut months: BTreeMap<String, MonthView> = BTreeMap::new();
    let mut stale = Vec::new();
    let mut unanswered = Vec::new();
    let mut predictions: Vec<(f64, f64)> = Vec::new();
    let mut open_question: Option<&tm_store::Episode> = None;
    let as_ref = |e: &tm_store::Episode| EpisodeRef {
        seq: e.seq,
        at: e.at,
        kind: e.kind.as_str().to_string(),
        summary: e.summary.clone(),
    };
    for e in &episodes {
        let key = format!("{:04}-{:02}", e.at.year(), e.at.month());
        let m = months.entry(key.clone()).or_insert_with(|| MonthView {
            month: key,
            total: 0,
            kinds: BTreeMap::new(),
        });
        m.total += 1;
        *m.kinds.entry(e.kind.as_str().to_string()).or_default() += 1;
        match e.kind {
            Kind::Question => {
                if let Some(q) = open_question.replace(e) {
                    unanswered.push(as_ref(q));
                }
            }
            Kind::Answer => {
                open_question = None;
                if tm_brain::block::citation(e, &versions) == "changed" {
                    stale.push(as_ref(e));
                }
            }
            Kind::Check => {
                let predicted = e.data.get("predicted").and_then(|v| v.as_f64());
                let observed = match e.data.get("verdict").and_then(|v| v.as_str()) {
                    Some("right") => Some(1.0),
                    Some("partial") => Some(0.5),
                    Some("wrong") => Some(0.0),
                    _ => None,
                };
                if let (Some(p), Some(o)) = (predicted, observed)
                    && (0.0..=1.0).contains(&p)
                {
                    predictions.push((p, o));
                }
            }
            _ => {}
        }
    }
    unanswered.extend(open_question.map(as_ref));
    let chain = store.verify_subject(subject, None)?;
    Ok(ReportView {
        subject: subject.key.to_string(),
        title: subject.title.clone(),
        readiness: tm_model::map::subject_readiness(&map),
        concepts,
        layers: order.layers,
        beliefs,
        months: months.into_values().collect(),
        calibration: calibrate(&predictions),
        stale,
        unanswered,
        chain,
        episodes: episodes.len() as u64,
    })
}

/// Five equal bins of predicted mastery; ECE = Σ (n_b / n) · |predicted_b − observed_b|.
fn calibrate(points: &[(f64, f64)]) -> CalibrationView {
    const BINS: usize = 5;
    let mut sums = [(0usize, 0.0f64, 0.0f64); BINS];
    for &(p, o) in points {
        let i = ((p * BINS as f64) as usize).min(BINS - 1);
        sums[i].0 += 1;
        sums[i].1 += p;
        sums[i].2 += o;
    }
    let n = points.len();
    let bins: Vec<CalibrationBin> = sums
        .iter()
        .enumerate()
        .filter(|(_, s)| s.0 > 0)
        .map(|(i, s)| CalibrationBin {
            from: i as f64 / BINS as f64,
            to: (i + 1) as f64 / BINS as f64,
            count: s.0,
            predicted: s.1 / s.0 as f64,
            observed: s.2 / s.0 as f64,
        })
        .collect();
    let ece = (n > 0).then(|| {
        bins.iter()
            .map(|b| b.count as f64 / n as f64 * (b.predicted - b.observed).abs())
            .sum()
    });
    CalibrationView {
        checks: n,
        bins,
        ece,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_bins_and_ece() {
        let c = calibrate(&[(0.9, 1.0), (0.9, 0.0), (0.1, 0.0)]);
        assert_eq!(c.checks, 3);
        assert_eq!(c.bins.len(), 2);
        // |0.1-0| * 1/3 + |0.9-0.5| * 2/3
        assert!((c.ece.unwrap() - (0.1 / 3.0 + 0.4 * 2.0 / 3.0)).abs() < 1e-9);
        assert!(calibrate(&[]).ece.is_none());
    }

    #[test]
    fn anchors_are_safe_and_distinct() {
        let a = belief_anchor("cell membrane");
        assert!(a.starts_with("belief-cell-membrane-"), "{a}");
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        assert_ne!(belief_anchor("ميتوكوندريا"), belief_anchor("خلية"));
    }
}
