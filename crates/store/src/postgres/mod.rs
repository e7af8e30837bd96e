//! The shared engine: one PostgreSQL database for many service processes.
//! The same tables, rows, ids and JSON text as the SQLite engine (so a store
//! copied from one to the other verifies with the same chain heads), the
//! same guarantees enforced by triggers, and the same [`Reader`] / [`Tx`]
//! behaviour (the contract suite runs on both).
//!
//! Writes happen inside [`Store::transact`], one READ COMMITTED transaction.
//! A subject's writers queue on a transaction-scoped advisory lock
//! ([`Tx::lock_subject`], taken by every append before it reads the head),
//! so two processes appending to one subject make one chain; writers of
//! different subjects never wait for each other. The unique `(subject_id,
//! seq)` index is the last line: a writer that skipped the lock fails rather
//! than forks.
//!
//! The reads are written once, in `q.rs`, as functions of a
//! [`postgres::GenericClient`], and serve both a connection and a
//! transaction through [`Pg`].

#[doc(hidden)]
pub mod cluster;
pub mod copy;
mod db;
mod fts;
mod q;
mod schema;

use crate::{Engine, Error, Reader, Result, Store, Tx};
use chrono::{DateTime, Utc};
use postgres::{Client, GenericClient, NoTls};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{Annotation, Appended, Episode, Hash, Kind, NewEpisode, StoredRow};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::map::ConceptMap;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::passages::Passage;
use tm_model::recall::CandidateFacts;
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};

/// The advisory lock (first key) held while migrating.
const MIGRATION_LOCK: i64 = 7000;

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((auth, host)) => match auth.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn connect_client(url: &str, location: &str) -> Result<Client> {
    Client::connect(url, NoTls).map_err(|e| Error::Open {
        location: location.to_string(),
        message: e.to_string(),
    })
}

/// A PostgreSQL database: opening it runs the migrations once (under an
/// advisory lock, so processes starting together migrate once); each
/// [`Engine::connect`] then opens a connection of its own.
pub struct PgEngine {
    url: String,
    location: String,
}

impl PgEngine {
    /// Connects to the database at `url` (`postgres://user:pass@host/db`) and
    /// brings its schema up to date.
    pub fn open(url: &str) -> Result<PgEngine> {
        let location = redact(url);
        let mut client = connect_client(url, &location)?;
        migrate(&mut client, &location)?;
        let engine = PgEngine {
            url: url.to_string(),
            location,
        };
        // An erasure whose VACUUM was cut short is finished before anything
        // is served; when it cannot finish now it stays owed (`verify` names
        // it; the next open or `compact` tries again).
        // The migration's connection asks; a store connection is made only
        // when there is work.
        let owed = client
            .query_opt("SELECT 1 FROM compaction_owed LIMIT 1", &[])?
            .is_some();
        if owed {
            let _ = engine.connect()?.compact();
        }
        Ok(engine)
    }
}

fn migrate(client: &mut Client, location: &str) -> Result<()> {
    let supported = schema::MIGRATIONS.len() as i64;
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let done = (|| {
        client.batch_execute(
            "CREATE TABLE IF NOT EXISTS tm_schema (version BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())",
        )?;
        loop {
            let mut tx = client.transaction()?;
            let version = tx
                .query_one("SELECT COALESCE(MAX(version), 0) FROM tm_schema", &[])?
                .get::<_, i64>(0);
            if version > supported {
                return Err(Error::SchemaTooNew {
                    location: location.to_string(),
                    found: version,
                    supported,
                });
            }
            if version == supported {
                return Ok(());
            }
            tx.batch_execute(schema::MIGRATIONS[version as usize])?;
            tx.execute(
                "INSERT INTO tm_schema (version) VALUES ($1)",
                &[&(version + 1)],
            )?;
            tx.commit()?;
        }
    })();
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
    done?;
    unlocked?;
    Ok(())
}

