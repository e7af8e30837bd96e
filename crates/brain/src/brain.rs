//! The brain as one shareable value: what a face (the CLI, the HTTP server)
//! holds to ask for a turn's block and to record what the tutor answered.
//!
//! [`Brain`] owns the database path, one [`Recaller`] (with its caches of
//! vectors and derived facts, shared by every turn) and one connection for
//! short lookups and writes. A block is built on its own connection, off the
//! caller's thread, under the hard cap ([`crate::block::build_with_cap`]).
//! `Brain` is `Send + Sync`: a server shares it in an `Arc`. Other modules add
//! their own `impl Brain` blocks.

use crate::block::{Block, BlockRequest, DEFAULT_BUDGET, DEFAULT_CAP, build_with_cap};
use crate::recall::Recaller;
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tm_embed::Embedder;
use tm_model::subject::SubjectKey;
use tm_store::{Store, Subject};

/// One database, one embedder, the turn's defaults.
pub struct Brain {
    db: PathBuf,
    recaller: Arc<Recaller>,
    /// For subject lookups and writes; a block build opens its own.
    store: Mutex<Store>,
    budget: usize,
    cap: Duration,
}

impl Brain {
    /// Opens (creating if needed) the database and prepares recall with `embedder`.
    /// Budget [`DEFAULT_BUDGET`] tokens, cap [`DEFAULT_CAP`].
    pub fn open(db: PathBuf, embedder: Arc<dyn Embedder>) -> Result<Brain> {
        Brain::with_recaller(db, Arc::new(Recaller::new(embedder)))
    }

    /// [`Brain::open`] with a recaller already made (to share its caches).
    pub fn with_recaller(db: PathBuf, recaller: Arc<Recaller>) -> Result<Brain> {
        let store = Store::open(&db)?;
        Ok(Brain {
            db,
            recaller,
            store: Mutex::new(store),
            budget: DEFAULT_BUDGET,
            cap: DEFAULT_CAP,
        })
    }

    /// The token budget used when a turn names none.
    pub fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    /// The hard time cap on building a block.
    pub fn set_cap(&mut self, cap: Duration) {
        self.cap = cap;
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    pub fn cap(&self) -> Duration {
        self.cap
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    pub fn recaller(&self) -> &Arc<Recaller> {
        &self.recaller
    }

    /// The brain's own connection, held for the duration of the guard.
    /// Keep it short: every lookup and write of the brain waits for it, and
    /// calling another `Brain` method while holding it deadlocks (the lock
    /// is not re-entrant): look the subject up first.
    pub fn store(&self) -> Result<MutexGuard<'_, Store>> {
        self.store
            .lock()
            .map_err(|_| Error::Invalid("the brain's store lock is poisoned".into()))
    }

    /// The subject named `learner/subject`: [`Error::BadKey`] when the name
    /// is not a key, [`Error::NotFound`] when no such subject is stored.
    pub fn subject(&self, key: &str) -> Result<Subject> {
        let parsed = SubjectKey::parse(key).map_err(|e| Error::BadKey(format!("{key:?}: {e}")))?;
        self.store()?
            .subject(&parsed)?
            .ok_or_else(|| Error::NotFound(format!("no subject {parsed}")))
    }

    /// The learner's time zone: the subject's, else UTC.
    pub fn time_zone(subject: &Subject) -> Result<Tz> {
        match subject.timezone.as_deref() {
            None => Ok(chrono_tz::UTC),
            Some(name) => name.parse::<Tz>().map_err(|_| {
                Error::Invalid(format!(
                    "subject {} has time zone {name:?}, which is not an IANA name",
                    subject.key
                ))
            }),
        }
    }

    /// The memory block for one turn of `subject` ("learner/subject") at
    /// `at`, within `budget` tokens (default: the brain's), built under the
    /// brain's cap. Past the cap the block comes back `dropped` at once.
    pub fn block(
        &self,
        subject: &str,
        question: &str,
        at: DateTime<Utc>,
        budget: Option<usize>,
    ) -> Result<Block> {
        let subject = self.subject(subject)?;
        let tz = Brain::time_zone(&subject)?;
        let req = BlockRequest::new(question, at, tz, budget.unwrap_or(self.budget));
        build_with_cap(
            self.db.clone(),
            self.recaller.clone(),
            subject,
            req,
            self.cap,
        )
    }

    /// Embeds the subject's episodes that have no vector from this brain's
    /// embedder yet (after recording new ones); returns how many.
    pub fn embed_missing(&self, subject: &str) -> Result<usize> {
        let subject = self.subject(subject)?;
        let mut store = self.store()?;
        self.recaller
            .embed_missing(&mut store, &subject, &mut |_, _| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_brain_can_be_shared_between_threads() {
        assert_send_sync::<Brain>();
    }
}
