//! Is an answer grounded? Each claim of the answer is traced to a line of the
//! learner's current files (the passages retrieved for the question) or to a
//! memory recalled for the turn (SPEC §7); the answer gets a stance
//! (answered, partial, couldnt), saved as a `grounding` annotation on the
//! answer episode when the answer is named. No model is called.

use crate::api::{JsonBody, at_or_now, owned};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use tm_model::grounding::{Grounding, Memory, Passage, ground};
use tm_store::{Store, Subject};
use utoipa::ToSchema;

/// Passages retrieved for a turn's material slot (and traced against).
pub const PASSAGES: usize = 5;

/// The subject's passages that best answer `question`, best first.
pub fn passages(
    state: &AppState,
    store: &Store,
    subject: &Subject,
    question: &str,
) -> ApiResult<Vec<tm_model::passages::Passage>> {
    Ok(tm_brain::passages::passages(
        store,
        state.recaller().embedder(),
        subject,
        question,
        PASSAGES,
    )?)
}

/// The retrieved passages as lines the grounding traces claims to.
pub fn lines(passages: &[tm_model::passages::Passage]) -> Vec<Passage> {
    passages
        .iter()
        .map(|p| Passage {
            file: p.file.clone(),
            version_id: p.version_id,
            page: p.page as usize,
            line: p.line as usize,
            text: p.text.clone(),
        })
        .collect()
}

/// Grounds `answer` against these passages and the recalled episodes
/// without saving anything.
pub fn ground_answer(
    store: &Store,
    answer: &str,
    passages: &[tm_model::passages::Passage],
    recalled: &[i64],
    at: DateTime<Utc>,
    tz: Tz,
) -> ApiResult<Grounding> {
    let memories: Vec<Memory> = store
        .episodes_with_ids(recalled)?
        .into_iter()
        .map(|e| Memory {
            id: e.id,
            at: e.at,
            text: e.text,
        })
        .collect();
    Ok(ground(answer, &lines(passages), &memories, at, tz))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroundingRequest {
    /// The tutor's answer.
    pub answer: String,
    /// The learner's question (passages are retrieved for it).
    pub question: String,
    /// Episode ids recalled for the turn (the block's `recalled[].id`).
    #[serde(default)]
    pub recalled: Vec<i64>,
    /// When the turn happened (RFC 3339; default: now); dates memory labels.
    #[serde(default)]
    pub at: Option<String>,
    /// The recorded answer episode to save the stance on: its external id.
    #[serde(default)]
    pub answer_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GroundingOut {
    /// answered | partial | couldnt
    pub stance: String,
    pub says_cannot: bool,
    /// Each claim with its source (a file line or a dated memory), if any.
    #[schema(value_type = Vec<Object>)]
    pub traces: Vec<serde_json::Value>,
    /// Whether the stance was saved on the answer episode.
    pub saved: bool,
}

/// Trace an answer's claims to the files and the recalled memories.
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/grounding", tag = "turns",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body = GroundingRequest,
    responses((status = 200, body = GroundingOut), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn grounding(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<GroundingRequest>,
) -> ApiResult<axum::Json<GroundingOut>> {
    let at = at_or_now(body.at.as_deref())?;
    if body.recalled.len() > 1_000 {
        return Err(ApiError::invalid("at most 1000 recalled ids"));
    }
    let st = state.clone();
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let tz: Tz = s
                .timezone
                .as_deref()
                .and_then(|t| t.parse().ok())
                .unwrap_or(chrono_tz::UTC);
            // Only this subject's episodes count as its memories.
            let mut recalled = Vec::new();
            for e in store.episodes_with_ids(&body.recalled)? {
                if store
                    .episode_at_seq(&s, e.seq)?
                    .is_some_and(|x| x.id == e.id)
                {
                    recalled.push(e.id);
                }
            }
            let found = passages(&st, store, &s, &body.question)?;
            let g = ground_answer(store, &body.answer, &found, &recalled, at, tz)?;
            let saved = match &body.answer_id {
                Some(ext) => {
                    let e = store.episode_by_external_id(&s, ext)?.ok_or_else(|| {
                        ApiError::not_found(format!("no episode with external id {ext:?}"))
                    })?;
                    if e.kind != tm_model::episodes::Kind::Answer {
                        return Err(ApiError::invalid(format!(
                            "episode {ext:?} is a {}, not an answer",
                            e.kind.as_str()
                        )));
                    }
                    // Saved through the brain: the stance, and a `narrated`
                    // annotation when a claim was traced to a memory.
                    tm_brain::grounding::grounding(
                        store,
                        &s,
                        e.id,
                        &body.answer,
                        &lines(&found),
                        &recalled,
                        at,
                    )?;
                    true
                }
                None => false,
            };
            Ok(GroundingOut {
                stance: g.stance.as_str().to_string(),
                says_cannot: g.says_cannot,
                traces: g
                    .traces
                    .iter()
                    .map(crate::api::to_value)
                    .collect::<ApiResult<_>>()?,
                saved,
            })
        })
        .await?;
    Ok(axum::Json(out))
}