impl PgEngine {
    /// A new connection, as its own type.
    pub fn connect_pg(&self) -> Result<PgStore> {
        let mut client = connect_client(&self.url, &self.location)?;
        let mut stmts = db::Prepared::new();
        let found = schema_version(&mut db::Db::new(&mut client, &mut stmts))?;
        let supported = schema::MIGRATIONS.len() as i64;
        if found != supported {
            return Err(if found > supported {
                Error::SchemaTooNew {
                    location: self.location.clone(),
                    found,
                    supported,
                }
            } else {
                Error::Open {
                    location: self.location.clone(),
                    message: format!(
                        "schema version {found} is older than {supported}: open the engine to migrate it"
                    ),
                }
            });
        }
        Ok(PgStore {
            c: RefCell::new(client),
            stmts: RefCell::new(stmts),
            location: self.location.clone(),
            locked: HashSet::new(),
            heads: HashMap::new(),
        })
    }
}

impl Engine for PgEngine {
    fn connect(&self) -> Result<Box<dyn Store>> {
        Ok(Box::new(self.connect_pg()?))
    }

    fn location(&self) -> &str {
        &self.location
    }
}

fn schema_version<C: GenericClient>(c: &mut db::Db<'_, C>) -> Result<i64> {
    Ok(c.query_one(
        "SELECT CASE WHEN to_regclass('tm_schema') IS NULL THEN 0
                    ELSE (SELECT COALESCE(MAX(version), 0) FROM tm_schema) END",
        &[],
    )?
    .get(0))
}

/// A client (a connection or a transaction) seen through `&self`: reads
/// borrow it for one statement at a time.
pub struct Pg<C> {
    c: RefCell<C>,
    /// The connection's prepared statements (lent to its transactions).
    stmts: RefCell<db::Prepared>,
    location: String,
    /// Subjects whose lock this transaction holds (empty on a connection).
    locked: HashSet<i64>,
    /// Chain heads read or written under those locks: safe to reuse until
    /// the transaction ends.
    heads: HashMap<i64, (u64, Hash)>,
}

/// One PostgreSQL connection. Its calls block (the driver runs a runtime
/// of its own): use it, and drop it, off an async runtime's threads, as the
/// brain does.
pub type PgStore = Pg<Client>;
/// One write transaction. Dropping it uncommitted rolls everything back.
pub type PgTx<'a> = Pg<postgres::Transaction<'a>>;

impl PgStore {
    /// Raw access for tests that must play the attacker (drop triggers,
    /// rewrite rows). Not for application code.
    #[doc(hidden)]
    pub fn raw_client(&self) -> std::cell::RefMut<'_, Client> {
        self.c.borrow_mut()
    }
}

impl Store for PgStore {
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let client = self.c.get_mut();
        let stmts = std::mem::take(self.stmts.get_mut());
        let mut w: PgTx<'_> = Pg {
            c: RefCell::new(client.transaction()?),
            stmts: RefCell::new(stmts),
            location: String::new(),
            locked: HashSet::new(),
            heads: HashMap::new(),
        };
        let done = f(&mut w);
        let Pg { c, stmts, .. } = w;
        // The statements go back to the connection, whatever the outcome.
        *self.stmts.get_mut() = stmts.into_inner();
        done?;
        c.into_inner().commit()?;
        Ok(())
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn is_closed(&self) -> bool {
        self.c.try_borrow().map(|c| c.is_closed()).unwrap_or(false)
    }

    fn compact(&mut self) -> Result<String> {
        // VACUUM cannot run inside a transaction block: one statement each.
        // Plain VACUUM marks the erased tuples' space free for reuse and
        // drops dead index entries; the bytes are overwritten as the space is
        // reused (VACUUM FULL would rewrite the tables under an exclusive lock).
        let owed = self.compaction_owed()?;
        let client = self.c.get_mut();
        for table in ERASED_TABLES {
            client.batch_execute(&format!("VACUUM (ANALYZE) {table}"))?;
        }
        // Settled only now: an erasure committed during the VACUUMs stays
        // owed for the next compaction.
        for id in &owed {
            client.execute("DELETE FROM compaction_owed WHERE erasure_id = $1", &[id])?;
        }
        Ok(format!(
            "{}: VACUUM of {} tables ({}){}",
            self.location,
            ERASED_TABLES.len(),
            ERASED_TABLES.join(", "),
            crate::owed_settled(&owed)
        ))
    }
}

/// The tables an erasure writes to.
const ERASED_TABLES: [&str; 21] = [
    "episodes",
    "fts_postings",
    "fts_stats",
    "episode_concepts",
    "episode_vectors",
    "vector_stats",
    "annotations",
    "citation_checks",
    "passage_vectors",
    "passages",
    "file_pages",
    "file_versions",
    "files",
    "concept_maps",
    "beliefs",
    "nightly_runs",
    "working_sets",
    "self_models",
    "imports",
    "subjects",
    "erasures",
];

