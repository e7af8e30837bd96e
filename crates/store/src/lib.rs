//! The embedded store: one SQLite file (WAL, foreign keys, versioned
//! migrations) holding learners, subjects, file versions with their pages, the
//! append-only episode log with its per-subject hash chain, and annotations.
//!
//! Writes happen inside [`Store::write`], one `BEGIN IMMEDIATE` transaction:
//! the write lock is taken before the chain head is read, so concurrent writers
//! (threads or processes) queue instead of forking a chain, and a failure or a
//! killed process leaves nothing half-written.

mod beliefs;
mod chain;
mod nightly;
mod passages;
mod recall;
mod schema;
mod tenants;

use chrono::{DateTime, TimeZone, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tm_model::episodes::{EpisodeFields, Evidence, Hash, Kind, episode_hash, genesis_hash};
use tm_model::subject::SubjectKey;

pub use chain::{ChainReport, ChainState};
pub use nightly::CitationCheck;
pub use recall::CandidateFacts;
pub use tenants::{ApiKey, Claim, KeyOwner};

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot open the database at {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the database at {path} has schema version {found}, newer than this build supports ({supported}); use a newer tutor-memory"
    )]
    SchemaTooNew {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("no subject {0}")]
    UnknownSubject(String),
    #[error("subject {key} has no file named {name:?}")]
    UnknownFile { key: String, name: String },
    #[error(
        "subject {key}: external id {id:?} is already used by episode seq {seq} for a different event"
    )]
    ExternalIdTaken { key: String, id: String, seq: u64 },
    #[error("the stored data is corrupt: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Key(#[from] tm_model::subject::KeyError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The default database file, relative to the working directory.
pub const DEFAULT_DB: &str = "tutor-memory.db";

/// Milliseconds since the epoch, the store's time unit.
pub fn to_ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// The instant a stored millisecond count stands for.
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// A subject as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subject {
    pub id: i64,
    pub key: SubjectKey,
    pub title: String,
    pub language: Option<String>,
    pub timezone: Option<String>,
}

/// An episode to append. Its seq, link and hash are the store's to assign.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEpisode {
    pub kind: Kind,
    pub at: DateTime<Utc>,
    pub salience: f64,
    pub summary: String,
    pub text: String,
    pub concepts: Vec<String>,
    pub evidence: Vec<Evidence>,
    /// Kind-specific facts (a check's topic and verdict, a quiz's score…).
    /// Serialised with sorted keys, so the same facts always hash the same.
    pub data: serde_json::Map<String, serde_json::Value>,
    pub external_id: Option<String>,
    /// Identity of the imported event this episode came from, if any.
    pub import_key: Option<Hash>,
}

/// An episode as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Episode {
    pub id: i64,
    pub seq: u64,
    pub kind: Kind,
    pub at: DateTime<Utc>,
    pub salience: f64,
    pub summary: String,
    pub text: String,
    pub concepts: Vec<String>,
    pub evidence: Vec<Evidence>,
    pub data: serde_json::Map<String, serde_json::Value>,
    pub external_id: Option<String>,
    #[serde(serialize_with = "hex_ser")]
    pub hash: Hash,
}

fn hex_ser<S: serde::Serializer>(h: &Hash, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&hex::encode(h))
}

/// What an append wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub id: i64,
    pub seq: u64,
    pub hash: Hash,
}

/// A stored version of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileVersion {
    pub id: i64,
    pub name: String,
    pub version: i64,
    pub sha256: String,
    pub format: String,
    pub added_at: DateTime<Utc>,
    pub replaced_at: Option<DateTime<Utc>>,
    pub replaced_by: Option<i64>,
    pub removed_at: Option<DateTime<Utc>>,
    pub pages: usize,
}

/// The result of adding a file's bytes under a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAdded {
    /// A new version was stored; `replaced` is the version it replaced.
    New {
        version: FileVersion,
        replaced: Option<i64>,
    },
    /// The current version already has these bytes: nothing was stored.
    Unchanged(FileVersion),
}

