//! The versioned JSON API under `/v1`: what the CLI does, over HTTP, for one
//! tenant's learners. Every handler resolves the subject through the tenant
//! (another tenant's subject is 404, exactly like a missing one) and asks the
//! brain on the blocking pool; events are v1 events (docs/formats.md), read by the same
//! rules as history files and recorded by the brain's one record path.

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
use tm_brain::Brain;
use tm_brain::block::Block;
use tm_brain::brain::{MapView, Taught};
use tm_brain::record::Recorded;
use tm_model::events::{Event, EventBody, FileSource};
use tm_model::subject::{Subject, SubjectKey};
use utoipa::{IntoParams, ToSchema};

/// A query string read into `T`, whose rejections (a value of the wrong
/// form: `?at=10000-01-01`, `?limit=many`) are `422 invalid_request`, as the
/// same mistakes in a JSON body are.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> ApiResult<Self> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(v)) => Ok(ApiQuery(v)),
            Err(rejection) => Err(ApiError::invalid(rejection.body_text())),
        }
    }
}

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
    tm_model::instant::parse(s).map_err(|e| ApiError::invalid(format!("`{field}`: {e}")))
}

/// The instant a request stands for: the one it names, else its arrival
/// (the HTTP edge is where "now" enters the system).
pub fn at_or_now(at: Option<&str>) -> ApiResult<DateTime<Utc>> {
    match at {
        Some(s) => parse_at("at", s),
        None => Ok(Utc::now()),
    }
}

/// The instant of something a tenant writes: [`at_or_now`], and no later
/// than the server's clock and [`tm_model::instant::FUTURE_SKEW`] (a write
/// dated in year 9999 would stand in the log for ever).
pub fn written_at(at: Option<&str>) -> ApiResult<DateTime<Utc>> {
    not_future(at_or_now(at)?)
}

/// `at` when it is not later than the server's clock and its skew.
pub fn not_future(at: DateTime<Utc>) -> ApiResult<DateTime<Utc>> {
    tm_model::instant::not_future(at, Utc::now())
        .map_err(|e| ApiError::invalid(format!("`at`: {e}")))
}

/// The subject, when it exists and its learner is the tenant's; 404 otherwise
/// (another tenant's subject must be indistinguishable from a missing one).
pub fn owned(brain: &Brain, tenant: &Tenant, learner: &str, subject: &str) -> ApiResult<Subject> {
    Ok(brain.tenant_subject(tenant.id, &format!("{learner}/{subject}"))?)
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
            timezone: s.timezone.map(|t| t.name().to_string()),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectList {
    pub subjects: Vec<SubjectOut>,
}

/// Create a subject (and its learner, for this tenant). Learner names are
/// the tenant's own: another tenant's learner of the same name is neither
/// seen nor in the way, and the name of a subject erased whole is free
/// again (a new subject).
#[utoipa::path(post, path = "/v1/subjects", tag = "subjects",
    request_body = CreateSubject,
    responses(
        (status = 201, description = "created", body = SubjectOut),
        (status = 200, description = "it already existed", body = SubjectOut),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_subject(
    State(state): State<AppState>,
    tenant: Tenant,
    JsonBody(body): JsonBody<CreateSubject>,
) -> ApiResult<Response> {
    let key = SubjectKey::parse(&format!("{}/{}", body.learner, body.subject))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    let tz = body
        .timezone
        .as_deref()
        .map(tm_model::subject::parse_tz)
        .transpose()
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    let at = written_at(body.at.as_deref())?;
    let (subject, created) = state
        .blocking(move |brain| {
            Ok(brain.create_subject(
                tenant.id,
                &key,
                body.title.as_deref().unwrap_or(""),
                body.language.as_deref(),
                tz,
                at,
            )?)
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
        .blocking(move |brain| Ok(brain.tenant_subjects(tenant.id)?))
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
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let files = brain
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
                episodes: brain.episode_count(&s)?,
                subject: SubjectOut::from(&s),
                files,
            })
        })
        .await?;
    Ok(axum::Json(detail))
}

