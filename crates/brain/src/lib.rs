//! The orchestration layer: records events into the stores, imports
//! histories, and (in later layers) builds a block under a deadline and runs
//! the night. It owns no storage format and no user interface.

pub mod beliefs;
pub mod block;
pub mod brain;
pub mod grounding;
pub mod history;
pub mod import;
pub mod map;
pub mod nightly;
pub mod passages;
pub mod recall;
pub mod report;

pub use brain::Brain;

/// Everything that can go wrong while recording or importing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{file}, line {line}: {message}")]
    History {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
    /// A subject or episode the caller named does not exist (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// A subject name that is not `learner/subject` (HTTP 400).
    #[error("not a subject key: {0}")]
    BadKey(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("embedding failed: {0}")]
    Embed(String),
    #[error(transparent)]
    Store(#[from] tm_store::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Places an error raised while applying an event at its history line.
    pub fn at_line(self, source: &str, line: usize) -> Error {
        match self {
            Error::History { .. } => self,
            other => Error::History {
                file: source.to_string(),
                line,
                message: other.to_string(),
            },
        }
    }
}
