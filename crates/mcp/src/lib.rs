//! Tutor Memory as a Model Context Protocol server: what an agent host (a
//! tutor built on an MCP client) calls instead of the HTTP API. Tools and
//! resources, each a thin call into the brain — no logic of its own — over
//! stdio ([`serve_stdio`], `tutor-memory mcp`) or the streamable HTTP
//! transport ([`http_service`], mounted at `/mcp` by `tutor-memory serve`).
//!
//! Who may see what: over stdio the server runs as the operator (like the
//! CLI: every subject); over HTTP every request carries a [`Scope`] that the
//! mounting service puts in the request's extensions after checking the API
//! key, and a subject of another tenant answers exactly like a missing one.
//!
//! Errors: a tool the brain refuses (an unknown subject, a malformed event)
//! answers a tool error (`isError: true`) whose structured content is the
//! HTTP API's JSON error, `{"error": {"code", "message"}}`, with the same
//! stable code, so the model reads why; malformed arguments are refused by
//! the SDK with the reason; a fault is a JSON-RPC internal error.

use chrono::{DateTime, Utc};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use std::sync::Arc;
use tm_brain::Brain;
use tm_model::subject::Subject;

/// Whose subjects a request may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every subject: the local operator (stdio, like the CLI).
    Operator,
    /// The subjects of one tenant's learners (an API key's).
    Tenant(i64),
}

/// The MCP server over one brain.
#[derive(Clone)]
pub struct Memory {
    brain: Arc<Brain>,
    /// The scope when a request brings none (stdio); `None` over HTTP, where
    /// a request without one is refused.
    default: Option<Scope>,
    tool_router: ToolRouter<Self>,
}

/// What the model is told about the server.
const INSTRUCTIONS: &str = "Tutor Memory keeps a tutor's memory of each learner's subject (named learner/subject): \
an append-only log of what happened, a concept map of the learner's files, and beliefs about the learner. \
Before answering a learner, call memory_block with their question and put the block in your prompt; \
record what happened with record_events (v1 events, docs/formats.md: learner, tutor, check, quiz, file), \
and record your answer with record_answer, passing the ids the block recalled.";

fn error_body(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({"error": {"code": code, "message": tm_brain::cut_message(message)}})
}

/// A refusal the model should read: a tool error with the HTTP API's error
/// JSON; a fault of ours is a protocol error.
fn answer_error(e: tm_brain::Error) -> Result<CallToolResult, ErrorData> {
    let code = e.code();
    let message = e.to_string();
    if !e.is_input() {
        return Err(ErrorData::internal_error(
            message.clone(),
            Some(error_body(code, &message)),
        ));
    }
    let body = error_body(code, &message);
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    r.structured_content = Some(body);
    Ok(r)
}

/// A value as the tool's answer: JSON text for the model, and the same as
/// structured content for a program.
fn answer<T: Serialize>(value: &T) -> Result<CallToolResult, ErrorData> {
    let v = serde_json::to_value(value)
        .map_err(|e| ErrorData::internal_error(format!("cannot serialise: {e}"), None))?;
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(match v {
        o @ serde_json::Value::Object(_) => o,
        other => serde_json::json!({ "result": other }),
    });
    Ok(r)
}

fn bad(message: impl Into<String>) -> tm_brain::Error {
    tm_brain::Error::Argument(message.into())
}

/// The instant of something the client writes: [`instant`], and no later
/// than this server's clock and its skew.
fn written(at: Option<&str>) -> tm_brain::Result<DateTime<Utc>> {
    let t = instant(at)?;
    tm_model::instant::not_future(t, Utc::now()).map_err(|e| bad(format!("`at`: {e}")))
}

/// An optional RFC 3339 instant; none is now (the edge where "now" enters).
fn instant(at: Option<&str>) -> tm_brain::Result<DateTime<Utc>> {
    match at {
        None => Ok(Utc::now()),
        Some(s) => tm_model::instant::parse(s).map_err(|e| bad(format!("`at`: {e}"))),
    }
}

/// The subject named `key` when the scope may see it.
fn subject(brain: &Brain, scope: Scope, key: &str) -> tm_brain::Result<Subject> {
    match scope {
        Scope::Operator => brain.subject(key),
        Scope::Tenant(id) => brain.tenant_subject(id, key),
    }
}

