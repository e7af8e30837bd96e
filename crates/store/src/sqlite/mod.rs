//! The embedded engine: one SQLite file (WAL, `synchronous=FULL`, foreign
//! keys, versioned migrations) holding learners, subjects, file versions
//! with their pages, the append-only episode log with its per-subject hash
//! chain, and everything derived from them.
//!
//! Writes happen inside [`Store::transact`], one `BEGIN IMMEDIATE`
//! transaction: the write lock is taken before the chain head is read, so
//! concurrent writers (threads or processes) queue instead of forking a
//! chain, and a failure or a killed process leaves nothing half-written.
//! Triggers refuse any UPDATE or DELETE of episodes and annotations, any
//! change of a belief's claim, any change of a map snapshot.
//!
//! The reads are written once, as functions of a [`Connection`], and serve
//! both a connection and a transaction (`impl<T: Conn> Reader for T`).

mod beliefs;
mod episodes;
mod erase;
mod files;
mod lexicon;
mod nightly;
mod passages;
mod recall;
mod schema;
mod tenants;

use crate::{Engine, Error, Reader, Result, Store, Tx};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{Annotation, Appended, Episode, Hash, Kind, NewEpisode, StoredRow};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::map::ConceptMap;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::passages::Passage;
use tm_model::recall::CandidateFacts;
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};

pub(crate) use crate::{from_ms, to_ms};

/// A JSON array of ids, for `IN (SELECT value FROM json_each(?))`.
pub(crate) fn id_list(ids: &[i64]) -> String {
    let mut s = String::with_capacity(ids.len() * 8 + 2);
    s.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&id.to_string());
    }
    s.push(']');
    s
}

pub(crate) use crate::subject_token;

/// A SQLite database file: opening it runs the migrations once; each
/// [`Engine::connect`] then opens a connection of its own.
pub struct SqliteEngine {
    path: PathBuf,
    location: String,
    /// The subjects' full-text postings, shared by every connection.
    lexicon: Arc<lexicon::Lexicon>,
}

impl SqliteEngine {
    /// Opens (creating if needed) the database file and brings its schema up
    /// to date.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteEngine> {
        let path = path.as_ref();
        let mut first = SqliteStore::open(path)?;
        // An erasure whose compaction was cut short (the process killed
        // after its commit) is finished before anything is served. When it
        // cannot finish now (another process keeps reading), it stays owed:
        // `verify` names it, and the next open or `compact` tries again.
        if !erase::owed(&first.conn)?.is_empty() {
            let _ = first.compact();
        }
        Ok(SqliteEngine {
            path: path.to_path_buf(),
            location: path.display().to_string(),
            lexicon: Arc::default(),
        })
    }
}

impl Engine for SqliteEngine {
    fn connect(&self) -> Result<Box<dyn Store>> {
        let mut store = SqliteStore::connect(&self.path, false)?;
        store.lexicon = self.lexicon.clone();
        Ok(Box::new(store))
    }

    fn location(&self) -> &str {
        &self.location
    }
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 128;

/// How long a connection waits for another one's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// One SQLite connection.
pub struct SqliteStore {
    conn: Connection,
    location: String,
    lexicon: Arc<lexicon::Lexicon>,
}

/// Anything that reads through one SQLite connection: a store, a transaction.
pub(crate) trait Conn {
    fn conn(&self) -> &Connection;
    /// The in-memory postings full-text reads keep: none inside a write
    /// transaction, whose own rows the index may still hold pending (its
    /// reads tokenise the subject's rows afresh).
    fn lexicon(&self) -> Option<&lexicon::Lexicon> {
        None
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore> {
        SqliteStore::connect(path.as_ref(), true)
    }

    fn connect(path: &Path, migrate: bool) -> Result<SqliteStore> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::Open {
            location: path.display().to_string(),
            message: e.to_string(),
        })?;
        SqliteStore::init(conn, path.display().to_string(), migrate)
    }

    /// A private in-memory database, for tests and benchmarks.
    pub fn open_in_memory() -> Result<SqliteStore> {
        SqliteStore::init(Connection::open_in_memory()?, ":memory:".into(), true)
    }

