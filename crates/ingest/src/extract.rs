//! Which concepts does a file explain? One trait, two implementations: the
//! generative pass through any OpenAI-compatible chat endpoint, and the
//! deterministic offline extractor, the default, that needs no model.
//!
//! Every extractor returns the same bounded list per file (docs/mechanisms.md §4): name,
//! one-sentence gist, short definition, builds-on from the file's own list,
//! assumed prerequisites, and the 1-based pages where the file explains the
//! concept. [`OfflineExtractor`] is the deterministic default that needs no model.

mod breaker;
mod llm;
mod offline;

pub use breaker::Breaker;
pub use llm::{ChatClient, LlmConfig, LlmExtractor, validate_answer};
pub use offline::OfflineExtractor;
pub use tm_model::map::ExtractedConcept;

/// Default bound on concepts per file.
pub const MAX_CONCEPTS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The extractor could not produce a valid list (a model's output, say).
    #[error("extraction of {file} failed: {reason}")]
    Invalid { file: String, reason: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Reads one file's pages into its bounded concept list. Shared by every
/// request a service answers, so it is `Send + Sync`.
pub trait ConceptExtractor: Send + Sync {
    /// This extractor's list, or why it could not make one.
    fn extract(&self, file_name: &str, pages: &[String]) -> Result<Vec<ExtractedConcept>>;

    /// The list the store keeps: [`ConceptExtractor::extract`]'s, unless this
    /// extractor has a way to recover from a list it refused (the generative
    /// one falls back to the offline extractor), in which case the recovered
    /// list comes back with a warning pushed onto `warnings` (a fallback is
    /// never silent).
    fn extract_noting(
        &self,
        file_name: &str,
        pages: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<Vec<ExtractedConcept>> {
        let _ = warnings;
        self.extract(file_name, pages)
    }
}
