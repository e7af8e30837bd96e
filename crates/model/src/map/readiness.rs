//! How ready is the *material* on a concept, and on the whole subject?
//!
//! Four bands (docs/mechanisms.md §4): 0.35 only named; 0.60 explained by a current file;
//! 0.85 confirmed by a passed check; 1.0 taught by a person. Subject readiness
//! is the centrality-weighted mean, so an unexplained hub costs more than a leaf.
//! This is about the material, not the learner's mastery.

use super::{ConceptMap, Node};

pub const NAMED: f64 = 0.35;
pub const EXPLAINED: f64 = 0.60;
pub const CONFIRMED: f64 = 0.85;
pub const TAUGHT: f64 = 1.0;

/// The band a concept sits in; the highest that applies wins.
pub fn readiness(node: &Node, passed_check: bool) -> f64 {
    if !node.taught.is_empty() {
        TAUGHT
    } else if passed_check {
        CONFIRMED
    } else if node.explained() {
        EXPLAINED
    } else {
        NAMED
    }
}

/// Centrality-weighted mean readiness; 0 for an empty map. When every
/// centrality is zero (never, after a settle) the plain mean is used.
pub fn subject_readiness(map: &ConceptMap) -> f64 {
    let nodes = map.nodes();
    if nodes.is_empty() {
        return 0.0;
    }
    let total: f64 = nodes.iter().map(|n| n.centrality).sum();
    if total <= 0.0 {
        return nodes.iter().map(|n| n.readiness).sum::<f64>() / nodes.len() as f64;
    }
    nodes
        .iter()
        .map(|n| n.centrality * n.readiness)
        .sum::<f64>()
        / total
}
