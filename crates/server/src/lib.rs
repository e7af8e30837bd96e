//! The HTTP face of Tutor Memory (the only crate that knows HTTP): a
//! versioned JSON API under `/v1` with its OpenAPI 3.1 document generated from
//! the handlers, tenants by API key, the chat turn, the web report,
//! `/healthz` and `/metrics`.
//!
//! [`app`] builds the whole router from a state, so tests drive it with
//! `tower::ServiceExt::oneshot` and no socket; [`serve`] runs it with a
//! graceful shutdown.

pub mod admin;
pub mod api;
pub mod auth;
pub mod class;
pub mod conn;
pub mod erase;
pub mod error;
pub mod export;
pub mod grounding;
pub mod home;
pub mod metrics;
pub mod session;
pub mod state;
pub mod turn;
pub mod view;
pub mod web;
pub mod wire;

pub use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use error::ApiError;
use futures_util::FutureExt;
pub use state::{AppState, Config};
use std::panic::AssertUnwindSafe;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    info(title = "Tutor Memory", description = "A tutor's memory of each learner's subject."),
    modifiers(&BearerAuth),
    components(schemas(error::ErrorBody)),
    tags((name = "subjects"), (name = "events"), (name = "turns"), (name = "beliefs"),
        (name = "map"), (name = "chain"), (name = "erasure"), (name = "report"), (name = "classes"), (name = "admin"), (name = "service"))
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Liveness: the process answers and its database opens.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "ok", body = String), (status = 503, body = error::ErrorBody)))]
async fn healthz(State(state): State<AppState>) -> Response {
    match state.blocking(|brain| Ok(brain.schema_version()?)).await {
        Ok(_) => "ok\n".into_response(),
        Err(e) => {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", e.message).into_response()
        }
    }
}

/// Prometheus text exposition of the service's counters.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text format", body = String)))]
async fn metrics_text(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// The routes and the OpenAPI document they describe; `max_upload_bytes`
/// bounds a file upload's body.
fn routes(max_upload_bytes: usize) -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let uploads = OpenApiRouter::new()
        .routes(routes!(api::upload_file))
        .layer(DefaultBodyLimit::max(max_upload_bytes));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(healthz))
        .routes(routes!(metrics_text))
        .routes(routes!(api::create_subject, api::list_subjects))
        .routes(routes!(api::get_subject, erase::erase_subject))
        .routes(routes!(erase::erase_learner))
        .routes(routes!(erase::erase_episode))
        .routes(routes!(erase::erase_tenant))
        .routes(routes!(export::export_subject))
        .routes(routes!(export::export_learner))
        .routes(routes!(api::post_events))
        .routes(routes!(api::teach))
        .routes(routes!(api::block))
        .routes(routes!(turn::turn))
        .routes(routes!(grounding::grounding))
        .routes(routes!(admin::nightly))
        .routes(routes!(api::beliefs))
        .routes(routes!(api::belief_history))
        .routes(routes!(api::map))
        .routes(routes!(api::episodes))
        .routes(routes!(api::verify))
        .routes(routes!(api::checkpoint))
        .routes(routes!(web::report_json))
        .routes(routes!(class::class_json))
        .merge(uploads)
        .split_for_parts()
}

/// The OpenAPI 3.1 document, generated from the handlers' annotations (the
/// same for every configuration: `tutor-memory openapi` prints it).
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes(Config::default().max_upload_bytes).1
}

/// The whole service as a router.
pub fn app(state: AppState) -> Router {
    let (router, doc) = routes(state.config().max_upload_bytes);
    let doc = std::sync::Arc::new(doc);
    let body_timeout = state.config().limits.body_timeout;
    let header_bytes = state.config().limits.header_bytes;
    router
        .route(
            "/v1/openapi.json",
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { axum::Json(doc.as_ref().clone()) }
            }),
        )
        .route(
            "/subjects/{learner}/{subject}",
            axum::routing::get(web::report_page),
        )
        .route("/", axum::routing::get(home::home_page))
        .route("/classes/{course}", axum::routing::get(class::class_page))
        .merge(
            Router::new()
                .nest_service("/mcp", tm_mcp::http_service(state.brain().clone()))
                .layer(middleware::from_fn_with_state(state.clone(), mcp_auth)),
        )
        .layer(DefaultBodyLimit::max(state.config().max_json_bytes))
        .layer(middleware::from_fn(move |req, next| {
            conn::body_deadline(body_timeout, req, next)
        }))
        .layer(middleware::from_fn(move |req, next| {
            conn::head_limit(header_bytes, req, next)
        }))
        .layer(middleware::from_fn(json_errors))
        .layer(middleware::from_fn(guarded))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(middleware::from_fn(catch_panic))
        .with_state(state)
}

