//! Which languages learners write in, how their word lists are read, and how a
//! name becomes a canonical key that compares equal across case, accents,
//! Unicode forms, spacing and punctuation.
//!
//! Word lists live in data files, one per language and concern:
//! `crates/model/data/<concern>/<lang>.txt`, one entry a line, `#` starts a
//! comment. Each module that needs a list embeds its own files with
//! `include_str!` and reads them with [`entries`]; no list is typed in code.

mod canonical;

pub use canonical::canonical_key;

/// The languages every word list covers (BCP 47 primary subtags).
pub const LANGS: [&str; 8] = ["en", "es", "de", "it", "id", "fr", "pt", "ar"];

/// The entries of one data file: trimmed, non-empty lines with `#` comments removed.
pub fn entries(file: &'static str) -> impl Iterator<Item = &'static str> {
    file.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
}