/// The subjects the scope may see.
fn subjects(brain: &Brain, scope: Scope) -> tm_brain::Result<Vec<Subject>> {
    match scope {
        Scope::Operator => brain.subjects(),
        Scope::Tenant(id) => brain.tenant_subjects(id),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubjectArgs {
    /// The subject, `learner/subject` (e.g. `ana/cell-biology`).
    pub subject: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// The learner's question, as they asked it.
    pub question: String,
    /// The turn's instant (RFC 3339; default: now). Ages and windows such as "in July" count from it.
    #[serde(default)]
    pub at: Option<String>,
    /// Token budget of the block (o200k tokens, 50–32000; default 1200).
    #[serde(default)]
    pub budget: Option<usize>,
    /// The learner's IANA time zone (default: the subject's).
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventsArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// One v1 event (docs/formats.md), or an array of them, in time order. Each has `type`
    /// (`learner` with `text`; `tutor` with `text` and optional `cites`
    /// [{file, page}]; `check` with `topic`, `verdict` right|wrong|partial, optional
    /// `evaluation` and `predicted`; `quiz` with `title`, `score`, `max`, optional
    /// `concepts`; `file` with `name` and `content` or `pages`; `file_removed` with
    /// `name`), an RFC 3339 `at`, and an optional unique `id`.
    pub events: serde_json::Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeachArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// The learner's message that teaches ("Remember that …", "Treat X as …"; in any supported language).
    pub text: String,
    /// When it was said (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
    /// External id for the episode.
    #[serde(default)]
    pub id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// The tutor's answer, as given to the learner.
    pub answer: String,
    /// The learner's question (the material's passages retrieved for it are what the answer's claims are traced to).
    #[serde(default)]
    pub question: Option<String>,
    /// Ids of the memories the turn's block recalled (`recalled[].id` of memory_block).
    #[serde(default)]
    pub recalled: Vec<i64>,
    /// When the answer was given (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// The concept or topic the belief is about (any spelling: it is folded).
    pub about: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    /// The subject, `learner/subject`.
    pub subject: String,
    /// The report's instant (RFC 3339; default: now).
    #[serde(default)]
    pub at: Option<String>,
}

/// A subject as listed.
#[derive(Debug, Serialize)]
struct SubjectOut {
    key: String,
    title: String,
    language: Option<String>,
    timezone: Option<String>,
}

/// `tutor-memory://subjects/{learner}/{subject}/{report|map}`.
const RESOURCE_PREFIX: &str = "tutor-memory://subjects/";

fn resource_uri(s: &Subject, what: &str) -> String {
    format!("{RESOURCE_PREFIX}{}/{what}", s.key)
}

impl Memory {
    /// The scope of a request: the one the HTTP mount put in its extensions,
    /// else this server's default (stdio); neither is a refusal.
    fn scope(&self, ctx: &RequestContext<RoleServer>) -> Result<Scope, ErrorData> {
        if let Some(parts) = ctx.extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<Scope>().copied().ok_or_else(|| {
                ErrorData::invalid_request(
                    "no API key was checked for this request",
                    Some(error_body("unauthorized", "send the tenant's API key")),
                )
            });
        }
        self.default.ok_or_else(|| {
            ErrorData::invalid_request(
                "this server needs an API key for every request",
                Some(error_body("unauthorized", "send the tenant's API key")),
            )
        })
    }

    /// Runs blocking brain work off the async runtime and answers with its
    /// value, or the refusal the model should read.
    async fn call<T: Serialize + Send + 'static>(
        &self,
        ctx: &RequestContext<RoleServer>,
        f: impl FnOnce(&Brain, Scope) -> tm_brain::Result<T> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let scope = self.scope(ctx)?;
        let brain = self.brain.clone();
        match tokio::task::spawn_blocking(move || f(&brain, scope)).await {
            Ok(Ok(v)) => answer(&v),
            Ok(Err(e)) => answer_error(e),
            Err(e) => Err(ErrorData::internal_error(
                format!("the work failed: {e}"),
                Some(error_body("internal", "the work failed")),
            )),
        }
    }
}

