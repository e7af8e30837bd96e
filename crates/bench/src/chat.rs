//! Answer-level grading's model: any OpenAI-compatible chat endpoint,
//! configured like the generative extractor (`TUTOR_MEMORY_CHAT_URL`,
//! `TUTOR_MEMORY_CHAT_MODEL`, `TUTOR_MEMORY_CHAT_KEY`; see
//! `tm_ingest::extract::LlmConfig::from_env`). Temperature 0; a rerun still
//! measures run-to-run noise, since endpoints are not bit-exact.

use serde::Deserialize;
use tm_ingest::extract::LlmConfig;

use crate::{Error, Result};

/// A chat endpoint.
pub struct Chat {
    config: LlmConfig,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Reply {
    choices: Vec<Choice>,
}
#[derive(Deserialize)]
struct Choice {
    message: Message,
}
#[derive(Deserialize)]
struct Message {
    content: Option<String>,
}

impl Chat {
    /// The endpoint the environment names, if any.
    pub fn from_env() -> Result<Option<Chat>> {
        let Some(config) = LlmConfig::from_env() else {
            return Ok(None);
        };
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(Error::Chat(format!(
                "TUTOR_MEMORY_CHAT_URL {:?} must start with http:// or https://",
                config.base_url
            )));
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Some(Chat { config, agent }))
    }

    /// The model's name, for the report.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    fn endpoint(&self) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/chat/completions")
    }

    /// The model's answer to `question` with `prompt` as the system message.
    pub fn answer(&self, prompt: &str, question: &str) -> Result<String> {
        let body = serde_json::json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": prompt},
                {"role": "user", "content": question},
            ],
        });
        let mut req = self.agent.post(&self.endpoint());
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req
            .send_json(&body)
            .map_err(|e| Error::Chat(format!("request to {} failed: {e}", self.endpoint())))?;
        let status = resp.status();
        let text = resp
            .body_mut()
            .with_config()
            .limit(16 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| Error::Chat(format!("reading the reply: {e}")))?;
        if !status.is_success() {
            return Err(Error::Chat(format!(
                "HTTP {status}: {}",
                text.chars().take(300).collect::<String>()
            )));
        }
        let reply: Reply = serde_json::from_str(&text)
            .map_err(|e| Error::Chat(format!("not a chat completion: {e}")))?;
        reply
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| Error::Chat("the reply has no message content".into()))
    }
}
