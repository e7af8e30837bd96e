//! What every concern's queries share: LIMIT values, errors for rows
//! that cannot be read, JSON text and free-text columns.

use crate::{Error, Result};
use postgres::Row;

/// A row count for LIMIT: "all" (`usize::MAX`) is the largest PostgreSQL takes.
pub(crate) fn lim(n: usize) -> i64 {
    n.min(i64::MAX as usize) as i64
}

pub(crate) fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(what.to_string())
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(corrupt)
}

// Free text a learner wrote (an episode's text and summary, its external
// id, a check's topic, a subject's title) may hold any character, NUL
// included, which a PostgreSQL TEXT cannot: those columns are BYTEA holding
// the UTF-8 bytes, exactly as SQLite keeps them (and sorted as SQLite sorts).

/// The free-text column `i`.
pub(crate) fn free_text(r: &Row, i: usize) -> Result<&str> {
    std::str::from_utf8(r.get::<_, &[u8]>(i))
        .map_err(|_| corrupt(format!("column {i} holds text that is not UTF-8")))
}

/// The free-text column `i`, which may be NULL.
pub(crate) fn free_text_opt(r: &Row, i: usize) -> Result<Option<&str>> {
    r.get::<_, Option<&[u8]>>(i)
        .map(|b| {
            std::str::from_utf8(b)
                .map_err(|_| corrupt(format!("column {i} holds text that is not UTF-8")))
        })
        .transpose()
}
