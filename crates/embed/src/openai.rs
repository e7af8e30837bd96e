//! Embeddings from any OpenAI-compatible HTTP endpoint (`POST {base}/v1/embeddings`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::{Embedder, Error, Result, l2_normalise};

/// Where and how to call the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// Base URL without the `/v1/embeddings` path, e.g. `https://api.openai.com`.
    /// A base that already ends in `/v1` is accepted too.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer <key>` when present.
    pub api_key: Option<String>,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Texts per request.
    pub batch_size: usize,
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
            batch_size: 64,
        }
    }

    /// Reads `TUTOR_MEMORY_EMBED_URL` and `TUTOR_MEMORY_EMBED_MODEL` (both required) and
    /// `TUTOR_MEMORY_EMBED_KEY` (optional).
    pub fn from_env() -> Result<Self> {
        let var = |key: &str| std::env::var(key).ok().filter(|v| !v.trim().is_empty());
        let url = var("TUTOR_MEMORY_EMBED_URL").ok_or_else(|| {
            Error::Config("TUTOR_MEMORY_EMBED_URL is not set (the endpoint's base URL)".into())
        })?;
        let model = var("TUTOR_MEMORY_EMBED_MODEL").ok_or_else(|| {
            Error::Config("TUTOR_MEMORY_EMBED_MODEL is not set (the embedding model id)".into())
        })?;
        let mut cfg = OpenAiConfig::new(url, model);
        cfg.api_key = var("TUTOR_MEMORY_EMBED_KEY");
        Ok(cfg)
    }

    fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        }
    }
}

/// An embedder backed by an OpenAI-compatible endpoint. Its name is `openai:<model>`.
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    url: String,
    name: String,
    agent: ureq::Agent,
    /// Learned from the first response; 0 until then.
    dim: AtomicUsize,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    index: Option<usize>,
}

impl OpenAiEmbedder {
    /// Builds the client without contacting the endpoint; [`Embedder::dim`] is 0 until the
    /// first successful call (use [`OpenAiEmbedder::connect`] to know it up front).
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(Error::Config("the embedding model id is empty".into()));
        }
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(Error::Config(format!(
                "embedding URL {:?} must start with http:// or https://",
                config.base_url
            )));
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.timeout.min(Duration::from_secs(10))))
            // Read error bodies ourselves: the endpoint's message is the useful part.
            .http_status_as_error(false)
            .build()
            .into();
        Ok(OpenAiEmbedder {
            url: config.endpoint(),
            name: format!("openai:{}", config.model),
            config,
            agent,
            dim: AtomicUsize::new(0),
        })
    }

    /// Builds the client and embeds one probe text to learn the dimension.
    pub fn connect(config: OpenAiConfig) -> Result<Self> {
        let e = Self::new(config)?;
        e.request(&["dimension probe"])?;
        Ok(e)
    }

    /// [`OpenAiConfig::from_env`] then [`OpenAiEmbedder::connect`].
    pub fn from_env() -> Result<Self> {
        Self::connect(OpenAiConfig::from_env()?)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let http = |message: String| Error::Http {
            url: self.url.clone(),
            message,
        };
        let malformed = |message: String| Error::Malformed {
            url: self.url.clone(),
            message,
        };
        let body = serde_json::json!({ "model": self.config.model, "input": texts });
        let mut req = self.agent.post(&self.url);
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req.send_json(&body).map_err(|e| http(e.to_string()))?;
        let status = resp.status();
        let text = resp
            .body_mut()
            .with_config()
            .limit(256 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| http(format!("reading the response: {e}")))?;
        if !status.is_success() {
            return Err(http(format!("HTTP {status}: {}", snippet(&text))));
        }
        let parsed: Response = serde_json::from_str(&text)
            .map_err(|e| malformed(format!("{e}; body starts {:?}", snippet(&text))))?;
        if parsed.data.len() != texts.len() {
            return Err(malformed(format!(
                "{} embeddings for {} inputs",
                parsed.data.len(),
                texts.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (pos, item) in parsed.data.into_iter().enumerate() {
            let i = item.index.unwrap_or(pos);
            let slot = out
                .get_mut(i)
                .ok_or_else(|| malformed(format!("index {i} out of range")))?;
            if slot.is_some() {
                return Err(malformed(format!("index {i} appears twice")));
            }
            let mut v = item.embedding;
            if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
                return Err(malformed(format!("embedding {i} is empty or not finite")));
            }
            // The first response fixes the dimension; a later change means a different model.
            let known = self.dim.load(Ordering::Relaxed);
            if known == 0 {
                self.dim.store(v.len(), Ordering::Relaxed);
            } else if v.len() != known {
                return Err(malformed(format!(
                    "embedding {i} has {} dimensions, expected {known}",
                    v.len()
                )));
            }
            l2_normalise(&mut v);
            *slot = Some(v);
        }
        // Every slot is filled: the count matched and no index repeated.
        Ok(out.into_iter().flatten().collect())
    }
}

fn snippet(text: &str) -> String {
    text.chars().take(300).collect()
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim.load(Ordering::Relaxed)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.config.batch_size.max(1)) {
            out.extend(self.request(chunk)?);
        }
        Ok(out)
    }
}
