//! The stores behind one interface: what the brain needs from a database,
//! as traits, and the engines that provide it (SQLite in one file, the
//! embedded default, in [`sqlite`]).
//!
//! - [`Reader`]: every read, with typed values in and out (a subject, an
//!   episode, a [`ConceptMap`], a belief row), never SQL.
//! - [`Tx`]: a write transaction: every write, plus every read as seen inside
//!   the transaction. All of it commits, or none.
//! - [`Store`]: one connection: reads, and [`StoreExt::write`] to run a
//!   closure in one transaction.
//! - [`Engine`]: where the data lives; opens connections ([`Engine::connect`]).
//!
//! What every engine guarantees (the contract suite in [`contract`] checks
//! it through these traits alone): episodes, annotations, belief claims and
//! map snapshots are never updated or deleted; a subject's chain never forks,
//! whatever number of connections append at once; a failed transaction
//! leaves nothing; an event's import key is recorded with its episode, so the
//! same event is never appended twice.

pub mod contract;
pub mod postgres;
pub mod sqlite;

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::sync::Arc;
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{
    Annotation, Appended, Break, ChainReport, ChainState, ChainVerifier, Checkpoint, Episode,
    Erasure, Hash, Kind, NewEpisode, NewErasure, PrevLookup, StoredRow,
};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::map::ConceptMap;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::passages::Passage;
use tm_model::recall::CandidateFacts;
use tm_model::subject::{Subject, SubjectKey};
pub use tm_model::tenants::Owner;
use tm_model::tenants::{ApiKey, Claim, KeyOwner};

/// Milliseconds since the epoch: how both engines store an instant.
pub(crate) fn to_ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// The runs FTS5's `ascii` tokenizer cuts `text` into, as written (not yet
/// folded nor cut to FTS5's length): maximal runs of anything but ASCII
/// non-alphanumerics. Both engines' full-text code tokenises by it.
pub(crate) fn ascii_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
}

/// BM25's k1 and b, as FTS5 sets them: both engines' full text scores with them.
pub(crate) const BM25_K1: f64 = 1.2;
pub(crate) const BM25_B: f64 = 0.75;

