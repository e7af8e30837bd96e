//! Answer-level grading's model: any OpenAI-compatible chat endpoint,
//! configured like the generative extractor (`TUTOR_MEMORY_CHAT_URL`,
//! `TUTOR_MEMORY_CHAT_MODEL`, `TUTOR_MEMORY_CHAT_KEY`; see
//! `tm_ingest::extract::LlmConfig::from_env`) and asked through the same
//! client. Temperature 0; a rerun still measures run-to-run noise, since
//! endpoints are not bit-exact.
//!
//! With a cache folder ([`Chat::with_cache`]) every answer is kept under the
//! SHA-256 of the model's name, the answer's length cap, the prompt and the
//! question, and a rerun
//! asks the model only for what it has not answered yet: a run stopped
//! midway resumes, and a slow model is asked once.

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use tm_ingest::extract::{ChatClient, LlmConfig};

use crate::{Error, Result};

/// The benchmark's cap on an answer's length, in tokens: room for a
/// tutor's answer of a few paragraphs, and a stop for a model that repeats
/// itself until its context is full.
pub const DEFAULT_MAX_TOKENS: u32 = 256;

/// A chat endpoint.
pub struct Chat {
    client: ChatClient,
    cache: Option<PathBuf>,
    /// Answers read from the cache in this run.
    reused: AtomicUsize,
}

impl Chat {
    /// The endpoint the environment names, if any, with answers capped at
    /// `max_tokens` (0: no cap is sent; `TUTOR_MEMORY_CHAT_MAX_TOKENS` is the
    /// service's setting, not the benchmark's).
    pub fn from_env(max_tokens: u32) -> Result<Option<Chat>> {
        LlmConfig::from_env()
            .map(|mut c| {
                c.max_tokens = (max_tokens > 0).then_some(max_tokens);
                Chat::new(c)
            })
            .transpose()
    }

    /// The endpoint `config` names.
    pub fn new(config: LlmConfig) -> Result<Chat> {
        let client = ChatClient::new(config)
            .map_err(|e| Error::Chat(format!("TUTOR_MEMORY_CHAT_URL: {e}")))?;
        Ok(Chat {
            client,
            cache: None,
            reused: AtomicUsize::new(0),
        })
    }

    /// Keeps answers in `dir` (made when missing) and reuses them.
    pub fn with_cache(mut self, dir: PathBuf) -> Result<Chat> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Chat(format!("the answer cache {}: {e}", dir.display())))?;
        self.cache = Some(dir);
        Ok(self)
    }

    /// How many answers came from the cache so far.
    pub fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// The model's name, for the report.
    pub fn model(&self) -> &str {
        &self.client.config().model
    }

    /// The model's answer to `question` with `prompt` as the system message
    /// (the cached one when there is one).
    pub fn answer(&self, prompt: &str, question: &str) -> Result<String> {
        let file = self
            .cache
            .as_ref()
            .map(|dir| dir.join(format!("{}.txt", self.cache_key(prompt, question))));
        if let Some(f) = &file
            && let Ok(kept) = std::fs::read_to_string(f)
        {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return Ok(kept);
        }
        let messages = [
            serde_json::json!({"role": "system", "content": prompt}),
            serde_json::json!({"role": "user", "content": question}),
        ];
        let answer = self
            .client
            .complete(&messages, false, 16 * 1024 * 1024)
            .map_err(Error::Chat)?;
        if let Some(f) = &file {
            // Written whole or not at all: a run killed here leaves no half answer.
            let part = f.with_extension("part");
            std::fs::write(&part, &answer)
                .and_then(|()| std::fs::rename(&part, f))
                .map_err(|e| Error::Chat(format!("keeping the answer in {}: {e}", f.display())))?;
        }
        Ok(answer)
    }

    /// The cache's name for an answer to `question` under `prompt`.
    fn cache_key(&self, prompt: &str, question: &str) -> String {
        let cap = self
            .client
            .config()
            .max_tokens
            .map_or(String::new(), |n| n.to_string());
        cache_key(&[self.model(), &cap, prompt, question])
    }
}

/// The cache's name for an answer: SHA-256 over the model, the answer's
/// length cap, the prompt and the question, each length-prefixed so no two
/// lists share a name.
fn cache_key(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_tells_model_prompt_and_question_apart() {
        let k = cache_key(&["m", "256", "prompt", "q"]);
        assert_eq!(k.len(), 64);
        assert_eq!(k, cache_key(&["m", "256", "prompt", "q"]));
        assert_ne!(k, cache_key(&["m2", "256", "prompt", "q"]));
        assert_ne!(k, cache_key(&["m", "", "prompt", "q"]));
        assert_ne!(k, cache_key(&["m", "256", "promptq", ""]));
        assert_ne!(k, cache_key(&["m", "256", "prompt", "q2"]));
    }

    #[test]
    fn a_cached_answer_is_not_asked_for_again() {
        let (url, asked) = tm_ingest::stand_in::chat_endpoint(|_| "Osmosis.".into());
        let dir = tempfile::tempdir().unwrap();
        let chat = Chat::new(LlmConfig::new(url.clone(), "m"))
            .unwrap()
            .with_cache(dir.path().join("answers"))
            .unwrap();
        assert_eq!(
            chat.answer("prompt", "What is osmosis?").unwrap(),
            "Osmosis."
        );
        assert_eq!(
            chat.answer("prompt", "What is osmosis?").unwrap(),
            "Osmosis."
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once");
        assert_eq!(chat.reused(), 1);
        // A new run over the same folder resumes from it.
        let again = Chat::new(LlmConfig::new(url, "m"))
            .unwrap()
            .with_cache(dir.path().join("answers"))
            .unwrap();
        again.answer("prompt", "What is osmosis?").unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        again.answer("another prompt", "What is osmosis?").unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }
}
