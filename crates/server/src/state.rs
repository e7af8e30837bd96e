//! What every request shares: the connection pool, the recaller (embedder and
//! its vector cache), the limits, the chat endpoint, the counters.

use crate::auth::{KEY_CACHE_TTL, Tenant};
use crate::error::{ApiError, ApiResult};
use crate::metrics::Metrics;
use crate::pool::Pool;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tm_brain::recall::Recaller;
use tm_ingest::extract::LlmConfig;
use tm_store::Store;

/// The service's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Hard time cap on a block (SPEC §6: 2.5 s).
    pub block_cap: Duration,
    /// Largest JSON body accepted.
    pub max_json_bytes: usize,
    /// Largest file upload accepted (the whole multipart body).
    pub max_upload_bytes: usize,
    /// The OpenAI-compatible chat endpoint; `None`: turns are dry runs.
    pub chat: Option<LlmConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            block_cap: tm_brain::block::DEFAULT_CAP,
            max_json_bytes: 1024 * 1024,
            max_upload_bytes: 32 * 1024 * 1024,
            chat: None,
        }
    }
}

struct Inner {
    pool: Pool,
    recaller: Arc<Recaller>,
    config: Config,
    metrics: Metrics,
    keys: Mutex<HashMap<String, (Tenant, Instant)>>,
}

/// Cheap to clone: one `Arc`.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl AppState {
    /// Opens the database (migrating it) and keeps up to 32 connections.
    pub fn new(db: &Path, recaller: Arc<Recaller>, config: Config) -> tm_store::Result<AppState> {
        Ok(AppState {
            inner: Arc::new(Inner {
                pool: Pool::open(db, 32)?,
                recaller,
                config,
                metrics: Metrics::default(),
                keys: Mutex::new(HashMap::new()),
            }),
        })
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }
    pub fn recaller(&self) -> &Arc<Recaller> {
        &self.inner.recaller
    }
    pub fn db(&self) -> &Path {
        self.inner.pool.path()
    }

    /// Runs blocking store work on tokio's blocking pool with a pooled
    /// connection. A panic in `f` is a 500, never a crashed server.
    pub async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let state = self.clone();
        tokio::task::spawn_blocking(move || state.inner.pool.with(f))
            .await
            .map_err(|e| ApiError::internal(format!("the work failed: {e}")))?
    }

    /// Runs `f` on a pooled connection on this thread (already blocking).
    pub fn pool_with<T>(&self, f: impl FnOnce(&mut Store) -> ApiResult<T>) -> ApiResult<T> {
        self.inner.pool.with(f)
    }

    pub(crate) fn cached_key(&self, digest: &str) -> Option<Tenant> {
        let keys = self.inner.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.get(digest)
            .filter(|(_, at)| at.elapsed() < KEY_CACHE_TTL)
            .map(|(t, _)| t.clone())
    }

    pub(crate) fn cache_key(&self, digest: String, tenant: Tenant, at: Instant) {
        let mut keys = self.inner.keys.lock().unwrap_or_else(|p| p.into_inner());
        if keys.len() > 10_000 {
            keys.retain(|_, (_, t)| t.elapsed() < KEY_CACHE_TTL);
        }
        keys.insert(digest, (tenant, at));
    }
}