/// The IDF FTS5 gives a phrase that `n_hit` of `n_row` rows hold:
/// `ln((N − n + 0.5)/(n + 0.5))`, at least 1e-6.
pub(crate) fn bm25_idf(n_row: f64, n_hit: f64) -> f64 {
    let idf = ((n_row - n_hit + 0.5) / (n_hit + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// The length part of a row's BM25 denominator, `k1·(1 − b + b·D/avgdl)`,
/// with the row's length D read as −1, as FTS5 reads it in a contentless
/// table without `columnsize` (the episodes' index): `k1·(1 − b − b/avgdl)`.
pub(crate) fn bm25_norm(avgdl: f64) -> f64 {
    // The same bits as FTS5's `1 − b + b·(−1)/avgdl`: negating is exact.
    BM25_K1 * (1.0 - BM25_B - BM25_B / avgdl)
}

/// The token every indexed row of a subject starts with, in both engines: it
/// confines a full-text query (episodes or passages) to one subject.
pub(crate) fn subject_token(subject_id: i64) -> String {
    format!("s{subject_id}")
}

/// The key range that holds every word starting with `prefix` in byte order:
/// `[prefix, prefix + U+10FFFF)` (every longer word sorts below the highest
/// code point). `None` when there is nothing to look for (NULs removed, as a
/// bound string would be cut there).
pub(crate) fn prefix_range(prefix: &str) -> Option<(String, String)> {
    let prefix = prefix.replace('\0', "");
    if prefix.is_empty() {
        return None;
    }
    let upper = format!("{prefix}\u{10FFFF}");
    Some((prefix, upper))
}

/// The instant a stored millisecond count stands for.
pub(crate) fn from_ms(ms: i64) -> DateTime<Utc> {
    use chrono::TimeZone;
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// An episode as an engine stores it at `seq` after `prev`: its JSON fields
/// exactly as hashed, its encoding-v2 salt and content digest, and its chain
/// hash. Written once, so both engines store (and hash) the same bytes.
pub(crate) struct Sealed {
    pub concepts: String,
    pub evidence: String,
    pub data: String,
    pub salt: [u8; tm_model::episodes::SALT_BYTES],
    pub digest: Hash,
    pub hash: Hash,
}

pub(crate) fn seal(s: &Subject, seq: u64, prev: &Hash, e: &NewEpisode) -> Result<Sealed> {
    let corrupt = |err: serde_json::Error| Error::Corrupt(err.to_string());
    let concepts = serde_json::to_string(&e.concepts).map_err(corrupt)?;
    let evidence = serde_json::to_string(&e.evidence).map_err(corrupt)?;
    // serde_json's Map is a BTreeMap here: keys come out sorted.
    let data = serde_json::to_string(&e.data).map_err(corrupt)?;
    let key = s.key.to_string();
    // Encoding v2: a fresh random salt per episode, so the digest that stays
    // when the content is erased cannot be matched against a guessed text.
    // An export's re-import brings the salt the episode was sealed with.
    let salt = match e.salt {
        Some(salt) => salt,
        None => {
            let mut salt = [0u8; tm_model::episodes::SALT_BYTES];
            getrandom::fill(&mut salt)
                .map_err(|e| Error::Corrupt(format!("no randomness for a salt: {e}")))?;
            salt
        }
    };
    let fields = tm_model::episodes::EpisodeFields {
        subject: &key,
        seq,
        kind: e.kind.as_str(),
        at_ms: to_ms(e.at),
        salience: e.salience,
        summary: &e.summary,
        text: &e.text,
        concepts_json: &concepts,
        evidence_json: &evidence,
        data_json: &data,
        external_id: e.external_id.as_deref(),
        salt: Some(&salt),
        digest: None,
    };
    let digest = tm_model::episodes::content_digest(&fields, &salt);
    let hash = tm_model::episodes::episode_hash_v2(&fields, &digest, prev);
    Ok(Sealed {
        concepts,
        evidence,
        data,
        salt,
        digest,
        hash,
    })
}

/// Everything that can go wrong in a store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Postgres(String),
    /// A chain row whose fields cannot be read as an episode (written
    /// behind the store's back); `verify` reports it as a break there.
    #[error("the episode row at seq {seq} cannot be read: {reason}")]
    UnreadableRow { seq: u64, reason: String },
    #[error("cannot open the database at {location}: {message}")]
    Open { location: String, message: String },
    #[error(
        "the database at {location} has schema version {found}, newer than this build supports ({supported}); use a newer tutor-memory"
    )]
    SchemaTooNew {
        location: String,
        found: i64,
        supported: i64,
    },
    #[error("no subject {0}")]
    UnknownSubject(String),
    /// A name several owners' live subjects have (learner names are per
    /// tenant): the operator must say whose.
    #[error(
        "{key} names a subject of several owners ({}): say whose with --owner TENANT (--owner - for the operator's own)",
        owners.join(", ")
    )]
    AmbiguousSubject { key: String, owners: Vec<String> },
    #[error("subject {key} has no file named {name:?}")]
    UnknownFile { key: String, name: String },
    #[error("subject {key} has no episode at seq {seq} to erase (none there, or erased already)")]
    UnknownEpisode { key: String, seq: u64 },
    #[error(
        "subject {key}: external id {id:?} is already used by episode seq {seq} for a different event"
    )]
    ExternalIdTaken { key: String, id: String, seq: u64 },
    #[error("the stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Key(#[from] tm_model::subject::KeyError),
    /// The closure given to [`StoreExt::write`] failed: the transaction was
    /// rolled back and the closure's own error is what the caller sees.
    #[error("the transaction was rolled back")]
    RolledBack,
}

impl Error {
    /// Whether the error is about what the caller asked for (a subject or
    /// file that does not exist, an id already taken, a malformed key) rather
    /// than a fault of the store.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::UnknownSubject(_)
                | Error::AmbiguousSubject { .. }
                | Error::UnknownFile { .. }
                | Error::UnknownEpisode { .. }
                | Error::ExternalIdTaken { .. }
                | Error::Key(_)
        )
    }
}

