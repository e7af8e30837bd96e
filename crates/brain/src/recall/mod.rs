//! Recall for one turn: embed the question once (the same vector routes the
//! question to concepts, by the cached name vectors of the current map
//! snapshot, and finds semantic neighbours), gather the four pools (plus
//! the window's own episodes) over the whole history, fill each candidate's
//! signals, and hand them to `tm_model::recall` for the gate, the score and
//! the collapse; then place the turn before each of the first strong matches
//! right after it ([`NEIGHBOURED`]).

use crate::{Error, Result, poisoned};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tm_embed::{Embedder, LanguageFloors};
use tm_model::episodes::Episode;
use tm_model::episodes::Kind;
use tm_model::recall::{
    Basis, Candidate, CandidateFacts, RecallParams, centred_cosine, collapse_key,
    distinctive_terms, narrates_period, recall, same_sitting,
};
use tm_model::subject::Subject;
use tm_model::window::{Window, parse_window, window_words};
use tm_store::{Reader, Store, StoreExt};
mod floors;
mod vectors;

use floors::own_language_floor;
use vectors::VectorSet;

/// How many of the most recent episodes form the recency pool (docs/mechanisms.md §3).
pub const RECENT_POOL: usize = 500;
/// At most this many full-text hits, concept hits, semantic neighbours and
/// window episodes each.
pub const POOL_LIMIT: usize = 500;
/// Semantic neighbours taken from the vector index.
pub const SEMANTIC_NEIGHBOURS: usize = 200;
pub use crate::record::EMBED_BATCH;

/// One recall request.
#[derive(Debug, Clone)]
pub struct RecallQuery<'a> {
    pub question: &'a str,
    /// The turn's instant: nothing after it is recalled, ages count from it.
    pub at: DateTime<Utc>,
    /// The learner's time zone, for windows ("in July" is July there).
    pub tz: Tz,
    /// At most this many recalled memories (after collapse).
    pub limit: usize,
    /// An episode to leave out (the current question itself, once recorded).
    pub exclude: Option<i64>,
}

/// The signals behind one recalled memory, so a person can see why it was chosen.
#[derive(Debug, Clone, Serialize)]
pub struct Signals {
    pub lexical: f32,
    pub semantic: f32,
    /// The cosine once a share of the subject's mean vector is left out of
    /// both (`tm_model::recall::centred_cosine`): what ranks a match by
    /// meaning. `null` when the question or the episode has no vector, when
    /// its cosine is under the match floor, and for a turn offered as a
    /// strong match's neighbour.
    pub centred: Option<f32>,
    pub concept: bool,
    pub salience: f32,
    pub recency: f32,
    /// Its own relevance joined with what its sitting's matches lend it:
    /// `1 − (1 − own)(1 − context)`.
    pub relevance: f32,
    /// What the matches within two chain places of it in its sitting lend it
    /// (`tm_model::recall::CONTEXT_TURNS`), before it joins its own
    /// relevance; 0 when none did, and always for an episode longer than a
    /// block line, which borrows nothing (`tm_model::recall::Candidate::long`).
    pub context: f32,
    pub score: f32,
    pub matched: bool,
    /// Outside the question's window: it matched the question and ranks
    /// after every episode inside the window.
    pub outside_window: bool,
    /// Offered as the turn before or after this strong match (not ranked on its own).
    pub neighbour_of: Option<i64>,
}

/// One recalled memory: the representative episode and how many it stands for.
#[derive(Debug, Clone, Serialize)]
pub struct RecalledEpisode {
    pub episode: Episode,
    pub count: usize,
    /// Ids of every episode collapsed into this one.
    pub members: Vec<i64>,
    pub signals: Signals,
}

/// What recall found, and how to read it.
#[derive(Debug, Clone, Serialize)]
pub struct RecallResult {
    pub window: Option<WindowInfo>,
    pub basis: &'static str,
    pub ranked: Vec<RecalledEpisode>,
    /// Concepts (canonical keys) the question was routed to.
    pub routed: Vec<String>,
    /// Milliseconds spent embedding the question, gathering pools, scoring.
    pub embed_ms: f64,
    pub pools_ms: f64,
    pub score_ms: f64,
    /// How many distinct episodes the pools offered.
    pub candidates: usize,
    /// The embedder whose vectors were compared (none when the subject has none).
    pub embedder: String,
    /// The routed concepts reached by the question's vector alone (no name
    /// of theirs occurs in the question); a subset of `routed`.
    pub routed_by_vector: Vec<String>,
    /// The words the full-text pool searched for: the question's distinctive
    /// words, then the other forms of them the subject's episodes hold
    /// ("research" → "researching"); excerpts pick sentences by these.
    pub terms: Vec<String>,
}

/// The time window a question named.
#[derive(Debug, Clone, Serialize)]
pub struct WindowInfo {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub label: String,
    pub empty: bool,
    #[serde(skip)]
    pub window: Window,
}

/// What recall reads and derives of an episode: its light facts (kind, time,
/// salience, topic, verdict) and what its text gives (collapse key, narration).
/// Fixed for ever, since episodes never change (an erasure through this process
/// forgets them), so they are read once per episode and kept: reading a
/// thousand candidates' rows again was the largest part of a turn.
struct Derived {
    subject: i64,
    facts: CandidateFacts,
    collapse_key: String,
    narrates: bool,
    /// The period its text tells of, in the subject's time zone
    /// ([`tm_model::recall::tells_of`]): read on the first question with a
    /// window that meets the episode, since only such a question asks (read
    /// for every episode, it slowed every turn: `bench block` p50 2.3 → 2.6 ms).
    tells_of: OnceLock<Option<tm_model::recall::Window>>,
    /// Its text is longer than a block line ([`Candidate::long`]).
    long: bool,
}

