//! What the brain's tests share: a store in memory, the hashing embedder and
//! the offline extractor (deterministic, no model), imports of history text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use tm_brain::record::{Indexing, Recorded};
use tm_embed::HashEmbedder;
use tm_ingest::extract::OfflineExtractor;
use tm_model::subject::{Subject, SubjectKey};
use tm_store::sqlite::SqliteStore;
use tm_store::{Reader, Store};

static EMBEDDER: LazyLock<HashEmbedder> = LazyLock::new(HashEmbedder::new);
static EXTRACTOR: LazyLock<OfflineExtractor> = LazyLock::new(OfflineExtractor::default);

/// The hashing embedder and the offline extractor.
pub fn ix() -> Indexing<'static> {
    Indexing {
        embedder: &*EMBEDDER,
        extractor: &*EXTRACTOR,
    }
}

/// A fresh in-memory store.
pub fn memory() -> SqliteStore {
    SqliteStore::open_in_memory().unwrap()
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
