//! Erasing one episode (a pasted phone number, a wrong fact), with a reason:
//! its content goes the way a learner's does (the chain keeps its skeleton,
//! `verify` reports the erasure), together with the day's consolidation that
//! summarised it, and what was derived from it is derived again without it.
//!
//! A check routes beliefs and confirms concepts; a teaching note names and
//! annotates concepts: when the episode is either, the subject's beliefs and
//! map are re-derived — not patched — by replaying what remains of the chain
//! (every other event, and every night where it ran) through the one record
//! path into a scratch store in memory, exactly as an import of the subject's
//! export without the episode would. The subject's map snapshots and belief
//! rows (which may hold words of the episode: a topic as written, a taught
//! name) are then replaced, in the erasure's transaction, by the scratch
//! store's map and current beliefs, their ids translated back. The scratch
//! store embeds nothing it can take from the subject's stored vectors.

use crate::export::{Chain, chain};
use crate::record::{Indexing, Paths, Target};
use crate::{Error, Result};
use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use tm_embed::{Calibration, Embedder};
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{Episode, Kind};
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;
use tm_store::Reader;

/// The episodes an erasure of the episode at `seq` clears: it, and each
/// consolidation written after it whose day holds it (its headline and
/// topics may quote it). Whether the map and beliefs must be re-derived.
pub(crate) fn plan(r: &dyn Reader, s: &Subject, seq: u64) -> Result<(Episode, Vec<u64>, bool)> {
    let e = r
        .episode_at_seq(s, seq)?
        .filter(|e| !e.erased)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "{} has no episode at seq {seq} to erase (none there, or erased already)",
                s.key
            ))
        })?;
    match e.kind {
        Kind::File => {
            return Err(Error::WrongKind(format!(
                "seq {seq} of {} records a file; a file's versions are its history: remove the file, or erase the subject",
                s.key
            )));
        }
        Kind::Consolidation => {
            return Err(Error::WrongKind(format!(
                "seq {seq} of {} is a consolidation: it is erased with the episode it summarises",
                s.key
            )));
        }
        _ => {}
    }
    let mut seqs = vec![e.seq];
    for c in r.episodes_of_kind(s, Kind::Consolidation, DateTime::<Utc>::MAX_UTC)? {
        if c.seq > e.seq && !c.erased && c.at - Duration::days(1) < e.at && e.at <= c.at {
            seqs.push(c.seq);
        }
    }
    let derived = matches!(e.kind, Kind::Check | Kind::Taught);
    Ok((e, seqs, derived))
}

/// The subject's map and current beliefs re-derived without the episodes at
/// `skip`, with ids of the subject's store.
pub(crate) struct Rederived {
    pub map: ConceptMap,
    pub beliefs: Vec<BeliefRow>,
    /// The chain's head the derivation read: an erasure writes it only
    /// while the head is still there.
    pub head: (u64, tm_model::episodes::Hash),
}

pub(crate) fn rederive(
    r: &dyn Reader,
    ix: &Indexing<'_>,
    s: &Subject,
    skip: &[u64],
) -> Result<Rederived> {
    let head = r.head(s)?;
    let Chain { parts, .. } = chain(r, s, skip)?;
    let embedder = Stored::new(r, s, ix.embedder)?;
    // A replay keeps what was recorded, whatever the cap is now.
    let scratch_ix = Indexing {
        embedder: &embedder,
        extractor: ix.extractor,
        max_concepts: usize::MAX,
    };
    let mut scratch = tm_store::scratch()?;
    // Scratch episode id → the subject's episode id.
    let mut ids: HashMap<i64, i64> = HashMap::new();
    for part in parts {
        let line = Chain::line(s, part.nights);
        let (events, originals): (Vec<_>, Vec<_>) =
            part.events.into_iter().map(|(e, id, _)| (e, id)).unzip();
        let recorded = crate::record::record(
            &mut *scratch,
            &scratch_ix,
            Target::Line(&line, Some(tm_store::Owner::Operator)),
            &events,
            Paths::Refused,
            None,
            &mut |_, _, _| {},
        )?;
        for (got, id) in recorded.episodes.iter().zip(originals) {
            ids.insert(got.id, id);
        }
    }
    let Some(copy) = scratch.subject(&s.key)? else {
        // Nothing remains to derive from.
        return Ok(Rederived {
            map: ConceptMap::default(),
            beliefs: Vec::new(),
            head,
        });
    };
    // File versions: the scratch store's ids → the subject's, by name and number.
    let theirs: HashMap<(String, i64), i64> = r
        .file_versions(s)?
        .into_iter()
        .map(|v| ((v.name, v.version), v.id))
        .collect();
    let versions: HashMap<i64, i64> = scratch
        .file_versions(&copy)?
        .into_iter()
        .filter_map(|v| theirs.get(&(v.name, v.version)).map(|id| (v.id, *id)))
        .collect();
    let mut map = scratch.latest_map(&copy)?.unwrap_or_default();
    map.renumber_versions(|id| versions.get(&id).copied());
    let mut beliefs = scratch.current_beliefs(&copy)?;
    beliefs.sort_by(|a, b| a.subject_key.cmp(&b.subject_key));
    for b in &mut beliefs {
        b.id = None;
        b.superseded_by = None;
        b.support = b
            .support
            .iter()
            .map(|i| {
                ids.get(i).copied().ok_or_else(|| {
                    Error::Internal("a re-derived belief rests on an episode not replayed".into())
                })
            })
            .collect::<Result<_>>()?;
    }
    Ok(Rederived { map, beliefs, head })
}

/// The embedder for the scratch store: the subject's stored vectors for the
/// texts it holds (episodes and passages), the real embedder for the rest
/// (concept names, texts without a vector).
struct Stored<'a> {
    known: HashMap<String, Vec<f32>>,
    inner: &'a dyn Embedder,
}

impl<'a> Stored<'a> {
    fn new(r: &dyn Reader, s: &Subject, inner: &'a dyn Embedder) -> Result<Self> {
        let model = inner.name();
        let mut known = HashMap::new();
        let episodes: HashMap<i64, Vec<f32>> = r.vectors(s, model)?.into_iter().collect();
        let ids: Vec<i64> = episodes.keys().copied().collect();
        for chunk in ids.chunks(500) {
            for (id, text) in r.texts(s, chunk)? {
                if let Some(v) = episodes.get(&id) {
                    known.insert(text, v.clone());
                }
            }
        }
        let passages: HashMap<i64, Vec<f32>> = r.passage_vectors(s, model)?.into_iter().collect();
        let ids: Vec<i64> = passages.keys().copied().collect();
        for chunk in ids.chunks(500) {
            for (id, p) in r.passages_by_ids(s, chunk)? {
                if let Some(v) = passages.get(&id) {
                    known.insert(p.text, v.clone());
                }
            }
        }
        Ok(Stored { known, inner })
    }
}

impl Embedder for Stored<'_> {
    fn calibration(&self) -> Calibration {
        self.inner.calibration()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed_queries(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        self.inner.embed_queries(texts)
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !self.known.contains_key(*t))
            .collect();
        let mut fresh = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&missing)?
        }
        .into_iter();
        let mut made: HashMap<&str, Vec<f32>> = HashMap::new();
        for t in &missing {
            if let Some(v) = fresh.next() {
                made.insert(t, v);
            }
        }
        texts
            .iter()
            .map(|t| {
                self.known
                    .get(*t)
                    .or_else(|| made.get(t))
                    .cloned()
                    .ok_or_else(|| tm_embed::Error::Inference("a text lost its vector".into()))
            })
            .collect()
    }
}