/// A subject's vectors from one embedder: (subject id, embedder name).
type VectorKey = (i64, String);

/// Recall with an embedder and a cache of each subject's vectors.
pub struct Recaller {
    embedder: Arc<dyn Embedder>,
    params: RecallParams,
    cache: Mutex<HashMap<VectorKey, Arc<VectorSet>>>,
    /// One refresh of a subject's vectors at a time: turns that find the
    /// cache stale together wait for one reader instead of each reading.
    refreshing: Mutex<HashMap<VectorKey, Arc<Mutex<()>>>>,
    derived: Mutex<HashMap<i64, Arc<Derived>>>,
    /// Concept-name vectors per (subject, embedder), for routing by vector.
    concepts: Mutex<HashMap<(i64, String), Arc<ConceptVectors>>>,
    /// The honest check counts per subject with the stamp (head seq, map id) they
    /// were counted at: routing every recorded check again on every turn was a fifth
    /// of a block's time when no night had left a working set.
    checks: BySubjectStamp<crate::beliefs::Counts>,
    /// The concepts a subject's episodes touch, with the stamp they were read at
    /// (only an append adds one).
    keys: BySubjectStamp<Vec<String>>,
    /// The subject's check episodes in chain order (the record branch's missed
    /// checks read them on every record question).
    checks_read: BySubjectStamp<Vec<Episode>>,
    /// How long the last question's embedding took, in microseconds
    /// (`u64::MAX` before the first): [`Recaller::recall`] embeds on a thread of
    /// its own only when that is worth a thread.
    last_embed_us: AtomicU64,
}

/// A question's embedding shorter than this (the hashing embedder's few
/// microseconds) runs on the turn's own thread: spawning one for it cost 3–4 %
/// of the blocks a loaded server gives.
const OVERLAP_EMBEDDING_US: u64 = 200;

/// Per subject, a value and the subject's stamp (head seq, newest map id) it was
/// made at.
type BySubjectStamp<T> = Mutex<HashMap<i64, ((i64, i64), Arc<T>)>>;

/// The subject's value from `cache` while its stamp is `stamp`, else `make`'s, kept.
fn stamped<T>(
    cache: &BySubjectStamp<T>,
    subject: &Subject,
    stamp: (i64, i64),
    what: &'static str,
    make: impl FnOnce() -> Result<T>,
) -> Result<Arc<T>> {
    if let Some((s, v)) = cache.lock().map_err(|_| poisoned(what))?.get(&subject.id)
        && *s == stamp
    {
        return Ok(v.clone());
    }
    let v = Arc::new(make()?);
    cache
        .lock()
        .map_err(|_| poisoned(what))?
        .insert(subject.id, (stamp, v.clone()));
    Ok(v)
}

/// The names of one concept-map snapshot, embedded once: a turn compares
/// its question vector with these to route (docs/mechanisms.md §1), with no second
/// embedding call. Rebuilt when a new snapshot is saved.
struct ConceptVectors {
    /// The snapshot these names come from.
    map_id: Option<i64>,
    /// Canonical keys, parallel to the vectors.
    keys: Vec<String>,
    data: Vec<f32>,
    dim: usize,
}

impl Recaller {
    /// Thresholds follow the embedder's calibration: MiniLM's for a neural
    /// model, stricter ones for the hashing embedder (its cosines between
    /// unrelated texts run higher, from shared character n-grams).
    pub fn new(embedder: Arc<dyn Embedder>) -> Recaller {
        let c = embedder.calibration();
        let params = RecallParams {
            semantic_floor: c.match_floor,
            semantic_full: c.match_full,
            route_floor: c.route_floor,
            centred_share: c.centred_share,
            centred_from: c.centred_from,
            ..RecallParams::MINILM
        };
        Recaller {
            embedder,
            params,
            cache: Mutex::new(HashMap::default()),
            refreshing: Mutex::new(HashMap::default()),
            derived: Mutex::new(HashMap::default()),
            concepts: Mutex::new(HashMap::default()),
            checks: Mutex::new(HashMap::default()),
            keys: Mutex::new(HashMap::default()),
            checks_read: Mutex::new(HashMap::default()),
            last_embed_us: AtomicU64::new(u64::MAX),
        }
    }

    /// The thresholds for a question in `lang`, with the embedder's route
    /// floor for that language where it has its own
    /// ([`tm_embed::Calibration::in_language`]), and that language's match
    /// floor for texts in it.
    fn params_in(&self, lang: Option<&str>) -> (RecallParams, Option<LanguageFloors>) {
        match self.embedder.calibration().in_language(lang) {
            Some(own) => (
                RecallParams {
                    route_floor: own.route_floor,
                    ..self.params
                },
                Some(own).filter(|o| o.match_floor > self.params.semantic_floor),
            ),
            None => (self.params, None),
        }
    }

    pub fn embedder(&self) -> &dyn Embedder {
        &*self.embedder
    }