impl From<::postgres::Error> for Error {
    fn from(e: ::postgres::Error) -> Error {
        // The driver's own message is only "db error": the server's is inside.
        Error::Postgres(match e.as_db_error() {
            Some(db) => {
                let mut m = format!("{} ({})", db.message(), db.code().code());
                if let Some(d) = db.detail() {
                    m.push_str(": ");
                    m.push_str(d);
                }
                m
            }
            None => match std::error::Error::source(&e) {
                Some(cause) => format!("{e}: {cause}"),
                None => e.to_string(),
            },
        })
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The default database, relative to the working directory.
pub const DEFAULT_DB: &str = "tutor-memory.db";

/// At most this many of a subject's episodes that hold the question's words are
/// ranked by BM25 for one turn, the newest of them: ranking is work for every
/// hit, and at 100,000 episodes a common word's tens of thousands of hits took
/// a quarter of a block, for a pool that keeps 500. Below it (every LoCoMo
/// conversation, any subject where the words are rare), every hit is ranked.
pub const TERM_HITS_BOUND: usize = 2_000;

/// Every read the brain makes. Implemented by a connection ([`Store`]) and by
/// a transaction ([`Tx`], which then sees its own writes).
pub trait Reader {
    /// The schema version (number of migrations applied).
    fn schema_version(&self) -> Result<i64>;

    // ------------------------------------------------------------ subjects
    /// The subject named `key`, whoever's learner it is (the operator's
    /// view): the live one; [`Error::AmbiguousSubject`] when several owners
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

    // ------------------------------------------------------------ episodes
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

    // ------------------------------------------------------------ the chain
    /// The chain's head: (seq, hash), or (0, genesis) for an empty chain.
    fn head(&self, s: &Subject) -> Result<(u64, Hash)>;
    /// Every row of the subject's chain in seq order, exactly as stored (the
    /// fields hashed, the stored link and hash), until `visit` returns false.
    fn chain_rows(&self, s: &Subject, visit: &mut dyn FnMut(&StoredRow<'_>) -> bool) -> Result<()>;
    /// The seq of the subject's episode whose stored hash is `hash`.
    fn seq_of_hash(&self, s: &Subject, hash: &[u8]) -> Result<Option<u64>>;
    /// The stored hash of the subject's episode at `seq`.
    fn hash_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Vec<u8>>>;

    // ------------------------------------------------------------ annotations
    /// An episode's annotations, oldest first.
    fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>>;
    /// Every annotation of `kind` on the subject's episodes, oldest first.
    fn annotations_of_kind(&self, s: &Subject, kind: &str) -> Result<Vec<Annotation>>;
    /// Which of the subject's episodes among these ids carry at least one
    /// annotation of `kind`.
    fn annotated_ids(&self, s: &Subject, ids: &[i64], kind: &str) -> Result<Vec<i64>>;

    // ------------------------------------------------------------ recall pools
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
    /// [`TERM_HITS_BOUND`] of the subject's episodes, only the newest that many
    /// of them are ranked (the scores' statistics stay the whole subject's).
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>>;
    /// How many of the subject's episodes hold `term`, counted up to `limit` (the
    /// hits of [`Reader::term_hits`] without ranking them).
    fn term_count(&self, s: &Subject, term: &str, limit: usize) -> Result<usize> {
        Ok(self.term_hits(s, &[term.to_string()], limit)?.len())
    }
    /// The distinct words of the subject's full-text index that start with
    /// `prefix` (a folded term, as [`Reader::term_hits`] takes them) and that
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

    // ------------------------------------------------------------ vectors
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

    // ------------------------------------------------------------ files
    /// Every version of every file of the subject, oldest first.
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>>;
    /// The newest version of the file, removed or not.
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>>;
    /// The text of each page of a file version, in page order.
    fn pages(&self, version_id: i64) -> Result<Vec<String>>;
    /// The bytes of one of the subject's file versions (`None`: not its).
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>>;

    // ------------------------------------------------------------ passages
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

    // ------------------------------------------------------------ map, beliefs
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

    // ------------------------------------------------------------ the night
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

    // ------------------------------------------------------------ tenants
    /// Every key, oldest first.
    fn api_keys(&self) -> Result<Vec<ApiKey>>;
    /// The key with this public prefix, with its stored digest.
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>>;
    /// The subjects of the tenant's learners, by key: for each name the one
    /// it resolves to (the live subject, else the newest retired one).
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>>;

    // ------------------------------------------------------------ erasure
    /// The erasures that cleared episodes of the subject, or retired it (an
    /// erasure of the subject whole), oldest first.
    fn erasures(&self, s: &Subject) -> Result<Vec<Erasure>>;
    /// The erasures (ids) whose compaction has not finished: the store's
    /// files may still hold their erased bytes. Recorded in the erasure's
    /// own transaction, cleared by [`Store::compact`], which the next open
    /// of the store runs first.
    fn compaction_owed(&self) -> Result<Vec<i64>>;
}

/// Of the subjects a name matches (in id order), the one it resolves to:
/// the live one (several: [`Error::AmbiguousSubject`], their owners named
/// with `tenant_name`, a tenant's name by its id), else the newest retired
/// one.
pub(crate) fn pick_subject(
    key: &str,
    found: Vec<Subject>,
    mut tenant_name: impl FnMut(i64) -> Result<Option<String>>,
) -> Result<Option<Subject>> {
    let (live, retired): (Vec<Subject>, Vec<Subject>) = found.into_iter().partition(|s| !s.retired);
    match live.len() {
        0 => Ok(retired.into_iter().last()),
        1 => Ok(live.into_iter().next()),
        _ => Err(Error::AmbiguousSubject {
            key: key.to_string(),
            owners: live
                .iter()
                .map(|s| match s.owner {
                    Owner::Operator => Ok("the operator's own".to_string()),
                    Owner::Tenant(id) => Ok(format!(
                        "tenant {}",
                        tenant_name(id)?.unwrap_or_else(|| format!("#{id}"))
                    )),
                })
                .collect::<Result<_>>()?,
        }),
    }
}

/// What assigning the operator's learner to a tenant does, given the ids of
/// the learners of that name the operator and the tenant have: the learner
/// to move to the tenant, and the answer (`None`: neither has one; `Taken`:
/// the tenant has its own; `Mine`: it is, or now will be, the tenant's).
pub(crate) fn assignment(
    operators: Option<i64>,
    tenants: Option<i64>,
) -> (Option<i64>, Option<Claim>) {
    match (operators, tenants) {
        (None, None) => (None, None),
        (None, Some(_)) => (None, Some(Claim::Mine)),
        (Some(_), Some(_)) => (None, Some(Claim::Taken)),
        (Some(id), None) => (Some(id), Some(Claim::Mine)),
    }
}

/// The subject named `key` of `owner`, or (`None`) of whichever one owner
/// has it: [`Reader::subject_of`] or [`Reader::subject`].
pub fn subject_named(
    r: &dyn Reader,
    owner: Option<Owner>,
    key: &SubjectKey,
) -> Result<Option<Subject>> {
    match owner {
        Some(o) => r.subject_of(o, key),
        None => r.subject(key),
    }
}

/// One owner's subjects (by key, then id) with each name resolved as
/// [`pick_subject`] resolves it: the live subject, else the newest retired.
pub(crate) fn resolved_by_name(all: Vec<Subject>) -> Vec<Subject> {
    let mut out: Vec<Subject> = Vec::with_capacity(all.len());
    for s in all {
        match out.last_mut() {
            Some(last) if last.key == s.key => {
                if last.retired || !s.retired {
                    *last = s;
                }
            }
            _ => out.push(s),
        }
    }
    out
}

/// What a compaction says of the erasures it settled.
pub(crate) fn owed_settled(owed: &[i64]) -> String {
    match owed {
        [] => String::new(),
        ids => format!(
            " (the compaction owed by erasure{} {} is finished)",
            if ids.len() == 1 { "" } else { "s" },
            ids.iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One write transaction: every write, and every read as seen inside it.
pub trait Tx: Reader {
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
    /// Appends one episode at the head of the subject's chain and indexes its
    /// terms and concepts.
    fn append(&mut self, s: &Subject, e: &NewEpisode) -> Result<Appended>;
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
    /// Records a fact learned after the episode was written.
    fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64>;
    /// Stores a new snapshot of the subject's concept map.
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()>;
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
    /// Stores (or replaces) episodes' vectors: derived data, not the chain.
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()>;
    /// Stores (or replaces) passages' vectors.
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()>;
    /// Inserts a new belief row; when it replaces `supersedes`, points that
    /// row at the new one (the only change a belief row ever takes).
    fn insert_belief(&mut self, s: &Subject, b: &BeliefRow, supersedes: Option<i64>)
    -> Result<i64>;
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
    /// Records the erasure and removes every text of these subjects and
    /// everything derived from them: episode content (the chain's skeleton
    /// and digests stay, pointing at the erasure), full-text terms, vectors,
    /// concepts touched, annotations, citation checks, files with their
    /// versions, pages and passages, map snapshots, beliefs, the night's
    /// log and caches, import records, the subject's title. Takes each
    /// subject's lock itself (as an append does). Follow it with
    /// [`Store::compact`].
    fn erase(&mut self, e: &NewErasure, subjects: &[Subject]) -> Result<Erasure>;
    /// Records the erasure of the subject's episodes at `seqs` and clears
    /// them (their skeletons stay) and what derives from each alone:
    /// full-text terms, concepts touched, vectors, annotations, citation
    /// checks; and the subject's working set and self-model. With `derived`,
    /// also every map snapshot and belief row of the subject: the caller
    /// writes them again, re-derived without the episodes, in the same
    /// transaction. An episode not in the chain, or erased already, is
    /// [`Error::Invalid`]. Takes the subject's lock.
    fn erase_episodes(
        &mut self,
        e: &NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<Erasure>;
}

/// One connection to a store.
pub trait Store: Reader + Send {
    /// Runs `f` in one write transaction that holds the write lock from its
    /// first statement (so appends queue rather than fork a chain): commits
    /// when `f` returns `Ok`, rolls back otherwise. Use [`StoreExt::write`].
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;
    /// Where the data lives (a path, `:memory:`, a URL without secrets).
    fn location(&self) -> &str;
    /// Whether the connection is gone (the server closed it): such a store
    /// only fails, and is not worth keeping.
    fn is_closed(&self) -> bool {
        false
    }
    /// After an erasure: rewrites the storage so that no byte of erased
    /// text remains on disk (SQLite: the full-text indexes merged, the
    /// write-ahead log checkpointed and emptied, VACUUM; PostgreSQL: VACUUM
    /// of the touched tables). Returns what it did, for people.
    fn compact(&mut self) -> Result<String>;
}

/// [`Store::transact`] with a result.
pub trait StoreExt {
    /// Runs `f` in one transaction: all of it commits, or none.
    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        self.write_with(f)
    }

    /// [`StoreExt::write`] for callers with their own error type (one a
    /// store error converts into): the closure's error is what comes back.
    fn write_with<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E>;
}

impl<S: Store + ?Sized> StoreExt for S {
    fn write_with<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut f = Some(f);
        let mut out: Option<std::result::Result<T, E>> = None;
        let done = self.transact(&mut |tx| {
            let Some(f) = f.take() else {
                return Err(Error::Corrupt(
                    "a transaction body was run twice".to_string(),
                ));
            };
            match f(tx) {
                Ok(v) => {
                    out = Some(Ok(v));
                    Ok(())
                }
                Err(e) => {
                    out = Some(Err(e));
                    Err(Error::RolledBack)
                }
            }
        });
        match (done, out) {
            (Ok(()), Some(Ok(v))) => Ok(v),
            (_, Some(Err(e))) => Err(e),
            (Err(e), _) => Err(e.into()),
            (Ok(()), None) => Err(Error::Corrupt("a transaction body never ran".into()).into()),
        }
    }
}

/// Where the data lives, and how to reach it: opens connections.
pub trait Engine: Send + Sync {
    /// A new connection (migrations already ran when the engine was opened).
    fn connect(&self) -> Result<Box<dyn Store>>;
    /// Where the data lives, for messages.
    fn location(&self) -> &str;
}

/// Whether `location` names a PostgreSQL database (a `postgres://` or
/// `postgresql://` URL) rather than a SQLite file.
pub fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// The engine for `location`: a `postgres://` URL (the shared engine), or a
/// file path (SQLite, created when missing). Either way the schema is
/// brought up to date.
pub fn open(location: &str) -> Result<Arc<dyn Engine>> {
    if is_postgres(location) {
        return Ok(Arc::new(postgres::PgEngine::open(location)?));
    }
    Ok(Arc::new(sqlite::SqliteEngine::open(location)?))
}

/// The subject, or [`Error::UnknownSubject`].
pub fn require_subject(r: &dyn Reader, key: &SubjectKey) -> Result<Subject> {
    r.subject(key)?
        .ok_or_else(|| Error::UnknownSubject(key.to_string()))
}

struct HashIndex<'a> {
    reader: &'a dyn Reader,
    subject: &'a Subject,
}

impl PrevLookup for HashIndex<'_> {
    fn seq_of_hash(&mut self, hash: &[u8]) -> Option<u64> {
        self.reader.seq_of_hash(self.subject, hash).ok().flatten()
    }
}

/// Recomputes the subject's chain from the stored rows and reports the first
/// break; with a checkpoint, also whether the chain still reaches it
/// unchanged. Engine-independent: it reads rows through [`Reader`] only.
pub fn verify(r: &dyn Reader, s: &Subject, checkpoint: Option<&Checkpoint>) -> Result<ChainReport> {
    let key = s.key.to_string();
    if let Some(cp) = checkpoint
        && cp.subject != key
    {
        return Err(Error::Corrupt(format!(
            "the checkpoint is for subject {}, not {key}",
            cp.subject
        )));
    }
    let mut verifier = ChainVerifier::new(&key);
    let mut lookup = HashIndex {
        reader: r,
        subject: s,
    };
    let mut first_break = None;
    let walked = r.chain_rows(s, &mut |row| match verifier.push(row, &mut lookup) {
        Ok(()) => true,
        Err(b) => {
            first_break = Some(b);
            false
        }
    });
    match walked {
        Err(Error::UnreadableRow { seq, reason }) => {
            first_break = Some(Break::Unreadable { seq, reason });
        }
        other => other?,
    }
    if first_break.is_none()
        && let Some(cp) = checkpoint
    {
        let at_cp = r.hash_at_seq(s, cp.seq)?;
        first_break = verifier.finish(Some((cp, at_cp.as_deref()))).err();
    }
    let (head_seq, head) = verifier.head();
    let (erased, erased_v1) = verifier.erased();
    let erasures = if erased > 0 {
        r.erasures(s)?
    } else {
        Vec::new()
    };
    let owed = if erasures.is_empty() {
        Vec::new()
    } else {
        r.compaction_owed()?
    };
    Ok(ChainReport {
        erased,
        erased_v1,
        compaction_owed: erasures
            .iter()
            .map(|e| e.id)
            .filter(|id| owed.contains(id))
            .collect(),
        erasures,
        subject: key,
        state: if first_break.is_some() {
            ChainState::Broken
        } else {
            ChainState::Intact
        },
        verified: verifier.verified(),
        head_seq,
        head_hash: hex::encode(head),
        first_break,
        checkpoint_checked: checkpoint.is_some(),
    })
}

/// The subject's chain head as an exportable checkpoint.
pub fn checkpoint(r: &dyn Reader, s: &Subject) -> Result<Checkpoint> {
    let (seq, hash) = r.head(s)?;
    Ok(Checkpoint {
        subject: s.key.to_string(),
        seq,
        head_hash: hex::encode(hash),
    })
}
