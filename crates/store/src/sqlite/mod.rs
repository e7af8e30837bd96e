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
//! both a connection and a transaction (`impl<T: Conn> LogRead for T`, one
//! such impl per concern, each in the file named after it).

mod erasure;
mod files;
mod index;
mod knowledge;

mod log;
mod night;
mod schema;
mod subjects;
mod tenants;

use crate::{Engine, ErasureRead, Error, Result, Store, SubjectRead, Tx};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tm_model::episodes::Hash;

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

/// The ids (first column) a query's rows give, through the statement cache.
pub(crate) fn query_ids(
    c: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<i64>> {
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(args, |r| r.get::<_, i64>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A SQLite database file: opening it runs the migrations once; each
/// [`Engine::connect`] then opens a connection of its own.
pub struct SqliteEngine {
    path: PathBuf,
    location: String,
    /// The subjects' full-text postings, shared by every connection.
    lexicon: Arc<index::lexicon::Lexicon>,
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
        if !first.compaction_owed()?.is_empty() {
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
    lexicon: Arc<index::lexicon::Lexicon>,
}

/// Anything that reads through one SQLite connection: a store, a transaction.
pub(crate) trait Conn {
    fn conn(&self) -> &Connection;
    /// The in-memory postings full-text reads keep: none inside a write
    /// transaction, whose own rows the index may still hold pending (its
    /// reads tokenise the subject's rows afresh).
    fn lexicon(&self) -> Option<&index::lexicon::Lexicon> {
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
        // (`index::terms_with_prefix`): a view of the FTS5 index kept by this
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
                index::backfill_index(&tx)?;
            }
            if version + 1 == schema::PASSAGES_VERSION {
                files::backfill(&tx)?;
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
    #[cfg(feature = "testing")]
    pub fn raw_connection(&self) -> &Connection {
        &self.conn
    }
}

impl Conn for SqliteStore {
    fn conn(&self) -> &Connection {
        &self.conn
    }
    fn lexicon(&self) -> Option<&index::lexicon::Lexicon> {
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
        let owed = self.compaction_owed()?;
        erasure::compact_owed(&self.conn, &owed)?;
        Ok(format!(
            "full-text indexes merged, write-ahead log checkpointed and emptied, VACUUM{}",
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