    /// Drops what this recaller holds of a subject (after an erasure): its
    /// vectors, its concept vectors, and every episode's derived facts.
    pub fn forget(&self, subject_id: i64) {
        if let Ok(mut c) = self.cache.lock() {
            c.retain(|k, _| k.0 != subject_id);
        }
        if let Ok(mut c) = self.concepts.lock() {
            c.retain(|k, _| k.0 != subject_id);
        }
        if let Ok(mut d) = self.derived.lock() {
            d.clear();
        }
        if let Ok(mut c) = self.checks.lock() {
            c.remove(&subject_id);
        }
        if let Ok(mut c) = self.keys.lock() {
            c.remove(&subject_id);
        }
        if let Ok(mut c) = self.checks_read.lock() {
            c.remove(&subject_id);
        }
    }

    /// The subject's honest check counts under `map`, counted again only when the
    /// subject's stamp moved (an append, a new map snapshot). `stamp` is the
    /// subject's, read before `map` was loaded, so a map saved in between is at worst
    /// counted under the older stamp and counted again on the next turn.
    pub fn honest_counts(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        stamp: (i64, i64),
        map: &tm_model::map::ConceptMap,
    ) -> Result<Arc<crate::beliefs::Counts>> {
        stamped(&self.checks, subject, stamp, "check counts cache", || {
            crate::beliefs::counts(store, subject, map)
        })
    }