    fn init(conn: Connection, location: String, migrate: bool) -> Result<SqliteStore> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // One turn runs a few dozen distinct statements: with rusqlite's
        // default of 16 cached, each turn evicted and prepared them again
        // (4 % of a block under `bench load`).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut store = SqliteStore {
            conn,
            location,
            lexicon: Arc::default(),
        };
        // Switching a new file to WAL can answer "locked" at once, without
        // the busy handler, while another process creates or migrates the
        // same file: those steps wait as long as any write would.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match store.prepare(migrate) {
                Err(Error::Sqlite(e)) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other.map(|()| store),
            }
        }
    }

    fn prepare(&mut self, migrate: bool) -> Result<()> {
        // WAL: readers never block the writer. synchronous=FULL: a committed
        // write survives power loss, not only a crashed process.
        self.conn.pragma_update(None, "journal_mode", "WAL")?;
        self.conn.pragma_update(None, "synchronous", "FULL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        // Reads map the file instead of copying pages through read(2).
        self.conn
            .pragma_update(None, "mmap_size", 256i64 * 1024 * 1024)?;
        if migrate {
            self.migrate()?;
        } else {
            self.check_version()?;
        }
        // The episode index's vocabulary, for a word's other forms
        // (`recall::terms_with_prefix`): a view of the FTS5 index kept by this
        // connection alone, so it stores nothing and needs no migration.
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.episode_vocab USING fts5vocab(main, episode_fts, 'row');",
        )?;
        Ok(())
    }

    fn check_version(&self) -> Result<()> {
        let found = self.schema_version()?;
        let supported = schema::MIGRATIONS.len() as i64;
        if found > supported {
            return Err(Error::SchemaTooNew {
                location: self.location.clone(),
                found,
                supported,
            });
        }
        if found < supported {
            return Err(Error::Open {
                location: self.location.clone(),
                message: format!(
                    "schema version {found} is older than {supported}: open the engine to migrate it"
                ),
            });
        }
        Ok(())
    }

    fn migrate(&mut self) -> Result<()> {
        // A migration may rebuild a table others refer to (SQLite cannot
        // drop a constraint in place): foreign keys are off while it runs,
        // and checked before it commits. The pragma is a no-op inside a
        // transaction, so it is set around the loop.
        self.conn.pragma_update(None, "foreign_keys", false)?;
        let migrated = self.migrate_steps();
        self.conn.pragma_update(None, "foreign_keys", true)?;
        migrated
    }

    fn migrate_steps(&mut self) -> Result<()> {
        let supported = schema::MIGRATIONS.len() as i64;
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if version > supported {
                return Err(Error::SchemaTooNew {
                    location: self.location.clone(),
                    found: version,
                    supported,
                });
            }
            if version == supported {
                return Ok(());
            }
            tx.execute_batch(schema::MIGRATIONS[version as usize])?;
            if version + 1 == 2 {
                recall::backfill_index(&tx)?;
            }
            if version + 1 == schema::PASSAGES_VERSION {
                passages::backfill(&tx)?;
            }
            let broken: Option<String> = tx
                .query_row(
                    "SELECT \"table\" FROM pragma_foreign_key_check LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(table) = broken {
                return Err(Error::Corrupt(format!(
                    "migration {} would leave a row of {table} pointing at nothing",
                    version + 1
                )));
            }
            tx.pragma_update(None, "user_version", version + 1)?;
            tx.commit()?;
        }
    }

    /// Raw access for tests that must play the attacker (drop triggers, rewrite
    /// rows). Not for application code.
    #[doc(hidden)]
    pub fn raw_connection(&self) -> &Connection {
        &self.conn
    }
}

impl Conn for SqliteStore {
    fn conn(&self) -> &Connection {
        &self.conn
    }
    fn lexicon(&self) -> Option<&lexicon::Lexicon> {
        Some(&self.lexicon)
    }
}

impl Store for SqliteStore {
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut w = SqliteTx {
            tx,
            heads: HashMap::new(),
        };
        f(&mut w)?;
        w.tx.commit()?;
        Ok(())
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn compact(&mut self) -> Result<String> {
        let owed = erase::owed(&self.conn)?;
        erase::compact_owed(&self.conn, &owed)?;
        Ok(format!(
            "{}: full-text indexes merged, write-ahead log checkpointed and emptied, VACUUM{}",
            self.location,
            crate::owed_settled(&owed)
        ))
    }
}

/// A write transaction. Dropping it uncommitted rolls everything back.
pub struct SqliteTx<'c> {
    tx: rusqlite::Transaction<'c>,
    /// Chain heads read (or written) in this transaction: safe to cache, the
    /// write lock is ours until commit.
    heads: HashMap<i64, (u64, Hash)>,
}

