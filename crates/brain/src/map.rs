//! The concept map as the brain keeps it: loaded from the newest snapshot,
//! grown by each new file version (the offline extractor; merging by
//! canonical key), taught by explicit learner messages, confirmed by passed
//! checks, and saved as a new snapshot when anything changed.

use crate::{Error, Result};
use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
use tm_model::lang::canonical_key;
use tm_model::map::{ConceptMap, ExtractedConcept};

/// The map from its stored JSON (an empty map when there is none yet).
pub fn load(json: Option<&str>) -> Result<ConceptMap> {
    match json {
        None => Ok(ConceptMap::new()),
        Some(j) => serde_json::from_str(j)
            .map_err(|e| Error::Invalid(format!("the stored concept map is unreadable: {e}"))),
    }
}

pub fn to_json(map: &ConceptMap) -> Result<String> {
    serde_json::to_string(map)
        .map_err(|e| Error::Invalid(format!("cannot serialise the concept map: {e}")))
}

/// Concepts a file's pages explain, read by the deterministic offline extractor.
pub fn extract(name: &str, pages: &[String]) -> Result<Vec<ExtractedConcept>> {
    OfflineExtractor::default()
        .extract(name, pages)
        .map_err(|e| Error::Invalid(format!("reading concepts from {name}: {e}")))
}

/// The map's concepts a text names (canonical name or alias as whole words),
/// in map order: the concepts a question or an answer touches.
pub fn named_in(map: &ConceptMap, text: &str) -> Vec<String> {
    let text = format!(" {} ", canonical_key(text));
    map.nodes()
        .iter()
        .filter(|n| {
            std::iter::once(&n.name).chain(&n.aliases).any(|name| {
                let k = canonical_key(name);
                !k.is_empty() && text.contains(&format!(" {k} "))
            })
        })
        .map(|n| n.name.clone())
        .collect()
}