impl<C: GenericClient> Pg<C> {
    /// Runs `f` over the client and its prepared statements.
    fn with<R>(&self, f: impl FnOnce(&mut db::Db<'_, C>) -> R) -> R {
        let mut c = self.c.borrow_mut();
        let mut stmts = self.stmts.borrow_mut();
        f(&mut db::Db::new(&mut *c, &mut stmts))
    }
}

impl<C: GenericClient> Reader for Pg<C> {
    fn schema_version(&self) -> Result<i64> {
        self.with(|c| schema_version(c))
    }
    fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        self.with(|c| q::subject_by_key(c, None, &key.to_string()))
    }
    fn subject_of(&self, owner: Owner, key: &SubjectKey) -> Result<Option<Subject>> {
        self.with(|c| q::subject_by_key(c, Some(owner), &key.to_string()))
    }
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        self.with(|c| q::tenant_subjects(c, tenant_id))
    }
    fn subjects(&self) -> Result<Vec<Subject>> {
        self.with(|c| q::subjects(c))
    }
    fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>> {
        self.with(|c| q::active_subjects(c, from, to))
    }
    fn episodes(&self, s: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>> {
        self.with(|c| q::from_seq(c, s, from_seq, limit))
    }
    fn episodes_of_kind(
        &self,
        s: &Subject,
        kind: Kind,
        until: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        self.with(|c| q::of_kind(c, s, kind, until))
    }
    fn episodes_between(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        self.with(|c| q::between(c, s, from, to))
    }
    fn episode_count(&self, s: &Subject) -> Result<u64> {
        self.with(|c| q::count(c, s))
    }
    fn episode_counts(&self, s: &Subject, at: DateTime<Utc>) -> Result<BTreeMap<String, usize>> {
        self.with(|c| q::counts_by_kind(c, s, at))
    }
    fn episode_by_external_id(&self, s: &Subject, id: &str) -> Result<Option<Episode>> {
        self.with(|c| q::by_external_id(c, s, id))
    }
    fn episode_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Episode>> {
        self.with(|c| q::at_seq(c, s, seq))
    }
    fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        self.with(|c| q::by_ids(c, None, ids))
    }
    fn subject_episodes_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
        self.with(|c| q::by_ids(c, Some(s), ids))
    }
    fn episode_by_import_key(&self, s: &Subject, key: &Hash) -> Result<Option<(i64, u64)>> {
        self.with(|c| q::by_import_key(c, s, key))
    }
    fn episode_by_salt(&self, s: &Subject, salt: &[u8]) -> Result<Option<(i64, u64)>> {
        self.with(|c| q::by_salt(c, s, salt))
    }
    fn activity_by_month(&self, s: &Subject) -> Result<Vec<(String, String, String, usize)>> {
        self.with(|c| q::activity_by_month(c, s))
    }
    fn imported(&self, s: &Subject, sha256: &str) -> Result<bool> {
        self.with(|c| q::imported(c, s, sha256))
    }
    fn head(&self, s: &Subject) -> Result<(u64, Hash)> {
        self.with(|c| q::head(c, s))
    }
    fn chain_rows(&self, s: &Subject, visit: &mut dyn FnMut(&StoredRow<'_>) -> bool) -> Result<()> {
        let mut after = 0i64;
        loop {
            // The client is released before visiting: a visitor may read.
            let rows = self.with(|c| q::chain_page(c, s, after))?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = last.get(0);
            if !q::visit_chain_page(s, &rows, visit)? {
                return Ok(());
            }
        }
    }
    fn seq_of_hash(&self, s: &Subject, hash: &[u8]) -> Result<Option<u64>> {
        self.with(|c| q::seq_of_hash(c, s, hash))
    }
    fn hash_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Vec<u8>>> {
        self.with(|c| q::hash_at_seq(c, s, seq))
    }
    fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>> {
        self.with(|c| q::annotations(c, episode_id))
    }
    fn annotations_of_kind(&self, s: &Subject, kind: &str) -> Result<Vec<Annotation>> {
        self.with(|c| q::annotations_of_kind(c, s, kind))
    }
    fn annotated_ids(&self, s: &Subject, ids: &[i64], kind: &str) -> Result<Vec<i64>> {
        self.with(|c| q::annotated_ids(c, s, ids, kind))
    }
    fn recent_ids(&self, s: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>> {
        self.with(|c| q::recent_ids(c, s, at, n))
    }
    fn window_ids(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>> {
        self.with(|c| q::window_ids(c, s, from, to, n))
    }
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        self.with(|c| q::term_hits(c, s, terms, limit))
    }
    fn terms_with_prefix(
        &self,
        s: &Subject,
        prefix: &str,
        keep: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<String>> {
        self.with(|c| q::terms_with_prefix(c, s, prefix, keep, limit))
    }
    fn concept_ids(&self, s: &Subject, concepts: &[String], limit: usize) -> Result<Vec<i64>> {
        self.with(|c| q::concept_ids(c, s, concepts, limit))
    }
    fn concept_keys(&self, s: &Subject) -> Result<Vec<String>> {
        self.with(|c| q::concept_keys(c, s))
    }
    fn candidate_facts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<CandidateFacts>> {
        self.with(|c| q::candidate_facts(c, s, ids))
    }
    fn texts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        self.with(|c| q::texts(c, s, ids))
    }
    fn vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| q::vectors(c, s, model))
    }
    fn vectors_after(&self, s: &Subject, model: &str, after: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| q::vectors_after(c, s, model, after))
    }
    fn vector_stamp(&self, s: &Subject, model: &str) -> Result<(u64, i64)> {
        self.with(|c| q::vector_stamp(c, s, model))
    }
    fn vector_models(&self, s: &Subject) -> Result<Vec<(String, u64)>> {
        self.with(|c| q::vector_models(c, s))
    }
    fn count_missing_vectors(&self, s: &Subject, model: &str) -> Result<usize> {
        self.with(|c| q::count_missing_vectors(c, s, model))
    }
    fn episodes_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        self.with(|c| q::episodes_missing_vectors(c, s, model, limit))
    }
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>> {
        self.with(|c| q::versions(c, s.id, None))
    }
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>> {
        self.with(|c| q::current_version(c, s, name))
    }
    fn pages(&self, version_id: i64) -> Result<Vec<String>> {
        self.with(|c| q::pages(c, version_id))
    }
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>> {
        self.with(|c| q::version_bytes(c, s, version_id))
    }
    fn passage_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        self.with(|c| q::passage_hits(c, s, terms, limit))
    }
    fn passages_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| q::passages_by_ids(c, s, ids))
    }
    fn current_passages(&self, s: &Subject) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| q::current_passages(c, s))
    }
    fn version_passages(&self, version_id: i64) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| q::version_passages(c, version_id))
    }
    fn passage_vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| q::passage_vectors(c, s, model))
    }
    fn passages_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        self.with(|c| q::passages_missing_vectors(c, s, model, limit))
    }
    fn latest_map(&self, s: &Subject) -> Result<Option<ConceptMap>> {
        self.with(|c| q::latest_map(c, s))
    }
    fn latest_map_id(&self, s: &Subject) -> Result<Option<i64>> {
        self.with(|c| q::latest_map_id(c, s))
    }
    fn current_beliefs(&self, s: &Subject) -> Result<Vec<BeliefRow>> {
        self.with(|c| q::current_beliefs(c, s))
    }
    fn current_belief(&self, s: &Subject, about: &str) -> Result<Option<BeliefRow>> {
        self.with(|c| q::current_belief(c, s, about))
    }
    fn belief_history(&self, s: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        self.with(|c| q::belief_history(c, s, about))
    }
    fn nightly_ran(&self, s: &Subject, day: &str) -> Result<bool> {
        self.with(|c| q::nightly_ran(c, s, day))
    }
    fn nightly_runs(&self, s: &Subject) -> Result<Vec<DateTime<Utc>>> {
        self.with(|c| q::nightly_runs(c, s))
    }
    fn subject_stamp(&self, s: &Subject) -> Result<(i64, i64)> {
        self.with(|c| q::subject_stamp(c, s))
    }
    fn working_set(&self, s: &Subject) -> Result<Option<WorkingSet>> {
        self.with(|c| q::cache(c, "working_sets", s))
    }
    fn self_model(&self, s: &Subject) -> Result<Option<SelfModel>> {
        self.with(|c| q::cache(c, "self_models", s))
    }
    fn citation_checks(&self, s: &Subject, status: &str) -> Result<Vec<CitationCheck>> {
        self.with(|c| q::citation_checks(c, s, status))
    }
    fn citation_batch(
        &self,
        s: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
        self.with(|c| q::citation_batch(c, s, at, n))
    }
    fn citation_status_counts(&self, s: &Subject) -> Result<BTreeMap<String, usize>> {
        self.with(|c| q::citation_status_counts(c, s))
    }
    fn api_keys(&self) -> Result<Vec<ApiKey>> {
        self.with(|c| q::api_keys(c))
    }
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        self.with(|c| q::key_by_prefix(c, prefix))
    }
    fn erasures(&self, s: &Subject) -> Result<Vec<tm_model::episodes::Erasure>> {
        self.with(|c| q::erasures(c, s))
    }
    fn compaction_owed(&self) -> Result<Vec<i64>> {
        self.with(|c| q::compaction_owed(c))
    }
}