impl FileAdded {
    pub fn version(&self) -> &FileVersion {
        match self {
            FileAdded::New { version, .. } | FileAdded::Unchanged(version) => version,
        }
    }
}

/// A facts-learned-later row pointing at an episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub id: i64,
    pub episode_id: i64,
    pub kind: String,
    pub at: DateTime<Utc>,
    pub data: serde_json::Value,
}

/// The store: one SQLite connection.
pub struct Store {
    conn: Connection,
    path: String,
}

impl Store {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| Error::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Store::init(conn, path.display().to_string())
    }

    /// A private in-memory database, for tests and benchmarks.
    pub fn open_in_memory() -> Result<Store> {
        Store::init(Connection::open_in_memory()?, ":memory:".into())
    }

    fn init(conn: Connection, path: String) -> Result<Store> {
        conn.busy_timeout(Duration::from_secs(30))?;
        // WAL: readers never block the writer. synchronous=FULL: a committed
        // write survives power loss, not only a crashed process.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Reads map the file instead of copying pages through read(2).
        conn.pragma_update(None, "mmap_size", 256i64 * 1024 * 1024)?;
        let mut store = Store { conn, path };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let supported = schema::MIGRATIONS.len() as i64;
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if version > supported {
                return Err(Error::SchemaTooNew {
                    path: self.path.clone(),
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
            tx.pragma_update(None, "user_version", version + 1)?;
            tx.commit()?;
        }
    }

    /// The schema version of this database.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Where this store lives (`:memory:` for an in-memory one).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Runs `f` in one immediate transaction: all of it commits, or none.
    pub fn write<T>(&mut self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.write_with(f)
    }

    /// [`Store::write`] for callers with their own error type (one a store
    /// error converts into).
    pub fn write_with<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(Error::from)?;
        let mut w = Tx {
            tx,
            heads: HashMap::new(),
        };
        let out = f(&mut w)?;
        w.tx.commit().map_err(Error::from)?;
        Ok(out)
    }

    /// Raw access for tests that must play the attacker (drop triggers, rewrite
    /// rows). Not for application code.
    #[doc(hidden)]
    pub fn raw_connection(&self) -> &Connection {
        &self.conn
    }

    pub fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        subject_by_key(&self.conn, &key.to_string())
    }

    /// The subject, or [`Error::UnknownSubject`].
    pub fn require_subject(&self, key: &SubjectKey) -> Result<Subject> {
        self.subject(key)?
            .ok_or_else(|| Error::UnknownSubject(key.to_string()))
    }

    pub fn subjects(&self) -> Result<Vec<Subject>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, key, title, language, timezone FROM subjects ORDER BY key")?;
        let rows = stmt.query_map([], subject_row)?;
        rows.map(|r| r.map_err(Error::from).and_then(|s| s))
            .collect()
    }

    /// The subject's episodes in chain order, `from_seq` on, at most `limit`.
    pub fn episodes(&self, subject: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![
                subject.id,
                from_seq as i64,
                limit.min(i64::MAX as usize) as i64
            ],
            episode_row,
        )?;
        rows.map(|r| r?).collect()
    }

    /// The subject's episodes of one kind, in chain order.
    pub fn episodes_of_kind(&self, subject: &Subject, kind: Kind) -> Result<Vec<Episode>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND kind = ?2 ORDER BY seq"
        ))?;
        let rows = stmt.query_map(params![subject.id, kind.as_str()], episode_row)?;
        rows.map(|r| r?).collect()
    }

    /// How many episodes the subject's chain holds.
    pub fn episode_count(&self, subject: &Subject) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM episodes WHERE subject_id = ?1",
            [subject.id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// The episode with this external id, if any.
    pub fn episode_by_external_id(&self, subject: &Subject, id: &str) -> Result<Option<Episode>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND external_id = ?2"
        ))?;
        stmt.query_row(params![subject.id, id], episode_row)
            .optional()?
            .transpose()
    }

    /// Every version of every file of the subject, oldest first.
    pub fn file_versions(&self, subject: &Subject) -> Result<Vec<FileVersion>> {
        file_versions(&self.conn, subject.id, None)
    }

    /// The text of each page of a file version, in page order.
    pub fn pages(&self, version_id: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT text FROM file_pages WHERE version_id = ?1 ORDER BY page")?;
        let rows = stmt.query_map([version_id], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The annotations of an episode, oldest first.
    pub fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, episode_id, kind, at, data FROM annotations WHERE episode_id = ?1 ORDER BY at, id",
        )?;
        let rows = stmt.query_map([episode_id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        rows.map(|r| {
            let (id, episode_id, kind, at, data) = r?;
            let data = serde_json::from_str(&data)
                .map_err(|e| Error::Corrupt(format!("annotation {id}: {e}")))?;
            Ok(Annotation {
                id,
                episode_id,
                kind,
                at: from_ms(at),
                data,
            })
        })
        .collect()
    }

    /// The subject's current concept map (JSON of `tm_model::map::ConceptMap`), if any.
    pub fn latest_map(&self, subject: &Subject) -> Result<Option<String>> {
        latest_map(&self.conn, subject.id)
    }

    /// The id of the subject's newest concept-map snapshot (`None` before the
    /// first): it changes exactly when a new snapshot is saved, so caches of
    /// anything derived from the map key on it.
    pub fn latest_map_id(&self, subject: &Subject) -> Result<Option<i64>> {
        Ok(self
            .conn
            .prepare_cached("SELECT MAX(id) FROM concept_maps WHERE subject_id = ?1")?
            .query_row([subject.id], |r| r.get(0))?)
    }

    /// Whether a history file with this checksum was already imported into the subject.
    pub fn imported(&self, subject: &Subject, sha256: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM imports WHERE subject_id = ?1 AND sha256 = ?2",
                params![subject.id, sha256],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }
}

pub(crate) const EPISODE_COLUMNS: &str =
    "id, seq, kind, at, salience, summary, text, concepts, evidence, data, external_id, hash";

pub(crate) fn episode_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Episode>> {
    let id: i64 = r.get(0)?;
    let kind: String = r.get(2)?;
    let concepts: String = r.get(7)?;
    let evidence: String = r.get(8)?;
    let data: String = r.get(9)?;
    let hash: Vec<u8> = r.get(11)?;
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        Error::Corrupt(format!("episode {id}: {what}: {e}"))
    };
    let build = || -> Result<Episode> {
        Ok(Episode {
            id,
            seq: r.get::<_, i64>(1)? as u64,
            kind: Kind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
            at: from_ms(r.get(3)?),
            salience: r.get(4)?,
            summary: r.get(5)?,
            text: r.get(6)?,
            concepts: serde_json::from_str(&concepts).map_err(|e| corrupt("concepts", &e))?,
            evidence: serde_json::from_str(&evidence).map_err(|e| corrupt("evidence", &e))?,
            data: serde_json::from_str(&data).map_err(|e| corrupt("data", &e))?,
            external_id: r.get(10)?,
            hash: hash
                .as_slice()
                .try_into()
                .map_err(|_| corrupt("hash", &"not 32 bytes"))?,
        })
    };
    Ok(build())
}

