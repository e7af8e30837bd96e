//! Recall: scoring, the gate and collapse over a candidate pool.
mod terms;
pub use terms::{distinctive_terms, fts5_query, index_terms, index_text, lexical_overlap};