impl Tx for PgTx<'_> {
    fn erase(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        subjects: &[Subject],
    ) -> Result<tm_model::episodes::Erasure> {
        for s in subjects {
            self.lock_subject(s)?;
        }
        self.with(|c| q::erase(c, e, subjects))
    }
    fn erase_episodes(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<tm_model::episodes::Erasure> {
        self.lock_subject(s)?;
        self.with(|c| q::erase_episodes(c, e, s, seqs, derived))
    }
    fn lock_subject(&mut self, s: &Subject) -> Result<()> {
        if self.locked.insert(s.id) {
            self.with(|c| q::lock_subject(c, s))?;
        }
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
        self.with(|c| q::ensure_subject(c, owner, key, title, language, at))
    }
    fn set_timezone(&mut self, s: &Subject, tz: chrono_tz::Tz) -> Result<()> {
        self.with(|c| q::set_timezone(c, s, tz))
    }
    fn append(&mut self, s: &Subject, e: &NewEpisode) -> Result<Appended> {
        // The head is read under the subject's lock, so concurrent appends
        // queue instead of forking.
        self.lock_subject(s)?;
        let head = match self.heads.get(&s.id) {
            Some(h) => *h,
            None => self.with(|c| q::head(c, s))?,
        };
        let appended = self.with(|c| q::append(c, s, head, e))?;
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
        self.lock_subject(s)?;
        self.with(|c| q::add_file(c, s, name, bytes, format, pages, at))
    }
    fn remove_file(&mut self, s: &Subject, name: &str, at: DateTime<Utc>) -> Result<FileVersion> {
        self.lock_subject(s)?;
        self.with(|c| q::remove_file(c, s, name, at))
    }
    fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64> {
        self.with(|c| q::annotate(c, episode_id, kind, at, data))
    }
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()> {
        self.with(|c| q::save_map(c, s, at, reason, map))
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
        self.with(|c| q::record_import(c, s, sha256, source, at, events, appended))
    }
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        self.with(|c| q::put_vectors(c, s, model, vectors))
    }
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        self.with(|c| q::put_passage_vectors(c, model, vectors))
    }
    fn insert_belief(
        &mut self,
        s: &Subject,
        b: &BeliefRow,
        supersedes: Option<i64>,
    ) -> Result<i64> {
        self.lock_subject(s)?;
        self.with(|c| q::insert_belief(c, s, b, supersedes))
    }
    fn record_nightly(
        &mut self,
        s: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()> {
        self.with(|c| q::record_nightly(c, s, day, at, summary))
    }
    fn record_citation_check(
        &mut self,
        s: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()> {
        self.with(|c| q::record_citation_check(c, s, episode_id, at, status, label))
    }
    fn put_working_set(&mut self, s: &Subject, at: DateTime<Utc>, ws: &WorkingSet) -> Result<()> {
        self.with(|c| q::put_cache(c, "working_sets", s, at, ws))
    }
    fn put_self_model(&mut self, s: &Subject, at: DateTime<Utc>, m: &SelfModel) -> Result<()> {
        self.with(|c| q::put_cache(c, "self_models", s, at, m))
    }
    fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        self.with(|c| q::add_api_key(c, tenant, prefix, sha256, admin, at))
    }
    fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        self.with(|c| q::revoke_api_key(c, prefix, at))
    }
    fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        self.with(|c| q::assign_learner(c, learner, tenant, at))
    }
}
