//! Who and what a memory is about: one learner, one subject, named by slugs
//! (`ana/cell-biology`).

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A subject as the stores hold it: its key, its title, the learner's
/// language and time zone ("in July" is July there; dates in the block are
/// written there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subject {
    /// The store's id for the subject (stable, never reused).
    pub id: i64,
    pub key: SubjectKey,
    pub title: String,
    /// BCP 47 tag, when the history named one.
    pub language: Option<String>,
    #[serde(serialize_with = "tz_name")]
    pub timezone: Option<Tz>,
    /// Whose learner it belongs to (learner names are per owner).
    #[serde(skip)]
    pub owner: crate::tenants::Owner,
    /// Erased whole (as a subject, a learner or a tenant): its chain and the
    /// erasure stay, but its name is free for a new subject.
    #[serde(skip)]
    pub retired: bool,
}

impl Subject {
    /// The learner's time zone: the subject's, else UTC.
    pub fn tz(&self) -> Tz {
        self.timezone.unwrap_or(chrono_tz::UTC)
    }
}

fn tz_name<S: serde::Serializer>(tz: &Option<Tz>, s: S) -> Result<S::Ok, S::Error> {
    match tz {
        Some(t) => s.serialize_some(t.name()),
        None => s.serialize_none(),
    }
}

/// Parses an IANA time zone name (`Europe/Berlin`), with the error every
/// entry point shows.
pub fn parse_tz(name: &str) -> Result<Tz, KeyError> {
    name.parse::<Tz>()
        .map_err(|_| KeyError::BadTimeZone(name.to_string()))
}

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
    #[error("{0:?} is not an IANA time zone name such as Europe/Berlin")]
    BadTimeZone(String),
    #[error("\"language\" is not a BCP 47 language tag such as en, es-419 or pt-BR: {0:?}")]
    BadLanguage(String),
    #[error("\"title\" is {0} characters long: at most {MAX_TITLE_CHARS}, on one line")]
    BadTitle(usize),
}

/// The longest subject title, in characters (a course name, not a text).
pub const MAX_TITLE_CHARS: usize = 200;

/// Checks a subject's language: a well-formed BCP 47 tag (`en`, `es-419`,
/// `zh-Hant-TW`), at most 35 bytes.
pub fn check_language(tag: &str) -> Result<(), KeyError> {
    let ok = tag.len() <= 35
        && icu_locale_core::LanguageIdentifier::try_from_str(tag).is_ok()
        && tag.split('-').all(|p| !p.is_empty());
    if ok {
        Ok(())
    } else {
        Err(KeyError::BadLanguage(tag.to_string()))
    }
}

/// Checks a subject's title: at most [`MAX_TITLE_CHARS`] characters, no
/// line breaks or other control characters.
pub fn check_title(title: &str) -> Result<(), KeyError> {
    let n = title.chars().count();
    if n > MAX_TITLE_CHARS || title.chars().any(char::is_control) {
        Err(KeyError::BadTitle(n))
    } else {
        Ok(())
    }
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

    #[test]
    fn languages_are_bcp47_tags_and_titles_are_short_lines() {
        for ok in ["en", "es-419", "pt-BR", "zh-Hant-TW", "id", "ar"] {
            assert_eq!(check_language(ok), Ok(()), "{ok}");
        }
        for bad in [
            "", "english", "e", "en_US", "en--US", "-en", "en-", "x y", "12",
        ] {
            assert!(check_language(bad).is_err(), "{bad}");
        }
        assert!(check_language(&"a".repeat(40)).is_err());
        assert_eq!(check_title("Cell biology"), Ok(()));
        assert_eq!(check_title(&"é".repeat(MAX_TITLE_CHARS)), Ok(()));
        assert_eq!(
            check_title(&"é".repeat(MAX_TITLE_CHARS + 1)),
            Err(KeyError::BadTitle(MAX_TITLE_CHARS + 1))
        );
        assert!(check_title("two\nlines").is_err());
    }
}
