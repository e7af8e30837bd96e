//! The stores behind one interface: what the brain needs from a database,
//! as traits, and the engines that provide it (SQLite in one file, the
//! embedded default, in [`sqlite`]).
//!
//! - [`Reader`]: every read, with typed values in and out (a subject, an
//!   episode, a [`ConceptMap`](tm_model::map::ConceptMap), a belief row), never SQL.
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

pub mod concerns;
#[cfg(feature = "testing")]
pub mod contract;
pub mod postgres;
pub mod sqlite;

use chrono::{DateTime, Utc};
pub use concerns::{
    ErasureRead, ErasureWrite, FileRead, FileWrite, IndexRead, IndexWrite, KnowledgeRead,
    KnowledgeWrite, LogRead, LogWrite, NightRead, NightWrite, SubjectRead, SubjectWrite,
    TenantRead, TenantWrite,
};
use std::sync::Arc;
use tm_model::episodes::{
    Break, ChainReport, ChainState, ChainVerifier, Checkpoint, Hash, NewEpisode, PrevLookup,
};
use tm_model::subject::{Subject, SubjectKey};
pub use tm_model::tenants::Owner;

/// Every trait of the interface, for code that calls the store's methods on
/// a concrete engine type rather than through `dyn Reader` / `dyn Tx`.
pub mod prelude {
    pub use crate::concerns::*;
    pub use crate::{Reader, Store, StoreExt, Tx};
}
use tm_model::tenants::Claim;

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
    /// The database cannot be reached, closed the connection, or is
    /// shutting down or out of resources: worth trying again later.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
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
        // A connection lost, refused or closed, or a server shutting down
        // or out of connections (SQLSTATE classes 08, 57P, 53): an outage.
        let outage = e.is_closed()
            || e.as_db_error().map_or_else(
                || std::error::Error::source(&e).is_some_and(|c| c.is::<std::io::Error>()),
                |db| {
                    let c = db.code().code();
                    c.starts_with("08") || c.starts_with("57P") || c.starts_with("53")
                },
            );
        // The driver's own message is only "db error": the server's is inside.
        let message = match e.as_db_error() {
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
        };
        if outage {
            Error::Unavailable(message)
        } else {
            Error::Postgres(message)
        }
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

/// Every read the brain makes, one trait per concern (see [`concerns`]).
/// Implemented by a connection ([`Store`]) and by a transaction ([`Tx`],
/// which then sees its own writes).
pub trait Reader:
    SubjectRead + LogRead + IndexRead + FileRead + KnowledgeRead + NightRead + TenantRead + ErasureRead
{
}

impl<T> Reader for T where
    T: SubjectRead
        + LogRead
        + IndexRead
        + FileRead
        + KnowledgeRead
        + NightRead
        + TenantRead
        + ErasureRead
        + ?Sized
{
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
/// has it: [`SubjectRead::subject_of`] or [`SubjectRead::subject`].
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

/// One write transaction: every write, one trait per concern, and every
/// read as seen inside it.
pub trait Tx:
    Reader
    + SubjectWrite
    + LogWrite
    + IndexWrite
    + FileWrite
    + KnowledgeWrite
    + NightWrite
    + TenantWrite
    + ErasureWrite
{
}

impl<T> Tx for T where
    T: Reader
        + SubjectWrite
        + LogWrite
        + IndexWrite
        + FileWrite
        + KnowledgeWrite
        + NightWrite
        + TenantWrite
        + ErasureWrite
        + ?Sized
{
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
    /// of the touched tables). Returns what it did, for people, naming no
    /// path or address of the store's (a tenant reads it).
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

/// A private store in memory (the embedded engine), gone when dropped: for
/// work derived and then copied out, such as an erasure's re-derivation.
pub fn scratch() -> Result<Box<dyn Store>> {
    Ok(Box::new(sqlite::SqliteStore::open_in_memory()?))
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
