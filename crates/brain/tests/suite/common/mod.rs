//! What the brain's tests share: a fresh store (SQLite in memory, or a fresh
//! PostgreSQL database with `TUTOR_MEMORY_TEST_ENGINE=postgres`), the hashing
//! embedder and the offline extractor (deterministic, no model), imports of
//! history text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use tm_brain::record::{Indexing, Recorded};
use tm_embed::HashEmbedder;
use tm_ingest::extract::OfflineExtractor;
use tm_model::subject::{Subject, SubjectKey};
use tm_store::postgres::PgStore;
use tm_store::postgres::cluster::{self, TestLocation};
use tm_store::sqlite::SqliteStore;
use tm_store::{Reader, Store};

static EMBEDDER: LazyLock<HashEmbedder> = LazyLock::new(HashEmbedder::new);
static EXTRACTOR: LazyLock<OfflineExtractor> = LazyLock::new(OfflineExtractor::default);

/// The hashing embedder and the offline extractor.
pub fn ix() -> Indexing<'static> {
    Indexing {
        embedder: &*EMBEDDER,
        extractor: &*EXTRACTOR,
        max_concepts: tm_brain::record::DEFAULT_MAX_CONCEPTS,
    }
}

/// A fresh store of the engine under test, and what keeps it alive.
pub enum TestStore {
    Sqlite(SqliteStore),
    Postgres(Box<PgStore>, TestLocation),
}

impl std::ops::Deref for TestStore {
    type Target = dyn Store;
    fn deref(&self) -> &(dyn Store + 'static) {
        match self {
            TestStore::Sqlite(s) => s,
            TestStore::Postgres(s, _) => &**s,
        }
    }
}

impl std::ops::DerefMut for TestStore {
    fn deref_mut(&mut self) -> &mut (dyn Store + 'static) {
        match self {
            TestStore::Sqlite(s) => s,
            TestStore::Postgres(s, _) => &mut **s,
        }
    }
}

impl TestStore {
    /// Runs SQL behind the interface's back, as an attacker (or a bug)
    /// would: the database's own refusal is what comes back.
    pub fn raw_execute(&self, sql: &str) -> Result<u64, String> {
        match self {
            TestStore::Sqlite(s) => s
                .raw_connection()
                .execute(sql, [])
                .map(|n| n as u64)
                .map_err(|e| e.to_string()),
            TestStore::Postgres(s, _) => s
                .raw_client()
                .execute(sql, &[])
                .map_err(|e| tm_store::Error::from(e).to_string()),
        }
    }

    /// How many rows the table holds.
    pub fn count_rows(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        match self {
            TestStore::Sqlite(s) => s
                .raw_connection()
                .query_row(&sql, [], |r| r.get(0))
                .unwrap(),
            TestStore::Postgres(s, _) => s.raw_client().query_one(&sql, &[]).unwrap().get(0),
        }
    }
}

/// A fresh store: SQLite in memory, or with `TUTOR_MEMORY_TEST_ENGINE=postgres`
/// a fresh PostgreSQL database.
pub fn memory() -> TestStore {
    if cluster::postgres_requested() {
        let place = cluster::location(":memory:");
        let engine = tm_store::postgres::PgEngine::open(place.as_str()).unwrap();
        let store = engine.connect_pg().unwrap();
        TestStore::Postgres(Box::new(store), place)
    } else {
        TestStore::Sqlite(SqliteStore::open_in_memory().unwrap())
    }
}

/// Imports history text (file paths relative to the working directory).
pub fn import(store: &mut dyn Store, text: &str) -> Result<Recorded, tm_brain::Error> {
    tm_brain::import::import_bytes(
        store,
        &ix(),
        "h.jsonl",
        text.as_bytes(),
        Some(Path::new(".")),
        &mut |_, _, _| {},
    )
}

/// Imports a history file.
pub fn import_file(store: &mut dyn Store, path: &Path) -> Recorded {
    tm_brain::import::import_file(store, &ix(), path, &mut |_, _, _| {}).unwrap()
}

/// The sample subject's history file in `examples/`.
pub fn sample_history() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    ))
    .to_path_buf()
}

/// The stored subject named `key`.
pub fn subject(store: &dyn Reader, key: &str) -> Subject {
    tm_store::require_subject(store, &SubjectKey::parse(key).unwrap()).unwrap()
}

/// A fresh SQLite store in memory whatever the engine under test (property
/// tests of what is built from a store, run many times over).
pub fn sqlite_memory() -> SqliteStore {
    SqliteStore::open_in_memory().unwrap()
}

/// A subject's current beliefs as JSON without anything only its store
/// knows: no row ids, and the checks they rest on by their times — so two
/// stores holding the same history compare equal.
pub fn portable_beliefs(brain: &tm_brain::Brain, s: &Subject) -> Vec<serde_json::Value> {
    let log = brain.episodes(s, 1, 100_000).unwrap();
    let when: std::collections::HashMap<i64, String> =
        log.iter().map(|e| (e.id, e.at.to_rfc3339())).collect();
    let mut out: Vec<serde_json::Value> = brain
        .beliefs(s)
        .unwrap()
        .current
        .iter()
        .map(|b| {
            let mut v = serde_json::to_value(b).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("id");
            o.insert(
                "support".into(),
                serde_json::json!(b.support.iter().map(|i| &when[i]).collect::<Vec<_>>()),
            );
            v
        })
        .collect();
    out.sort_by_key(|v| v["subject_key"].to_string());
    out
}
