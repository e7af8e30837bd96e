//! The concept map as the brain keeps it: loaded from the newest snapshot,
//! grown by each new file version (the offline extractor; merging by
//! canonical key), taught by explicit learner messages, confirmed by passed
//! checks, and saved as a new snapshot when anything changed.

use crate::Result;
use tm_model::lang::canonical_key;
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;
use tm_store::Reader;

/// The subject's map: its newest snapshot, or an empty map before the first.
pub fn load(r: &dyn Reader, s: &Subject) -> Result<ConceptMap> {
    Ok(r.latest_map(s)?.unwrap_or_default())
}

/// The map's concepts a text names (canonical name or alias as whole words),
/// in map order: the concepts a question or an answer touches.
pub fn named_in(map: &ConceptMap, text: &str) -> Vec<String> {
    let words = Words::of(text);
    map.nodes()
        .iter()
        .filter(|n| {
            std::iter::once(&n.name)
                .chain(&n.aliases)
                .any(|name| words.name(name))
        })
        .map(|n| n.name.clone())
        .collect()
}

/// A text folded with `canonical_key`, asked whether a name occurs in it as
/// whole words (exact name match only: no fuzzy matching).
pub struct Words(String);

impl Words {
    pub fn of(text: &str) -> Words {
        Words(format!(" {} ", canonical_key(text)))
    }

    /// Whether `name` (any spelling; folded here) occurs as whole words.
    pub fn name(&self, name: &str) -> bool {
        self.key(&canonical_key(name))
    }

    /// Whether an already canonical key occurs as whole words.
    pub fn key(&self, key: &str) -> bool {
        !key.is_empty() && self.0.contains(&format!(" {key} "))
    }
}

/// Concept names' vectors, embedded once each, for merging by similarity.
/// Without an embedder every similarity is 0: concepts join by name only.
pub struct NameVectors<'a> {
    embedder: Option<&'a dyn tm_embed::Embedder>,
    cache: std::cell::RefCell<std::collections::HashMap<String, Option<Vec<f32>>>>,
}

impl<'a> NameVectors<'a> {
    pub fn new(embedder: Option<&'a dyn tm_embed::Embedder>) -> Self {
        NameVectors {
            embedder,
            cache: Default::default(),
        }
    }

    fn vector(&self, name: &str) -> Option<Vec<f32>> {
        let e = self.embedder?;
        if let Some(v) = self.cache.borrow().get(name) {
            return v.clone();
        }
        // An embedding failure means "not similar", never a failed import.
        let v = e.embed_one(name).ok();
        self.cache.borrow_mut().insert(name.to_string(), v.clone());
        v
    }

    /// Cosine of two names' vectors (0 when either cannot be embedded).
    pub fn cosine(&self, a: &str, b: &str) -> f32 {
        match (self.vector(a), self.vector(b)) {
            (Some(x), Some(y)) => tm_embed::cosine(&x, &y),
            _ => 0.0,
        }
    }
}
