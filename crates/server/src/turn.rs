//! One chat turn over HTTP, `POST /v1/subjects/{learner}/{subject}/turns`.
//! The turn itself is the brain's (`tm_brain::turn`: the block under the cap
//! from the memory before this message, the message recorded, passages, the
//! prompt, the model's answer recorded with its grounding); this module only
//! carries it:
//! - with a chat endpoint configured: stream the model's answer as
//!   server-sent events and record it with the ids the block recalled; or
//! - without one: answer the assembled prompt as JSON marked `dry_run: true`.
//!
//! SSE events: `block` (the block JSON), `delta` (`{"text"}`, one per chunk
//! of the answer), then `done` (`{"answer_seq", "recalled", "stance"}`) or `error`
//! (`{"error":{"code","message"}}`).

use crate::api::{JsonBody, owned, written_at};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use tm_brain::block::Block;
use tm_brain::turn::{Turn, TurnRequest as BrainTurn};
use tokio::sync::mpsc;
use utoipa::ToSchema;

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
    pub block: Block,
    /// Material passages that went into the prompt, as quoted there.
    pub passages: Vec<String>,
    /// The learner message's seq in the chain.
    pub learner_seq: u64,
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
    let req = BrainTurn {
        at: written_at(body.at.as_deref())?,
        tz: body
            .tz
            .as_deref()
            .map(tm_model::subject::parse_tz)
            .transpose()
            .map_err(|e| ApiError::invalid(e.to_string()))?,
        text: body.text,
        id: body.id,
        budget: body.budget,
        system: body.system,
        assessment: body.assessment,
    };
    let st = state.clone();
    let turn: Turn = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let t = brain.turn(&s, req)?;
            st.metrics().block(t.block.dropped);
            Ok(t)
        })
        .await?;
    if state.chat().is_none() {
        return Ok(axum::Json(DryRun {
            dry_run: true,
            messages: turn.messages.clone(),
            prompt: turn.prompt.clone(),
            block: turn.block.clone(),
            passages: turn.passages.iter().map(|x| x.quoted()).collect(),
            learner_seq: turn.learner_seq,
        })
        .into_response());
    }
    let (tx, rx) = mpsc::channel::<Event>(64);
    let block_event = Event::default()
        .event("block")
        .json_data(&turn.block)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    // The channel has room: the first send cannot wait.
    let _ = tx.try_send(block_event);
    let st = state.clone();
    // The model call and the write of its answer run on the blocking pool,
    // to completion even when the client goes away, so an answer that was
    // streamed is also recorded.
    tokio::task::spawn_blocking(move || stream_answer(&st, &turn, &tx));
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

fn error_event(e: &ApiError) -> Event {
    Event::default()
        .event("error")
        .json_data(serde_json::json!({"error": {"code": e.code, "message": e.message}}))
        .unwrap_or_default()
}

/// Streams the model's answer into `tx` as `delta` events, then `done`
/// once the brain has recorded it (or `error`).
fn stream_answer(state: &AppState, turn: &Turn, tx: &mpsc::Sender<Event>) {
    let Some(chat) = state.chat() else {
        return;
    };
    let answered = state.brain().answer_turn(turn, chat, &mut |delta| {
        send(
            tx,
            Event::default()
                .event("delta")
                .json_data(serde_json::json!({"text": delta}))
                .unwrap_or_default(),
        )
    });
    match answered {
        Ok(a) => send(
            tx,
            Event::default()
                .event("done")
                .json_data(serde_json::json!({
                    "answer_seq": a.seq,
                    "recalled": turn.block.recalled.iter().map(|r| r.id).collect::<Vec<_>>(),
                    "stance": a.answered.grounding.stance.as_str(),
                }))
                .unwrap_or_default(),
        ),
        Err(e) => send(tx, error_event(&ApiError::from(e))),
    }
}