impl Conn for SqliteTx<'_> {
    fn conn(&self) -> &Connection {
        &self.tx
    }
}

impl<T: Conn> Reader for T {
    fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
    fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        episodes::subject_by_key(self.conn(), None, &key.to_string())
    }
    fn subject_of(&self, owner: Owner, key: &SubjectKey) -> Result<Option<Subject>> {
        episodes::subject_by_key(self.conn(), Some(owner), &key.to_string())
    }
    fn subjects(&self) -> Result<Vec<Subject>> {
        episodes::subjects(self.conn())
    }
    fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>> {
        nightly::active_subjects(self.conn(), from, to)
    }
    fn episodes(&self, s: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>> {
        episodes::from_seq(self.conn(), s, from_seq, limit)
    }
    fn episodes_of_kind(
        &self,
        s: &Subject,
        kind: Kind,
        until: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        episodes::of_kind(self.conn(), s, kind, until)
    }
    fn episodes_between(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        episodes::between(self.conn(), s, from, to)
    }
    fn episode_count(&self, s: &Subject) -> Result<u64> {
        episodes::count(self.conn(), s)
    }
    fn episode_counts(&self, s: &Subject, at: DateTime<Utc>) -> Result<BTreeMap<String, usize>> {
        episodes::counts_by_kind(self.conn(), s, at)
    }
    fn episode_by_external_id(&self, s: &Subject, id: &str) -> Result<Option<Episode>> {
        episodes::by_external_id(self.conn(), s, id)
    }
    fn episode_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Episode>> {
        episodes::at_seq(self.conn(), s, seq)
    }
    fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        episodes::by_ids(self.conn(), None, ids)
    }
    fn subject_episodes_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
        episodes::by_ids(self.conn(), Some(s), ids)
    }
    fn episode_by_import_key(&self, s: &Subject, key: &Hash) -> Result<Option<(i64, u64)>> {
        episodes::by_import_key(self.conn(), s, key)
    }
    fn episode_by_salt(&self, s: &Subject, salt: &[u8]) -> Result<Option<(i64, u64)>> {
        episodes::by_salt(self.conn(), s, salt)
    }
    fn activity_by_month(&self, s: &Subject) -> Result<Vec<(String, String, String, usize)>> {
        nightly::activity_by_month(self.conn(), s)
    }
    fn imported(&self, s: &Subject, sha256: &str) -> Result<bool> {
        episodes::imported(self.conn(), s, sha256)
    }
    fn head(&self, s: &Subject) -> Result<(u64, Hash)> {
        episodes::head(self.conn(), s)
    }
    fn chain_rows(&self, s: &Subject, visit: &mut dyn FnMut(&StoredRow<'_>) -> bool) -> Result<()> {
        episodes::chain_rows(self.conn(), s, visit)
    }
    fn seq_of_hash(&self, s: &Subject, hash: &[u8]) -> Result<Option<u64>> {
        episodes::seq_of_hash(self.conn(), s, hash)
    }
    fn hash_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Vec<u8>>> {
        episodes::hash_at_seq(self.conn(), s, seq)
    }
    fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>> {
        episodes::annotations(self.conn(), episode_id)
    }
    fn annotations_of_kind(&self, s: &Subject, kind: &str) -> Result<Vec<Annotation>> {
        episodes::annotations_of_kind(self.conn(), s, kind)
    }
    fn annotated_ids(&self, s: &Subject, ids: &[i64], kind: &str) -> Result<Vec<i64>> {
        recall::annotated_ids(self.conn(), s, ids, kind)
    }
    fn recent_ids(&self, s: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>> {
        recall::recent_ids(self.conn(), s, at, n)
    }
    fn window_ids(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>> {
        recall::window_ids(self.conn(), s, from, to, n)
    }
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        match lexicon::term_hits(self.lexicon(), self.conn(), s, terms, limit)? {
            Some(hits) => Ok(hits),
            None => recall::term_hits(self.conn(), s, terms, limit),
        }
    }
    fn term_count(&self, s: &Subject, term: &str, limit: usize) -> Result<usize> {
        match lexicon::term_count(self.lexicon(), self.conn(), s, term, limit)? {
            Some(n) => Ok(n),
            None => recall::term_count(self.conn(), s, term, limit),
        }
    }
    fn terms_with_prefix(
        &self,
        s: &Subject,
        prefix: &str,
        keep: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<String>> {
        recall::terms_with_prefix(self.conn(), prefix, keep, limit, &|w| {
            self.term_count(s, w, 1)
        })
    }
    fn concept_ids(&self, s: &Subject, concepts: &[String], limit: usize) -> Result<Vec<i64>> {
        recall::concept_ids(self.conn(), s, concepts, limit)
    }
    fn concept_keys(&self, s: &Subject) -> Result<Vec<String>> {
        recall::concept_keys(self.conn(), s)
    }
    fn candidate_facts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<CandidateFacts>> {
        recall::candidate_facts(self.conn(), s, ids)
    }
    fn texts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        recall::texts(self.conn(), s, ids)
    }
    fn vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        recall::vectors(self.conn(), s, model)
    }
    fn vectors_after(&self, s: &Subject, model: &str, after: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        recall::vectors_after(self.conn(), s, model, after)
    }
    fn vector_stamp(&self, s: &Subject, model: &str) -> Result<(u64, i64)> {
        recall::vector_stamp(self.conn(), s, model)
    }
    fn vector_models(&self, s: &Subject) -> Result<Vec<(String, u64)>> {
        recall::vector_models(self.conn(), s)
    }
    fn count_missing_vectors(&self, s: &Subject, model: &str) -> Result<usize> {
        recall::count_missing_vectors(self.conn(), s, model)
    }
    fn episodes_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        recall::episodes_missing_vectors(self.conn(), s, model, limit)
    }
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>> {
        files::versions(self.conn(), s.id, None)
    }
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>> {
        files::current_version(self.conn(), s, name)
    }
    fn pages(&self, version_id: i64) -> Result<Vec<String>> {
        files::pages(self.conn(), version_id)
    }
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>> {
        files::version_bytes(self.conn(), s, version_id)
    }
    fn passage_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        passages::hits(self.conn(), s, terms, limit)
    }
    fn passages_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
        passages::by_ids(self.conn(), s, ids)
    }
    fn current_passages(&self, s: &Subject) -> Result<Vec<(i64, Passage)>> {
        passages::current(self.conn(), s)
    }
    fn version_passages(&self, version_id: i64) -> Result<Vec<(i64, Passage)>> {
        passages::of_version(self.conn(), version_id)
    }
    fn passage_vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        passages::vectors(self.conn(), s, model)
    }
    fn passages_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        passages::missing_vectors(self.conn(), s, model, limit)
    }
    fn latest_map(&self, s: &Subject) -> Result<Option<ConceptMap>> {
        beliefs::latest_map(self.conn(), s)
    }
    fn latest_map_id(&self, s: &Subject) -> Result<Option<i64>> {
        beliefs::latest_map_id(self.conn(), s)
    }
    fn current_beliefs(&self, s: &Subject) -> Result<Vec<BeliefRow>> {
        beliefs::current_all(self.conn(), s)
    }
    fn current_belief(&self, s: &Subject, about: &str) -> Result<Option<BeliefRow>> {
        beliefs::current(self.conn(), s, about)
    }
    fn belief_history(&self, s: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        beliefs::history(self.conn(), s, about)
    }
    fn nightly_ran(&self, s: &Subject, day: &str) -> Result<bool> {
        nightly::ran(self.conn(), s, day)
    }
    fn nightly_runs(&self, s: &Subject) -> Result<Vec<DateTime<Utc>>> {
        nightly::runs(self.conn(), s)
    }
    fn subject_stamp(&self, s: &Subject) -> Result<(i64, i64)> {
        nightly::stamp(self.conn(), s)
    }
    fn working_set(&self, s: &Subject) -> Result<Option<WorkingSet>> {
        nightly::cache(self.conn(), "working_sets", s)
    }
    fn self_model(&self, s: &Subject) -> Result<Option<SelfModel>> {
        nightly::cache(self.conn(), "self_models", s)
    }
    fn citation_checks(&self, s: &Subject, status: &str) -> Result<Vec<CitationCheck>> {
        nightly::citation_checks(self.conn(), s, status)
    }
    fn citation_batch(
        &self,
        s: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
        nightly::citation_batch(self.conn(), s, at, n)
    }
    fn citation_status_counts(&self, s: &Subject) -> Result<BTreeMap<String, usize>> {
        nightly::citation_status_counts(self.conn(), s)
    }
    fn api_keys(&self) -> Result<Vec<ApiKey>> {
        tenants::api_keys(self.conn())
    }
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        tenants::key_by_prefix(self.conn(), prefix)
    }
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        tenants::tenant_subjects(self.conn(), tenant_id)
    }
    fn erasures(&self, s: &Subject) -> Result<Vec<tm_model::episodes::Erasure>> {
        erase::erasures(self.conn(), s)
    }
    fn compaction_owed(&self) -> Result<Vec<i64>> {
        erase::owed(self.conn())
    }
}

