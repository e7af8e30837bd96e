//! Is an answer grounded? Each claim of the answer is traced to a line of the
//! learner's current files (the passages retrieved for the question) or to a
//! memory recalled for the turn (docs/mechanisms.md §7); the answer gets a stance
//! (answered, partial, couldnt), saved as a `grounding` annotation on the
//! answer episode when the answer is named. No model is called.

use crate::api::{JsonBody, owned, written_at};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use tm_brain::turn::PASSAGES;
use utoipa::ToSchema;

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
    let at = written_at(body.at.as_deref())?;
    if body.recalled.len() > 1_000 {
        return Err(ApiError::invalid("at most 1000 recalled ids"));
    }
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            // Only this subject's episodes count as its memories.
            let recalled: Vec<i64> = brain
                .subject_episodes(&s, &body.recalled)?
                .into_iter()
                .map(|e| e.id)
                .collect();
            let found = brain.passages(&s, &body.question, PASSAGES)?;
            let g = match &body.answer_id {
                Some(ext) => {
                    let e = brain.episode_by_external_id(&s, ext)?.ok_or_else(|| {
                        ApiError::not_found(format!("no episode with external id {ext:?}"))
                    })?;
                    // Saved through the brain: the stance, and a `narrated`
                    // annotation when a claim was traced to a memory.
                    brain.grounding(&s, e.id, &body.answer, &found, &recalled, at)?
                }
                None => brain.trace(&s, &body.answer, &found, &recalled, at)?,
            };
            Ok(GroundingOut {
                stance: g.stance.as_str().to_string(),
                says_cannot: g.says_cannot,
                traces: g
                    .traces
                    .iter()
                    .map(crate::api::to_value)
                    .collect::<ApiResult<_>>()?,
                saved: body.answer_id.is_some(),
            })
        })
        .await?;
    Ok(axum::Json(out))
}
