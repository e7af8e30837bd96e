//! What every request shares: the brain (the one door into the memory: its
//! store, recaller, caches and time cap), the limits, the chat client, the
//! counters and the cache of verified keys.

use crate::error::{ApiError, ApiResult};
use crate::metrics::Metrics;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tm_brain::Brain;
use tm_ingest::extract::{ChatClient, LlmConfig};

/// How long a verified key is trusted without looking at the store again: a
/// revocation takes effect within this time.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(5);

/// The tenant a request speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub id: i64,
    pub name: String,
    pub admin: bool,
}

/// The service's settings (the block's time cap is the brain's).
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest JSON body accepted.
    pub max_json_bytes: usize,
    /// Largest file upload accepted (the whole multipart body).
    pub max_upload_bytes: usize,
    /// The OpenAI-compatible chat endpoint; `None`: turns are dry runs.
    pub chat: Option<LlmConfig>,
    /// What the connections may hold, and for how long.
    pub limits: crate::conn::Limits,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_json_bytes: 1024 * 1024,
            max_upload_bytes: 32 * 1024 * 1024,
            chat: None,
            limits: crate::conn::Limits::default(),
        }
    }
}

struct Inner {
    brain: Arc<Brain>,
    chat: Option<ChatClient>,
    config: Config,
    metrics: Metrics,
    /// Verified keys and sessions by the SHA-256 of what was presented: an
    /// entry is the same size whatever a client sends.
    keys: Mutex<HashMap<[u8; 32], (Tenant, Instant)>>,
}

/// The most keys and sessions remembered at once; an entry is a digest and
/// a tenant (named by the operator, not by a client).
pub const MAX_CACHED_KEYS: usize = 10_000;

fn cache_digest(presented: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(presented.as_bytes()).into()
}

/// Cheap to clone: one `Arc`.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl AppState {
    /// The service over `brain`; a chat URL that is not http(s) is refused here.
    pub fn new(brain: Arc<Brain>, config: Config) -> Result<AppState, String> {
        let chat = config.chat.clone().map(ChatClient::new).transpose()?;
        Ok(AppState {
            inner: Arc::new(Inner {
                brain,
                chat,
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
    pub fn brain(&self) -> &Arc<Brain> {
        &self.inner.brain
    }
    /// The chat client for turns, when a model is configured.
    pub fn chat(&self) -> Option<&ChatClient> {
        self.inner.chat.as_ref()
    }

    /// Runs brain work (all of it blocking) on tokio's blocking pool. A
    /// panic in `f` is a 500, never a crashed server.
    pub async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Brain) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let state = self.clone();
        tokio::task::spawn_blocking(move || f(&state.inner.brain))
            .await
            .map_err(|e| ApiError::internal(format!("the work failed: {e}")))?
    }

    pub(crate) fn cached_key(&self, presented: &str) -> Option<Tenant> {
        let keys = self.inner.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.get(&cache_digest(presented))
            .filter(|(_, at)| at.elapsed() < KEY_CACHE_TTL)
            .map(|(t, _)| t.clone())
    }

    /// Remembers a verified key or session under the digest of what was
    /// presented. Full, the expired entries go first, then the older half.
    pub(crate) fn cache_key(&self, presented: &str, tenant: Tenant, at: Instant) {
        let mut keys = self.inner.keys.lock().unwrap_or_else(|p| p.into_inner());
        if keys.len() >= MAX_CACHED_KEYS {
            keys.retain(|_, (_, t)| t.elapsed() < KEY_CACHE_TTL);
        }
        if keys.len() >= MAX_CACHED_KEYS {
            let mut ages: Vec<Instant> = keys.values().map(|(_, t)| *t).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            keys.retain(|_, (_, t)| *t > cut);
        }
        keys.insert(cache_digest(presented), (tenant, at));
    }

    /// How many keys and sessions are remembered now.
    pub fn cached_keys(&self) -> usize {
        self.inner
            .keys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }
}
