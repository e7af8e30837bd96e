//! The generative pass: one call per file to any OpenAI-compatible chat
//! endpoint, asking for JSON that follows a schema; the answer is validated,
//! a malformed one is retried once with the problem named, and pages are
//! never taken on trust: a page the file does not have, or on which the
//! concept's name does not appear, is dropped, and so is a concept whose
//! name the file never uses. An answer refused twice is an error of
//! [`LlmExtractor::extract`]; the store asks through
//! [`ConceptExtractor::extract_noting`], which then keeps the offline
//! extractor's list and says so.

use super::breaker::Breaker;
use super::{ConceptExtractor, Error, MAX_CONCEPTS, OfflineExtractor, Result};
use serde::Deserialize;
use std::time::{Duration, Instant};
use tm_model::lang::canonical_key;
use tm_model::map::{ExtractedConcept, fit_definition, validate_definition, validate_name};

/// Where the model is and how to ask it.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Base URL, e.g. `http://127.0.0.1:8000` (with or without a trailing `/v1`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The whole call, the streamed answer included: a model stalled
    /// mid-answer is given up on here.
    pub timeout: Duration,
    /// Until a streamed answer begins (the response's head). A whole
    /// answer ([`ChatClient::complete`]) has only `timeout`: its head comes
    /// when it is all written.
    pub first_byte_timeout: Duration,
    /// Tries again after a refused connection, a timeout before the answer
    /// began, or 429 / 500 / 502 / 503 / 504, within `timeout`.
    pub retries: u32,
    /// At most this many tokens in an answer (sent as `max_tokens`); `None`
    /// leaves the length to the endpoint. A small model can repeat itself
    /// until its context is full, so a cap keeps a stuck answer short.
    pub max_tokens: Option<u32>,
    /// At most this many characters of the file go into the prompt.
    pub max_chars: usize,
    pub max_concepts: usize,
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            first_byte_timeout: Duration::from_secs(60),
            retries: 2,
            max_tokens: None,
            max_chars: 60_000,
            max_concepts: MAX_CONCEPTS,
        }
    }

    /// From `TUTOR_MEMORY_CHAT_URL`, `TUTOR_MEMORY_CHAT_MODEL`, `TUTOR_MEMORY_CHAT_KEY`,
    /// `TUTOR_MEMORY_CHAT_TIMEOUT` (the whole call, in seconds; 120 when
    /// unset or not a positive number) and `TUTOR_MEMORY_CHAT_MAX_TOKENS`
    /// (an answer's length; unset or not a positive whole number leaves it
    /// to the endpoint).
    pub fn from_env() -> Option<Self> {
        let url = std::env::var("TUTOR_MEMORY_CHAT_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())?;
        let model = std::env::var("TUTOR_MEMORY_CHAT_MODEL").unwrap_or_else(|_| "default".into());
        let mut c = LlmConfig::new(url, model);
        c.api_key = std::env::var("TUTOR_MEMORY_CHAT_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        if let Some(secs) = std::env::var("TUTOR_MEMORY_CHAT_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
        {
            c.timeout = Duration::from_secs_f64(secs);
        }
        c.max_tokens = std::env::var("TUTOR_MEMORY_CHAT_MAX_TOKENS")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|&n| n > 0);
        Some(c)
    }

    fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/chat/completions")
    }
}

/// One OpenAI-compatible chat endpoint: the extractor asks it for concepts
/// and the benchmark for answers ([`ChatClient::complete`], temperature 0),
/// a chat turn for the tutor's answer ([`ChatClient::stream`]).
///
/// Every call is bounded ([`LlmConfig::timeout`] for the whole of it,
/// [`LlmConfig::first_byte_timeout`] until a streamed answer begins, 5 s to
/// connect), retried while nothing of the answer has arrived
/// ([`LlmConfig::retries`], backing off 250 ms, 500 ms, …), and goes through
/// a circuit breaker ([`Breaker`]): after five failed calls in a row the
/// endpoint rests for 30 s and calls fail at once.
pub struct ChatClient {
    config: LlmConfig,
    agent: ureq::Agent,
    breaker: Breaker,
}