// ---------------------------------------------------------------- events

/// Reads the events a client sent (one object or an array): each by the
/// v1 rules (docs/formats.md), no subject lines, and no `path` (the server's file
/// system is not the client's). Errors name the event (1-based).
pub fn client_events(body: serde_json::Value) -> ApiResult<Vec<Event>> {
    use tm_model::events::ClientEventsError as E;
    tm_model::events::from_client(body, Utc::now()).map_err(|e| match e {
        E::Shape(m) => ApiError::invalid(m),
        E::Event { index, message } => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_event",
            format!("event {index}: {message}"),
        ),
    })
}

/// One event as `POST …/events` takes it (docs/formats.md, v1), for the
/// OpenAPI document and the clients generated from it; the handler reads the
/// JSON itself ([`client_events`]), with the same rules as a history file.
/// Each kind is a schema of its own, told apart by `type`.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum EventIn {
    Learner(LearnerEvent),
    Tutor(TutorEvent),
    Check(CheckEvent),
    Quiz(QuizEvent),
    File(FileEvent),
    FileRemoved(FileRemovedEvent),
}

/// The `type` of an event schema: one value each (the variant's name in
/// snake case).
macro_rules! event_type {
    ($name:ident, $variant:ident) => {
        #[derive(Deserialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        pub enum $name {
            $variant,
        }
    };
}
event_type!(LearnerType, Learner);
event_type!(TutorType, Tutor);
event_type!(CheckType, Check);
event_type!(QuizType, Quiz);
event_type!(FileType, File);
event_type!(FileRemovedType, FileRemoved);

/// The learner wrote something.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct LearnerEvent {
    r#type: LearnerType,
    /// Your reference, unique within the subject.
    id: Option<String>,
    /// RFC 3339.
    at: String,
    text: String,
}

/// The tutor answered, citing files.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct TutorEvent {
    r#type: TutorType,
    id: Option<String>,
    at: String,
    text: String,
    #[serde(default)]
    cites: Vec<CiteIn>,
}

/// A check of the learner's understanding of a topic.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct CheckEvent {
    r#type: CheckType,
    id: Option<String>,
    at: String,
    /// The concept or topic checked.
    topic: String,
    verdict: VerdictIn,
    evaluation: Option<String>,
    /// The tutor's predicted chance of a right answer, in [0, 1].
    predicted: Option<f64>,
}

/// A quiz's score.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct QuizEvent {
    r#type: QuizType,
    id: Option<String>,
    at: String,
    title: String,
    score: f64,
    max: f64,
    #[serde(default)]
    concepts: Vec<String>,
}

/// A file's text, inline (`content`, or `pages`: one string a page); bytes
/// go to `…/files`.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct FileEvent {
    r#type: FileType,
    id: Option<String>,
    at: String,
    name: String,
    content: Option<String>,
    pages: Option<Vec<String>>,
}

/// A file taken away.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct FileRemovedEvent {
    r#type: FileRemovedType,
    id: Option<String>,
    at: String,
    name: String,
}

/// A page of a file an answer cites.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct CiteIn {
    file: String,
    page: Option<u32>,
}

/// How a check went.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum VerdictIn {
    Right,
    Wrong,
    Partial,
}

/// Record events: learner messages, tutor answers with cites, checks,
/// quizzes, inline files and file removals, in v1 history shapes (docs/formats.md).
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/events", tag = "events",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body(content = Vec<EventIn>, description = "an array of v1 events (docs/formats.md); a single event object is accepted too"),
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
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.record(&s, &events)?)
        })
        .await?;
    Ok(axum::Json(out))
}

/// The multipart form of a file upload, as the OpenAPI document describes
/// it (the handler reads the fields one by one, [`upload_file`]).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file's bytes, with a filename.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// The file's name (default: the filename sent with `file`).
    name: Option<String>,
    /// When it was added (RFC 3339; default: now).
    at: Option<String>,
}