    /// Embeds every episode of the subject that has no vector from this
    /// embedder yet (or one from another model), in batches; returns how many.
    pub fn embed_missing(
        &self,
        store: &mut dyn Store,
        subject: &Subject,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<usize> {
        let name = self.embedder.name().to_string();
        let total = store.count_missing_vectors(subject, &name)?;
        let mut done = 0;
        loop {
            let batch = store.episodes_missing_vectors(subject, &name, EMBED_BATCH * 16)?;
            if batch.is_empty() {
                break;
            }
            let mut vectors = Vec::with_capacity(batch.len());
            for chunk in batch.chunks(EMBED_BATCH) {
                let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
                let vs = self
                    .embedder
                    .embed(&texts)
                    .map_err(|e| Error::Embed(e.to_string()))?;
                vectors.extend(chunk.iter().map(|(id, _)| *id).zip(vs));
                done += chunk.len();
                progress(done, total);
            }
            store.write(|tx| tx.put_vectors(subject, &name, &vectors))?;
        }
        Ok(done)
    }

    /// Checks a subject's vectors after [`Recaller::embed_missing`]: every
    /// episode has one from this embedder (a vector replaces another
    /// model's), and those of its oldest, middle and newest episode point
    /// where the embedder puts their text now. Returns how many vectors and
    /// how many were embedded again to compare.
    pub fn verify_vectors(&self, store: &dyn Reader, subject: &Subject) -> Result<(usize, usize)> {
        let name = self.embedder.name();
        let missing = store.count_missing_vectors(subject, name)?;
        if missing > 0 {
            return Err(Error::Internal(format!(
                "{missing} episodes of {} still have no vector from {name}",
                subject.key
            )));
        }
        let vectors = self.vectors(store, subject)?;
        let mut ids: Vec<i64> = vectors.index.keys().copied().collect();
        ids.sort_unstable();
        let mut sample: Vec<i64> = [ids.first(), ids.get(ids.len() / 2), ids.last()]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        sample.dedup();
        if sample.is_empty() {
            return Ok((0, 0));
        }
        let texts = store.texts(subject, &sample)?;
        let embedded = self
            .embedder
            .embed(&texts.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>())
            .map_err(|e| Error::Embed(e.to_string()))?;
        for ((id, _), now) in texts.iter().zip(&embedded) {
            let stored = vectors.index.get(id).and_then(|p| vectors.at(*p));
            let agree = stored.map(|v| tm_embed::cosine_halves(now, v));
            if agree.is_none_or(|c| c < SAME_VECTOR) {
                return Err(Error::Internal(format!(
                    "the stored vector of episode {id} of {} is not what {name} gives for its text \
                     (cosine {agree:?})",
                    subject.key
                )));
            }
        }
        Ok((ids.len(), texts.len()))
    }

    fn vectors(&self, store: &dyn Reader, subject: &Subject) -> Result<Arc<VectorSet>> {
        let name = self.embedder.name().to_string();
        let key = (subject.id, name.clone());
        let cached = || -> Result<Option<Arc<VectorSet>>> {
            Ok(self
                .cache
                .lock()
                .map_err(|_| poisoned("vector cache"))?
                .get(&key)
                .cloned())
        };
        let stamp = store.vector_stamp(subject, &name)?;
        if let Some(v) = cached()?
            && v.stamp == stamp
        {
            return Ok(v);
        }
        let gate = self
            .refreshing
            .lock()
            .map_err(|_| poisoned("vector refresh"))?
            .entry(key.clone())
            .or_default()
            .clone();
        let _one_at_a_time = gate.lock().map_err(|_| poisoned("vector refresh"))?;
        // Whoever held the gate may have brought the cache up to date.
        let stamp = store.vector_stamp(subject, &name)?;
        let dim = self.embedder.dim();
        let mut grown = None;
        match cached()? {
            Some(v) if v.stamp == stamp => return Ok(v),
            // Only new episodes embedded since (by any process): read just
            // those, when they account for the whole change of the stamp.
            Some(v) if stamp.0 > v.stamp.0 && stamp.1 > v.stamp.1 => {
                let new = store.vectors_after(subject, &name, v.stamp.1)?;
                if new.len() as u64 == stamp.0 - v.stamp.0 {
                    grown = Some(v.grown(new, stamp));
                }
            }
            _ => {}
        }
        let set = match grown {
            Some(set) => set,
            None => {
                let mut set = VectorSet::empty(dim, stamp);
                set.push(store.vectors(subject, &name)?);
                set
            }
        };
        let set = Arc::new(set);
        self.cache
            .lock()
            .map_err(|_| poisoned("vector cache"))?
            .insert(key, set.clone());
        Ok(set)
    }

    /// The facts and derived values of the subject's episodes among `ids`
    /// (ascending, as `ids` is), from the cache or read now — only the rows of
    /// episodes not seen before are fetched. An id that is not the subject's
    /// episode is left out.
    fn derived(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        ids: &[i64],
    ) -> Result<Vec<Arc<Derived>>> {
        let poisoned = || poisoned("derived cache");
        let missing: Vec<i64> = {
            let cache = self.derived.lock().map_err(|_| poisoned())?;
            ids.iter()
                .copied()
                .filter(|id| !cache.contains_key(id))
                .collect()
        };
        if !missing.is_empty() {
            let facts = store.candidate_facts(subject, &missing)?;
            let ids: Vec<i64> = facts.iter().map(|f| f.id).collect();
            let texts: HashMap<i64, String> = store.texts(subject, &ids)?.into_iter().collect();
            let mut cache = self.derived.lock().map_err(|_| poisoned())?;
            for f in facts {
                let text = texts.get(&f.id).map(String::as_str).unwrap_or("");
                let d = Derived {
                    subject: subject.id,
                    collapse_key: collapse_key(
                        f.kind.as_str(),
                        text,
                        f.topic.as_deref(),
                        f.verdict.as_deref(),
                    ),
                    narrates: f.kind == Kind::Answer && narrates_period(text),
                    long: tm_model::block::longer_than_a_line(text),
                    tells_of: OnceLock::new(),
                    facts: f,
                };
                cache.insert(d.facts.id, Arc::new(d));
            }
        }
        let cache = self.derived.lock().map_err(|_| poisoned())?;
        Ok(ids
            .iter()
            .filter_map(|id| cache.get(id))
            .filter(|d| d.subject == subject.id)
            .cloned()
            .collect())
    }

    /// Embeds the question (once) — the same vector serves routing and recall.
    pub fn embed_question(&self, question: &str) -> Result<Option<Vec<f32>>> {
        if question.trim().is_empty() {
            return Ok(None);
        }
        self.embedder
            .embed_query(question)
            .map(Some)
            .map_err(|e| Error::Embed(e.to_string()))
    }

    /// The current map snapshot's concept names as vectors, from the cache
    /// or embedded now (once per snapshot, in batches).
    fn concept_vectors(
        &self,
        store: &dyn Reader,
        subject: &Subject,
    ) -> Result<Arc<ConceptVectors>> {
        let poisoned = || poisoned("concept vector cache");
        let name = self.embedder.name().to_string();
        let map_id = store.latest_map_id(subject)?;
        let key = (subject.id, name);
        if let Some(c) = self.concepts.lock().map_err(|_| poisoned())?.get(&key)
            && c.map_id == map_id
        {
            return Ok(c.clone());
        }
        let map = crate::map::load(store, subject)?;
        let dim = self.embedder.dim();
        let mut set = ConceptVectors {
            map_id,
            keys: Vec::with_capacity(map.len()),
            data: Vec::with_capacity(map.len() * dim),
            dim,
        };
        let nodes = map.nodes();
        for chunk in nodes.chunks(EMBED_BATCH) {
            let names: Vec<&str> = chunk.iter().map(|n| n.name.as_str()).collect();
            let vs = self
                .embedder
                .embed(&names)
                .map_err(|e| Error::Embed(e.to_string()))?;
            for (n, v) in chunk.iter().zip(vs) {
                if v.len() == dim {
                    set.keys.push(n.key.clone());
                    set.data.extend_from_slice(&v);
                }
            }
        }
        let set = Arc::new(set);
        self.concepts
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, set.clone());
        Ok(set)
    }

    /// Every check episode of the subject in chain order (none erased), read again
    /// when its stamp moved; `stamp` is the subject's, read before.
    pub fn check_episodes(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        stamp: (i64, i64),
    ) -> Result<Arc<Vec<Episode>>> {
        stamped(
            &self.checks_read,
            subject,
            stamp,
            "check episode cache",
            || Ok(store.episodes_of_kind(subject, Kind::Check, DateTime::<Utc>::MAX_UTC)?),
        )
    }

    /// The concepts the subject's episodes touch, read again when its stamp moved.
    fn concept_keys(&self, store: &dyn Reader, subject: &Subject) -> Result<Arc<Vec<String>>> {
        let stamp = store.subject_stamp(subject)?;
        stamped(&self.keys, subject, stamp, "concept key cache", || {
            Ok(store.concept_keys(subject)?)
        })
    }

