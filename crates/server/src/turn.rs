//! One chat turn, `POST /v1/subjects/{learner}/{subject}/turns`: build the
//! memory block under the cap from the memory as it stood before this
//! message (so the question never recalls itself), record the learner's
//! message, retrieve the material's passages, assemble the prompt with the
//! model crate's helper, and then either
//! - with a chat endpoint configured: stream the model's answer as
//!   server-sent events and record it with the ids the block recalled; or
//! - without one: answer the assembled prompt as JSON marked `dry_run: true`.
//!
//! SSE events: `block` (the block JSON), `delta` (`{"text"}`, one per chunk
//! of the answer), then `done` (`{"answer_seq", "recalled", "stance"}`) or `error`
//! (`{"error":{"code","message"}}`).

use crate::api::{
    BlockBody, BlockOut, JsonBody, at_or_now, block_request, build_block, owned, record_events,
};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::io::BufRead;
use tm_ingest::extract::LlmConfig;
use tm_model::block::{HostSections, assemble_prompt};
use tm_store::Subject;
use tokio::sync::mpsc;
use utoipa::ToSchema;

/// The system prompt used when the host sends none.
pub const DEFAULT_SYSTEM: &str = "You are a patient tutor. Answer the student's question from their material and from your memory of your work with them. Say when you rely on a memory, and never claim one that is not listed.";

/// The longest answer accepted from the model, in bytes.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnRequest {
    /// The learner's message.
    pub text: String,
    /// When it was said (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
    /// External id for the learner's message episode.
    #[serde(default)]
    pub id: Option<String>,
    /// Token budget of the block.
    #[serde(default)]
    pub budget: Option<usize>,
    /// The learner's time zone (default: the subject's).
    #[serde(default)]
    pub tz: Option<String>,
    /// The host's system prompt (default: a short tutor prompt).
    #[serde(default)]
    pub system: Option<String>,
    /// A legacy "assessment results" section of the host's prompt.
    #[serde(default)]
    pub assessment: Option<String>,
}

/// A dry run: the prompt that would be sent, clearly marked.
#[derive(Debug, Serialize, ToSchema)]
pub struct DryRun {
    /// Always true: no model was called.
    pub dry_run: bool,
    /// The assembled prompt (system message).
    pub prompt: String,
    /// The chat messages that would be sent.
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<serde_json::Value>,
    pub block: BlockOut,
    /// Material passages that went into the prompt, as quoted there.
    pub passages: Vec<String>,
    /// The learner message's seq in the chain.
    pub learner_seq: u64,
}

/// The turn's prompt and the facts to record with its answer.
struct Prepared {
    subject: Subject,
    prompt: String,
    passages: Vec<tm_model::passages::Passage>,
    started: std::time::Instant,
    block: tm_brain::block::Block,
    learner_seq: u64,
    at: DateTime<Utc>,
}

async fn prepare(
    state: &AppState,
    tenant: Tenant,
    learner: String,
    subject: String,
    body: &TurnRequest,
) -> ApiResult<Prepared> {
    let started = std::time::Instant::now();
    if body.text.trim().is_empty() {
        return Err(ApiError::invalid("`text` is empty"));
    }
    let at = at_or_now(body.at.as_deref())?;
    let s = state
        .blocking(move |store| owned(store, &tenant, &learner, &subject))
        .await?;
    let block_body = BlockBody {
        question: body.text.clone(),
        at: Some(at.to_rfc3339()),
        budget: body.budget,
        tz: body.tz.clone(),
    };
    let req = block_request(&block_body, &s)?;
    let block = build_block(state, s.clone(), req).await?;
    let mut event =
        serde_json::json!({"type": "learner", "at": at.to_rfc3339(), "text": body.text});
    if let Some(id) = &body.id {
        event["id"] = id.clone().into();
    }
    let st = state.clone();
    let (subj, question) = (s.clone(), body.text.clone());
    let (learner_seq, passages) = state
        .blocking(move |store| {
            let r = record_events(
                &st,
                store,
                &subj,
                &[event],
                std::path::Path::new("/nonexistent"),
            )?;
            Ok((
                r.head_seq,
                crate::grounding::passages(&st, store, &subj, &question)?,
            ))
        })
        .await?;
    let prompt = assemble_prompt(HostSections {
        system: body
            .system
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM.to_string()),
        memory_slot: (!block.dropped).then(|| block.block.clone()),
        passages: if passages.is_empty() {
            String::new()
        } else {
            tm_brain::passages::render(&passages)
        },
        assessment: body.assessment.clone(),
    });
    Ok(Prepared {
        started,
        subject: s,
        prompt,
        passages,
        block,
        learner_seq,
        at,
    })
}

fn messages(prompt: &str, text: &str) -> Vec<serde_json::Value> {
    vec![
        serde_json::json!({"role": "system", "content": prompt}),
        serde_json::json!({"role": "user", "content": text}),
    ]
}

