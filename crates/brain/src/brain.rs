//! The brain as one value: what every face (the CLI, the HTTP server, the
//! MCP face, the benchmark, the demo) holds and asks. No face opens a store,
//! indexes, or assembles a turn by itself.
//!
//! [`Brain`] owns the storage engine and a pool of its connections, the
//! recaller (the embedder, what its cosines mean, and the caches of vectors
//! and derived facts every turn shares), the concept extractor, and the one
//! time-cap mechanism: a block is built by one of a few block workers (two
//! a core, first come first served) with a pooled connection and, past the
//! cap, comes back `dropped` at once while the build finishes unawaited; a
//! block still queued when its cap passes is never built. `Brain` is
//! `Send + Sync`: a server shares it in
//! an `Arc`; every method is blocking (an async face runs it on its blocking
//! pool). Other modules add their own `impl Brain` blocks (`turn` does).

use crate::beliefs::{Counts, Rederived};
use crate::block::{Block, BlockRequest, DEFAULT_BUDGET, DEFAULT_CAP, empty_block};
use crate::grounding::Answered;
use crate::nightly::{NightlyOptions, NightlyReport};
use crate::recall::{RecallQuery, RecallResult, Recaller};
use crate::record::{Indexing, Recorded, Target};
use crate::{Error, Result, poisoned};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};
use tm_embed::Embedder;
use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{ChainReport, Checkpoint, Episode, Erasure, NewErasure};
use tm_model::events::Event;
use tm_model::files::FileVersion;
use tm_model::grounding::{Grounding, Passage};
use tm_model::map::ConceptMap;
use tm_model::nightly::Report;
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};
use tm_store::{Engine, Reader, Store, StoreExt};

/// The smallest token budget a block may be asked for.
pub const MIN_BUDGET: usize = 50;
/// The largest token budget a block may be asked for.
pub const MAX_BUDGET: usize = 32_000;

/// Where the brain's embedder comes from.
pub enum EmbedderSource {
    /// Already made.
    Ready(Arc<dyn Embedder>),
    /// Made on first use, so work that never embeds (verifying a chain,
    /// listing keys) never loads a model. The closure is given which
    /// embedders made the store's episode vectors, with counts, the most
    /// first (`Reader::store_vector_models`): a store keeps the embedder it
    /// was made with. It may print a warning (a fallback is never silent);
    /// its error is the brain's.
    #[allow(clippy::type_complexity)]
    Lazy(
        Box<
            dyn Fn(&[(String, u64)]) -> std::result::Result<Arc<dyn Embedder>, String>
                + Send
                + Sync,
        >,
    ),
}

impl From<Arc<dyn Embedder>> for EmbedderSource {
    fn from(e: Arc<dyn Embedder>) -> EmbedderSource {
        EmbedderSource::Ready(e)
    }
}

impl<E: Embedder + 'static> From<Arc<E>> for EmbedderSource {
    fn from(e: Arc<E>) -> EmbedderSource {
        EmbedderSource::Ready(e)
    }
}

/// Open connections to the engine, reused across calls: opening one is far
/// too slow to do per request.
struct Pool {
    engine: Arc<dyn Engine>,
    idle: Mutex<Vec<Box<dyn Store>>>,
    max_idle: usize,
}

impl Pool {
    fn take(&self) -> Result<Box<dyn Store>> {
        let taken = self.idle.lock().map_err(|_| poisoned("pool"))?.pop();
        match taken {
            Some(s) => Ok(s),
            None => Ok(self.engine.connect()?),
        }
    }

    fn give(&self, store: Box<dyn Store>) {
        // A connection the server closed is dropped, not pooled: the next
        // call opens a fresh one.
        if store.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.max_idle
        {
            idle.push(store);
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut dyn Store) -> Result<T>) -> Result<T> {
        let mut store = self.take()?;
        let out = f(&mut *store);
        self.give(store);
        out
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A connection may block when it closes (PostgreSQL's client says
        // goodbye to the server), which an async runtime's thread must not:
        // the brain may be dropped on one, so its connections close on a
        // thread of their own.
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|p| p.into_inner()));
        if !idle.is_empty() {
            let _ = std::thread::spawn(move || drop(idle)).join();
        }
    }
}

/// A block's build, run by a block worker.
type Job = Box<dyn FnOnce() + Send>;