/// Upload a file (multipart field `file`; optional fields `name` and `at`).
/// Markdown, plain text and PDF are read; the same name again replaces it.
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/files", tag = "events",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body(content_type = "multipart/form-data", content = UploadForm,
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
    let mut seen = std::collections::HashSet::new();
    while let Some(field) = multipart.next_field().await.map_err(multipart_err)? {
        let field_name = field.name().unwrap_or("").to_string();
        if !seen.insert(field_name.clone()) {
            return Err(ApiError::invalid(format!(
                "the multipart field {field_name:?} is sent twice: one file, one name and one time a request"
            )));
        }
        match field_name.as_str() {
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
    // One rule for a file's name, however it arrives (here or in an event).
    tm_model::events::file_name(&name).map_err(|e| ApiError::invalid(e.0))?;
    let at = written_at(at.as_deref())?;
    let event = Event::new(
        at,
        EventBody::File {
            name,
            source: FileSource::Bytes(Vec::from(bytes)),
        },
    );
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.record(&s, &[event])?)
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
    let at = written_at(body.at.as_deref())?;
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.teach(&s, &body.text, at, body.id)?)
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

/// A block request made concrete for a subject: its time zone unless the
/// body names one.
pub fn block_request(
    brain: &Brain,
    body: &BlockBody,
    subject: &Subject,
) -> ApiResult<tm_brain::block::BlockRequest> {
    let at = at_or_now(body.at.as_deref())?;
    let mut req = brain.block_request(subject, &body.question, at, body.budget);
    if let Some(tz) = &body.tz {
        req.tz = tm_model::subject::parse_tz(tz).map_err(|e| ApiError::invalid(e.to_string()))?;
    }
    Ok(req)
}

/// Builds the block under the brain's hard cap (past it, `dropped: true`
/// at once) and counts it.
pub fn build_block(
    state: &AppState,
    brain: &Brain,
    subject: &Subject,
    req: tm_brain::block::BlockRequest,
) -> ApiResult<Block> {
    let block = brain.block(subject, req)?;
    state.metrics().block(block.dropped);
    Ok(block)
}

/// Build the memory block for a question, under the time cap (read only).
#[utoipa::path(post, path = "/v1/subjects/{learner}/{subject}/block", tag = "turns",
    params(("learner" = String, Path), ("subject" = String, Path)),
    request_body = BlockBody,
    responses((status = 200, body = Block), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn block(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    JsonBody(body): JsonBody<BlockBody>,
) -> ApiResult<axum::Json<Block>> {
    let st = state.clone();
    let b = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let req = block_request(brain, &body, &s)?;
            build_block(&st, brain, &s, req)
        })
        .await?;
    Ok(axum::Json(b))
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
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let beliefs = brain.beliefs(&s)?;
            let mut current = Vec::new();
            for b in &beliefs.current {
                let history = brain.belief_history(&s, &b.subject_key)?;
                let mut v = to_value(b)?;
                v["history"] = to_value(&history)?;
                current.push(v);
            }
            Ok(BeliefsOut {
                current,
                checks: to_value(&beliefs.checks)?,
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
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let rows = brain.belief_history(&s, &about)?;
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

/// The concept map and its teaching order.
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/map", tag = "map",
    params(("learner" = String, Path), ("subject" = String, Path)),
    responses((status = 200, body = MapView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn map(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
) -> ApiResult<axum::Json<MapView>> {
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.map_view(&s)?)
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
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
    ApiQuery(q): ApiQuery<LogQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            let rows = brain.episodes(&s, q.from.unwrap_or(1), q.limit.unwrap_or(100).min(1000))?;
            to_value(&rows)
        })
        .await?;
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
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
    ApiQuery(q): ApiQuery<VerifyQuery>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let out = state
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
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
            to_value(&brain.verify(&s, cp.as_ref())?)
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
        .blocking(move |brain| {
            let s = owned(brain, &tenant, &learner, &subject)?;
            Ok(brain.checkpoint(&s)?)
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
