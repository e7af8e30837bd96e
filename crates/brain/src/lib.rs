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
pub mod class;
mod erase;
pub mod export;
#[doc(hidden)]
#[cfg(feature = "testing")]
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

pub use brain::{Brain, EmbedderSource, Erased, Reembedded, Scope};

/// The most characters of an error message a face answers with: a message
/// that quotes what the client sent (a name, an id) quotes a few hundred
/// characters of it, not the 100 KB sent.
pub const MAX_MESSAGE_CHARS: usize = 400;

/// `message` itself when it is short enough, else its first
/// [`MAX_MESSAGE_CHARS`] characters and a word on how much was cut.
pub fn cut_message(message: &str) -> std::borrow::Cow<'_, str> {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => std::borrow::Cow::Borrowed(message),
        Some((end, _)) => std::borrow::Cow::Owned(format!(
            "{}… (cut: {} bytes in all)",
            &message[..end],
            message.len()
        )),
    }
}

/// Everything that can go wrong while recording, recalling or reporting.
///
/// Each variant is one kind of failure, and [`Error::kind`] sorts every
/// variant (the store's too) into an [`ErrorKind`] by an exhaustive match:
/// a new variant does not compile until it says what kind it is, and a face
/// maps every kind to its answer the same way (the HTTP server to a status).
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
    /// A text the request needs is empty (`what` names it).
    #[error("{0} is empty")]
    Empty(&'static str),
    /// An argument of the request in the wrong form (an instant that is not
    /// RFC 3339, a value a tool does not take).
    #[error("{0}")]
    Argument(String),
    /// A value outside what is accepted: a budget, a count, a range of days.
    #[error("{0}")]
    OutOfRange(String),
    /// More than a limit allows: a question's length, a file's bytes or pages.
    #[error("{0}")]
    TooLarge(String),
    /// A file a history names that is refused (it leads outside the
    /// history's folder, or is not a regular file) or cannot be opened.
    #[error("{0}")]
    Path(String),
    /// A file whose content cannot be read (broken, encrypted, binary, a
    /// compression bomb): the reader's own reason.
    #[error(transparent)]
    Unreadable(#[from] tm_ingest::Error),
    /// What the caller named is of a kind the request cannot take (an
    /// episode that is not an answer; a file's or a consolidation's seq to erase).
    #[error("{0}")]
    WrongKind(String),
    /// A tutor's answer that cites a file or page the subject does not hold.
    #[error("{0}")]
    BadCitation(String),
    /// A learner name several owners have: the caller must say whose.
    #[error("{0}")]
    Ambiguous(String),
    /// The subject changed while the request was prepared: asking again works.
    #[error("{0}")]
    Changed(String),
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
    /// The embedder failed (the model or its endpoint).
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

/// What kind of failure an [`Error`] is: what a face answers it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A history line or an event of a list that is malformed or cannot be applied.
    InvalidEvent,
    /// A request that cannot be done as asked.
    InvalidRequest,
    /// The subject named does not exist, or is not the caller's.
    UnknownSubject,
    /// An episode, belief, file or version named does not exist.
    NotFound,
    /// A message sent to be taught carries no teaching cue.
    NotTeaching,
    /// An external id already names another event of the subject.
    ExternalIdTaken,
    /// The subject changed meanwhile: asking again works.
    Conflict,
    /// A model or its endpoint (generative, or the embedder) failed.
    ModelFailed,
    /// The database cannot be reached or is shutting down.
    StoreUnavailable,
    /// A fault of ours.
    Internal,
}

impl ErrorKind {
    /// The stable code every face answers this kind with (the HTTP API's
    /// JSON `error.code`, an MCP tool error's).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidEvent => "invalid_event",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::UnknownSubject => "unknown_subject",
            ErrorKind::NotFound => "not_found",
            ErrorKind::NotTeaching => "not_teaching",
            ErrorKind::ExternalIdTaken => "external_id_taken",
            ErrorKind::Conflict => "conflict",
            ErrorKind::ModelFailed => "model_failed",
            ErrorKind::StoreUnavailable => "store_unavailable",
            ErrorKind::Internal => "internal",
        }
    }

    /// Whether the caller's input caused it (a 4xx), not a fault (5xx).
    pub fn is_input(self) -> bool {
        match self {
            ErrorKind::InvalidEvent
            | ErrorKind::InvalidRequest
            | ErrorKind::UnknownSubject
            | ErrorKind::NotFound
            | ErrorKind::NotTeaching
            | ErrorKind::ExternalIdTaken
            | ErrorKind::Conflict => true,
            ErrorKind::ModelFailed | ErrorKind::StoreUnavailable | ErrorKind::Internal => false,
        }
    }
}

impl Error {
    /// The kind of failure, decided for every variant (and every store
    /// variant) by name: no variant falls through to a default.
    pub fn kind(&self) -> ErrorKind {
        use tm_store::Error as S;
        match self {
            Error::History { .. } | Error::Event { .. } => ErrorKind::InvalidEvent,
            Error::Argument(_)
            | Error::Empty(_)
            | Error::OutOfRange(_)
            | Error::TooLarge(_)
            | Error::Path(_)
            | Error::Unreadable(_)
            | Error::WrongKind(_)
            | Error::BadCitation(_)
            | Error::Ambiguous(_)
            | Error::BadKey(_)
            | Error::Io { .. } => ErrorKind::InvalidRequest,
            Error::Changed(_) => ErrorKind::Conflict,
            Error::UnknownSubject(_) => ErrorKind::UnknownSubject,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::NotTeaching(_) => ErrorKind::NotTeaching,
            Error::Embed(_) | Error::Model(_) => ErrorKind::ModelFailed,
            Error::Internal(_) => ErrorKind::Internal,
            Error::Store(e) => match e {
                S::UnknownSubject(_) => ErrorKind::UnknownSubject,
                S::AmbiguousSubject { .. } | S::Key(_) => ErrorKind::InvalidRequest,
                S::UnknownFile { .. } | S::UnknownEpisode { .. } => ErrorKind::NotFound,
                S::ExternalIdTaken { .. } => ErrorKind::ExternalIdTaken,
                S::Unavailable(_) | S::Open { .. } => ErrorKind::StoreUnavailable,
                S::Sqlite(_)
                | S::Postgres(_)
                | S::UnreadableRow { .. }
                | S::SchemaTooNew { .. }
                | S::Corrupt(_)
                | S::Unsupported(_)
                | S::RolledBack => ErrorKind::Internal,
            },
        }
    }

    /// Whether the caller's input caused the error (a 4xx, not a 5xx).
    pub fn is_input(&self) -> bool {
        self.kind().is_input()
    }

    /// The stable code every face answers this error with.
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// Places an error raised while applying event `index` (0-based) of a
    /// list: input errors name the event; faults stay what they are.
    pub fn at_event(self, index: usize) -> Error {
        let named = match &self {
            Error::Store(e) => e.is_input(),
            Error::BadKey(_) | Error::Io { .. } => false,
            other => matches!(
                other.kind(),
                ErrorKind::InvalidRequest | ErrorKind::Conflict
            ),
        };
        if named {
            Error::Event {
                index: index + 1,
                message: self.to_string(),
            }
        } else {
            self
        }
    }
}

/// A poisoned lock: another thread panicked holding it.
pub(crate) fn poisoned(what: &str) -> Error {
    Error::Internal(format!("the {what} lock is poisoned"))
}