/// Starts `n` block workers taking jobs from one queue, first come first
/// served; they stop when the queue's sender is dropped (with the brain).
///
/// Why a fixed few and not a thread a block: a block is CPU work (SQLite in
/// the process, the encoder, the renderer), so threads beyond the cores only
/// share them out. With a thread a block, 32 concurrent requests on 2 cores
/// each took 16 blocks' time and the tail followed the slowest questions
/// (`bench load`, p99 2.5× the mean); queued in order, a request waits for
/// the blocks ahead of it and no longer.
fn start_block_workers(n: usize) -> Result<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..n.max(1) {
        let rx = rx.clone();
        std::thread::Builder::new()
            .name(format!("block-{i}"))
            .spawn(move || {
                loop {
                    // The lock is held while waiting, not while building.
                    let job = match rx.lock() {
                        Ok(queue) => queue.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    // A build that panics answers nobody (its sender is
                    // dropped, so its caller sees an internal error); the
                    // worker goes on to the next.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .map_err(|e| Error::Internal(format!("cannot start a block worker: {e}")))?;
    }
    Ok(tx)
}

/// The default number of block workers: two a core. One a core left a
/// core idle while a block waited for its question's embedding (made on a
/// thread of its own beside the pools) or for its engine: with MiniLM, two
/// a core gave 134–139 blocks/s against 118–123 (`bench load
/// --block-workers`), and the tail stayed as tight.
fn default_block_workers() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The one door into the memory.
pub struct Brain {
    pool: Arc<Pool>,
    source: EmbedderSource,
    recaller: Mutex<Option<Arc<Recaller>>>,
    extractor: Arc<dyn ConceptExtractor>,
    budget: usize,
    cap: Duration,
    /// How many block workers to start (on the first block).
    block_workers: usize,
    workers: OnceLock<mpsc::Sender<Job>>,
    /// Whose learners the operator's names mean (`--owner`): `None`, any
    /// owner's, as long as only one has the name.
    view: Option<Owner>,
    max_concepts: usize,
}

/// What a subject's beliefs are, with honest check counts.
#[derive(Debug, Clone, Serialize)]
pub struct Beliefs {
    pub current: Vec<BeliefRow>,
    pub checks: Counts,
}

/// The concept map as a face shows it: the map, its teaching order by name
/// (prerequisites first) and the readiness of the material.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MapView {
    /// The concept map (nodes with readiness, centrality, layer, sources).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub map: ConceptMap,
    /// Teaching order: layers of concept names, prerequisites first.
    pub teaching_order: Vec<Vec<String>>,
    /// The centrality-weighted readiness of the subject's material (0–1).
    pub readiness: f64,
}

/// What teaching the tutor did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Taught {
    /// Episodes appended (0 when the same message was recorded before).
    pub appended: usize,
    /// The taught episode's seq.
    pub seq: u64,
    /// The language whose cue was found.
    pub lang: String,
    pub cue: String,
    /// Concepts of the map the message names.
    pub concepts: Vec<String>,
}

impl Brain {
    /// A brain over `engine`, embedding with `embedder`. Budget
    /// [`DEFAULT_BUDGET`] tokens, cap [`DEFAULT_CAP`], the offline extractor,
    /// up to 32 idle connections.
    fn new(engine: Arc<dyn Engine>, embedder: EmbedderSource) -> Brain {
        Brain {
            pool: Arc::new(Pool {
                engine,
                idle: Mutex::new(Vec::new()),
                max_idle: 32,
            }),
            source: embedder,
            recaller: Mutex::new(None),
            extractor: Arc::new(OfflineExtractor::default()),
            budget: DEFAULT_BUDGET,
            cap: DEFAULT_CAP,
            block_workers: default_block_workers(),
            workers: OnceLock::new(),
            view: None,
            max_concepts: crate::record::DEFAULT_MAX_CONCEPTS,
        }
    }

    /// A brain over the store at `location` (a SQLite file path, or a
    /// `postgres://` URL), its schema brought up to date: the one door every
    /// face opens the memory through.
    pub fn open(location: &str, embedder: impl Into<EmbedderSource>) -> Result<Brain> {
        Ok(Brain::new(tm_store::open(location)?, embedder.into()))
    }

    /// How files become concepts (default: the offline extractor).
    pub fn set_extractor(&mut self, extractor: Arc<dyn ConceptExtractor>) {
        self.extractor = extractor;
    }

    /// The token budget used when a turn names none.
    pub fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    /// The hard time cap on building a block.
    pub fn set_cap(&mut self, cap: Duration) {
        self.cap = cap;
    }

    /// A subject map's concept cap (see [`crate::record::Indexing`]).
    pub fn set_max_concepts(&mut self, n: usize) {
        self.max_concepts = n.max(1);
    }

    /// How many blocks are built at once (default: two a core); the rest
    /// wait their turn in order. Takes effect before the first block.
    pub fn set_block_workers(&mut self, n: usize) {
        self.block_workers = n.max(1);
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// Where the data lives.
    pub fn location(&self) -> &str {
        self.pool.engine.location()
    }

    /// The recaller, making the embedder on first use.
    pub fn recaller(&self) -> Result<Arc<Recaller>> {
        let mut slot = self.recaller.lock().map_err(|_| poisoned("recaller"))?;
        if let Some(r) = &*slot {
            return Ok(r.clone());
        }
        let embedder = match &self.source {
            EmbedderSource::Ready(e) => e.clone(),
            EmbedderSource::Lazy(make) => make(&self.vector_models()?).map_err(Error::Embed)?,
        };
        let r = Arc::new(Recaller::new(embedder));
        *slot = Some(r.clone());
        Ok(r)
    }

    /// The recaller if it has been made: what holds this process's caches
    /// (erasing clears them, and must not load a model to find none).
    fn made_recaller(&self) -> Option<Arc<Recaller>> {
        self.recaller.lock().ok().and_then(|slot| slot.clone())
    }

    /// Which embedders made the store's episode vectors, with counts, the
    /// most first (`Reader::store_vector_models`).
    pub fn vector_models(&self) -> Result<Vec<(String, u64)>> {
        self.read(|r| Ok(r.store_vector_models()?))
    }

    /// The embedder's name (making it on first use).
    pub fn embedder_name(&self) -> Result<String> {
        Ok(self.recaller()?.embedder().name().to_string())
    }

    /// Runs `f` on a pooled connection (blocking). Faces use the methods
    /// below; this is for the brain's own parts and for benchmarks that
    /// measure the store itself.
    pub fn with_store<T>(&self, f: impl FnOnce(&mut dyn Store) -> Result<T>) -> Result<T> {
        self.pool.with(f)
    }

    fn read<T>(&self, f: impl FnOnce(&dyn Reader) -> Result<T>) -> Result<T> {
        self.pool.with(|s| f(&*s))
    }

    /// Runs `f` with the indexing parts (embedder, extractor) and a connection.
    fn indexing<T>(&self, f: impl FnOnce(&mut dyn Store, &Indexing<'_>) -> Result<T>) -> Result<T> {
        let recaller = self.recaller()?;
        let ix = Indexing {
            embedder: recaller.embedder(),
            extractor: &*self.extractor,
            max_concepts: self.max_concepts,
        };
        self.pool.with(|s| f(s, &ix))
    }

    // ------------------------------------------------------------ subjects

    /// The subject named `learner/subject`: [`Error::BadKey`] when the name
    /// is not a key, [`Error::UnknownSubject`] when no such subject is stored.
    pub fn subject(&self, key: &str) -> Result<Subject> {
        let parsed = SubjectKey::parse(key).map_err(|e| Error::BadKey(format!("{key:?}: {e}")))?;
        let view = self.view;
        self.read(|r| {
            tm_store::subject_named(r, view, &parsed)?
                .ok_or_else(|| Error::UnknownSubject(parsed.to_string()))
        })
    }

    /// Makes the operator's names (subject keys and learner slugs given to
    /// [`Brain::subject`], imports, [`Scope::Learner`]) mean `owner`'s
    /// learners; `None` (the default): any owner's, as long as only one has
    /// the name.
    pub fn set_view(&mut self, owner: Option<Owner>) {
        self.view = owner;
    }

    /// The owner the operator's names mean, if one was set.
    pub fn view(&self) -> Option<Owner> {
        self.view
    }

    /// Every subject, by key.
    pub fn subjects(&self) -> Result<Vec<Subject>> {
        self.read(|r| Ok(r.subjects()?))
    }

    /// The subject, when it exists and its learner is the tenant's;
    /// [`Error::UnknownSubject`] otherwise: another tenant's subject is
    /// indistinguishable from a missing one (a malformed key too).
    pub fn tenant_subject(&self, tenant_id: i64, key: &str) -> Result<Subject> {
        let missing = || Error::UnknownSubject(key.to_string());
        let parsed = SubjectKey::parse(key).map_err(|_| missing())?;
        self.read(|r| {
            r.subject_of(Owner::Tenant(tenant_id), &parsed)?
                .ok_or_else(missing)
        })
    }

    /// The tenant's live subjects by key (one erased whole is gone).
    pub fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        let all = self.read(|r| Ok(r.tenant_subjects(tenant_id)?));
        Ok(all?.into_iter().filter(|s| !s.retired).collect())
    }

    /// Creates a subject (and its learner) for a tenant; an existing live
    /// subject of the tenant's is returned as it is (`false`: not created).
    /// Learner names are the tenant's own: another tenant's learner of the
    /// same name is neither seen nor in the way, and a name whose subject was
    /// erased whole is free again (a new subject, a new chain).
    pub fn create_subject(
        &self,
        tenant_id: i64,
        key: &SubjectKey,
        title: &str,
        language: Option<&str>,
        timezone: Option<chrono_tz::Tz>,
        at: DateTime<Utc>,
    ) -> Result<(Subject, bool)> {
        tm_model::subject::check_title(title).map_err(tm_store::Error::from)?;
        if let Some(l) = language {
            tm_model::subject::check_language(l).map_err(tm_store::Error::from)?;
        }
        let owner = Owner::Tenant(tenant_id);
        self.pool.with(|store| {
            store.write_with(|tx| {
                let existed = tx.subject_of(owner, key)?.is_some_and(|s| !s.retired);
                let s = tx.ensure_subject(owner, key, title, language, at)?;
                match timezone {
                    Some(tz) if !existed => {
                        tx.set_timezone(&s, tz)?;
                        Ok((
                            Subject {
                                timezone: Some(tz),
                                ..s
                            },
                            true,
                        ))
                    }
                    _ => Ok((s, !existed)),
                }
            })
        })
    }

    // ------------------------------------------------------------ writes

    /// Imports a history file (docs/formats.md, v1) in one transaction.
    pub fn import_file(
        &self,
        path: &Path,
        progress: &mut dyn FnMut(&'static str, usize, usize),
    ) -> Result<Recorded> {
        self.import_file_with(path, false, progress)
    }

    /// [`Brain::import_file`], with `outside` letting the history's file paths
    /// lead out of its folder (`import --allow-outside`).
    pub fn import_file_with(
        &self,
        path: &Path,
        outside: bool,
        progress: &mut dyn FnMut(&'static str, usize, usize),
    ) -> Result<Recorded> {
        let view = self.view;
        self.indexing(|s, ix| crate::import::import_file_with(s, ix, path, outside, view, progress))
    }

    /// Imports a history given as bytes; `base` resolves its files' paths.
    pub fn import_bytes(
        &self,
        source: &str,
        bytes: &[u8],
        base: Option<&Path>,
        progress: &mut dyn FnMut(&'static str, usize, usize),
    ) -> Result<Recorded> {
        let view = self.view;
        self.indexing(|s, ix| {
            crate::import::import_bytes_as(s, ix, source, bytes, base, view, progress)
        })
    }

    /// Records events for a subject in one transaction: appended, routed,
    /// believed, mapped and indexed. Errors name the event (1-based).
    pub fn record(&self, subject: &Subject, events: &[Event]) -> Result<Recorded> {
        self.indexing(|s, ix| {
            crate::record::record(
                s,
                ix,
                Target::Subject(subject),
                events,
                crate::record::Paths::Refused,
                None,
                &mut |_, _, _| {},
            )
        })
    }

    /// Records a learner message that teaches ("remember that …"); a message
    /// without an explicit cue is [`Error::NotTeaching`] and writes nothing.
    pub fn teach(
        &self,
        subject: &Subject,
        text: &str,
        at: DateTime<Utc>,
        id: Option<String>,
    ) -> Result<Taught> {
        let Some(cue) = tm_model::teaching::teaching(text) else {
            return Err(Error::NotTeaching(
                "this message does not teach: only an explicit cue such as \"remember that …\" or \"treat X as …\" does (questions never teach)".into(),
            ));
        };
        let event = Event::new(
            at,
            tm_model::events::EventBody::Learner {
                text: text.to_string(),
            },
        )
        .with_id(id);
        let recorded = self.record(subject, &[event])?;
        let map = self.map(subject)?;
        Ok(Taught {
            appended: recorded.appended,
            seq: recorded.episodes.first().map_or(0, |e| e.seq),
            lang: cue.lang.to_string(),
            cue: cue.cue.to_string(),
            concepts: crate::map::named_in(&map, text),
        })
    }

    /// Records a tutor answer with the memories recalled for it and its
    /// grounding (docs/mechanisms.md §7), in one transaction.
    pub fn answer(
        &self,
        subject: &Subject,
        text: &str,
        at: DateTime<Utc>,
        recalled: &[i64],
        passages: &[Passage],
    ) -> Result<Answered> {
        self.indexing(|s, ix| {
            crate::grounding::answer(s, ix, subject, text, at, recalled, passages)
        })
    }

    /// Saves on an answer already recorded the memories recalled for it.
    pub fn record_answer(
        &self,
        subject: &Subject,
        answer_id: i64,
        recalled: &[i64],
        at: DateTime<Utc>,
    ) -> Result<()> {
        self.pool
            .with(|s| crate::grounding::record_answer(s, subject, answer_id, recalled, at))
    }

    /// Grounds an answer already recorded and saves the stance on it.
    pub fn grounding(
        &self,
        subject: &Subject,
        answer_id: i64,
        answer_text: &str,
        passages: &[Passage],
        recalled: &[i64],
        at: DateTime<Utc>,
    ) -> Result<Grounding> {
        self.pool.with(|s| {
            crate::grounding::grounding(s, subject, answer_id, answer_text, passages, recalled, at)
        })
    }

    /// Grounds an answer without saving anything.
    pub fn trace(
        &self,
        subject: &Subject,
        answer_text: &str,
        passages: &[Passage],
        recalled: &[i64],
        at: DateTime<Utc>,
    ) -> Result<Grounding> {
        self.read(|r| crate::grounding::trace(r, subject, answer_text, passages, recalled, at))
    }

    /// Retires every current belief and replays the recorded checks.
    pub fn rederive(&self, subject: &Subject, at: DateTime<Utc>) -> Result<Rederived> {
        self.pool.with(|s| crate::beliefs::rederive(s, subject, at))
    }

    /// Embeds every episode and current passage of the subject that has no
    /// vector from this brain's embedder (a store made with another one),
    /// committing as it goes (a run stopped midway resumes where it
    /// stopped), then verifies the subject's vectors
    /// ([`Recaller::verify_vectors`]).
    pub fn reembed(
        &self,
        subject: &Subject,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Reembedded> {
        let recaller = self.recaller()?;
        self.pool.with(|s| {
            let embedded = recaller.embed_missing(s, subject, progress)?;
            crate::passages::embed_missing(s, recaller.embedder(), subject, &mut |_| {})?;
            let (vectors, compared) = recaller.verify_vectors(&*s, subject)?;
            Ok(Reembedded {
                embedded,
                vectors,
                compared,
            })
        })
    }

    /// Runs the nightly loop for the night(s) ending at `at`.
    pub fn nightly(
        &self,
        at: DateTime<Utc>,
        opts: &NightlyOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<NightlyReport> {
        self.pool
            .with(|s| crate::nightly::run_with_progress(s, at, opts, progress))
    }

    // ------------------------------------------------------------ reads

    /// The memory block for one turn, built by a block worker under the
    /// brain's cap: past it the block comes back `dropped` at once, and a
    /// build under way finishes on its worker unawaited (its connection then
    /// returns to the pool), while one still queued is never started.
    pub fn block(&self, subject: &Subject, req: BlockRequest) -> Result<Block> {
        let started = Instant::now();
        if !(MIN_BUDGET..=MAX_BUDGET).contains(&req.budget) {
            return Err(Error::OutOfRange(format!(
                "the budget must be between {MIN_BUDGET} and {MAX_BUDGET} tokens"
            )));
        }
        if req.question.chars().count() > tm_model::events::MAX_TEXT_CHARS {
            return Err(Error::TooLarge("the question is too long".into()));
        }
        let recaller = self.recaller()?;
        let workers = match self.workers.get() {
            Some(w) => w,
            None => {
                let fresh = start_block_workers(self.block_workers)?;
                // Another thread may have started them first: its set wins
                // and ours stop at once, their sender dropped here.
                let _ = self.workers.set(fresh);
                self.workers
                    .get()
                    .ok_or_else(|| Error::Internal("no block workers".into()))?
            }
        };
        let deadline = Instant::now() + self.cap;
        let pool = self.pool.clone();
        let subject = subject.clone();
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            // Its cap passed while it waited in the queue: the caller has
            // answered `dropped` already, and nobody waits for the build.
            if Instant::now() >= deadline {
                return;
            }
            let result = pool.with(|s| crate::block::build(&*s, &recaller, &subject, &req));
            // The receiver may be gone (the cap passed): nothing waits then.
            let _ = tx.send(result);
        });
        workers
            .send(job)
            .map_err(|_| Error::Internal("the block workers have stopped".into()))?;
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(result) => result.map(|mut b| {
                b.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
                b
            }),
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(empty_block(started, true)),
            // Skipped in the queue at its deadline, a moment before ours.
            Err(mpsc::RecvTimeoutError::Disconnected) if Instant::now() >= deadline => {
                Ok(empty_block(started, true))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Internal(
                "the block worker stopped without an answer".into(),
            )),
        }
    }

    /// A block request for the full design in the subject's time zone.
    pub fn block_request(
        &self,
        subject: &Subject,
        question: &str,
        at: DateTime<Utc>,
        budget: Option<usize>,
    ) -> BlockRequest {
        BlockRequest::new(question, at, subject.tz(), budget.unwrap_or(self.budget))
    }

    /// The block built on the calling thread, without the cap (benchmarks
    /// time the build itself).
    pub fn build_block(&self, subject: &Subject, req: &BlockRequest) -> Result<Block> {
        let recaller = self.recaller()?;
        self.read(|r| crate::block::build(r, &recaller, subject, req))
    }

    /// Ranked recall with every signal, for a person to see why.
    pub fn recall(&self, subject: &Subject, q: &RecallQuery<'_>) -> Result<RecallResult> {
        let recaller = self.recaller()?;
        self.read(|r| recaller.recall(r, subject, q))
    }

    /// The `k` passages of the subject's current files that best answer `question`.
    pub fn passages(&self, subject: &Subject, question: &str, k: usize) -> Result<Vec<Passage>> {
        let recaller = self.recaller()?;
        self.read(|r| crate::passages::passages(r, recaller.embedder(), subject, question, k))
    }

    /// The subject's concept map (empty before the first file).
    pub fn map(&self, subject: &Subject) -> Result<ConceptMap> {
        self.read(|r| crate::map::load(r, subject))
    }

    /// The map with its teaching order by name and the material's readiness.
    pub fn map_view(&self, subject: &Subject) -> Result<MapView> {
        let map = self.map(subject)?;
        let teaching_order = tm_model::map::teaching_order(&map)
            .layers
            .iter()
            .map(|l| {
                l.iter()
                    .map(|k| map.get(k).map_or(k.clone(), |n| n.name.clone()))
                    .collect()
            })
            .collect();
        Ok(MapView {
            readiness: tm_model::map::subject_readiness(&map),
            teaching_order,
            map,
        })
    }

    /// What the tutor currently believes, and how the checks route honestly.
    pub fn beliefs(&self, subject: &Subject) -> Result<Beliefs> {
        self.read(|r| {
            let map = crate::map::load(r, subject)?;
            Ok(Beliefs {
                checks: crate::beliefs::counts(r, subject, &map)?,
                current: r.current_beliefs(subject)?,
            })
        })
    }

    /// Every row ever written about a concept or topic (any spelling), oldest first.
    pub fn belief_history(&self, subject: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        let key = tm_model::lang::canonical_key(about);
        self.read(|r| Ok(r.belief_history(subject, &key)?))
    }

    /// The subject report as of `at`.
    pub fn report(&self, subject: &Subject, at: DateTime<Utc>) -> Result<Report> {
        self.read(|r| crate::report::build(r, subject, at))
    }

    /// The class of `course` among the tenant's learners as of `at`, page
    /// `page` (1 on) of its learners ([`crate::class`]);
    /// [`Error::UnknownSubject`] when none of them has a subject of that name.
    pub fn class(
        &self,
        tenant_id: i64,
        course: &str,
        at: DateTime<Utc>,
        page: usize,
    ) -> Result<crate::class::ClassView> {
        self.read(|r| {
            let subjects = r.tenant_subjects(tenant_id)?;
            crate::class::gather(r, &subjects, course, at, page)?.ok_or_else(|| {
                Error::UnknownSubject(format!(
                    "named {course} among your learners: the class is empty"
                ))
            })
        })
    }

    /// The tenant's live subjects by key, each with its newest episode's
    /// instant (`None` for an empty log): the web report's home page.
    pub fn tenant_roster(&self, tenant_id: i64) -> Result<Vec<(Subject, Option<DateTime<Utc>>)>> {
        self.read(|r| {
            let mut out = Vec::new();
            for s in r.tenant_subjects(tenant_id)? {
                if !s.retired {
                    let seen = crate::class::last_seen(r, &s)?;
                    out.push((s, seen));
                }
            }
            Ok(out)
        })
    }

    /// The episode log in chain order, `from_seq` on, at most `limit`.
    pub fn episodes(&self, subject: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>> {
        self.read(|r| Ok(r.episodes(subject, from_seq, limit)?))
    }

    /// How many episodes the subject's chain holds.
    pub fn episode_count(&self, subject: &Subject) -> Result<u64> {
        self.read(|r| Ok(r.episode_count(subject)?))
    }

    /// The episodes with these ids, of any subject.
    pub fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        self.read(|r| Ok(r.episodes_by_ids(ids)?))
    }

    /// The subject's episodes among these ids, ascending id (ids of other
    /// subjects, or of no episode, are left out).
    pub fn subject_episodes(&self, subject: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
        self.read(|r| Ok(r.subject_episodes_by_ids(subject, ids)?))
    }

    /// The subject's episode with this external id.
    pub fn episode_by_external_id(&self, subject: &Subject, id: &str) -> Result<Option<Episode>> {
        self.read(|r| Ok(r.episode_by_external_id(subject, id)?))
    }

    /// Every version of every file of the subject.
    pub fn file_versions(&self, subject: &Subject) -> Result<Vec<FileVersion>> {
        self.read(|r| Ok(r.file_versions(subject)?))
    }

    /// Recomputes the subject's chain (and, with a checkpoint, whether it
    /// still reaches it unchanged).
    pub fn verify(
        &self,
        subject: &Subject,
        checkpoint: Option<&Checkpoint>,
    ) -> Result<ChainReport> {
        self.read(|r| Ok(tm_store::verify(r, subject, checkpoint)?))
    }

    /// The subject's chain head as an exportable checkpoint.
    pub fn checkpoint(&self, subject: &Subject) -> Result<Checkpoint> {
        self.read(|r| Ok(tm_store::checkpoint(r, subject)?))
    }

    /// The schema version of the store (a liveness probe).
    pub fn schema_version(&self) -> Result<i64> {
        self.read(|r| Ok(r.schema_version()?))
    }

    // ------------------------------------------------------------ keys

    /// Stores a new key for `tenant` (created when absent).
    pub fn add_api_key(
        &self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        self.pool
            .with(|s| Ok(s.write(|tx| tx.add_api_key(tenant, prefix, sha256, admin, at))?))
    }

    /// Every key, oldest first (never a secret).
    pub fn api_keys(&self) -> Result<Vec<ApiKey>> {
        self.read(|r| Ok(r.api_keys()?))
    }

    /// Revokes the key with this prefix; `None` when there is none.
    pub fn revoke_api_key(&self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        self.pool
            .with(|s| Ok(s.write(|tx| tx.revoke_api_key(prefix, at))?))
    }

    /// The key with this public prefix, with its stored digest.
    pub fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        self.read(|r| Ok(r.key_by_prefix(prefix)?))
    }

    // ------------------------------------------------------------ erasure

    /// Erases, on request, every text of the subjects `scope` covers and
    /// everything derived from them, in one transaction, then compacts the
    /// store so no byte of the text stays on disk. What stays: each chain's
    /// skeleton (position, kind, time, digests) and the erasure record with
    /// `reference` (the caller's reference for the request, at most 200
    /// characters, never the learner's own words). `verify` then reports the
    /// chain intact with the episodes erased.
    pub fn erase(&self, scope: &Scope, reference: &str, at: DateTime<Utc>) -> Result<Erased> {
        erasure_note("reference", reference)?;
        tm_model::instant::check(at).map_err(Error::OutOfRange)?;
        // The subjects are resolved inside the erase's own transaction, so a
        // subject written meanwhile is erased too or not at all, never half.
        let view = self.view;
        let (erasure, subjects, compaction, repeated) = self.pool.with(|store| {
            let (erasure, subjects, repeated) = store.write_with(|tx| {
                let (kind, target, subjects) = scope.subjects(&*tx, view)?;
                if subjects.is_empty() {
                    return Err(Error::NotFound(format!(
                        "no subject to erase for {kind} {target}"
                    )));
                }
                // Asked again (every subject erased whole already, the first
                // one perhaps cut short before its compaction): no second
                // record, the work is finished below.
                if subjects.iter().all(|s| s.retired) {
                    let mut last: Option<Erasure> = None;
                    for s in &subjects {
                        last = tx.erasures(s)?.into_iter().chain(last).max_by_key(|e| e.id);
                    }
                    if let Some(done) = last {
                        return Ok((done, subjects, true));
                    }
                }
                let request = NewErasure {
                    at,
                    scope: kind.to_string(),
                    target,
                    reference: reference.to_string(),
                    reason: String::new(),
                };
                Ok((tx.erase(&request, &subjects)?, subjects, false))
            })?;
            // What this process holds in memory of those subjects goes too.
            if let Some(recaller) = self.made_recaller() {
                for s in &subjects {
                    recaller.forget(s.id);
                }
            }
            let compaction = compact_after_erasure(store);
            Ok((erasure, subjects, compaction, repeated))
        })?;
        Ok(Erased {
            erasure,
            subjects: subjects.iter().map(|s| s.key.to_string()).collect(),
            compaction,
            repeated,
        })
    }

    /// Erases one episode of `subject` (the one at `seq`) on request, with
    /// `reason` (why, never the erased words) and `reference` (the caller's
    /// request reference), as [`Brain::erase`] erases a learner: its content
    /// and everything derived from it alone go, with the consolidation of its
    /// day (which may quote it); the chain keeps its skeleton and `verify`
    /// reports the erasure. A check or a teaching note also shaped the beliefs
    /// and the map: those are re-derived from the rest of the chain (see
    /// `crate::erase`), in the same transaction. Then the store is compacted.
    pub fn erase_episode(
        &self,
        subject: &Subject,
        seq: u64,
        reason: &str,
        reference: &str,
        at: DateTime<Utc>,
    ) -> Result<Erased> {
        erasure_note("reason", reason)?;
        erasure_note("reference", reference)?;
        tm_model::instant::check(at).map_err(Error::OutOfRange)?;
        let (episode, seqs, derived) = self.read(|r| crate::erase::plan(r, subject, seq))?;
        let rederived = if derived {
            Some(self.indexing(|store, ix| crate::erase::rederive(&*store, ix, subject, &seqs))?)
        } else {
            None
        };
        let request = NewErasure {
            at,
            scope: "episode".into(),
            target: format!("{}#{}", subject.key, episode.seq),
            reference: reference.to_string(),
            reason: reason.to_string(),
        };
        let (erasure, compaction) = self.pool.with(|store| {
            let erasure = store.write_with(|tx| {
                tx.lock_subject(subject)?;
                // What to erase is decided again under the lock: a night that
                // ran meanwhile may have written a consolidation quoting it.
                let changed = || {
                    Error::Changed(format!(
                        "{} changed while its erasure was prepared; ask again",
                        subject.key
                    ))
                };
                if crate::erase::plan(&*tx, subject, seq)?.1 != seqs {
                    return Err(changed());
                }
                if let Some(d) = &rederived
                    && tx.head(subject)? != d.head
                {
                    return Err(changed());
                }
                let erasure = tx.erase_episodes(&request, subject, &seqs, derived)?;
                if let Some(d) = &rederived {
                    let why = format!("re-derived after erasure #{}", erasure.id);
                    if !d.map.nodes().is_empty() {
                        tx.save_map(subject, at, &why, &d.map)?;
                    }
                    for b in &d.beliefs {
                        tx.insert_belief(subject, b, None)?;
                    }
                }
                Ok(erasure)
            })?;
            if let Some(recaller) = self.made_recaller() {
                recaller.forget(subject.id);
            }
            let compaction = compact_after_erasure(store);
            Ok((erasure, compaction))
        })?;
        Ok(Erased {
            erasure,
            subjects: vec![subject.key.to_string()],
            compaction,
            repeated: false,
        })
    }

    /// A copy of the data of `scope` (GDPR Art. 20) as v1 history (docs/formats.md)
    /// files with their files, a manifest, and each subject's current
    /// beliefs and map ([`crate::export`]). Read in one transaction holding
    /// the subjects' locks, so a write meanwhile is in the copy whole or not
    /// at all. A scope without subjects is [`Error::NotFound`].
    pub fn export(&self, scope: &Scope, at: DateTime<Utc>) -> Result<crate::export::Export> {
        tm_model::instant::check(at).map_err(Error::OutOfRange)?;
        self.pool.with(|store| {
            store.write_with(|tx| {
                let (kind, target, subjects) = scope.subjects(&*tx, self.view)?;
                if subjects.is_empty() {
                    return Err(Error::NotFound(format!(
                        "no subject to export for {kind} {target}"
                    )));
                }
                for s in &subjects {
                    tx.lock_subject(s)?;
                }
                crate::export::export(&*tx, &subjects, kind, &target, at)
            })
        })
    }

    /// Rewrites the storage so that no byte of erased text remains on disk
    /// (what an erasure does after committing; run again when that could not
    /// finish). Returns what it did.
    pub fn compact(&self) -> Result<String> {
        self.pool.with(|store| Ok(store.compact()?))
    }

    /// The tenant (id) whose name this is, from its keys.
    pub fn tenant_id(&self, name: &str) -> Result<Option<i64>> {
        self.read(|r| {
            for k in r.api_keys()? {
                if k.tenant == name
                    && let Some(owner) = r.key_by_prefix(&k.prefix)?
                {
                    return Ok(Some(owner.tenant_id));
                }
            }
            Ok(None)
        })
    }

    /// Gives a learner of no tenant to `tenant`.
    pub fn assign_learner(
        &self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        self.pool
            .with(|s| Ok(s.write(|tx| tx.assign_learner(learner, tenant, at))?))
    }
}

/// What an erasure record keeps of the caller's words (its reference, its
/// reason): at most 200 characters, none a control character.
fn erasure_note(what: &str, text: &str) -> Result<()> {
    if text.chars().count() > 200 || text.chars().any(char::is_control) {
        return Err(Error::TooLarge(format!(
            "the {what} is at most 200 characters, without control characters"
        )));
    }
    Ok(())
}

/// Compacts the store after a committed erasure. One that cannot finish now
/// (a reader in the way) is said, and `compact` finishes it.
fn compact_after_erasure(store: &mut dyn Store) -> String {
    match store.compact() {
        Ok(done) => done,
        Err(e) => format!(
            "NOT finished ({e}): the erased text may remain in free pages or the log until `tutor-memory compact` runs"
        ),
    }
}

/// Whose data an erasure or an export covers.
#[derive(Debug, Clone)]
pub enum Scope {
    /// One subject.
    Subject(Subject),
    /// Every subject of a learner (the operator's `erase --learner`).
    Learner(String),
    /// Every subject of a learner the tenant owns (none of another's).
    TenantLearner { tenant_id: i64, learner: String },
    /// Every subject of every learner of the tenant.
    Tenant { tenant_id: i64, name: String },
}

impl Scope {
    /// What kind of scope, its target (a key, slug or tenant name), and the
    /// subjects it covers now, as `r` sees them: the live ones, or, when all
    /// are retired (erased whole before), those. `view` is whose learner a
    /// [`Scope::Learner`] slug means (`None`: the one owner that has it).
    pub fn subjects(
        &self,
        r: &dyn Reader,
        view: Option<Owner>,
    ) -> Result<(&'static str, String, Vec<Subject>)> {
        Ok(match self {
            Scope::Subject(s) => ("subject", s.key.to_string(), vec![s.clone()]),
            Scope::Learner(slug) => {
                let of: Vec<Subject> = live_first(
                    r.subjects()?
                        .into_iter()
                        .filter(|s| &s.key.learner == slug && view.is_none_or(|o| s.owner == o))
                        .collect(),
                );
                if of.iter().any(|s| s.owner != of[0].owner) {
                    return Err(Error::Ambiguous(format!(
                        "several owners have a learner {slug}: say whose with --owner TENANT (--owner - for the operator's own)"
                    )));
                }
                ("learner", slug.clone(), of)
            }
            Scope::TenantLearner { tenant_id, learner } => (
                "learner",
                learner.clone(),
                live_first(
                    r.tenant_subjects(*tenant_id)?
                        .into_iter()
                        .filter(|s| &s.key.learner == learner)
                        .collect(),
                ),
            ),
            Scope::Tenant { tenant_id, name } => (
                "tenant",
                name.clone(),
                live_first(r.tenant_subjects(*tenant_id)?),
            ),
        })
    }
}

/// The live subjects among `subjects`, or, when none is live, the newest
/// retired one of each owner's name (as a lookup by name resolves it: an
/// export or a repeated erasure sees each name once).
fn live_first(subjects: Vec<Subject>) -> Vec<Subject> {
    if subjects.iter().any(|s| !s.retired) {
        return subjects.into_iter().filter(|s| !s.retired).collect();
    }
    let mut newest: std::collections::BTreeMap<(Owner, SubjectKey), Subject> = Default::default();
    for s in subjects {
        let name = (s.owner, s.key.clone());
        if newest.get(&name).is_none_or(|kept| kept.id < s.id) {
            newest.insert(name, s);
        }
    }
    newest.into_values().collect()
}

/// What a reembed did, and what its check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reembedded {
    /// Episodes embedded by this run (a resumed run: the rest).
    pub embedded: usize,
    /// The subject's episode vectors afterwards, every one from the
    /// brain's embedder.
    pub vectors: usize,
    /// How many of them were embedded again and found alike.
    pub compared: usize,
}

/// What an erasure did.
#[derive(Debug, Clone, Serialize)]
pub struct Erased {
    pub erasure: Erasure,
    /// The subjects whose content it removed, by key.
    pub subjects: Vec<String>,
    /// How the storage was compacted afterwards.
    pub compaction: String,
    /// The scope was erased whole before: no new erasure was recorded (this
    /// is the earlier one), only its compaction finished if it was owed.
    pub repeated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_brain_can_be_shared_between_threads() {
        assert_send_sync::<Brain>();
    }
}