impl Tx for SqliteTx<'_> {
    fn lock_subject(&mut self, _: &Subject) -> Result<()> {
        // BEGIN IMMEDIATE took the database's write lock already.
        Ok(())
    }
    fn ensure_subject(
        &mut self,
        owner: Owner,
        key: &SubjectKey,
        title: &str,
        language: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<Subject> {
        episodes::ensure_subject(&self.tx, owner, key, title, language, at)
    }
    fn set_timezone(&mut self, s: &Subject, tz: chrono_tz::Tz) -> Result<()> {
        episodes::set_timezone(&self.tx, s, tz)
    }
    fn append(&mut self, s: &Subject, e: &NewEpisode) -> Result<Appended> {
        let head = match self.heads.get(&s.id) {
            Some(h) => *h,
            None => episodes::head(&self.tx, s)?,
        };
        let appended = episodes::append(&self.tx, s, head, e)?;
        self.heads.insert(s.id, (appended.seq, appended.hash));
        Ok(appended)
    }
    fn add_file(
        &mut self,
        s: &Subject,
        name: &str,
        bytes: &[u8],
        format: &str,
        pages: &[String],
        at: DateTime<Utc>,
    ) -> Result<FileAdded> {
        files::add(&self.tx, s, name, bytes, format, pages, at)
    }
    fn remove_file(&mut self, s: &Subject, name: &str, at: DateTime<Utc>) -> Result<FileVersion> {
        files::remove(&self.tx, s, name, at)
    }
    fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64> {
        episodes::annotate(&self.tx, episode_id, kind, at, data)
    }
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()> {
        beliefs::save_map(&self.tx, s, at, reason, map)
    }
    fn record_import(
        &mut self,
        s: &Subject,
        sha256: &str,
        source: &str,
        at: DateTime<Utc>,
        events: usize,
        appended: usize,
    ) -> Result<()> {
        episodes::record_import(&self.tx, s, sha256, source, at, events, appended)
    }
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        recall::put_vectors(&self.tx, s, model, vectors)
    }
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        passages::put_vectors(&self.tx, model, vectors)
    }
    fn insert_belief(
        &mut self,
        s: &Subject,
        b: &BeliefRow,
        supersedes: Option<i64>,
    ) -> Result<i64> {
        beliefs::insert(&self.tx, s, b, supersedes)
    }
    fn record_nightly(
        &mut self,
        s: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()> {
        nightly::record(&self.tx, s, day, at, summary)
    }
    fn record_citation_check(
        &mut self,
        s: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()> {
        nightly::record_citation_check(&self.tx, s, episode_id, at, status, label)
    }
    fn put_working_set(&mut self, s: &Subject, at: DateTime<Utc>, ws: &WorkingSet) -> Result<()> {
        nightly::put_cache(&self.tx, "working_sets", s, at, ws)
    }
    fn put_self_model(&mut self, s: &Subject, at: DateTime<Utc>, m: &SelfModel) -> Result<()> {
        nightly::put_cache(&self.tx, "self_models", s, at, m)
    }
    fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        tenants::add_api_key(&self.tx, tenant, prefix, sha256, admin, at)
    }
    fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        tenants::revoke_api_key(&self.tx, prefix, at)
    }
    fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        tenants::assign_learner(&self.tx, learner, tenant, at)
    }
    fn erase(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        subjects: &[Subject],
    ) -> Result<tm_model::episodes::Erasure> {
        // BEGIN IMMEDIATE holds the subjects' lock already (`lock_subject`);
        // the cached heads stay right: an erasure changes no hash.
        erase::erase(&self.tx, e, subjects)
    }
    fn erase_episodes(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<tm_model::episodes::Erasure> {
        erase::erase_episodes(&self.tx, e, s, seqs, derived)
    }
}
