//! The store contract: what every engine must do, checked through the
//! traits alone (no SQL), so one suite serves every engine. An engine's test
//! file runs it with [`store_contract!`](crate::store_contract), giving an
//! expression that makes a fresh engine (and whatever must outlive it):
//!
//! ```ignore
//! tm_store::store_contract!({
//!     let dir = tempfile::tempdir().unwrap();
//!     let engine = tm_store::sqlite::SqliteEngine::open(dir.path().join("c.db")).unwrap();
//!     (dir, std::sync::Arc::new(engine) as std::sync::Arc<dyn tm_store::Engine>)
//! });
//! ```
//!
//! What stays engine-specific (and is tested beside each engine): that the
//! database itself refuses an UPDATE or DELETE of an episode behind the
//! interface's back, migrations of old files, and the full-text ranking's
//! exact scores (only their order is the contract).

mod files;
mod fixtures;
mod index;
mod knowledge;
mod log;
mod night;
mod subjects;
mod tenants;

pub use files::*;
pub use index::*;
pub use knowledge::*;
pub use log::*;
pub use night::*;
pub use subjects::*;
pub use tenants::*;

/// Runs every contract check as its own `#[test]` against the engine `$make`
/// evaluates to: a `(guard, Arc<dyn Engine>)` pair, the guard kept alive for
/// the test (a temporary folder, a throwaway server).
#[macro_export]
macro_rules! store_contract {
    ($make:expr) => {
        $crate::store_contract!(@tests $make;
            appends_form_one_verified_chain,
            a_failed_transaction_leaves_nothing,
            external_ids_are_unique_within_a_subject,
            import_keys_find_their_episode,
            concurrent_writers_never_fork_a_chain,
            subjects_keep_their_time_zone,
            files_are_versioned_and_split_into_passages,
            full_text_concepts_and_pools,
            full_text_ranks_the_newest_hits_past_the_bound,
            vectors_are_stored_per_model,
            annotations_are_appended,
            maps_are_snapshots,
            beliefs_are_superseded_never_changed,
            nightly_bookkeeping,
            tenants_own_learners_and_keys,
            imports_are_recorded
        );
    };
    (@tests $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let (_guard, engine) = $make;
                $crate::contract::$name(&*engine);
            }
        )*
    };
}
