//! A copy of a learner's data over HTTP (GDPR Art. 20), tenant-scoped: a
//! ZIP archive of the export folder `tutor-memory export` writes (manifest,
//! v1 histories (docs/formats.md) with their files, beliefs and map). Unpacked, it is
//! what `tutor-memory import <folder>` reads back. Another tenant's subject
//! or learner answers exactly like a missing one (404).

use crate::api::ApiQuery;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::io::Write;
use tm_brain::Scope;
use tm_brain::export::Export;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    /// The export's instant, written in its manifest (RFC 3339); default:
    /// when the request arrives.
    pub at: Option<DateTime<Utc>>,
}

/// The export as a ZIP archive, named for what it holds.
fn archive(export: &Export, name: &str) -> ApiResult<Response> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(
            export
                .files
                .iter()
                .any(|(_, b)| b.len() > u32::MAX as usize / 2),
        );
    let fault =
        |e: &dyn std::fmt::Display| ApiError::internal(format!("cannot write the archive: {e}"));
    for (path, bytes) in &export.files {
        zip.start_file(path.as_str(), opts).map_err(|e| fault(&e))?;
        zip.write_all(bytes).map_err(|e| fault(&e))?;
    }
    let bytes = zip.finish().map_err(|e| fault(&e))?.into_inner();
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}.zip\""),
            ),
        ],
        bytes,
    )
        .into_response())
}

/// Export one subject: a ZIP of its history (docs/formats.md, v1, with the files),
/// manifest, beliefs and map.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/export", tag = "erasure",
    params(("learner" = String, Path), ("subject" = String, Path), ExportQuery),
    responses((status = 200, description = "the export folder as a ZIP archive", content_type = "application/zip", body = Vec<u8>),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn export_subject(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> ApiResult<Response> {
    let at = q.at.unwrap_or_else(Utc::now);
    let name = format!("{learner}-{subject}");
    let export = state
        .blocking(move |brain| {
            let s = crate::api::owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.export(&Scope::Subject(s), at)?)
        })
        .await?;
    archive(&export, &name)
}

/// Export every subject of one of the tenant's learners.
#[utoipa::path(get, path = "/v1/learners/{learner}/export", tag = "erasure",
    params(("learner" = String, Path), ExportQuery),
    responses((status = 200, description = "the export folder as a ZIP archive", content_type = "application/zip", body = Vec<u8>),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn export_learner(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(learner): Path<String>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> ApiResult<Response> {
    let at = q.at.unwrap_or_else(Utc::now);
    let name = learner.clone();
    let export = state
        .blocking(move |brain| {
            let scope = Scope::TenantLearner {
                tenant_id: tenant.id,
                learner: learner.clone(),
            };
            brain
                .export(&scope, at)
                .map_err(|e| crate::erase::unknown_learner(e, &learner))
        })
        .await?;
    archive(&export, &name)
}