#[tool_router]
impl Memory {
    /// A server over `brain`; `default` is the scope of requests that bring
    /// none (the operator over stdio; `None` over HTTP).
    pub fn new(brain: Arc<Brain>, default: Option<Scope>) -> Memory {
        Memory {
            brain,
            default,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "The subjects this key may use, each with its key (learner/subject), title, language and time zone."
    )]
    async fn list_subjects(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, |brain, scope| {
            Ok(subjects(brain, scope)?
                .into_iter()
                .map(|s| SubjectOut {
                    key: s.key.to_string(),
                    title: s.title,
                    language: s.language,
                    timezone: s.timezone.map(|t| t.name().to_string()),
                })
                .collect::<Vec<_>>())
        })
        .await
    }

    #[tool(
        description = "The memory block for a learner's question: a small, ranked, honest summary of what the tutor knows about this learner and subject (beliefs, relevant past episodes with dates, the concept map, time windows such as 'in July'), within a token budget. Put `block` into your prompt. Returns block, mode (record or ordinary), tokens, window and recalled (the episodes it cites, with ids to pass to record_answer)."
    )]
    async fn memory_block(
        &self,
        Parameters(a): Parameters<BlockArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let s = subject(brain, scope, &a.subject)?;
            let mut req = brain.block_request(&s, &a.question, instant(a.at.as_deref())?, a.budget);
            if let Some(tz) = &a.tz {
                req.tz = tm_model::subject::parse_tz(tz).map_err(|e| bad(e.to_string()))?;
            }
            brain.block(&s, req)
        })
        .await
    }

    #[tool(
        description = "Record what happened in a subject: one v1 event (docs/formats.md) or an array of them (learner messages, tutor answers with cites, checks with verdicts, quizzes, files with inline content, file removals), in one transaction. Recording the same event twice changes nothing. Returns what was appended, with each event's episode id and seq."
    )]
    async fn record_events(
        &self,
        Parameters(a): Parameters<EventsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let s = subject(brain, scope, &a.subject)?;
            use tm_model::events::ClientEventsError as E;
            let events = tm_model::events::from_client(a.events, chrono::Utc::now()).map_err(
                |e| match e {
                    E::Shape(m) => bad(m),
                    E::Event { index, message } => tm_brain::Error::Event { index, message },
                },
            )?;
            brain.record(&s, &events)
        })
        .await
    }

    #[tool(
        description = "Teach the tutor something the learner asked it to remember (only an explicit cue such as 'remember that …' or 'treat X as …' teaches; questions never do). The note lands on the concept it is about in the map."
    )]
    async fn teach(
        &self,
        Parameters(a): Parameters<TeachArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let s = subject(brain, scope, &a.subject)?;
            brain.teach(&s, &a.text, written(a.at.as_deref())?, a.id)
        })
        .await
    }

    #[tool(
        description = "Record the tutor's answer to the learner with the ids of the memories its block recalled, and get its grounding: each claim traced to a line of the learner's files or to a dated memory, and a stance (answered, partial, couldnt)."
    )]
    async fn record_answer(
        &self,
        Parameters(a): Parameters<AnswerArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let s = subject(brain, scope, &a.subject)?;
            let passages = match &a.question {
                Some(q) => brain.passages(&s, q, tm_brain::turn::PASSAGES)?,
                None => Vec::new(),
            };
            brain.answer(
                &s,
                &a.answer,
                written(a.at.as_deref())?,
                &a.recalled,
                &passages,
            )
        })
        .await
    }

    #[tool(
        description = "What the tutor currently believes the learner knows (each belief with its claim, confidence and whether it decayed), and honest counts of the recorded checks."
    )]
    async fn beliefs(
        &self,
        Parameters(a): Parameters<SubjectArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            brain.beliefs(&subject(brain, scope, &a.subject)?)
        })
        .await
    }

    #[tool(
        description = "The history of the belief about one concept or topic, oldest first: every change of mind with its reason."
    )]
    async fn belief_history(
        &self,
        Parameters(a): Parameters<HistoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let rows = brain.belief_history(&subject(brain, scope, &a.subject)?, &a.about)?;
            if rows.is_empty() {
                return Err(tm_brain::Error::NotFound(format!(
                    "no belief about {:?} has been recorded",
                    a.about
                )));
            }
            Ok(rows)
        })
        .await
    }

    #[tool(
        description = "The subject's concept map built from the learner's files: concepts with readiness, centrality, what each builds on and its sources, the teaching order (prerequisites first) and the readiness of the material."
    )]
    async fn subject_map(
        &self,
        Parameters(a): Parameters<SubjectArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            brain.map_view(&subject(brain, scope, &a.subject)?)
        })
        .await
    }

    #[tool(
        description = "The subject report for a teacher or learner: readiness of the material, teaching order, beliefs with their history, checks, calibration, stale citations, questions the files could not answer, activity by month."
    )]
    async fn subject_report(
        &self,
        Parameters(a): Parameters<ReportArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            let s = subject(brain, scope, &a.subject)?;
            brain.report(&s, instant(a.at.as_deref())?)
        })
        .await
    }

    #[tool(
        description = "Recompute the subject's hash chain and report whether the episode log is intact, or the first place it stops being what was written."
    )]
    async fn verify_chain(
        &self,
        Parameters(a): Parameters<SubjectArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, move |brain, scope| {
            brain.verify(&subject(brain, scope, &a.subject)?, None)
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Memory {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_instructions(INSTRUCTIONS);
        info.server_info.name = "tutor-memory".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let scope = self.scope(&ctx)?;
        let brain = self.brain.clone();
        let listed = tokio::task::spawn_blocking(move || subjects(&brain, scope))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the work failed: {e}"), None))?
            .map_err(resource_error)?;
        let mut resources = Vec::with_capacity(listed.len() * 2);
        for s in &listed {
            resources.push(
                Resource::new(resource_uri(s, "report"), format!("{} report", s.key))
                    .with_description("The subject report (JSON)")
                    .with_mime_type("application/json"),
            );
            resources.push(
                Resource::new(resource_uri(s, "map"), format!("{} map", s.key))
                    .with_description("The concept map and its teaching order (JSON)")
                    .with_mime_type("application/json"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let scope = self.scope(&ctx)?;
        let uri = request.uri.clone();
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no resource {uri}"),
                Some(error_body("not_found", "no such resource")),
            )
        };
        let rest = uri.strip_prefix(RESOURCE_PREFIX).ok_or_else(not_found)?;
        let (key, what) = rest.rsplit_once('/').ok_or_else(not_found)?;
        let (key, what) = (key.to_string(), what.to_string());
        if what != "report" && what != "map" {
            return Err(not_found());
        }
        let brain = self.brain.clone();
        let json = tokio::task::spawn_blocking(move || -> tm_brain::Result<serde_json::Value> {
            let s = subject(&brain, scope, &key)?;
            let v = if what == "report" {
                serde_json::to_value(brain.report(&s, Utc::now())?)
            } else {
                serde_json::to_value(brain.map_view(&s)?)
            };
            v.map_err(|e| tm_brain::Error::Internal(format!("cannot serialise: {e}")))
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the work failed: {e}"), None))?
        .map_err(resource_error)?;
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("application/json"),
        ])
        .into())
    }
}

/// A brain error while listing or reading resources.
fn resource_error(e: tm_brain::Error) -> ErrorData {
    use tm_brain::ErrorKind as K;
    let kind = e.kind();
    let message = e.to_string();
    let data = Some(error_body(kind.code(), &message));
    match kind {
        K::UnknownSubject | K::NotFound => ErrorData::resource_not_found(message, data),
        K::InvalidEvent | K::InvalidRequest | K::NotTeaching | K::ExternalIdTaken | K::Conflict => {
            ErrorData::invalid_params(message, data)
        }
        K::ModelFailed | K::StoreUnavailable | K::Internal => {
            ErrorData::internal_error(message, data)
        }
    }
}

/// Serves the memory over stdin/stdout as the operator until the client
/// closes the connection. Nothing else may write to stdout meanwhile.
pub async fn serve_stdio(brain: Arc<Brain>) -> Result<(), String> {
    let running = Memory::new(brain, Some(Scope::Operator))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("starting the MCP server: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the MCP server stopped: {e}"))
}

/// The streamable HTTP transport over the memory, to mount (at `/mcp`) behind
/// a layer that checks the API key and puts the request's [`Scope`] in its
/// extensions. Stateless (every POST stands alone, so any of several server
/// processes may answer it) and answering JSON. The `Host` check of the SDK
/// is off: every request must carry a key, which a rebound page cannot send.
pub fn http_service(brain: Arc<Brain>) -> StreamableHttpService<Memory, LocalSessionManager> {
    StreamableHttpService::new(
        move || Ok(Memory::new(brain.clone(), None)),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    )
}
