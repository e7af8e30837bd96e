//! Operator routes: the nightly loop for every active subject (admin keys
//! only), and the background schedule `serve --nightly-every` uses.

use crate::api::{JsonBody, written_at};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::State;
use chrono::{NaiveDate, Utc};
use serde::Deserialize;
use std::time::Duration;
use tm_brain::nightly::NightlyOptions;
use utoipa::ToSchema;

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NightlyRequest {
    /// The night's end (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
    /// Catch up every night from this day (YYYY-MM-DD).
    #[serde(default)]
    pub since: Option<String>,
    /// Citations verified per subject per night.
    #[serde(default)]
    pub batch: Option<usize>,
}

/// Run the nightly loop over every subject active in the last day (admin).
#[utoipa::path(post, path = "/v1/admin/nightly", tag = "admin",
    request_body = NightlyRequest,
    responses((status = 200, description = "the NightlyReport", body = Object),
        (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn nightly(
    State(state): State<AppState>,
    tenant: Tenant,
    JsonBody(body): JsonBody<NightlyRequest>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    if !tenant.admin {
        return Err(ApiError::forbidden(
            "the nightly loop runs for every tenant: it needs an admin key",
        ));
    }
    let at = written_at(body.at.as_deref())?;
    let since = body
        .since
        .as_deref()
        .map(|s| {
            NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| {
                ApiError::invalid(format!("`since` {s:?} is not a day like 2026-11-01"))
            })
        })
        .transpose()?;
    let mut opts = NightlyOptions {
        since,
        ..NightlyOptions::default()
    };
    if let Some(b) = body.batch {
        opts.batch = b.clamp(1, 100_000);
    }
    let report = state
        .blocking(move |brain| Ok(brain.nightly(at, &opts, &mut |_, _| {})?))
        .await?;
    Ok(axum::Json(crate::api::to_value(&report)?))
}

/// Runs the nightly loop every `every`, first after one interval, until the
/// task is dropped. Failures are printed, never fatal.
pub async fn schedule(state: AppState, every: Duration) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tick.tick().await;
        let at = Utc::now();
        let result = state
            .blocking(move |brain| {
                Ok(brain.nightly(at, &NightlyOptions::default(), &mut |_, _| {})?)
            })
            .await;
        match result {
            Ok(r) => {
                let ran: usize = r.nights.iter().map(|n| n.ran).sum();
                eprintln!(
                    "nightly at {}: {ran} subjects ran, {} failed",
                    at.to_rfc3339(),
                    r.failures()
                );
            }
            Err(e) => eprintln!("nightly at {} failed: {e}", at.to_rfc3339()),
        }
    }
}
