//! The storage interface, one trait pair per concern: what the brain reads
//! (`…Read`, implemented by a connection and by a transaction) and what it
//! writes inside a transaction (`…Write`). [`crate::Reader`] and
//! [`crate::Tx`] bundle them, so code that holds a `&dyn Reader` or a
//! `&mut dyn Tx` calls every method without naming a concern. Each engine
//! implements each concern in one file of the same name
//! (`sqlite/log.rs`, `postgres/log.rs`, …), and the contract suite tests
//! each concern on both.

use crate::Result;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{
    Annotation, Appended, Episode, Erasure, Hash, Kind, NewEpisode, NewErasure, StoredRow,
};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::map::ConceptMap;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::passages::Passage;
use tm_model::recall::CandidateFacts;
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};

// ---------------------------------------------------------------- subjects
/// Subjects and their learners.
pub trait SubjectRead {
    /// The schema version (number of migrations applied).
    fn schema_version(&self) -> Result<i64>;
    /// The subject named `key`, whoever's learner it is (the operator's
    /// view): the live one; [`crate::Error::AmbiguousSubject`] when several owners
    /// have one; with none live, the newest retired one.
    fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>>;
    /// The subject named `key` among `owner`'s learners: the live one, else
    /// the newest retired one.
    fn subject_of(&self, owner: Owner, key: &SubjectKey) -> Result<Option<Subject>>;
    /// Every subject, retired ones too, by key.
    fn subjects(&self) -> Result<Vec<Subject>>;
    /// Subjects with at least one episode other than a consolidation in
    /// (`from`, `to`], by key.
    fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>>;
}

