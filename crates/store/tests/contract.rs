//! The store contract (`tm_store::contract`) on the SQLite engine: a fresh
//! database file per check.

tm_store::store_contract!({
    let dir = tempfile::tempdir().unwrap();
    let engine = tm_store::sqlite::SqliteEngine::open(dir.path().join("contract.db")).unwrap();
    (
        dir,
        std::sync::Arc::new(engine) as std::sync::Arc<dyn tm_store::Engine>,
    )
});
