//! The versioned JSON API under `/v1`: what the CLI does, over HTTP, for one
//! tenant's learners. Every handler resolves the subject through the tenant
//! (another tenant's subject is 404, exactly like a missing one), runs store
//! and embedding work on the blocking pool, and records events through the
//! brain's import path, so the API and history files share one validation.

use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use tm_brain::block::{Block, BlockRequest};
use tm_model::subject::SubjectKey;
use tm_store::{Claim, Store, Subject};
use utoipa::{IntoParams, ToSchema};

/// A JSON body whose rejections answer in the API's error shape.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> ApiResult<Self> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let text = r.body_text();
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new(status, "payload_too_large", "the request body is too large")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            status,
            "unsupported_media_type",
            "send the body as JSON with `Content-Type: application/json`",
        ),
        StatusCode::UNPROCESSABLE_ENTITY => ApiError::invalid(text),
        _ => ApiError::malformed(text),
    }
}

/// Parses an RFC 3339 instant from a request.
pub fn parse_at(field: &str, s: &str) -> ApiResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            ApiError::invalid(format!(
                "`{field}` {s:?} is not an RFC 3339 time such as 2026-09-20T10:00:00Z"
            ))
        })
}

/// The instant a request stands for: the one it names, else its arrival
/// (the HTTP edge is where "now" enters the system).
pub fn at_or_now(at: Option<&str>) -> ApiResult<DateTime<Utc>> {
    match at {
        Some(s) => parse_at("at", s),
        None => Ok(Utc::now()),
    }
}

/// The subject, when it exists and its learner is the tenant's; 404 otherwise
/// (another tenant's subject must be indistinguishable from a missing one).
pub fn owned(store: &Store, tenant: &Tenant, learner: &str, subject: &str) -> ApiResult<Subject> {
    let shown = format!("{learner}/{subject}");
    let key = SubjectKey::parse(&shown).map_err(|_| ApiError::unknown_subject(&shown))?;
    let s = store
        .subject(&key)?
        .ok_or_else(|| ApiError::unknown_subject(&shown))?;
    if store.subject_tenant(&s)? != Some(tenant.id) {
        return Err(ApiError::unknown_subject(&shown));
    }
    Ok(s)
}

// ---------------------------------------------------------------- subjects

/// A subject to create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSubject {
    /// Learner slug (lowercase letters, digits, `-`, `_`).
    #[schema(example = "ana")]
    pub learner: String,
    /// Subject slug.
    #[schema(example = "cell-biology")]
    pub subject: String,
    #[serde(default)]
    pub title: Option<String>,
    /// BCP 47 language tag.
    #[serde(default)]
    pub language: Option<String>,
    /// The learner's IANA time zone (windows like "in July" are read in it).
    #[serde(default)]
    pub timezone: Option<String>,
    /// When it was created (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectOut {
    /// `learner/subject`.
    pub key: String,
    pub learner: String,
    pub subject: String,
    pub title: String,
    pub language: Option<String>,
    pub timezone: Option<String>,
}