impl ChatClient {
    /// A client for `config`; the URL must be http:// or https://.
    pub fn new(config: LlmConfig) -> std::result::Result<Self, String> {
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(format!(
                "chat URL {:?} must start with http:// or https://",
                config.base_url
            ));
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.timeout.min(Duration::from_secs(5))))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(ChatClient {
            config,
            agent,
            breaker: Breaker::default(),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Sends `body`; `first_byte` bounds the wait for the response's head (a
    /// streamed answer's head comes with its first piece; a whole answer's
    /// only when it is all written, so that wait is the call's own).
    fn post(
        &self,
        body: &serde_json::Value,
        first_byte: Option<Duration>,
    ) -> std::result::Result<ureq::http::Response<ureq::Body>, String> {
        let mut req = self.agent.post(&self.config.endpoint());
        if let Some(t) = first_byte {
            req = req.config().timeout_recv_response(Some(t)).build();
        }
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        req.send_json(body)
            .map_err(|e| format!("request to {} failed: {e}", self.config.endpoint()))
    }

    /// Sends `body` through the breaker, with retries while no answer has
    /// begun, and hands the response to `read`; the outcome (the request's
    /// and `read`'s) is what the breaker counts.
    fn call<T>(
        &self,
        body: &serde_json::Value,
        first_byte: Option<Duration>,
        read: impl FnOnce(ureq::http::Response<ureq::Body>) -> std::result::Result<T, String>,
    ) -> std::result::Result<T, String> {
        if let Err(wait) = self.breaker.admit(Instant::now()) {
            return Err(format!(
                "the model at {} is resting after {} failed calls in a row; the next try is in {} s",
                self.config.endpoint(),
                Breaker::THRESHOLD,
                wait.as_secs().max(1)
            ));
        }
        let deadline = Instant::now() + self.config.timeout;
        let mut attempt = 0;
        let outcome = loop {
            let sent = self.post(body, first_byte);
            let retryable = match &sent {
                Err(_) => true,
                Ok(resp) => matches!(resp.status().as_u16(), 429 | 500 | 502 | 503 | 504),
            };
            let backoff = Duration::from_millis(250 << attempt.min(4));
            if retryable && attempt < self.config.retries && Instant::now() + backoff < deadline {
                attempt += 1;
                std::thread::sleep(backoff);
                continue;
            }
            break sent.and_then(read);
        };
        self.breaker.record(outcome.is_ok(), Instant::now());
        outcome
    }

    /// A request for `messages`: the model, and the answer's cap when one is set.
    fn body(&self, messages: &[serde_json::Value]) -> serde_json::Value {
        let mut body = serde_json::json!({"model": self.config.model, "messages": messages});
        if let Some(n) = self.config.max_tokens {
            body["max_tokens"] = n.into();
        }
        body
    }

    /// The first choice's message content for `messages`, at temperature 0;
    /// `json` asks for a JSON object; a reply longer than `limit` bytes is refused.
    pub fn complete(
        &self,
        messages: &[serde_json::Value],
        json: bool,
        limit: u64,
    ) -> std::result::Result<String, String> {
        let mut body = self.body(messages);
        body["temperature"] = 0.into();
        if json {
            body["response_format"] = serde_json::json!({"type": "json_object"});
        }
        self.call(&body, None, |mut resp| {
            let status = resp.status();
            let text = resp
                .body_mut()
                .with_config()
                .limit(limit)
                .read_to_string()
                .map_err(|e| format!("reading the response: {e}"))?;
            if !status.is_success() {
                return Err(format!(
                    "HTTP {status}: {}",
                    text.chars().take(300).collect::<String>()
                ));
            }
            let parsed: ChatResponse = serde_json::from_str(&text)
                .map_err(|e| format!("the endpoint's reply is not a chat completion: {e}"))?;
            parsed
                .choices
                .into_iter()
                .next()
                .and_then(|c| c.message.content)
                .ok_or_else(|| "the reply has no message content".to_string())
        })
    }

    /// The answer to `messages`, streamed (`stream: true`, server-sent
    /// events): each content delta goes to `on_delta` as it arrives; returns
    /// the whole answer. An answer longer than `limit` bytes is refused.
    /// The model's own sampling is left as it is: this is the tutor's answer,
    /// not a reading of the material.
    pub fn stream(
        &self,
        messages: &[serde_json::Value],
        limit: usize,
        on_delta: &mut dyn FnMut(&str),
    ) -> std::result::Result<String, String> {
        use std::io::BufRead;
        let mut body = self.body(messages);
        body["stream"] = true.into();
        let first_byte = self.config.timeout.min(self.config.first_byte_timeout);
        self.call(&body, Some(first_byte), |mut resp| {
            let status = resp.status();
            if !status.is_success() {
                let text = resp
                    .body_mut()
                    .with_config()
                    .limit(64 * 1024)
                    .read_to_string()
                    .unwrap_or_default();
                return Err(format!(
                    "the chat endpoint answered HTTP {status}: {}",
                    text.chars().take(300).collect::<String>()
                ));
            }
            let reader = std::io::BufReader::new(resp.into_body().into_reader());
            let mut answer = String::new();
            // An answer is whole when the stream says so: `[DONE]`, or a
            // chunk with a finish reason. A stream that just stops (the
            // model's server went away) is an error, never a shorter answer.
            let mut finished = false;
            for line in reader.lines() {
                let line = line.map_err(|e| format!("reading the stream: {e}"))?;
                let Some(data) = line.strip_prefix("data:") else {
                    continue;
                };
                let data = data.trim();
                if data == "[DONE]" {
                    finished = true;
                    break;
                }
                let chunk: serde_json::Value = serde_json::from_str(data)
                    .map_err(|e| format!("the stream carried something that is not JSON: {e}"))?;
                if let Some(delta) = chunk["choices"][0]["delta"]["content"].as_str()
                    && !delta.is_empty()
                {
                    if answer.len() + delta.len() > limit {
                        return Err("the answer is longer than the service accepts".into());
                    }
                    answer.push_str(delta);
                    on_delta(delta);
                }
                if chunk["choices"][0]["finish_reason"].is_string() {
                    finished = true;
                }
            }
            if !finished {
                return Err("the model's stream ended before the answer was finished".into());
            }
            Ok(answer)
        })
    }
}

/// Extracts concepts with a generative model.
pub struct LlmExtractor {
    config: LlmConfig,
    client: ChatClient,
}

#[derive(Deserialize)]
struct ChatResponse {
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

#[derive(Deserialize)]
struct Answer {
    concepts: Vec<AnswerConcept>,
}

#[derive(Deserialize)]
struct AnswerConcept {
    name: String,
    #[serde(default)]
    gist: String,
    #[serde(default)]
    definition: String,
    #[serde(default)]
    builds_on: Vec<String>,
    #[serde(default)]
    assumed: Vec<String>,
    #[serde(default)]
    pages: Vec<u32>,
}

const INSTRUCTIONS: &str = "You read one file of a learner's course material and list the concepts it \
explains. Answer with JSON only, exactly of this shape: {\"concepts\": [{\"name\": str, \"gist\": str \
(one sentence), \"definition\": str (short), \"builds_on\": [names from your own list that this concept \
needs first], \"assumed\": [prerequisites the file assumes but never explains], \"pages\": [page numbers \
where the file explains it]}]}. Names are short noun phrases of the subject, never section titles such as \
Introduction, Summary or Review questions. Use only page numbers marked in the file. At most {max} \
concepts, the most important first.";

impl LlmExtractor {
    pub fn new(config: LlmConfig) -> Result<Self> {
        let client = ChatClient::new(config.clone()).map_err(|reason| Error::Invalid {
            file: String::new(),
            reason,
        })?;
        Ok(LlmExtractor { config, client })
    }

    fn prompt(&self, file_name: &str, pages: &[String]) -> String {
        let mut text = format!("File: {file_name}\n");
        for (i, p) in pages.iter().enumerate() {
            if text.len() >= self.config.max_chars {
                break;
            }
            text.push_str(&format!("\n=== page {} ===\n", i + 1));
            let room = self.config.max_chars.saturating_sub(text.len());
            let cut: String = p.chars().take(room).collect();
            text.push_str(&cut);
        }
        text
    }

    fn ask(&self, messages: &[serde_json::Value]) -> std::result::Result<String, String> {
        self.client.complete(messages, true, 64 * 1024 * 1024)
    }
}

/// Parses and validates a model's answer against the file it read.
pub fn validate_answer(
    content: &str,
    pages: &[String],
    max: usize,
) -> std::result::Result<Vec<ExtractedConcept>, String> {
    let json = strip_fences(content);
    let answer: Answer =
        serde_json::from_str(json).map_err(|e| format!("not the JSON asked for: {e}"))?;
    let page_keys: Vec<String> = pages
        .iter()
        .map(|p| format!(" {} ", canonical_key(p)))
        .collect();
    let mut out: Vec<ExtractedConcept> = Vec::new();
    let given = answer.concepts.len();
    let mut unnamed = 0;
    for c in answer.concepts {
        let name = c.name.trim().to_string();
        if validate_name(&name).is_err()
            || out
                .iter()
                .any(|o| canonical_key(&o.name) == canonical_key(&name))
        {
            continue;
        }
        let key = format!(" {} ", canonical_key(&name));
        // Pages: only those the file has and on which the name appears; when
        // the model named none that hold, the pages where the name appears.
        let mut found: Vec<u32> = c
            .pages
            .iter()
            .copied()
            .filter(|&p| {
                p >= 1 && (p as usize) <= pages.len() && page_keys[p as usize - 1].contains(&key)
            })
            .collect();
        if found.is_empty() {
            found = (1..=pages.len() as u32)
                .filter(|&p| page_keys[p as usize - 1].contains(&key))
                .collect();
        }
        if found.is_empty() {
            // Named nowhere in the file: not a concept this file explains.
            unnamed += 1;
            continue;
        }
        found.sort_unstable();
        found.dedup();
        // The same whole-text rule as the offline extractor: a model's gist or
        // definition that runs long or stops on a comma is fitted, never kept cut.
        let gist = fit_definition(c.gist.trim());
        let mut definition = fit_definition(c.definition.trim());
        if validate_definition(&definition).is_err() {
            definition.clone_from(&gist);
        }
        out.push(ExtractedConcept {
            name,
            gist,
            definition,
            builds_on: c.builds_on,
            assumed: c.assumed,
            pages: found,
            aliases: Vec::new(),
        });
        if out.len() >= max {
            break;
        }
    }
    if out.is_empty() && given > 0 {
        return Err(format!(
            "none of its {given} concepts is a name the file uses ({unnamed} not found in the file, the rest not names)"
        ));
    }
    // builds_on may only name concepts of the same list.
    let names: Vec<String> = out.iter().map(|c| canonical_key(&c.name)).collect();
    for c in &mut out {
        let own = canonical_key(&c.name);
        c.builds_on.retain(|b| {
            let k = canonical_key(b);
            k != own && names.contains(&k)
        });
    }
    Ok(out)
}

fn strip_fences(s: &str) -> &str {
    let t = s.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .unwrap_or(t);
    t.strip_suffix("```").unwrap_or(t).trim()
}

/// Why the generative pass gave no list.
enum Failure {
    /// The endpoint failed (unreachable, an error status, a timeout).
    Endpoint(String),
    /// The model answered, twice, with nothing the validator keeps.
    Refused(String),
}

impl LlmExtractor {
    /// The model's validated list: asked once, and once more naming what
    /// was wrong.
    fn extract_model(
        &self,
        file_name: &str,
        pages: &[String],
    ) -> std::result::Result<Vec<ExtractedConcept>, Failure> {
        let system = INSTRUCTIONS.replace("{max}", &self.config.max_concepts.to_string());
        let mut messages = vec![
            serde_json::json!({"role": "system", "content": system}),
            serde_json::json!({"role": "user", "content": self.prompt(file_name, pages)}),
        ];
        let first = self.ask(&messages).map_err(Failure::Endpoint)?;
        match validate_answer(&first, pages, self.config.max_concepts) {
            Ok(c) => Ok(c),
            Err(problem) => {
                messages.push(serde_json::json!({"role": "assistant", "content": first}));
                messages.push(serde_json::json!({"role": "user", "content": format!(
                    "That answer could not be used ({problem}). Answer again with JSON only, in the shape asked for."
                )}));
                let second = self.ask(&messages).map_err(Failure::Endpoint)?;
                validate_answer(&second, pages, self.config.max_concepts).map_err(|p| {
                    Failure::Refused(format!("the model's answer was invalid twice; last: {p}"))
                })
            }
        }
    }
}

impl ConceptExtractor for LlmExtractor {
    /// The model's list, or an error (the endpoint failed, or the model's
    /// answer was refused twice).
    fn extract(&self, file_name: &str, pages: &[String]) -> Result<Vec<ExtractedConcept>> {
        self.extract_model(file_name, pages)
            .map_err(|f| Error::Invalid {
                file: file_name.to_string(),
                reason: match f {
                    Failure::Endpoint(r) | Failure::Refused(r) => r,
                },
            })
    }

    /// The model's list; when the model answered but the validator refused
    /// it twice (a small model's output often is unusable), the offline
    /// extractor's list, with a warning. An endpoint that fails is still an
    /// error: the file is not stored, and the caller can try again.
    fn extract_noting(
        &self,
        file_name: &str,
        pages: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<Vec<ExtractedConcept>> {
        match self.extract_model(file_name, pages) {
            Ok(c) => Ok(c),
            Err(Failure::Endpoint(reason)) => Err(Error::Invalid {
                file: file_name.to_string(),
                reason,
            }),
            Err(Failure::Refused(reason)) => {
                let offline = OfflineExtractor {
                    max_concepts: self.config.max_concepts,
                }
                .extract(file_name, pages)?;
                let n = offline.len();
                warnings.push(format!(
                    "{file_name}: the model's concept list was refused ({reason}); the offline extractor's {n} concept{} used instead",
                    if n == 1 { " was" } else { "s were" }
                ));
                Ok(offline)
            }
        }
    }
}
