//! The orchestration layer: records events into the stores (one record
//! path for history files, the HTTP API, teaching and a tutor's answer),
//! builds a block under a deadline, grounds an answer, runs the night and
//! writes the report. It owns no storage format and no user interface.
//!
//! Faces (the CLI, the HTTP server, the benchmark, the demo) hold one
//! [`Brain`] and ask it; the modules below are its parts, usable on a single
//! store connection (tests and benchmarks do).

pub mod beliefs;
pub mod block;
pub mod brain;
mod erase;
pub mod export;
#[doc(hidden)]
pub mod fuzzing;
pub mod grounding;
pub mod history;
pub mod import;
pub mod map;
pub mod nightly;
pub mod passages;
pub mod recall;
pub mod record;
pub mod report;
pub mod turn;

pub use brain::{Brain, EmbedderSource, Erased, Scope};

/// Everything that can go wrong while recording, recalling or reporting.
///
/// Input errors (a malformed history line or event, something that does not
/// exist, a request that cannot be done as asked) and faults (the store, the
/// embedder, a broken invariant) are different variants: a service answers
/// the first with a 4xx and the second with a 500 ([`Error::is_input`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A history file's line is malformed or cannot be applied.
    #[error("{file}, line {line}: {message}")]
    History {
        file: String,
        line: usize,
        message: String,
    },
    /// Event `index` (1-based) of a list of events is malformed or cannot be applied.
    #[error("event {index}: {message}")]
    Event { index: usize, message: String },
    /// A request that cannot be done as asked (input).
    #[error("{0}")]
    Invalid(String),
    /// The subject the caller named does not exist (or is not the caller's).
    #[error("no subject {0}")]
    UnknownSubject(String),
    /// An episode or belief the caller named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A subject name that is not `learner/subject`.
    #[error("not a subject key: {0}")]
    BadKey(String),
    /// A message sent to be taught that carries no teaching cue.
    #[error("{0}")]
    NotTeaching(String),
    /// A file the caller named cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// The embedder failed (a fault: the model or its endpoint).
    #[error("embedding failed: {0}")]
    Embed(String),
    /// A generative model the caller configured failed or answered nothing usable.
    #[error("the model failed: {0}")]
    Model(String),
    /// A fault of ours: a poisoned lock, a cache that lost an entry.
    #[error("internal error: {0}")]
    Internal(String),
    #[error(transparent)]
    Store(#[from] tm_store::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the caller's input caused the error (a 4xx, not a 500).
    pub fn is_input(&self) -> bool {
        match self {
            Error::History { .. }
            | Error::Event { .. }
            | Error::Invalid(_)
            | Error::UnknownSubject(_)
            | Error::NotFound(_)
            | Error::BadKey(_)
            | Error::NotTeaching(_)
            | Error::Io { .. } => true,
            Error::Store(e) => e.is_input(),
            Error::Embed(_) | Error::Model(_) | Error::Internal(_) => false,
        }
    }

    /// The stable code every face answers this error with (the HTTP API's
    /// JSON `error.code`, an MCP tool error's): input codes name what was
    /// wrong, every fault is `internal`.
    pub fn code(&self) -> &'static str {
        use tm_store::Error as S;
        match self {
            Error::History { .. } | Error::Event { .. } => "invalid_event",
            Error::Invalid(_) | Error::BadKey(_) | Error::Io { .. } => "invalid_request",
            Error::UnknownSubject(_) => "unknown_subject",
            Error::NotFound(_) => "not_found",
            Error::NotTeaching(_) => "not_teaching",
            Error::Model(_) => "model_failed",
            Error::Embed(_) | Error::Internal(_) => "internal",
            Error::Store(e) => match e {
                S::UnknownSubject(_) => "unknown_subject",
                S::AmbiguousSubject { .. } => "invalid_request",
                S::UnknownFile { .. } | S::UnknownEpisode { .. } => "not_found",
                S::ExternalIdTaken { .. } => "external_id_taken",
                S::Key(_) => "invalid_request",
                _ => "internal",
            },
        }
    }

    /// Places an error raised while applying event `index` (0-based) of a
    /// list: input errors name the event; faults stay what they are.
    pub fn at_event(self, index: usize) -> Error {
        match self {
            Error::Invalid(message) => Error::Event {
                index: index + 1,
                message,
            },
            Error::Store(e) if e.is_input() => Error::Event {
                index: index + 1,
                message: e.to_string(),
            },
            other => other,
        }
    }
}

/// A poisoned lock: another thread panicked holding it.
pub(crate) fn poisoned(what: &str) -> Error {
    Error::Internal(format!("the {what} lock is poisoned"))
}