pub(crate) fn subject_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Subject>> {
    let key: String = r.get(1)?;
    Ok(SubjectKey::parse(&key)
        .map_err(Error::from)
        .and_then(|key| {
            Ok(Subject {
                id: r.get(0)?,
                key,
                title: r.get(2)?,
                language: r.get(3)?,
                timezone: r.get(4)?,
            })
        }))
}

fn subject_by_key(conn: &Connection, key: &str) -> Result<Option<Subject>> {
    let mut stmt = conn
        .prepare_cached("SELECT id, key, title, language, timezone FROM subjects WHERE key = ?1")?;
    stmt.query_row([key], subject_row).optional()?.transpose()
}

fn latest_map(conn: &Connection, subject_id: i64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT map FROM concept_maps WHERE subject_id = ?1 ORDER BY id DESC LIMIT 1",
        )?
        .query_row([subject_id], |r| r.get(0))
        .optional()?)
}

pub(crate) fn file_versions(
    conn: &Connection,
    subject_id: i64,
    name: Option<&str>,
) -> Result<Vec<FileVersion>> {
    let mut stmt = conn.prepare_cached(
        "SELECT v.id, f.name, v.version, v.sha256, v.format, v.added_at, v.replaced_at, v.replaced_by, v.removed_at,
                (SELECT COUNT(*) FROM file_pages p WHERE p.version_id = v.id)
         FROM file_versions v JOIN files f ON f.id = v.file_id
         WHERE f.subject_id = ?1 AND (?2 IS NULL OR f.name = ?2)
         ORDER BY v.added_at, v.id",
    )?;
    let rows = stmt.query_map(params![subject_id, name], |r| {
        Ok(FileVersion {
            id: r.get(0)?,
            name: r.get(1)?,
            version: r.get(2)?,
            sha256: r.get(3)?,
            format: r.get(4)?,
            added_at: from_ms(r.get(5)?),
            replaced_at: r.get::<_, Option<i64>>(6)?.map(from_ms),
            replaced_by: r.get(7)?,
            removed_at: r.get::<_, Option<i64>>(8)?.map(from_ms),
            pages: r.get::<_, i64>(9)? as usize,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A write transaction. Dropping it without [`Store::write`] returning `Ok`
/// rolls everything back.
pub struct Tx<'c> {
    tx: rusqlite::Transaction<'c>,
    /// Chain heads read (or written) in this transaction: safe to cache, the
    /// write lock is ours until commit.
    heads: HashMap<i64, (u64, Hash)>,
}

impl Tx<'_> {
    /// The subject, created with its learner when absent; an existing subject
    /// is returned as it is.
    pub fn ensure_subject(
        &mut self,
        key: &SubjectKey,
        title: &str,
        language: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<Subject> {
        if let Some(s) = subject_by_key(&self.tx, &key.to_string())? {
            return Ok(s);
        }
        let now = to_ms(at);
        self.tx.execute(
            "INSERT INTO learners (slug, created_at) VALUES (?1, ?2) ON CONFLICT (slug) DO NOTHING",
            params![key.learner, now],
        )?;
        let learner_id: i64 = self.tx.query_row(
            "SELECT id FROM learners WHERE slug = ?1",
            [&key.learner],
            |r| r.get(0),
        )?;
        let title = if title.trim().is_empty() {
            key.subject.as_str()
        } else {
            title
        };
        self.tx.execute(
            "INSERT INTO subjects (learner_id, slug, key, title, language, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![learner_id, key.subject, key.to_string(), title, language, now],
        )?;
        subject_by_key(&self.tx, &key.to_string())?
            .ok_or_else(|| Error::Corrupt(format!("subject {key} vanished after insert")))
    }

    pub fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        subject_by_key(&self.tx, &key.to_string())
    }

    fn head(&mut self, subject: &Subject) -> Result<(u64, Hash)> {
        if let Some(h) = self.heads.get(&subject.id) {
            return Ok(*h);
        }
        let row: Option<(i64, Vec<u8>)> = self
            .tx
            .prepare_cached(
                "SELECT seq, hash FROM episodes WHERE subject_id = ?1 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([subject.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let head = match row {
            None => (0, genesis_hash(&subject.key.to_string())),
            Some((seq, hash)) => (
                seq as u64,
                hash.as_slice().try_into().map_err(|_| {
                    Error::Corrupt(format!("{}: head hash is not 32 bytes", subject.key))
                })?,
            ),
        };
        self.heads.insert(subject.id, head);
        Ok(head)
    }

    /// Appends one episode at the head of the subject's chain.
    pub fn append(&mut self, subject: &Subject, e: &NewEpisode) -> Result<Appended> {
        let (head_seq, prev) = self.head(subject)?;
        let key = subject.key.to_string();
        let seq = head_seq + 1;
        let concepts =
            serde_json::to_string(&e.concepts).map_err(|e| Error::Corrupt(e.to_string()))?;
        let evidence =
            serde_json::to_string(&e.evidence).map_err(|e| Error::Corrupt(e.to_string()))?;
        // serde_json's Map is a BTreeMap here: keys come out sorted.
        let data = serde_json::to_string(&e.data).map_err(|e| Error::Corrupt(e.to_string()))?;
        let fields = EpisodeFields {
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
        };
        let hash = episode_hash(&fields, &prev);
        let inserted = self
            .tx
            .prepare_cached(
                "INSERT INTO episodes (subject_id, seq, kind, at, salience, summary, text, concepts, evidence, data,
                                       external_id, prev_hash, hash, import_key)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                subject.id,
                seq as i64,
                fields.kind,
                fields.at_ms,
                e.salience,
                e.summary,
                e.text,
                concepts,
                evidence,
                data,
                e.external_id,
                prev.as_slice(),
                hash.as_slice(),
                e.import_key.as_ref().map(|k| k.as_slice()),
            ]);
        if let Err(err) = inserted {
            if let (Some(id), rusqlite::Error::SqliteFailure(f, _)) = (&e.external_id, &err)
                && f.code == rusqlite::ErrorCode::ConstraintViolation
                && let Some(seq) = self.seq_of_external_id(subject, id)?
            {
                return Err(Error::ExternalIdTaken {
                    key,
                    id: id.clone(),
                    seq,
                });
            }
            return Err(err.into());
        }
        let id = self.tx.last_insert_rowid();
        recall::index_episode(&self.tx, subject.id, id, &e.text, &e.concepts)?;
        self.heads.insert(subject.id, (seq, hash));
        Ok(Appended { id, seq, hash })
    }

    fn seq_of_external_id(&self, subject: &Subject, id: &str) -> Result<Option<u64>> {
        Ok(self
            .tx
            .query_row(
                "SELECT seq FROM episodes WHERE subject_id = ?1 AND external_id = ?2",
                params![subject.id, id],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .map(|s| s as u64))
    }

    /// Whether an episode with this import key exists in the subject.
    pub fn has_import_key(&self, subject: &Subject, key: &Hash) -> Result<bool> {
        Ok(self
            .tx
            .prepare_cached("SELECT 1 FROM episodes WHERE subject_id = ?1 AND import_key = ?2")?
            .query_row(params![subject.id, key.as_slice()], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Stores `bytes` as the current version of the file `name`. The same bytes
    /// as the current version store nothing; other bytes make a new version and
    /// mark the previous one replaced.
    pub fn add_file(
        &mut self,
        subject: &Subject,
        name: &str,
        bytes: &[u8],
        format: &str,
        pages: &[String],
        at: DateTime<Utc>,
    ) -> Result<FileAdded> {
        let sha = hex::encode(Sha256::digest(bytes));
        let now = to_ms(at);
        self.tx.execute(
            "INSERT INTO files (subject_id, name) VALUES (?1, ?2) ON CONFLICT (subject_id, name) DO NOTHING",
            params![subject.id, name],
        )?;
        let file_id: i64 = self.tx.query_row(
            "SELECT id FROM files WHERE subject_id = ?1 AND name = ?2",
            params![subject.id, name],
            |r| r.get(0),
        )?;
        let current = self.current_version(subject, name)?;
        if let Some(cur) = &current
            && cur.sha256 == sha
            && cur.removed_at.is_none()
        {
            return Ok(FileAdded::Unchanged(cur.clone()));
        }
        let version: i64 = self.tx.query_row(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM file_versions WHERE file_id = ?1",
            [file_id],
            |r| r.get(0),
        )?;
        self.tx.execute(
            "INSERT INTO file_versions (file_id, version, sha256, bytes, format, added_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![file_id, version, sha, bytes, format, now],
        )?;
        let id = self.tx.last_insert_rowid();
        {
            let mut ins = self.tx.prepare_cached(
                "INSERT INTO file_pages (version_id, page, text) VALUES (?1, ?2, ?3)",
            )?;
            for (i, text) in pages.iter().enumerate() {
                ins.execute(params![id, i as i64 + 1, text])?;
            }
        }
        passages::index_version(&self.tx, subject.id, id, pages)?;
        let replaced = match current {
            Some(cur) if cur.removed_at.is_none() => {
                self.tx.execute(
                    "UPDATE file_versions SET replaced_at = ?1, replaced_by = ?2 WHERE id = ?3",
                    params![now, id, cur.id],
                )?;
                Some(cur.id)
            }
            _ => None,
        };
        let version = self
            .current_version(subject, name)?
            .ok_or_else(|| Error::Corrupt(format!("file {name:?} vanished after insert")))?;
        Ok(FileAdded::New { version, replaced })
    }

    /// The newest version of the file, removed or not.
    pub fn current_version(&self, subject: &Subject, name: &str) -> Result<Option<FileVersion>> {
        Ok(file_versions(&self.tx, subject.id, Some(name))?
            .into_iter()
            .max_by_key(|v| v.version))
    }

    /// Marks the file's current version removed.
    pub fn remove_file(
        &mut self,
        subject: &Subject,
        name: &str,
        at: DateTime<Utc>,
    ) -> Result<FileVersion> {
        let cur = self
            .current_version(subject, name)?
            .ok_or_else(|| Error::UnknownFile {
                key: subject.key.to_string(),
                name: name.to_string(),
            })?;
        if cur.removed_at.is_none() {
            self.tx.execute(
                "UPDATE file_versions SET removed_at = ?1 WHERE id = ?2",
                params![to_ms(at), cur.id],
            )?;
        }
        self.current_version(subject, name)?
            .ok_or_else(|| Error::Corrupt(format!("file {name:?} vanished")))
    }

    /// Records a fact learned after the episode was written.
    pub fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64> {
        self.tx.execute(
            "INSERT INTO annotations (episode_id, kind, at, data) VALUES (?1, ?2, ?3, ?4)",
            params![episode_id, kind, to_ms(at), data.to_string()],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Sets the learner's time zone (an IANA name) for the subject.
    pub fn set_timezone(&mut self, subject: &Subject, tz: &str) -> Result<()> {
        self.tx.execute(
            "UPDATE subjects SET timezone = ?1 WHERE id = ?2",
            params![tz, subject.id],
        )?;
        Ok(())
    }

    /// The subject's current concept map, as seen inside this transaction.
    pub fn latest_map(&self, subject: &Subject) -> Result<Option<String>> {
        latest_map(&self.tx, subject.id)
    }

    /// Stores a new snapshot of the subject's concept map.
    pub fn save_map(
        &mut self,
        subject: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map_json: &str,
    ) -> Result<()> {
        self.tx.execute(
            "INSERT INTO concept_maps (subject_id, at, reason, map) VALUES (?1, ?2, ?3, ?4)",
            params![subject.id, to_ms(at), reason, map_json],
        )?;
        Ok(())
    }

    /// Records that a history file was imported.
    pub fn record_import(
        &mut self,
        subject: &Subject,
        sha256: &str,
        source: &str,
        at: DateTime<Utc>,
        events: usize,
        appended: usize,
    ) -> Result<()> {
        self.tx.execute(
            "INSERT INTO imports (subject_id, sha256, source, at, events, appended) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![subject.id, sha256, source, to_ms(at), events as i64, appended as i64],
        )?;
        Ok(())
    }
}
