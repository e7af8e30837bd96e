//! How does a failure reach an API client? As a status and a stable JSON
//! body `{"error":{"code","message"}}`; codes never change meaning.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

/// The error body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code: `unauthorized`, `forbidden`, `not_found`,
    /// `unknown_subject`, `unknown_learner`, `malformed_json`, `invalid_request`, `invalid_event`,
    /// `payload_too_large`, `unsupported_media_type`, `conflict`,
    /// `external_id_taken`, `model_failed`, `store_unavailable`, `internal`;
    /// and for requests that are not HTTP the server can parse,
    /// `malformed_request`, `uri_too_long`, `headers_too_large`.
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
    pub fn unknown_subject(key: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "unknown_subject",
            format!("no subject {key}"),
        )
    }
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "malformed_json", message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message)
    }
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than {limit} bytes"),
        )
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: tm_brain::cut_message(&self.message).into_owned(),
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<tm_store::Error> for ApiError {
    fn from(e: tm_store::Error) -> Self {
        tm_brain::Error::Store(e).into()
    }
}

/// The status of each kind of failure. Exhaustive: a kind the brain adds
/// does not compile until it has a status here.
pub fn status_of(kind: tm_brain::ErrorKind) -> StatusCode {
    use tm_brain::ErrorKind as K;
    match kind {
        K::InvalidEvent | K::InvalidRequest | K::NotTeaching => StatusCode::UNPROCESSABLE_ENTITY,
        K::UnknownSubject | K::NotFound => StatusCode::NOT_FOUND,
        K::ExternalIdTaken | K::Conflict => StatusCode::CONFLICT,
        K::ModelFailed => StatusCode::BAD_GATEWAY,
        K::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        K::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<tm_brain::Error> for ApiError {
    fn from(e: tm_brain::Error) -> Self {
        let kind = e.kind();
        ApiError::new(status_of(kind), kind.code(), e.to_string())
    }
}

/// A `Result` whose error answers the client.
pub type ApiResult<T> = std::result::Result<T, ApiError>;
