//! What the memory says about itself: its counts, whether its confidence can
//! be read as a probability, what it knows to be stale, and its limits in
//! words. The block's HOW TO USE THIS line is taken from here.
//!
//! The words go to the tutor model inside the block (English, like every other
//! label of the block), not to the learner.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::calibration::{Calibration, MIN_PREDICTED, Status};
use crate::beliefs::DECAY_AFTER_DAYS;
use crate::block::DEFAULT_HOW_TO_USE;

/// The limit stated until calibration says otherwise (docs/mechanisms.md §8).
pub const RANKING_LIMIT: &str = "treat confidence as a ranking, not a probability";

/// The facts a self-model is composed from.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfModelInput<'a> {
    pub at: DateTime<Utc>,
    /// Episodes per kind name.
    pub episodes: BTreeMap<String, usize>,
    pub beliefs: usize,
    pub flagged: usize,
    pub checks_recorded: usize,
    pub checks_linked: usize,
    pub calibration: &'a Calibration,
    /// Memories whose cited file was replaced or removed (latest verification).
    pub stale_citations: usize,
    pub unverifiable: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFigures {
    pub status: String,
    pub n: usize,
    pub ece: Option<f64>,
    pub brier: Option<f64>,
    pub log_loss: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfModel {
    pub at: DateTime<Utc>,
    pub episodes: BTreeMap<String, usize>,
    pub beliefs: usize,
    pub flagged: usize,
    pub checks_recorded: usize,
    pub checks_linked: usize,
    pub checks_unlinked: usize,
    pub calibrated: bool,
    pub calibration: CalibrationFigures,
    pub stale_citations: usize,
    pub unverifiable: usize,
    /// The limits, one sentence each.
    pub limits: Vec<String>,
    /// The text after the block's `HOW TO USE THIS:` label.
    pub how_to_use: String,
}

fn s(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Composes the self-model.
pub fn compose(i: &SelfModelInput<'_>) -> SelfModel {
    let c = i.calibration;
    let mut limits = Vec::new();
    match c.status {
        Status::TooFew => limits.push(format!(
            "Confidence is untested: {} of the {MIN_PREDICTED} predicted checks needed for calibration are recorded, so {RANKING_LIMIT}.",
            c.n
        )),
        Status::Miscalibrated => limits.push(format!(
            "Confidence is not calibrated (ECE {:.2} over {} predicted checks), so {RANKING_LIMIT}.",
            c.ece.unwrap_or_default(),
            c.n
        )),
        Status::Calibrated => limits.push(format!(
            "Confidence is calibrated (ECE {:.2} over {} predicted checks); it is still an estimate, not a grade.",
            c.ece.unwrap_or_default(),
            c.n
        )),
    }
    if i.flagged > 0 {
        limits.push(format!(
            "{} belief{} went {DECAY_AFTER_DAYS} days without a check and await{} reconfirmation: confirm before relying on {}.",
            i.flagged,
            s(i.flagged),
            if i.flagged == 1 { "s" } else { "" },
            if i.flagged == 1 { "it" } else { "them" }
        ));
    }
    if i.stale_citations > 0 {
        limits.push(format!(
            "{} memor{} cite{} a file that has since been replaced or removed.",
            i.stale_citations,
            if i.stale_citations == 1 { "y" } else { "ies" },
            if i.stale_citations == 1 { "s" } else { "" }
        ));
    }
    let unlinked = i.checks_recorded.saturating_sub(i.checks_linked);
    if unlinked > 0 {
        limits.push(format!(
            "{unlinked} of {} check{} could not be linked to a concept in the map.",
            i.checks_recorded,
            s(i.checks_recorded)
        ));
    }
    let how_to_use = format!("{DEFAULT_HOW_TO_USE} {}", limits.join(" "));
    SelfModel {
        at: i.at,
        episodes: i.episodes.clone(),
        beliefs: i.beliefs,
        flagged: i.flagged,
        checks_recorded: i.checks_recorded,
        checks_linked: i.checks_linked,
        checks_unlinked: unlinked,
        calibrated: c.calibrated(),
        calibration: CalibrationFigures {
            status: c.status.as_str().to_string(),
            n: c.n,
            ece: c.ece,
            brier: c.brier,
            log_loss: c.log_loss,
        },
        stale_citations: i.stale_citations,
        unverifiable: i.unverifiable,
        limits,
        how_to_use,
    }
}