impl From<&Subject> for SubjectOut {
    fn from(s: &Subject) -> Self {
        SubjectOut {
            key: s.key.to_string(),
            learner: s.key.learner.clone(),
            subject: s.key.subject.clone(),
            title: s.title.clone(),
            language: s.language.clone(),
            timezone: s.timezone.clone(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectList {
    pub subjects: Vec<SubjectOut>,
}

/// Create a subject (and its learner, for this tenant).
#[utoipa::path(post, path = "/v1/subjects", tag = "subjects",
    request_body = CreateSubject,
    responses(
        (status = 201, description = "created", body = SubjectOut),
        (status = 200, description = "it already existed", body = SubjectOut),
        (status = 409, description = "the learner belongs to another tenant", body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_subject(
    State(state): State<AppState>,
    tenant: Tenant,
    JsonBody(body): JsonBody<CreateSubject>,
) -> ApiResult<Response> {
    let key = SubjectKey::parse(&format!("{}/{}", body.learner, body.subject))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    if let Some(tz) = &body.timezone {
        tz.parse::<chrono_tz::Tz>().map_err(|_| {
            ApiError::invalid(format!(
                "{tz:?} is not an IANA time zone name such as Europe/Berlin"
            ))
        })?;
    }
    let at = at_or_now(body.at.as_deref())?;
    let (subject, created) = state
        .blocking(move |store| {
            let existed = store.subject(&key)?.is_some();
            let out = store.write_with(|tx| {
                if tx.claim_learner(&key.learner, tenant.id, at)? == Claim::Taken {
                    return Ok(None);
                }
                let s = tx.ensure_subject(
                    &key,
                    body.title.as_deref().unwrap_or(""),
                    body.language.as_deref(),
                    at,
                )?;
                if let Some(tz) = &body.timezone
                    && !existed
                {
                    tx.set_timezone(&s, tz)?;
                }
                Ok::<_, ApiError>(Some(s))
            })?;
            let s = out.ok_or_else(|| {
                ApiError::new(
                    StatusCode::CONFLICT,
                    "learner_unavailable",
                    format!(
                        "the learner slug {:?} is not available to this key",
                        key.learner
                    ),
                )
            })?;
            // Re-read: the time zone may have been set in the transaction.
            Ok((store.require_subject(&s.key)?, !existed))
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(SubjectOut::from(&subject))).into_response())
}

/// List this tenant's subjects.
#[utoipa::path(get, path = "/v1/subjects", tag = "subjects",
    responses((status = 200, body = SubjectList), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_subjects(
    State(state): State<AppState>,
    tenant: Tenant,
) -> ApiResult<axum::Json<SubjectList>> {
    let subjects = state
        .blocking(move |store| Ok(store.tenant_subjects(tenant.id)?))
        .await?;
    Ok(axum::Json(SubjectList {
        subjects: subjects.iter().map(SubjectOut::from).collect(),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileOut {
    pub name: String,
    pub version: i64,
    pub sha256: String,
    /// markdown | text | pdf
    pub format: String,
    pub pages: usize,
    pub added_at: DateTime<Utc>,
    pub replaced_at: Option<DateTime<Utc>>,
    pub removed_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectDetail {
    #[serde(flatten)]
    pub subject: SubjectOut,
    pub episodes: u64,
    pub files: Vec<FileOut>,
}

/// One subject: its episode count and file versions.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}", tag = "subjects",
    params(("learner" = String, Path), ("subject" = String, Path)),
    responses((status = 200, body = SubjectDetail), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_subject(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
) -> ApiResult<axum::Json<SubjectDetail>> {
    let detail = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let files = store
                .file_versions(&s)?
                .into_iter()
                .map(|v| FileOut {
                    name: v.name,
                    version: v.version,
                    sha256: v.sha256,
                    format: v.format,
                    pages: v.pages,
                    added_at: v.added_at,
                    replaced_at: v.replaced_at,
                    removed_at: v.removed_at,
                })
                .collect();
            Ok(SubjectDetail {
                episodes: store.episode_count(&s)?,
                subject: SubjectOut::from(&s),
                files,
            })
        })
        .await?;
    Ok(axum::Json(detail))
}

// ---------------------------------------------------------------- events

/// What recording events did (the import report).
#[derive(Debug, Serialize, ToSchema)]
pub struct Recorded {
    pub subject: String,
    /// Events in the request.
    pub events: usize,
    /// Episodes appended.
    pub appended: usize,
    /// Events already recorded (same JSON), skipped.
    pub skipped: usize,
    /// File versions stored.
    pub file_versions: usize,
    /// The chain's head after the write.
    pub head_seq: u64,
}

/// Records FORMATS v1 history events (one object or an array) through the
/// import path: one transaction, then the new episodes are embedded.
pub fn record_events(
    state: &AppState,
    store: &mut Store,
    subject: &Subject,
    events: &[serde_json::Value],
    base: &std::path::Path,
) -> ApiResult<Recorded> {
    let mut text = serde_json::json!({
        "type": "subject",
        "learner": subject.key.learner,
        "subject": subject.key.subject,
        "title": subject.title,
    })
    .to_string();
    text.push('\n');
    for e in events {
        text.push_str(&e.to_string());
        text.push('\n');
    }
    let recaller = state.recaller();
    let similarity =
        (!recaller.embedder().name().starts_with("hash")).then(|| tm_brain::import::Similarity {
            embedder: recaller.embedder(),
            threshold: 0.86,
        });
    let report = tm_brain::import::import_bytes_merging(
        store,
        "request",
        text.as_bytes(),
        base,
        &tm_ingest::extract::OfflineExtractor::default(),
        similarity.as_ref(),
        &mut |_, _| {},
    )?;
    recaller.embed_missing(store, subject, &mut |_, _| {})?;
    if report.file_versions > 0 {
        tm_brain::passages::embed_missing(store, recaller.embedder(), subject, &mut |_| {})?;
    }
    Ok(Recorded {
        subject: report.subject,
        events: report.events,
        appended: report.appended,
        skipped: report.skipped,
        file_versions: report.file_versions,
        head_seq: store.episode_count(subject)?,
    })
}

/// Checks events from a client before they reach the import: no subject
/// lines, and no `path` (the server's file system is not the client's).
fn client_events(body: serde_json::Value) -> ApiResult<Vec<serde_json::Value>> {
    let events = match body {
        serde_json::Value::Array(a) => a,
        o @ serde_json::Value::Object(_) => vec![o],
        _ => {
            return Err(ApiError::invalid(
                "send one event object or an array of them",
            ));
        }
    };
    if events.is_empty() {
        return Err(ApiError::invalid("no events"));
    }
    for (i, e) in events.iter().enumerate() {
        let Some(o) = e.as_object() else {
            return Err(ApiError::invalid(format!(
                "event {}: expected a JSON object",
                i + 1
            )));
        };
        if o.get("type").and_then(|t| t.as_str()) == Some("subject") {
            return Err(ApiError::invalid(format!(
                "event {}: the subject is named by the URL, not by a subject line",
                i + 1
            )));
        }
        if o.contains_key("path") {
            return Err(ApiError::invalid(format!(
                "event {}: a file event over HTTP carries `content` or `pages`, or is uploaded to /files; `path` is not accepted",
                i + 1
            )));
        }
    }
    Ok(events)
}

/// Record events: learner messages, tutor answers with cites, checks,
/// quizzes, inline files and file removals, in FORMATS v1 history shapes.
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/events", tag = "events",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body(content = Object, description = "one FORMATS v1 event or an array of them"),
    responses((status = 200, body = Recorded), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_events(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<serde_json::Value>,
) -> ApiResult<axum::Json<Recorded>> {
    let events = client_events(body)?;
    let st = state.clone();
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            record_events(
                &st,
                store,
                &s,
                &events,
                std::path::Path::new("/nonexistent"),
            )
        })
        .await?;
    Ok(axum::Json(out))
}

/// Upload a file (multipart field `file`; optional fields `name` and `at`).
/// Markdown, plain text and PDF are read; the same name again replaces it.
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/files", tag = "events",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body(content_type = "multipart/form-data", content = Object,
        description = "`file` (the bytes, with a filename), `name` (optional), `at` (optional RFC 3339)"),
    responses((status = 200, body = Recorded), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn upload_file(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    mut multipart: Multipart,
) -> ApiResult<axum::Json<Recorded>> {
    let limit = state.config().max_upload_bytes;
    let multipart_err = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(limit)
        } else {
            ApiError::invalid(format!("bad multipart body: {}", e.body_text()))
        }
    };
    let (mut bytes, mut filename, mut name, mut at) = (None, None, None, None);
    while let Some(field) = multipart.next_field().await.map_err(multipart_err)? {
        match field.name().unwrap_or("") {
            "file" => {
                filename = field.file_name().map(str::to_string);
                bytes = Some(field.bytes().await.map_err(multipart_err)?);
            }
            "name" => name = Some(field.text().await.map_err(multipart_err)?),
            "at" => at = Some(field.text().await.map_err(multipart_err)?),
            other => {
                return Err(ApiError::invalid(format!(
                    "unknown multipart field {other:?}: expected file, name, at"
                )));
            }
        }
    }
    let bytes = bytes.ok_or_else(|| ApiError::invalid("the multipart field `file` is missing"))?;
    let name = name
        .or(filename)
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ApiError::invalid("name the file: a filename on `file`, or a `name` field")
        })?;
    if name.len() > 200 || name.contains(['/', '\\', '\0']) {
        return Err(ApiError::invalid(
            "a file name is at most 200 bytes, without / or \\",
        ));
    }
    let at = at_or_now(at.as_deref())?;
    let st = state.clone();
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            // The import reads files from disk by path: the upload goes to a
            // private folder for the length of the import.
            let dir = tempfile::tempdir()
                .map_err(|e| ApiError::internal(format!("cannot stage the upload: {e}")))?;
            std::fs::write(dir.path().join("upload"), &bytes)
                .map_err(|e| ApiError::internal(format!("cannot stage the upload: {e}")))?;
            let event = serde_json::json!({
                "type": "file", "at": at.to_rfc3339(), "name": name, "path": "upload",
            });
            record_events(&st, store, &s, &[event], dir.path())
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeachRequest {
    /// The learner's message ("remember that …").
    pub text: String,
    /// When it was said (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
    /// External id for the episode.
    #[serde(default)]
    pub id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Taught {
    pub appended: usize,
    /// The language whose cue was found.
    pub lang: String,
    pub cue: String,
    /// Concepts of the map the message names.
    pub concepts: Vec<String>,
}

/// Teach the tutor (only an explicit cue such as "remember that …" teaches).
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/teach", tag = "events",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body = TeachRequest,
    responses((status = 200, body = Taught), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn teach(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<TeachRequest>,
) -> ApiResult<axum::Json<Taught>> {
    let at = at_or_now(body.at.as_deref())?;
    let Some(cue) = tm_model::teaching::teaching(&body.text) else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_teaching",
            "this message does not teach: only an explicit cue such as \"remember that …\" or \"treat X as …\" does (questions never teach)",
        ));
    };
    let st = state.clone();
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let mut event =
                serde_json::json!({"type": "learner", "at": at.to_rfc3339(), "text": body.text});
            if let Some(id) = body.id {
                event["id"] = id.into();
            }
            let r = record_events(
                &st,
                store,
                &s,
                &[event],
                std::path::Path::new("/nonexistent"),
            )?;
            let map = tm_brain::map::load(store.latest_map(&s)?.as_deref())?;
            Ok(Taught {
                appended: r.appended,
                lang: cue.lang.to_string(),
                cue: cue.cue.to_string(),
                concepts: tm_brain::map::named_in(&map, &body.text),
            })
        })
        .await?;
    Ok(axum::Json(out))
}

// ---------------------------------------------------------------- block

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockBody {
    /// The learner's question.
    pub question: String,
    /// The turn's instant (RFC 3339; default: now). Ages and windows count from it.
    #[serde(default)]
    pub at: Option<String>,
    /// Token budget (o200k; default 1200).
    #[serde(default)]
    pub budget: Option<usize>,
    /// The learner's time zone (default: the subject's, else UTC).
    #[serde(default)]
    pub tz: Option<String>,
}

/// FORMATS "Block as JSON".
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockOut {
    pub block: String,
    /// `record` or `ordinary`.
    pub mode: String,
    pub tokens: usize,
    pub elapsed_ms: f64,
    pub dropped: bool,
    pub window: Option<WindowOut>,
    pub recalled: Vec<RecalledOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WindowOut {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub empty: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RecalledOut {
    pub id: i64,
    pub external_id: Option<String>,
    pub kind: String,
    pub at: DateTime<Utc>,
    pub count: usize,
    /// holds | changed | unverifiable | unchecked
    pub citation: String,
}

impl From<&Block> for BlockOut {
    fn from(b: &Block) -> Self {
        BlockOut {
            block: b.block.clone(),
            mode: b.mode.to_string(),
            tokens: b.tokens,
            elapsed_ms: b.elapsed_ms,
            dropped: b.dropped,
            window: b.window.as_ref().map(|w| WindowOut {
                from: w.from,
                to: w.to,
                empty: w.empty,
            }),
            recalled: b
                .recalled
                .iter()
                .map(|r| RecalledOut {
                    id: r.id,
                    external_id: r.external_id.clone(),
                    kind: r.kind.to_string(),
                    at: r.at,
                    count: r.count,
                    citation: r.citation.to_string(),
                })
                .collect(),
        }
    }
}

/// A block request made concrete for a subject.
pub fn block_request(body: &BlockBody, subject: &Subject) -> ApiResult<BlockRequest> {
    let tz_name = body
        .tz
        .as_deref()
        .or(subject.timezone.as_deref())
        .unwrap_or("UTC");
    let tz = tz_name
        .parse::<chrono_tz::Tz>()
        .map_err(|_| ApiError::invalid(format!("{tz_name:?} is not an IANA time zone name")))?;
    let budget = body.budget.unwrap_or(tm_brain::block::DEFAULT_BUDGET);
    if !(50..=32_000).contains(&budget) {
        return Err(ApiError::invalid(
            "`budget` must be between 50 and 32000 tokens",
        ));
    }
    if body.question.chars().count() > tm_brain::history::MAX_TEXT_CHARS {
        return Err(ApiError::invalid("the question is too long"));
    }
    Ok(BlockRequest::new(
        body.question.clone(),
        at_or_now(body.at.as_deref())?,
        tz,
        budget,
    ))
}

/// Builds the block on a pooled connection under the hard cap: past it the
/// caller gets `dropped: true` at once and the build finishes unawaited
/// (its connection then returns to the pool).
pub async fn build_block(
    state: &AppState,
    subject: Subject,
    req: BlockRequest,
) -> ApiResult<Block> {
    let started = Instant::now();
    let cap = state.config().block_cap;
    let recaller = state.recaller().clone();
    let work =
        state.blocking(move |store| Ok(tm_brain::block::build(store, &recaller, &subject, &req)?));
    let block = match tokio::time::timeout(cap, work).await {
        Ok(result) => {
            let mut b = result?;
            b.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            b
        }
        Err(_) => Block {
            block: String::new(),
            mode: "ordinary",
            tokens: 0,
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
            dropped: true,
            window: None,
            recalled: Vec::new(),
        },
    };
    state.metrics().block(block.dropped);
    Ok(block)
}

/// Build the memory block for a question, under the time cap (read only).
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/block", tag = "turns",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body = BlockBody,
    responses((status = 200, body = BlockOut), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn block(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<BlockBody>,
) -> ApiResult<axum::Json<BlockOut>> {
    let s = state
        .blocking(move |store| owned(store, &tenant, &learner, &subject))
        .await?;
    let req = block_request(&body, &s)?;
    let b = build_block(&state, s, req).await?;
    Ok(axum::Json(BlockOut::from(&b)))
}

// ---------------------------------------------------------------- reading

#[derive(Debug, Serialize, ToSchema)]
pub struct BeliefsOut {
    /// Current beliefs, each with its history (oldest row first).
    #[schema(value_type = Vec<Object>)]
    pub current: Vec<serde_json::Value>,
    /// Honest check counts.
    #[schema(value_type = Object)]
    pub checks: serde_json::Value,
}

/// What the tutor currently believes, each belief with its history.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/beliefs", tag = "beliefs",
    params(("learner" = String, Path), ("subject" = String, Path)),
    responses((status = 200, body = BeliefsOut), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn beliefs(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
) -> ApiResult<axum::Json<BeliefsOut>> {
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let map = tm_brain::map::load(store.latest_map(&s)?.as_deref())?;
            let counts = tm_brain::beliefs::counts(store, &s, &map)?;
            let mut current = Vec::new();
            for b in store.current_beliefs(&s)? {
                let history = store.belief_history(&s, &b.subject_key)?;
                let mut v = to_value(&b)?;
                v["history"] = to_value(&history)?;
                current.push(v);
            }
            Ok(BeliefsOut {
                current,
                checks: to_value(&counts)?,
            })
        })
        .await?;
    Ok(axum::Json(out))
}

/// The history of the belief about one concept or topic, oldest row first.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/beliefs/{about}", tag = "beliefs",
    params(("learner" = String, Path), ("subject" = String, Path),
        ("about" = String, Path, description = "a concept or topic name")),
    responses((status = 200, body = Vec<Object>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn belief_history(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject, about)): Path<(String, String, String)>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let rows = store.belief_history(&s, &tm_model::lang::canonical_key(&about))?;
            if rows.is_empty() {
                return Err(ApiError::not_found(format!(
                    "no belief about {about:?} has been recorded"
                )));
            }
            to_value(&rows)
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MapOut {
    /// The concept map (nodes with readiness, centrality, layer, sources).
    #[schema(value_type = Object)]
    pub map: serde_json::Value,
    /// Teaching order: layers of concept names, prerequisites first.
    pub teaching_order: Vec<Vec<String>>,
    /// The centrality-weighted readiness of the subject's material (0–1).
    pub readiness: f64,
}

/// The concept map and its teaching order.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/map", tag = "map",
    params(("learner" = String, Path), ("subject" = String, Path)),
    responses((status = 200, body = MapOut), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn map(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
) -> ApiResult<axum::Json<MapOut>> {
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let map = tm_brain::map::load(store.latest_map(&s)?.as_deref())?;
            let order = tm_model::map::teaching_order(&map);
            Ok(MapOut {
                teaching_order: order
                    .layers
                    .iter()
                    .map(|l| {
                        l.iter()
                            .map(|k| map.get(k).map_or(k.clone(), |n| n.name.clone()))
                            .collect()
                    })
                    .collect(),
                readiness: tm_model::map::subject_readiness(&map),
                map: to_value(&map)?,
            })
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct LogQuery {
    /// First seq to list (default 1).
    pub from: Option<u64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// The episode log in chain order.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/episodes", tag = "chain",
    params(("learner" = String, Path), ("subject" = String, Path), LogQuery),
    responses((status = 200, body = Vec<Object>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn episodes(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    Query(q): Query<LogQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let rows = store.episodes(&s, q.from.unwrap_or(1), q.limit.unwrap_or(100).min(1000))?;
            to_value(&rows)
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct VerifyQuery {
    /// A checkpoint's seq: also check the chain still reaches it unchanged.
    pub seq: Option<u64>,
    /// The checkpoint's head hash (64 hex digits), with `seq`.
    pub head_hash: Option<String>,
}

/// Recompute the hash chain; report the first break, if any.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/verify", tag = "chain",
    params(("learner" = String, Path), ("subject" = String, Path), VerifyQuery),
    responses((status = 200, description = "a ChainReport", body = Object), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn verify(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    Query(q): Query<VerifyQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let out = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            let cp = match (q.seq, q.head_hash) {
                (Some(seq), Some(h)) => {
                    if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(ApiError::invalid("head_hash must be 64 hex digits"));
                    }
                    Some(tm_model::episodes::Checkpoint {
                        subject: s.key.to_string(),
                        seq,
                        head_hash: h.to_ascii_lowercase(),
                    })
                }
                (None, None) => None,
                _ => return Err(ApiError::invalid("give both seq and head_hash, or neither")),
            };
            to_value(&store.verify_subject(&s, cp.as_ref())?)
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckpointOut {
    pub subject: String,
    pub seq: u64,
    pub head_hash: String,
}

/// The chain's head as a checkpoint {subject, seq, head_hash}.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/checkpoint", tag = "chain",
    params(("learner" = String, Path), ("subject" = String, Path)),
    responses((status = 200, body = CheckpointOut), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn checkpoint(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
) -> ApiResult<axum::Json<CheckpointOut>> {
    let cp = state
        .blocking(move |store| {
            let s = owned(store, &tenant, &learner, &subject)?;
            Ok(store.checkpoint(&s)?)
        })
        .await?;
    Ok(axum::Json(CheckpointOut {
        subject: cp.subject,
        seq: cp.seq,
        head_hash: cp.head_hash,
    }))
}

pub fn to_value<T: Serialize>(v: &T) -> ApiResult<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| ApiError::internal(e.to_string()))
}
