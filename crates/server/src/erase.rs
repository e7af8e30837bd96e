//! Erasure on request over HTTP, tenant-scoped: a key erases one of its
//! tenant's subjects, one of its learners, or all of its learners; another
//! tenant's subject or learner answers exactly like a missing one (404).

use crate::api::ApiQuery;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use tm_brain::{Erased, Scope};
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EraseQuery {
    /// Your reference for the request ("ticket 4711"), kept in the erasure
    /// record; never the learner's own words. At most 200 characters.
    #[serde(default)]
    pub reference: String,
    /// The erasure's instant (RFC 3339); default: when the request arrives.
    pub at: Option<DateTime<Utc>>,
    /// For erasing every learner of the tenant: the tenant's name, to
    /// confirm.
    pub confirm: Option<String>,
    /// For erasing one episode: why ("a pasted phone number"), never the
    /// erased words. At most 200 characters.
    #[serde(default)]
    pub reason: String,
}

fn json(erased: &Erased) -> ApiResult<axum::Json<serde_json::Value>> {
    Ok(axum::Json(
        serde_json::to_value(erased).map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

/// Erase one subject: every text and what derives from it. The chain's
/// skeleton and an erasure record stay; the store is compacted.
#[utoipa::path(delete, path = "/v1/subjects/{learner}/{subject}", tag = "erasure",
    params(("learner" = String, Path), ("subject" = String, Path), EraseQuery),
    responses((status = 200, description = "what was erased", body = Object),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn erase_subject(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<EraseQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let at = crate::api::not_future(q.at.unwrap_or_else(Utc::now))?;
    let erased = state
        .blocking(move |brain| {
            let s = crate::api::owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.erase(&Scope::Subject(s), &q.reference, at)?)
        })
        .await?;
    json(&erased)
}

/// Erase one episode (a pasted phone number, a wrong fact), with a reason:
/// its content and the consolidation of its day go, the chain keeps its
/// skeleton, and beliefs and map derived from it are re-derived without it.
#[utoipa::path(delete, path = "/v1/subjects/{learner}/{subject}/episodes/{seq}", tag = "erasure",
    params(("learner" = String, Path), ("subject" = String, Path), ("seq" = u64, Path), EraseQuery),
    responses((status = 200, description = "what was erased", body = Object),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn erase_episode(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject, seq)): Path<(String, String, u64)>,
    ApiQuery(q): ApiQuery<EraseQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let at = crate::api::not_future(q.at.unwrap_or_else(Utc::now))?;
    let erased = state
        .blocking(move |brain| {
            let s = crate::api::owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.erase_episode(&s, seq, &q.reason, &q.reference, at)?)
        })
        .await?;
    json(&erased)
}

/// Erase every subject of one of the tenant's learners.
#[utoipa::path(delete, path = "/v1/learners/{learner}", tag = "erasure",
    params(("learner" = String, Path), EraseQuery),
    responses((status = 200, description = "what was erased", body = Object),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn erase_learner(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(learner): Path<String>,
    ApiQuery(q): ApiQuery<EraseQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let at = crate::api::not_future(q.at.unwrap_or_else(Utc::now))?;
    let erased = state
        .blocking(move |brain| {
            let scope = Scope::TenantLearner {
                tenant_id: tenant.id,
                learner: learner.clone(),
            };
            brain
                .erase(&scope, &q.reference, at)
                .map_err(|e| unknown_learner(e, &learner))
        })
        .await?;
    json(&erased)
}

/// A learner with no subject of the tenant: another tenant's learner is
/// exactly a missing one.
pub(crate) fn unknown_learner(e: tm_brain::Error, learner: &str) -> ApiError {
    match e {
        tm_brain::Error::NotFound(_) => ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            "unknown_learner",
            format!("no learner {learner}"),
        ),
        other => other.into(),
    }
}

/// Erase every learner of the calling tenant (`confirm` must be its name).
#[utoipa::path(delete, path = "/v1/learners", tag = "erasure",
    params(EraseQuery),
    responses((status = 200, description = "what was erased", body = Object),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn erase_tenant(
    State(state): State<AppState>,
    tenant: Tenant,
    ApiQuery(q): ApiQuery<EraseQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    if q.confirm.as_deref() != Some(tenant.name.as_str()) {
        return Err(ApiError::invalid(
            "erasing every learner of the tenant needs confirm=<the tenant's name>",
        ));
    }
    let at = crate::api::not_future(q.at.unwrap_or_else(Utc::now))?;
    let erased = state
        .blocking(move |brain| {
            let scope = Scope::Tenant {
                tenant_id: tenant.id,
                name: tenant.name.clone(),
            };
            Ok(brain.erase(&scope, &q.reference, at)?)
        })
        .await?;
    json(&erased)
}
