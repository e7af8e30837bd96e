//! The quality benchmark (docs/mechanisms.md §9): how much does each design of the tutor's
//! memory slot earn? Seeded, deterministic learner histories ([`generate`]),
//! questions pre-registered from each subject's recorded data alone
//! ([`questions`]), string and id graders exactly as docs/formats.md "Question file"
//! ([`grade`]), the four designs run over the same passages and budget
//! ([`quality`]), and evidence recall on LoCoMo ([`locomo`]) and LongMemEval
//! ([`longmemeval`]).
//!
//! The order is the point: histories are written, questions are generated
//! from them and written to a file, and only then does any design run.
//! [`questions::generate`] takes a history and its concept map and nothing
//! else; it cannot see a block.

pub mod answers;
pub mod chat;
pub mod generate;
pub mod grade;
pub mod locomo;
pub mod longmemeval;
pub mod programs;
pub mod quality;
pub mod questions;
pub mod rng;
pub mod split;
pub mod subjects;
pub mod templates;

/// A file of the public data sets under `shared/data` beside the repository
/// (`rel`, say `locomo/locomo10.json`), when it is there; else says that the
/// test reading `name` from it is skipped.
#[cfg(test)]
pub(crate) fn public_data(rel: &str, name: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
        .join(rel);
    if path.is_file() {
        return Some(path);
    }
    println!("skipped: {name} not found at {}", path.display());
    None
}

/// At most `n` items, one group after another in turn (the order each group
/// first appears), each group's items in the order given: a small run that
/// still sees every kind of question.
pub fn round_robin<K: Eq + std::hash::Hash + Clone, T>(
    items: impl IntoIterator<Item = (K, T)>,
    n: usize,
) -> Vec<T> {
    let mut order: Vec<K> = Vec::new();
    let mut by: std::collections::HashMap<K, std::collections::VecDeque<T>> =
        std::collections::HashMap::new();
    for (k, item) in items {
        if !by.contains_key(&k) {
            order.push(k.clone());
        }
        by.entry(k).or_default().push_back(item);
    }
    let mut out = Vec::new();
    while out.len() < n {
        let before = out.len();
        for k in &order {
            if out.len() == n {
                break;
            }
            if let Some(item) = by
                .get_mut(k)
                .and_then(std::collections::VecDeque::pop_front)
            {
                out.push(item);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// Everything that can go wrong while generating, running or grading.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Brain(#[from] tm_brain::Error),
    #[error(transparent)]
    Store(#[from] tm_store::Error),
    #[error("embedding failed: {0}")]
    Embed(String),
    #[error("chat endpoint: {0}")]
    Chat(String),
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.display().to_string(),
        source,
    }
}