/// The writes of [`SubjectRead`]'s concern.
pub trait SubjectWrite {
    /// Makes every other writer of the subject wait until this transaction
    /// ends. Take it before reading what a write depends on (an import key,
    /// a belief to supersede); appends take it themselves. SQLite's write
    /// lock already covers the whole database, so there it does nothing.
    fn lock_subject(&mut self, s: &Subject) -> Result<()>;
    /// The live subject `key` of `owner`'s learners, created with its learner
    /// when absent (a retired one of that name is left as it is); an
    /// existing live subject is returned as it is.
    fn ensure_subject(
        &mut self,
        owner: Owner,
        key: &SubjectKey,
        title: &str,
        language: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<Subject>;
    /// Sets the learner's time zone for the subject.
    fn set_timezone(&mut self, s: &Subject, tz: chrono_tz::Tz) -> Result<()>;
}

// ---------------------------------------------------------------- log
/// The episode log: the hash-chained, append-only record of what happened.
pub trait LogRead {
    /// The subject's episodes in chain order, `from_seq` on, at most `limit`.
    fn episodes(&self, s: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>>;
    /// The subject's episodes of one kind at or before `until`, in chain order.
    fn episodes_of_kind(
        &self,
        s: &Subject,
        kind: Kind,
        until: DateTime<Utc>,
    ) -> Result<Vec<Episode>>;
    /// The subject's episodes in (`from`, `to`], in chain order.
    fn episodes_between(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Episode>>;
    /// How many episodes the subject's chain holds.
    fn episode_count(&self, s: &Subject) -> Result<u64>;
    /// Episodes per kind name, at or before `at`.
    fn episode_counts(&self, s: &Subject, at: DateTime<Utc>) -> Result<BTreeMap<String, usize>>;
    fn episode_by_external_id(&self, s: &Subject, id: &str) -> Result<Option<Episode>>;
    fn episode_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Episode>>;
    /// Episodes with these ids, of any subject, ascending id (ids of no
    /// episode are left out).
    fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>>;
    /// The subject's episodes among these ids, ascending id.
    fn subject_episodes_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<Episode>>;
    /// The (id, seq) of the subject's episode recorded with this import key.
    fn episode_by_import_key(&self, s: &Subject, key: &Hash) -> Result<Option<(i64, u64)>>;
    /// The (id, seq) of the subject's episode sealed with this encoding-2
    /// salt (16 random bytes: an export's event carrying it is that episode).
    fn episode_by_salt(&self, s: &Subject, salt: &[u8]) -> Result<Option<(i64, u64)>>;
    /// (month `YYYY-MM` UTC, kind, verdict or "", count) over the subject's episodes.
    fn activity_by_month(&self, s: &Subject) -> Result<Vec<(String, String, String, usize)>>;
    /// Whether a history file with this checksum was imported into the subject.
    fn imported(&self, s: &Subject, sha256: &str) -> Result<bool>;
    /// The chain's head: (seq, hash), or (0, genesis) for an empty chain.
    fn head(&self, s: &Subject) -> Result<(u64, Hash)>;
    /// Every row of the subject's chain in seq order, exactly as stored (the
    /// fields hashed, the stored link and hash), until `visit` returns false.
    fn chain_rows(&self, s: &Subject, visit: &mut dyn FnMut(&StoredRow<'_>) -> bool) -> Result<()>;
    /// The seq of the subject's episode whose stored hash is `hash`.
    fn seq_of_hash(&self, s: &Subject, hash: &[u8]) -> Result<Option<u64>>;
    /// The stored hash of the subject's episode at `seq`.
    fn hash_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Vec<u8>>>;
    /// An episode's annotations, oldest first.
    fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>>;
    /// Every annotation of `kind` on the subject's episodes, oldest first.
    fn annotations_of_kind(&self, s: &Subject, kind: &str) -> Result<Vec<Annotation>>;
    /// Which of the subject's episodes among these ids carry at least one
    /// annotation of `kind`.
    fn annotated_ids(&self, s: &Subject, ids: &[i64], kind: &str) -> Result<Vec<i64>>;
}

/// The writes of [`LogRead`]'s concern.
pub trait LogWrite {
    /// Appends one episode at the head of the subject's chain and indexes its
    /// terms and concepts.
    fn append(&mut self, s: &Subject, e: &NewEpisode) -> Result<Appended>;
    /// Records a fact learned after the episode was written.
    fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64>;
    /// Records that a history file was imported.
    fn record_import(
        &mut self,
        s: &Subject,
        sha256: &str,
        source: &str,
        at: DateTime<Utc>,
        events: usize,
        appended: usize,
    ) -> Result<()>;
}

// ---------------------------------------------------------------- index
/// The recall index: the candidate pools a turn ranks, and the episodes' vectors.
pub trait IndexRead {
    /// The `n` most recent episodes at or before `at`, newest first.
    fn recent_ids(&self, s: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>>;
    /// Up to `n` episodes inside [`from`, `to`), newest first.
    fn window_ids(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>>;
    /// Full-text hits on any of `terms` (index terms, as
    /// `tm_model::recall::distinctive_terms` makes them), best first (ties by
    /// id), with a positive BM25 score. When the terms hit more than
    /// [`crate::TERM_HITS_BOUND`] of the subject's episodes, only the newest that many
    /// of them are ranked (the scores' statistics stay the whole subject's).
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>>;
    /// How many of the subject's episodes hold `term`, counted up to `limit` (the
    /// hits of [`IndexRead::term_hits`] without ranking them).
    fn term_count(&self, s: &Subject, term: &str, limit: usize) -> Result<usize> {
        Ok(self.term_hits(s, &[term.to_string()], limit)?.len())
    }
    /// The distinct words of the subject's full-text index that start with
    /// `prefix` (a folded term, as [`IndexRead::term_hits`] takes them) and that
    /// `keep` accepts, in byte order, at most `limit`: where recall looks for
    /// a question word's other forms ("research" → "researching"). Only words
    /// of this subject's episodes, however the engine shares its index; `keep`
    /// is asked first, so an engine checks only the words it accepts.
    fn terms_with_prefix(
        &self,
        s: &Subject,
        prefix: &str,
        keep: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<String>>;
    /// Episodes touching any of these concepts (canonical keys), newest first.
    fn concept_ids(&self, s: &Subject, concepts: &[String], limit: usize) -> Result<Vec<i64>>;
    /// The distinct concepts (canonical keys) the subject's episodes touch.
    fn concept_keys(&self, s: &Subject) -> Result<Vec<String>>;
    /// The light facts of the subject's episodes among these ids, ascending id.
    fn candidate_facts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<CandidateFacts>>;
    /// The text of the subject's episodes among these ids, ascending id.
    fn texts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, String)>>;
    /// Every stored vector of the subject made by `model`, ascending id.
    fn vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>>;
    /// The subject's vectors from `model` of episodes with an id above
    /// `after`, ascending id: what a cached copy lacks when only new
    /// episodes were embedded.
    fn vectors_after(&self, s: &Subject, model: &str, after: i64) -> Result<Vec<(i64, Vec<f32>)>>;
    /// (n, max episode id) of the subject's vectors from `model`, where n
    /// grows by one for every vector stored, replaced or deleted (one row kept
    /// by triggers on SQLite, by the write on PostgreSQL): a cached copy knows it is stale, and
    /// when n grew by exactly the number of vectors after its max id, those
    /// are all it lacks.
    fn vector_stamp(&self, s: &Subject, model: &str) -> Result<(u64, i64)>;
    /// Which embedders made the subject's vectors, with counts.
    fn vector_models(&self, s: &Subject) -> Result<Vec<(String, u64)>>;
    /// Which embedders made the episode vectors of the whole store, with
    /// counts, the most first (ties by name): what a store was made with.
    fn store_vector_models(&self) -> Result<Vec<(String, u64)>>;
    /// How many of the subject's episodes have no vector from `model`.
    fn count_missing_vectors(&self, s: &Subject, model: &str) -> Result<usize>;
    /// Up to `limit` of the subject's episodes with no vector from `model`,
    /// oldest first, with their text.
    fn episodes_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>>;
}

/// The writes of [`IndexRead`]'s concern.
pub trait IndexWrite {
    /// Stores (or replaces) episodes' vectors: derived data, not the chain.
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()>;
}

// ---------------------------------------------------------------- files
/// Files, their versions and pages, and the passages cut from them.
pub trait FileRead {
    /// Every version of every file of the subject, oldest first.
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>>;
    /// The newest version of the file, removed or not.
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>>;
    /// The text of each page of a file version, in page order.
    fn pages(&self, version_id: i64) -> Result<Vec<String>>;
    /// The bytes of one of the subject's file versions (`None`: not its).
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>>;
    /// Full-text hits among the passages of the subject's current files.
    fn passage_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>>;
    /// The subject's passages with these ids, in the order given (ids of no
    /// passage of the subject skipped).
    fn passages_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>>;
    /// Every passage of the subject's current files, by file, page, line.
    fn current_passages(&self, s: &Subject) -> Result<Vec<(i64, Passage)>>;
    /// The passages of one file version, by page and line.
    fn version_passages(&self, version_id: i64) -> Result<Vec<(i64, Passage)>>;
    /// Vectors of the subject's current passages made by `model`.
    fn passage_vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>>;
    /// Up to `limit` current passages with no vector from `model`.
    fn passages_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>>;
}

/// The writes of [`FileRead`]'s concern.
pub trait FileWrite {
    /// Stores `bytes` as the current version of the file `name` and splits
    /// its pages into indexed passages. The same bytes as the current version
    /// store nothing; other bytes make a new version and mark the previous one
    /// replaced.
    fn add_file(
        &mut self,
        s: &Subject,
        name: &str,
        bytes: &[u8],
        format: &str,
        pages: &[String],
        at: DateTime<Utc>,
    ) -> Result<FileAdded>;
    /// Marks the file's current version removed.
    fn remove_file(&mut self, s: &Subject, name: &str, at: DateTime<Utc>) -> Result<FileVersion>;
    /// Stores (or replaces) passages' vectors.
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()>;
}

// ---------------------------------------------------------------- knowledge
/// The concept map's snapshots and the beliefs about the learner.
pub trait KnowledgeRead {
    /// The subject's newest concept-map snapshot, if any.
    fn latest_map(&self, s: &Subject) -> Result<Option<ConceptMap>>;
    /// The id of the newest snapshot: it changes exactly when one is saved.
    fn latest_map_id(&self, s: &Subject) -> Result<Option<i64>>;
    /// Current beliefs (nothing superseded them, not retired), by
    /// confidence, highest first, then by what they are about.
    fn current_beliefs(&self, s: &Subject) -> Result<Vec<BeliefRow>>;
    /// The current belief about `about` (a canonical key), if any.
    fn current_belief(&self, s: &Subject, about: &str) -> Result<Option<BeliefRow>>;
    /// Every row ever written about `about`, oldest first.
    fn belief_history(&self, s: &Subject, about: &str) -> Result<Vec<BeliefRow>>;
}

/// The writes of [`KnowledgeRead`]'s concern.
pub trait KnowledgeWrite {
    /// Stores a new snapshot of the subject's concept map.
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()>;
    /// Inserts a new belief row; when it replaces `supersedes`, points that
    /// row at the new one (the only change a belief row ever takes).
    fn insert_belief(&mut self, s: &Subject, b: &BeliefRow, supersedes: Option<i64>)
    -> Result<i64>;
}

// ---------------------------------------------------------------- night
/// What the nightly loop records and caches.
pub trait NightRead {
    /// Whether the night of `day` already ran for the subject.
    fn nightly_ran(&self, s: &Subject, day: &str) -> Result<bool>;
    /// The instant of every night that ran for the subject, oldest first.
    fn nightly_runs(&self, s: &Subject) -> Result<Vec<DateTime<Utc>>>;
    /// (chain head seq, newest map snapshot id, 0 when none).
    fn subject_stamp(&self, s: &Subject) -> Result<(i64, i64)>;
    /// The subject's working set, if a night built a readable one (a cache:
    /// an unreadable one is `None`).
    fn working_set(&self, s: &Subject) -> Result<Option<WorkingSet>>;
    /// The subject's self-model, if a night composed a readable one.
    fn self_model(&self, s: &Subject) -> Result<Option<SelfModel>>;
    /// The latest citation checks with this status.
    fn citation_checks(&self, s: &Subject, status: &str) -> Result<Vec<CitationCheck>>;
    /// Up to `n` episodes (none after `at`) whose citation is due: never
    /// checked first (oldest first), then the longest since checked; each
    /// with its latest check. Consolidations and file episodes never are.
    fn citation_batch(
        &self,
        s: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>>;
    /// Latest citation checks per status.
    fn citation_status_counts(&self, s: &Subject) -> Result<BTreeMap<String, usize>>;
}

/// The writes of [`NightRead`]'s concern.
pub trait NightWrite {
    /// Records the night's run; a second record of the same day is an error.
    fn record_nightly(
        &mut self,
        s: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()>;
    /// Replaces the latest check of an episode's citation.
    fn record_citation_check(
        &mut self,
        s: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()>;
    /// Replaces the subject's working set (a derived cache).
    fn put_working_set(&mut self, s: &Subject, at: DateTime<Utc>, ws: &WorkingSet) -> Result<()>;
    /// Replaces the subject's self-model (a derived cache).
    fn put_self_model(&mut self, s: &Subject, at: DateTime<Utc>, m: &SelfModel) -> Result<()>;
}

// ---------------------------------------------------------------- tenants
/// Tenants, their API keys, and which learners are theirs.
pub trait TenantRead {
    /// Every key, oldest first.
    fn api_keys(&self) -> Result<Vec<ApiKey>>;
    /// The key with this public prefix, with its stored digest.
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>>;
    /// The subjects of the tenant's learners, by key: for each name the one
    /// it resolves to (the live subject, else the newest retired one).
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>>;
}

/// The writes of [`TenantRead`]'s concern.
pub trait TenantWrite {
    /// Stores a new key for `tenant` (created when absent).
    fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey>;
    /// Revokes the key with this prefix; `None` when there is none.
    /// Revoking twice keeps the first instant.
    fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>>;
    /// Gives the operator's learner `learner` to `tenant` (created when
    /// absent). `Taken` when the tenant has a learner of that name already;
    /// `Mine` once it is the tenant's (or was); `None`: neither has one.
    fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>>;
}

// ---------------------------------------------------------------- erasure
/// Erasure: what a learner asked to forget, and the compaction it owes.
pub trait ErasureRead {
    /// The erasures that cleared episodes of the subject, or retired it (an
    /// erasure of the subject whole), oldest first.
    fn erasures(&self, s: &Subject) -> Result<Vec<Erasure>>;
    /// The erasures (ids) whose compaction has not finished: the store's
    /// files may still hold their erased bytes. Recorded in the erasure's
    /// own transaction, cleared by [`crate::Store::compact`], which the next open
    /// of the store runs first.
    fn compaction_owed(&self) -> Result<Vec<i64>>;
}

/// The writes of [`ErasureRead`]'s concern.
pub trait ErasureWrite {
    /// Records the erasure and removes every text of these subjects and
    /// everything derived from them: episode content (the chain's skeleton
    /// and digests stay, pointing at the erasure), full-text terms, vectors,
    /// concepts touched, annotations, citation checks, files with their
    /// versions, pages and passages, map snapshots, beliefs, the night's
    /// log and caches, import records, the subject's title. Takes each
    /// subject's lock itself (as an append does). Follow it with
    /// [`crate::Store::compact`].
    fn erase(&mut self, e: &NewErasure, subjects: &[Subject]) -> Result<Erasure>;
    /// Records the erasure of the subject's episodes at `seqs` and clears
    /// them (their skeletons stay) and what derives from each alone:
    /// full-text terms, concepts touched, vectors, annotations, citation
    /// checks; and the subject's working set and self-model. With `derived`,
    /// also every map snapshot and belief row of the subject: the caller
    /// writes them again, re-derived without the episodes, in the same
    /// transaction. An episode not in the chain, or erased already, is
    /// [`crate::Error::UnknownEpisode`]. Takes the subject's lock.
    fn erase_episodes(
        &mut self,
        e: &NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<Erasure>;
}