    /// Routes a question to concepts: every known concept whose canonical
    /// name occurs in the question as whole words, then the concepts whose
    /// name vectors are closest to the question's vector (above the
    /// embedder's route floor, see [`RecallParams::route_by_vector`]).
    /// Returns all routed keys and, separately, those reached by vector only.
    fn route(
        &self,
        params: &RecallParams,
        store: &dyn Reader,
        subject: &Subject,
        question: &str,
        qvec: Option<&[f32]>,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let words = crate::map::Words::of(question);
        let mut routed: Vec<String> = self
            .concept_keys(store, subject)?
            .iter()
            .filter(|k| words.key(k))
            .cloned()
            .collect();
        let mut by_vector = Vec::new();
        if let Some(qv) = qvec {
            let names = self.concept_vectors(store, subject)?;
            if qv.len() == names.dim && names.dim > 0 {
                let scored: Vec<(String, f32)> = names
                    .keys
                    .iter()
                    .zip(names.data.chunks_exact(names.dim))
                    .map(|(k, v)| (k.clone(), tm_embed::cosine(qv, v)))
                    .collect();
                for k in params.route_by_vector(&scored) {
                    if !routed.contains(&k) {
                        routed.push(k.clone());
                        by_vector.push(k);
                    }
                }
            }
        }
        Ok((routed, by_vector))
    }

    /// Recalls for one turn. The question is embedded on a thread of its own
    /// while this one reads the pools that need no vector (the recent and
    /// window episodes, the full-text hits): with MiniLM the embedding was half
    /// of a 10,000-episode turn, and those reads most of the rest.
    pub fn recall(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        q: &RecallQuery<'_>,
    ) -> Result<RecallResult> {
        let last_us = self.last_embed_us.load(Ordering::Relaxed);
        if q.question.trim().is_empty() || last_us < OVERLAP_EMBEDDING_US {
            // A thread costs more than such an embedding saves.
            let (qvec, embed_ms) = self.timed_embedding(q.question);
            return self.recall_with_vector(store, subject, q, qvec?.as_deref(), embed_ms);
        }
        std::thread::scope(|scope| {
            let embedding = scope.spawn(|| self.timed_embedding(q.question));
            let lexical = self.lexical_pools(store, subject, q);
            let (qvec, embed_ms) = embedding
                .join()
                .map_err(|_| Error::Embed("the embedding thread panicked".into()))?;
            self.with_lexical(store, subject, q, qvec?.as_deref(), lexical?, embed_ms)
        })
    }

    /// The question's vector and the milliseconds it took, noted for the next
    /// turn's choice of thread.
    fn timed_embedding(&self, question: &str) -> (Result<Option<Vec<f32>>>, f64) {
        let t0 = Instant::now();
        let qvec = self.embed_question(question);
        let embed_ms = ms(t0);
        self.last_embed_us
            .store((embed_ms * 1000.0) as u64, Ordering::Relaxed);
        (qvec, embed_ms)
    }

    /// Recalls with a question vector already computed.
    pub fn recall_with_vector(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        q: &RecallQuery<'_>,
        qvec: Option<&[f32]>,
        embed_ms: f64,
    ) -> Result<RecallResult> {
        let lexical = self.lexical_pools(store, subject, q)?;
        self.with_lexical(store, subject, q, qvec, lexical, embed_ms)
    }

    /// The pools that need no question vector: the window, the question's
    /// words, the recent and window episodes and the full-text hits.
    fn lexical_pools(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        q: &RecallQuery<'_>,
    ) -> Result<LexicalPools> {
        let t1 = Instant::now();
        let window = parse_window(q.question, q.at, q.tz);
        let time_words: HashSet<String> = window_words(q.question).into_iter().collect();
        // Record cues ("what did we do", "cosa abbiamo fatto") say the
        // question is about the record, not what it is about: with MiniLM
        // they matched unrelated turns and outranked a month's own work.
        let cue_words: HashSet<String> =
            tm_model::block::record_words(q.question, window.is_some())
                .into_iter()
                .collect();
        let terms: Vec<String> = distinctive_terms(q.question)
            .into_iter()
            .filter(|t| !time_words.contains(t) && !cue_words.contains(t))
            .collect();
        let question_present = !terms.is_empty();

        let mut ids: Vec<i64> = store.recent_ids(subject, q.at, RECENT_POOL)?;
        if let Some(w) = &window {
            ids.extend(store.window_ids(subject, w.from, w.to, POOL_LIMIT)?);
        }
        let terms = distinctive_in_subject(store, subject, terms)?;
        let lang = tm_model::lang::stem::language_of(q.question).or(subject.language.as_deref());
        let terms = with_other_forms(store, subject, terms, lang)?;
        let mut lexical: HashMap<i64, f32> = HashMap::default();
        {
            let hits = store.term_hits(subject, &terms, POOL_LIMIT)?;
            let best = hits.iter().map(|(_, s)| *s).fold(0.0f64, f64::max);
            for (id, s) in hits {
                // BM25 relative to the pool's best; every hit keeps a floor
                // so one distinctive word is still evidence.
                let rel = if best > 0.0 { (s / best) as f32 } else { 1.0 };
                lexical.insert(id, rel.clamp(0.05, 1.0));
                ids.push(id);
            }
        }
        Ok(LexicalPools {
            window,
            terms,
            question_present,
            ids,
            lexical,
            lang: lang.map(str::to_string),
            ms: ms(t1),
        })
    }

