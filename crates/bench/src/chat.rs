//! Answer-level grading's model: any OpenAI-compatible chat endpoint,
//! configured like the generative extractor (`TUTOR_MEMORY_CHAT_URL`,
//! `TUTOR_MEMORY_CHAT_MODEL`, `TUTOR_MEMORY_CHAT_KEY`; see
//! `tm_ingest::extract::LlmConfig::from_env`) and asked through the same
//! client. Temperature 0; a rerun still measures run-to-run noise, since
//! endpoints are not bit-exact.

use tm_ingest::extract::{ChatClient, LlmConfig};

use crate::{Error, Result};

/// A chat endpoint.
pub struct Chat {
    client: ChatClient,
}

impl Chat {
    /// The endpoint the environment names, if any.
    pub fn from_env() -> Result<Option<Chat>> {
        let Some(config) = LlmConfig::from_env() else {
            return Ok(None);
        };
        let client = ChatClient::new(config)
            .map_err(|e| Error::Chat(format!("TUTOR_MEMORY_CHAT_URL: {e}")))?;
        Ok(Some(Chat { client }))
    }

    /// The model's name, for the report.
    pub fn model(&self) -> &str {
        &self.client.config().model
    }

    /// The model's answer to `question` with `prompt` as the system message.
    pub fn answer(&self, prompt: &str, question: &str) -> Result<String> {
        let messages = [
            serde_json::json!({"role": "system", "content": prompt}),
            serde_json::json!({"role": "user", "content": question}),
        ];
        self.client
            .complete(&messages, false, 16 * 1024 * 1024)
            .map_err(Error::Chat)
    }
}