/// Take a chat turn: the block, the prompt, and the model's answer streamed
/// as server-sent events (or, without a model, the prompt as a dry run).
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/turns", tag = "turns",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body = TurnRequest,
    responses(
        (status = 200, description = "with a model: `text/event-stream` (events block, delta, done | error); without: the dry run", body = DryRun),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn turn(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<TurnRequest>,
) -> ApiResult<Response> {
    let p = prepare(&state, tenant, learner, subject, &body).await?;
    let Some(chat) = state.config().chat.clone() else {
        return Ok(axum::Json(DryRun {
            dry_run: true,
            messages: messages(&p.prompt, &body.text),
            prompt: p.prompt,
            block: BlockOut::from(&p.block),
            passages: p.passages.iter().map(|x| x.quoted()).collect(),
            learner_seq: p.learner_seq,
        })
        .into_response());
    };
    let (tx, rx) = mpsc::channel::<Event>(64);
    let block_event = Event::default()
        .event("block")
        .json_data(BlockOut::from(&p.block))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    // The channel has room: the first send cannot wait.
    let _ = tx.try_send(block_event);
    let msgs = messages(&p.prompt, &body.text);
    let st = state.clone();
    // The model call and the write of its answer run on the blocking pool,
    // to completion even when the client goes away, so an answer that was
    // streamed is also recorded.
    tokio::task::spawn_blocking(move || stream_answer(&st, &chat, &msgs, &p, &tx));
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    let stream = futures_util::StreamExt::map(stream, Ok::<Event, Infallible>);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn send(tx: &mpsc::Sender<Event>, event: Event) {
    // A closed channel means the client left; the work still completes.
    let _ = tx.blocking_send(event);
}

fn error_event(code: &str, message: &str) -> Event {
    Event::default()
        .event("error")
        .json_data(serde_json::json!({"error": {"code": code, "message": message}}))
        .unwrap_or_default()
}

fn endpoint(config: &LlmConfig) -> String {
    let base = config.base_url.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/v1/chat/completions")
}

/// Streams the model's answer into `tx`, then records it.
fn stream_answer(
    state: &AppState,
    chat: &LlmConfig,
    msgs: &[serde_json::Value],
    p: &Prepared,
    tx: &mpsc::Sender<Event>,
) {
    let answer = match call_model(chat, msgs, &mut |delta| {
        send(
            tx,
            Event::default()
                .event("delta")
                .json_data(serde_json::json!({"text": delta}))
                .unwrap_or_default(),
        )
    }) {
        Ok(a) => a,
        Err(message) => {
            send(tx, error_event("model_failed", &message));
            return;
        }
    };
    if answer.trim().is_empty() {
        send(
            tx,
            error_event("model_failed", "the model answered nothing"),
        );
        return;
    }
    let recalled: Vec<i64> = p.block.recalled.iter().map(|r| r.id).collect();
    // The answer is dated by the turn's clock: the turn's instant plus the
    // time the model took (at least a millisecond), so a replayed turn keeps
    // its answer beside its question and the log stays in time order.
    let took = chrono::Duration::from_std(p.started.elapsed())
        .unwrap_or(chrono::Duration::zero())
        .max(chrono::Duration::milliseconds(1));
    // Stored times are whole milliseconds.
    let at = p.at + took;
    let at = DateTime::from_timestamp_millis(at.timestamp_millis()).unwrap_or(at);
    let subject = p.subject.clone();
    let st = state.clone();
    let recorded = state.pool_with(move |store| {
        // Through the brain: the answer episode (citing the file pages its
        // traced passages came from), its recalled ids and its grounding.
        let done = tm_brain::grounding::answer(
            store,
            &subject,
            &answer,
            at,
            &recalled,
            &crate::grounding::lines(&p.passages),
        )?;
        st.recaller()
            .embed_missing(store, &subject, &mut |_, _| {})?;
        let seq = store
            .episodes_with_ids(&[done.episode_id])?
            .first()
            .map(|e| e.seq)
            .ok_or_else(|| ApiError::internal("the recorded answer is missing"))?;
        Ok((seq, done.grounding.stance.as_str()))
    });
    match recorded {
        Ok((seq, stance)) => send(
            tx,
            Event::default()
                .event("done")
                .json_data(serde_json::json!({
                    "answer_seq": seq,
                    "recalled": p.block.recalled.iter().map(|r| r.id).collect::<Vec<_>>(),
                    "stance": stance,
                }))
                .unwrap_or_default(),
        ),
        Err(e) => send(tx, error_event(e.code, &e.message)),
    }
}

/// Calls an OpenAI-compatible chat endpoint with `stream: true` and hands
/// each content delta to `on_delta`; returns the whole answer.
pub fn call_model(
    chat: &LlmConfig,
    msgs: &[serde_json::Value],
    on_delta: &mut dyn FnMut(&str),
) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(chat.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let body = serde_json::json!({"model": chat.model, "stream": true, "messages": msgs});
    let url = endpoint(chat);
    let mut req = agent.post(&url);
    if let Some(key) = &chat.api_key {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let mut resp = req
        .send_json(&body)
        .map_err(|e| format!("request to {url} failed: {e}"))?;
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
    for line in reader.lines() {
        let line = line.map_err(|e| format!("reading the stream: {e}"))?;
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            break;
        }
        let chunk: serde_json::Value = serde_json::from_str(data)
            .map_err(|e| format!("the stream carried something that is not JSON: {e}"))?;
        if let Some(delta) = chunk["choices"][0]["delta"]["content"].as_str()
            && !delta.is_empty()
        {
            if answer.len() + delta.len() > MAX_ANSWER_BYTES {
                return Err("the answer is longer than the service accepts".into());
            }
            answer.push_str(delta);
            on_delta(delta);
        }
    }
    Ok(answer)
}