/// The MCP endpoint takes the same keys as `/v1` (`Authorization: Bearer`):
/// the tenant's scope goes to the MCP server in the request's extensions;
/// no key, or a wrong one, is the API's 401.
async fn mcp_auth(State(state): State<AppState>, req: Request, next: Next) -> Response {
    use axum::extract::FromRequestParts;
    let (mut parts, body) = req.into_parts();
    match auth::Tenant::from_request_parts(&mut parts, &state).await {
        Ok(tenant) => {
            parts.extensions.insert(tm_mcp::Scope::Tenant(tenant.id));
            let body = if parts.method == axum::http::Method::POST {
                match parsed_json_rpc(body, state.config().max_json_bytes).await {
                    Ok(bytes) => axum::body::Body::from(bytes),
                    Err(answer) => return answer,
                }
            } else {
                body
            };
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => e.into_response(),
    }
}

/// A JSON-RPC message's bytes, read whole (at most `limit`) and checked to
/// be JSON before the MCP server sees them: a body that is not (nested past
/// the parser's depth, cut short, not JSON at all) is JSON-RPC's parse error
/// with `400 Bad Request`, and one over the limit the API's `413`.
async fn parsed_json_rpc(
    body: axum::body::Body,
    limit: usize,
) -> Result<axum::body::Bytes, Response> {
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return Err(ApiError::too_large(limit).into_response());
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Array(_)) => Err((
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32600, "message": "batch requests are not supported: send one JSON-RPC message a request"},
            })),
        )
            .into_response()),
        Ok(_) => Ok(bytes),
        Err(e) => Err((
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": format!("parse error: {e}")},
            })),
        )
            .into_response()),
    }
}

/// Any error response that is not already JSON or HTML (axum's own: unknown
/// route, wrong method, a path that does not parse, a body over the limit)
/// is rewritten into the API's error shape.
async fn json_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if kind.starts_with("application/json") || kind.starts_with("text/html") {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let (code, fallback) = match status {
        StatusCode::NOT_FOUND => ("not_found", "no such route"),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "method not allowed here"),
        StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "the request body is too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", "unsupported media type"),
        StatusCode::BAD_REQUEST => ("bad_request", "bad request"),
        s if s.is_server_error() => ("internal", "internal error"),
        _ => ("invalid_request", "invalid request"),
    };
    let message = if text.is_empty() {
        fallback.to_string()
    } else {
        text
    };
    ApiError::new(status, code, message).into_response()
}

/// Every answer is personal data or about it: no cache keeps one unless
/// its handler said otherwise (`Cache-Control: no-store`), no page is framed
/// by another site (`X-Frame-Options: DENY`, besides each page's
/// `frame-ancestors 'none'`), and no browser guesses another type.
async fn guarded(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

/// A panic anywhere in a handler is a 500 answer, never a dead connection or
/// a dead server.
async fn catch_panic(req: Request, next: Next) -> Response {
    match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(r) => r,
        Err(_) => ApiError::internal("the request failed unexpectedly").into_response(),
    }
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops taking
/// connections and lets requests in flight finish (their writes commit before
/// their answers, so no acknowledged write is lost). The connections are held
/// to the state's [`conn::Limits`]; requests hyper cannot parse are answered
/// in the JSON error shape too ([`wire`]).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.config().limits.clone();
    conn::serve(listener, app(state), limits, shutdown).await
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Middleware: times every request under its route template (never the raw
/// path, so learner names do not become label values).
async fn track(
    State(state): State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(req).await;
    state.metrics().observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
