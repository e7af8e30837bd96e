//! Where does a request get its database connection? From a small pool of
//! open stores: opening one runs the migration check under a write lock, far
//! too slow to do per request.

use crate::error::ApiResult;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tm_store::Store;

/// Open connections to one database file, reused across requests.
pub struct Pool {
    db: PathBuf,
    idle: Mutex<Vec<Store>>,
    max_idle: usize,
}

impl Pool {
    /// Opens one connection now, so a bad path fails at start-up.
    pub fn open(db: &Path, max_idle: usize) -> tm_store::Result<Pool> {
        let first = Store::open(db)?;
        Ok(Pool {
            db: db.to_path_buf(),
            idle: Mutex::new(vec![first]),
            max_idle: max_idle.max(1),
        })
    }

    pub fn path(&self) -> &Path {
        &self.db
    }

    /// Runs `f` on a connection (blocking: call from `spawn_blocking`). The
    /// connection goes back to the pool afterwards, whatever `f` returned.
    pub fn with<T>(&self, f: impl FnOnce(&mut Store) -> ApiResult<T>) -> ApiResult<T> {
        let taken = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut store = match taken {
            Some(s) => s,
            None => Store::open(&self.db)?,
        };
        let result = f(&mut store);
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < self.max_idle {
            idle.push(store);
        }
        result
    }
}