    /// The rest of a turn's recall, after [`Recaller::lexical_pools`]: routing,
    /// the concept and semantic pools, the candidates' signals, the ranking.
    fn with_lexical(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        q: &RecallQuery<'_>,
        qvec: Option<&[f32]>,
        pools: LexicalPools,
        embed_ms: f64,
    ) -> Result<RecallResult> {
        let t1 = Instant::now();
        let LexicalPools {
            window,
            terms,
            question_present,
            mut ids,
            lexical,
            lang,
            ms: pools_ms,
        } = pools;
        let (params, own_floor) = self.params_in(lang.as_deref());
        let (routed, routed_by_vector) = self.route(&params, store, subject, q.question, qvec)?;
        let concept_hits: HashSet<i64> = store
            .concept_ids(subject, &routed, POOL_LIMIT)?
            .into_iter()
            .collect();
        ids.extend(concept_hits.iter().copied());

        let vectors = self.vectors(store, subject)?;
        let mut semantic: HashMap<i64, f32> = HashMap::default();
        // Every vector's cosine, by segment: a candidate outside the nearest
        // neighbours reads its own here rather than computing it again.
        let mut scanned: Vec<Vec<f32>> = Vec::new();
        if let Some(qv) = qvec.filter(|v| v.len() == vectors.dim) {
            let mut scored: Vec<(f32, i64)> = Vec::with_capacity(vectors.index.len());
            for segment in &vectors.segments {
                let mut cosines = Vec::with_capacity(segment.ids.len());
                tm_embed::cosines_halves(qv, &segment.data, vectors.dim, &mut cosines);
                scored.extend(cosines.iter().copied().zip(segment.ids.iter().copied()));
                scanned.push(cosines);
            }
            let k = SEMANTIC_NEIGHBOURS.min(scored.len());
            if k > 0 {
                scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
                scored.truncate(k);
            }
            for (s, id) in scored {
                semantic.insert(id, s);
                ids.push(id);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        if let Some(x) = q.exclude {
            ids.retain(|&i| i != x);
        }
        let derived = self.derived(store, subject, &ids)?;
        if window.is_some() {
            told_periods(store, subject, &derived)?;
        }
        let narrations = narrations(store, subject, &derived)?;
        // A share of the subject's mean, with its dot products with the
        // question and itself, for each candidate's centred cosine.
        let centre = qvec
            .filter(|_| !scanned.is_empty())
            .zip(vectors.centre(params.centred_share, params.centred_from))
            .map(|(qv, m)| (tm_embed::cosine(qv, &m), tm_embed::cosine(&m, &m), m));
        let mut candidates = Vec::with_capacity(derived.len());
        for d in &derived {
            let f = &d.facts;
            let place = vectors.index.get(&f.id).copied();
            let semantic = match semantic.get(&f.id) {
                Some(s) => *s,
                None => place
                    .and_then(|(s, p)| scanned.get(s as usize)?.get(p as usize).copied())
                    .unwrap_or(0.0),
            };
            // Only a match by meaning ranks by it: under the floor it would be
            // read by nothing.
            let centred = centre
                .as_ref()
                .zip(place)
                .filter(|_| semantic >= params.semantic_floor)
                .and_then(|((qm, mm, m), place)| {
                    let dm = tm_embed::cosine_halves(m, vectors.at(place)?);
                    Some(centred_cosine(semantic, *qm, dm, *mm))
                });
            candidates.push(Candidate {
                id: f.id,
                seq: f.seq,
                kind: f.kind.as_str().to_string(),
                at: f.at,
                salience: f.salience as f32,
                collapse_key: d.collapse_key.clone(),
                lexical: lexical.get(&f.id).copied().unwrap_or(0.0),
                semantic,
                centred,
                concept: concept_hits.contains(&f.id),
                narration: narrations.contains(&f.id),
                tells_of: d.tells_of.get().copied().flatten(),
                long: d.long,
            });
        }
        if let Some(own) = own_floor {
            own_language_floor(store, subject, &mut candidates, params.semantic_floor, own)?;
        }
        let pools_ms = pools_ms + ms(t1);

        let t2 = Instant::now();
        let n_candidates = candidates.len();
        let outcome = recall(
            candidates,
            question_present,
            window.as_ref().map(|w| (w.from, w.to)),
            q.at,
            &params,
            q.limit,
        );
        let winners: Vec<i64> = outcome.ranked.iter().map(|r| r.candidate.id).collect();
        let mut by_id: HashMap<i64, Episode> = store
            .subject_episodes_by_ids(subject, &winners)?
            .into_iter()
            .map(|e| (e.id, e))
            .collect();
        let mut ranked: Vec<RecalledEpisode> = outcome
            .ranked
            .into_iter()
            .filter_map(|r| {
                let episode = by_id.remove(&r.candidate.id)?;
                Some(RecalledEpisode {
                    count: r.count,
                    members: r.members,
                    signals: Signals {
                        lexical: r.candidate.lexical,
                        semantic: r.candidate.semantic,
                        centred: r.candidate.centred,
                        concept: r.candidate.concept,
                        salience: r.candidate.salience,
                        recency: r.recency,
                        relevance: r.relevance,
                        context: r.context,
                        score: r.score,
                        matched: r.matched,
                        outside_window: r.outside_window,
                        neighbour_of: None,
                    },
                    episode,
                })
            })
            .collect();
        if outcome.basis == Basis::Matched {
            self.with_neighbours(store, subject, &mut ranked, window.as_ref(), q)?;
        }
        Ok(RecallResult {
            window: window.map(|w| WindowInfo {
                from: w.from,
                to: w.to,
                label: w.describe(),
                empty: outcome.window_empty,
                window: w,
            }),
            basis: match outcome.basis {
                Basis::Matched => "matched",
                Basis::NoQuestion => "no_question",
                Basis::NothingMatched => "nothing_matched",
            },
            ranked,
            routed,
            embed_ms,
            pools_ms,
            score_ms: ms(t2),
            candidates: n_candidates,
            embedder: self.embedder.name().to_string(),
            routed_by_vector,
            terms,
        })
    }
}

/// One strong match in this many memories asked for (at least one) brings
/// its turns before and after: 3 at 1,500 tokens, 1 at 500, where context
/// would crowd out matches (three at 500 tokens gave 0.657, this 0.665, none
/// 0.668, with the turn before alone).
pub const NEIGHBOURED: usize = 25;
/// The relevance at or above which a match is strong enough to bring its
/// neighbours: nine tenths of what the best of the pool carries by one signal
/// ([`BEST_OF_POOL`](tm_model::recall::BEST_OF_POOL)).
pub const NEIGHBOUR_RELEVANCE: f32 = 0.9 * tm_model::recall::BEST_OF_POOL;

/// Which of `derived` narrate memory (docs/mechanisms.md §3): answers whose grounding
/// traced a claim to a recalled memory ([`NARRATED`](crate::grounding::NARRATED))
/// or whose text narrates a period ([`narrates_period`], held in the cache).
/// Recall never takes them as memories of a window.
fn narrations(
    store: &dyn Reader,
    subject: &Subject,
    derived: &[Arc<Derived>],
) -> Result<HashSet<i64>> {
    // Only answers narrate, so only theirs are looked up (every candidate's
    // were: 4 % of a loaded server's CPU at 10,000 episodes).
    let ids: Vec<i64> = derived
        .iter()
        .filter(|d| d.facts.kind == Kind::Answer)
        .map(|d| d.facts.id)
        .collect();
    if ids.is_empty() {
        return Ok(HashSet::default());
    }
    let annotated: HashSet<i64> = store
        .annotated_ids(subject, &ids, crate::grounding::NARRATED)?
        .into_iter()
        .collect();
    Ok(derived
        .iter()
        .filter(|d| d.facts.kind == Kind::Answer && (annotated.contains(&d.facts.id) || d.narrates))
        .map(|d| d.facts.id)
        .collect())
}

/// Reads the period each of `derived` tells of where it is not known yet
/// (one read of their texts).
fn told_periods(store: &dyn Reader, subject: &Subject, derived: &[Arc<Derived>]) -> Result<()> {
    let unread: Vec<i64> = derived
        .iter()
        .filter(|d| d.tells_of.get().is_none())
        .map(|d| d.facts.id)
        .collect();
    if unread.is_empty() {
        return Ok(());
    }
    let texts: HashMap<i64, String> = store.texts(subject, &unread)?.into_iter().collect();
    for d in derived {
        if let Some(text) = texts.get(&d.facts.id) {
            let _ = d
                .tells_of
                .set(tm_model::recall::tells_of(text, d.facts.at, subject.tz()));
        }
    }
    Ok(())
}

impl Recaller {
    /// The turns before and after each of the first strong matches
    /// ([`NEIGHBOURED`]), placed right after it in that order (moved up when
    /// they ranked lower): a reply is read with what it replies to, a question
    /// with what answered it. Only turns of the same sitting
    /// ([`same_sitting`]), none after the asking turn, none across the
    /// window's edge, and for a window's question no narration (a tutor answer
    /// telling of past sessions), which recall itself never ranks there (docs/mechanisms.md §3).
    ///
    /// The gate still decides what is ranked: a neighbour is not ranked on its
    /// own, it is its match's context, and [`Signals::neighbour_of`] says so.
    /// The failures that motivate it (issue 17, LoCoMo `not_matched`): an
    /// exchange is evidence as a whole, while only one of its turns shares the
    /// question's words or meaning. "What was the poetry reading Caroline
    /// attended about?" found the reply ("It was a transgender poetry reading
    /// where…") but not the turn it answers ("What was it about?"): the turn
    /// before took evidence recall at 1,500 tokens 0.789 → 0.795 by content.
    /// "What type of meal does John often cook using a slow cooker?" found the
    /// turn asking about the slow cooker, not John's answer after it ("I make
    /// this yummy honey garlic chicken…"): the turn after as well, within the
    /// sitting, took it 0.795 → 0.811 (BENCHMARKS.md).
    fn with_neighbours(
        &self,
        store: &dyn Reader,
        subject: &Subject,
        ranked: &mut Vec<RecalledEpisode>,
        window: Option<&Window>,
        q: &RecallQuery<'_>,
    ) -> Result<()> {
        let strong: Vec<(i64, u64, DateTime<Utc>, bool)> = ranked
            .iter()
            .filter(|r| r.signals.matched && r.signals.relevance >= NEIGHBOUR_RELEVANCE)
            .take((q.limit / NEIGHBOURED).max(1))
            .map(|r| {
                let e = &r.episode;
                (e.id, e.seq, e.at, r.signals.outside_window)
            })
            .collect();
        for (id, seq, match_at, outside) in strong {
            // The turn before, then the turn after: placed right after the match
            // in that order.
            let mut place = 1;
            for at_seq in [seq.checked_sub(1), seq.checked_add(1)] {
                let Some(at_seq) = at_seq.filter(|s| *s >= 1) else {
                    continue;
                };
                let Some(near) = store.episode_at_seq(subject, at_seq)? else {
                    continue;
                };
                if near.at > q.at
                    || !same_sitting(near.at, match_at)
                    || Some(near.id) == q.exclude
                    || window.is_some_and(|w| w.contains(near.at) == outside)
                {
                    continue;
                }
                if window.is_some()
                    && !narrations(store, subject, &self.derived(store, subject, &[near.id])?)?
                        .is_empty()
                {
                    continue;
                }
                let pos = ranked.iter().position(|r| r.episode.id == id).unwrap_or(0);
                let entry = match ranked.iter().position(|r| r.episode.id == near.id) {
                    Some(p) if p < pos => continue,
                    Some(p) => {
                        let mut moved = ranked.remove(p);
                        moved.signals.neighbour_of = Some(id);
                        moved
                    }
                    None => RecalledEpisode {
                        count: 1,
                        members: vec![near.id],
                        signals: Signals {
                            lexical: 0.0,
                            semantic: 0.0,
                            centred: None,
                            concept: false,
                            salience: near.salience as f32,
                            recency: tm_model::recall::recency(near.at, q.at),
                            relevance: 0.0,
                            context: 0.0,
                            score: 0.0,
                            matched: false,
                            outside_window: outside,
                            neighbour_of: Some(id),
                        },
                        episode: near,
                    },
                };
                ranked.insert((pos + place).min(ranked.len()), entry);
                place += 1;
            }
        }
        ranked.truncate(q.limit);
        Ok(())
    }
}

/// The cosine at or above which a stored vector is the one its embedder
/// gives for the text now: stored as halves, a vector keeps a cosine of
/// 0.9999 or more with itself.
const SAME_VECTOR: f32 = 0.999;

/// What [`Recaller::lexical_pools`] gathers before the question's vector is needed.
struct LexicalPools {
    window: Option<Window>,
    /// The words the full-text pool searched for.
    terms: Vec<String>,
    question_present: bool,
    /// The recent, window and full-text candidates (unsorted, with repeats).
    ids: Vec<i64>,
    /// Each full-text hit's BM25 relative to the pool's best.
    lexical: HashMap<i64, f32>,
    /// The question's language by its words, else the subject's.
    lang: Option<String>,
    /// Milliseconds these pools took (a part of `RecallResult::pools_ms`).
    ms: f64,
}

/// At most this many other forms of one question word are searched for.
pub const FORMS_PER_TERM: usize = 8;

/// The question's words and, after them, the other forms of each that the
/// subject's episodes hold: the words of the index that start with the word's
/// [`inflection_prefix`](tm_model::lang::stem::inflection_prefix) and have its
/// stem in `lang` (the question's language, else the subject's). Without a
/// language, or in one with no stemmer, the words stay as they are.
///
/// The failure that motivates it (issue 17, LoCoMo): "What did Caroline
/// research?" did not find "Researching adoption agencies" by its words, and
/// evidence turns that shared only an inflected form with the question were
/// `not_matched` or ranked by meaning alone.
fn with_other_forms(
    store: &dyn Reader,
    subject: &Subject,
    terms: Vec<String>,
    lang: Option<&str>,
) -> Result<Vec<String>> {
    use tm_model::lang::stem::{inflection_prefix, same_stem};
    let Some(lang) = lang else {
        return Ok(terms);
    };
    let mut seen: HashSet<String> = terms.iter().cloned().collect();
    let mut out = terms.clone();
    for t in &terms {
        let Some(prefix) = inflection_prefix(t, lang) else {
            continue;
        };
        let keep = |w: &str| !seen.contains(w) && same_stem(t, w, lang);
        let forms = store.terms_with_prefix(subject, &prefix, &keep, FORMS_PER_TERM)?;
        for w in forms {
            if seen.insert(w.clone()) {
                out.push(w);
            }
        }
    }
    Ok(out)
}

/// A word found in more than this share of a subject's episodes does not say
/// which episode is meant.
pub const COMMON_SHARE: usize = 4;

/// The terms that are distinctive in this subject: a term found in more than
/// one episode in [`COMMON_SHARE`] is dropped (a speaker's name on half the
/// turns lifted every one of them to relevance ≈ 0.5 through BM25 relative to
/// the best hit, above turns that matched the question's meaning; found on
/// LoCoMo). When every term is that common, all are kept.
fn distinctive_in_subject(
    store: &dyn Reader,
    subject: &Subject,
    terms: Vec<String>,
) -> Result<Vec<String>> {
    if terms.len() < 2 {
        return Ok(terms);
    }
    let n = store.episode_count(subject)? as usize;
    let cap = n / COMMON_SHARE;
    if cap < 8 {
        return Ok(terms);
    }
    let mut kept = Vec::with_capacity(terms.len());
    for t in &terms {
        // A term with no letter or digit is searched for by nothing.
        if !t.chars().any(char::is_alphanumeric) {
            continue;
        }
        if store.term_count(subject, t, cap + 1)? <= cap {
            kept.push(t.clone());
        }
    }
    Ok(if kept.is_empty() { terms } else { kept })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}
