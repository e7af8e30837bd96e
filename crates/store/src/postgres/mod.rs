//! The shared engine: one PostgreSQL database for many service processes.
//! The same tables, rows, ids and JSON text as the SQLite engine (so a store
//! copied from one to the other verifies with the same chain heads), the
//! same guarantees enforced by triggers, and the same [`crate::Reader`] / [`crate::Tx`]
//! behaviour (the contract suite runs on both).
//!
//! Writes happen inside [`Store::transact`], one READ COMMITTED transaction.
//! A subject's writers queue on a transaction-scoped advisory lock
//! ([`crate::SubjectWrite::lock_subject`], taken by every append before it reads the head),
//! so two processes appending to one subject make one chain; writers of
//! different subjects never wait for each other. The unique `(subject_id,
//! seq)` index is the last line: a writer that skipped the lock fails rather
//! than forks.
//!
//! The reads are written once, in `q.rs`, as functions of a
//! [`postgres::GenericClient`], and serve both a connection and a
//! transaction through [`Pg`].

#[cfg(feature = "testing")]
pub mod cluster;
pub mod copy;
mod db;
mod erasure;
mod files;
mod fts;
mod index;
mod knowledge;
mod log;
mod night;
mod rows;
mod schema;
mod subjects;
mod tenants;

use crate::{Engine, ErasureRead, Error, Result, Store, Tx};
use postgres::{Client, GenericClient, NoTls};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use tm_model::episodes::Hash;

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
        let stmts = db::Prepared::new();
        let found: i64 = client.query_one(subjects::SCHEMA_VERSION, &[])?.get(0);
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
            "VACUUM of {} tables ({}){}",
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
