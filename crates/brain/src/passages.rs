//! Which passages of the subject's current files does a turn quote? Okapi
//! BM25 over the passages' full-text index and cosine over their vectors,
//! fused by reciprocal rank (k = 60). Only current file versions take part:
//! a replaced or removed file is no longer the learner's material.
//!
//! Vectors are made ahead of time by [`embed_missing`] (import and `reembed`
//! call it); passages without a vector from the turn's embedder still take
//! part through BM25.

use crate::{Error, Result};
use tm_embed::Embedder;
use tm_model::recall::distinctive_terms;
use tm_model::subject::Subject;
use tm_store::{Reader, Store, StoreExt};

pub use tm_model::passages::Passage;

/// Candidates taken from each ranking before fusion.
pub const POOL: usize = 50;
/// The usual reciprocal-rank-fusion constant.
pub const RRF_K: f64 = 60.0;
use crate::record::EMBED_BATCH;

/// The `k` passages of the subject's current files that best answer
/// `question` (embeds the question once).
pub fn passages(
    store: &dyn Reader,
    embedder: &dyn Embedder,
    subject: &Subject,
    question: &str,
    k: usize,
) -> Result<Vec<Passage>> {
    let qvec = if question.trim().is_empty() {
        None
    } else {
        Some(
            embedder
                .embed_query(question)
                .map_err(|e| Error::Embed(e.to_string()))?,
        )
    };
    passages_with_vector(
        store,
        embedder.name(),
        subject,
        question,
        qvec.as_deref(),
        k,
    )
}

/// [`passages`] with the question's vector already made by the embedder
/// called `model` (the block embeds the question once for everything).
pub fn passages_with_vector(
    store: &dyn Reader,
    model: &str,
    subject: &Subject,
    question: &str,
    qvec: Option<&[f32]>,
    k: usize,
) -> Result<Vec<Passage>> {
    let lists = [
        bm25_ranking(store, subject, question, POOL)?,
        vector_ranking(store, model, subject, qvec, POOL)?,
    ];
    let fused: Vec<i64> = tm_model::passages::rrf(&lists, RRF_K)
        .into_iter()
        .take(k)
        .map(|(id, _)| id)
        .collect();
    Ok(store
        .passages_by_ids(subject, &fused)?
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}

/// Passage ids by BM25 over the question's distinctive words, best first.
pub fn bm25_ranking(
    store: &dyn Reader,
    subject: &Subject,
    question: &str,
    limit: usize,
) -> Result<Vec<i64>> {
    Ok(store
        .passage_hits(subject, &distinctive_terms(question), limit)?
        .into_iter()
        .map(|(id, _)| id)
        .collect())
}

/// Passage ids by cosine to the question vector, best first.
pub fn vector_ranking(
    store: &dyn Reader,
    model: &str,
    subject: &Subject,
    qvec: Option<&[f32]>,
    limit: usize,
) -> Result<Vec<i64>> {
    let Some(q) = qvec else {
        return Ok(Vec::new());
    };
    let mut scored: Vec<(f32, i64)> = store
        .passage_vectors(subject, model)?
        .into_iter()
        .filter(|(_, v)| v.len() == q.len())
        .map(|(id, v)| (tm_embed::cosine(q, &v), id))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok(scored.into_iter().take(limit).map(|(_, id)| id).collect())
}

/// Embeds every current passage of the subject that has no vector from this
/// embedder; returns how many.
pub fn embed_missing(
    store: &mut dyn Store,
    embedder: &dyn Embedder,
    subject: &Subject,
    progress: &mut dyn FnMut(usize),
) -> Result<usize> {
    let name = embedder.name().to_string();
    let mut done = 0;
    loop {
        let batch = store.passages_missing_vectors(subject, &name, EMBED_BATCH * 8)?;
        if batch.is_empty() {
            return Ok(done);
        }
        let mut vectors = Vec::with_capacity(batch.len());
        for chunk in batch.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let vs = embedder
                .embed(&texts)
                .map_err(|e| Error::Embed(e.to_string()))?;
            if vs.len() != chunk.len() {
                return Err(Error::Embed(format!(
                    "{} vectors for {} passages",
                    vs.len(),
                    chunk.len()
                )));
            }
            vectors.extend(chunk.iter().map(|(id, _)| *id).zip(vs));
            done += chunk.len();
            progress(done);
        }
        store.write(|tx| tx.put_passage_vectors(&name, &vectors))?;
    }
}

/// The passages rendered for the prompt's material slot, one a line. File
/// text is untrusted: it is neutralised so it cannot forge the block's lines.
pub fn render(passages: &[Passage]) -> String {
    let mut out = String::from("MATERIAL FROM THE STUDENT'S FILES:");
    for p in passages {
        out.push('\n');
        out.push_str(&tm_model::block::neutralise(&p.quoted()));
    }
    out
}
