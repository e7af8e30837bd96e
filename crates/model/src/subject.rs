//! Who and what a memory is about: one learner, one subject, named by slugs
//! (`ana/cell-biology`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// `learner/subject`, both slugs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SubjectKey {
    pub learner: String,
    pub subject: String,
}

/// Why a slug or key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error(
        "{0:?} is not a slug: use 1–64 characters of a-z, 0-9, '-', '_' or '.', starting with a letter or digit"
    )]
    BadSlug(String),
    #[error("{0:?} is not a subject key: write it as learner/subject")]
    BadKey(String),
}

/// Checks a slug: 1–64 of `[a-z0-9._-]`, starting with a letter or digit.
pub fn check_slug(s: &str) -> Result<(), KeyError> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(KeyError::BadSlug(s.to_string()))
    }
}

impl SubjectKey {
    pub fn new(learner: &str, subject: &str) -> Result<Self, KeyError> {
        check_slug(learner)?;
        check_slug(subject)?;
        Ok(SubjectKey {
            learner: learner.to_string(),
            subject: subject.to_string(),
        })
    }

    /// Parses `learner/subject`.
    pub fn parse(s: &str) -> Result<Self, KeyError> {
        let (l, sub) = s
            .split_once('/')
            .ok_or_else(|| KeyError::BadKey(s.to_string()))?;
        SubjectKey::new(l, sub)
    }
}

impl fmt::Display for SubjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.learner, self.subject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_bad_ones_are_named() {
        let k = SubjectKey::parse("ana/cell-biology").unwrap();
        assert_eq!(k.to_string(), "ana/cell-biology");
        assert!(SubjectKey::parse("ana").is_err());
        assert!(SubjectKey::parse("Ana/x").is_err());
        assert!(SubjectKey::parse("ana/../x").is_err());
        assert!(SubjectKey::parse("ana/-x").is_err());
    }
}
