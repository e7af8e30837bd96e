//! Is this string fit to be a concept's name?
//!
//! A name is rejected when it is empty, purely numeric, a section title in any
//! supported language ("Introduction", "Key terms", "Chapter 3"), longer than
//! [`MAX_WORDS`] words or [`MAX_CHARS`] characters, a sentence, or a bare symbol.
//!
//! "A sentence" is kept simple on purpose: the name ends with `.`, `?` or `!`,
//! or one of its words is a finite verb from `data/copulas/<lang>.txt`
//! ("is", "are", "ist", "es", "è", "adalah"…), compared lowercased with accents
//! kept so Italian "e" (and) is not taken for "è" (is).

use serde::{Deserialize, Serialize};

use super::lexicon;
use crate::lang::canonical_key;

/// A name of more words than this reads as a phrase or a title, not a concept.
pub const MAX_WORDS: usize = 6;
/// A name of more characters than this is a sentence fragment.
pub const MAX_CHARS: usize = 60;

/// Why a would-be name was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Rejection {
    Empty,
    Numeric,
    SectionTitle {
        title: String,
    },
    TooLong {
        words: usize,
        chars: usize,
    },
    Sentence,
    /// Every word is a single character: a variable or formula ("x", "f(x)").
    Symbol,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "empty name"),
            Self::Numeric => write!(f, "a number is not a name"),
            Self::SectionTitle { title } => write!(f, "section title ({title})"),
            Self::TooLong { words, chars } => {
                write!(f, "too long ({words} words, {chars} characters)")
            }
            Self::Sentence => write!(f, "a sentence, not a name"),
            Self::Symbol => write!(f, "a symbol, not a name"),
        }
    }
}

/// Accepts a concept name or says why not.
pub fn validate_name(name: &str) -> Result<(), Rejection> {
    let name = name.trim();
    let key = canonical_key(name);
    if key.is_empty() {
        return Err(Rejection::Empty);
    }
    let words: Vec<&str> = key.split(' ').collect();
    if words
        .iter()
        .all(|w| lexicon::is_number(w) && w.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(Rejection::Numeric);
    }
    if let Some(title) = lexicon::section_title(name) {
        return Err(Rejection::SectionTitle { title });
    }
    let chars = name.chars().count();
    let raw_words = name.split_whitespace().count();
    if raw_words > MAX_WORDS || chars > MAX_CHARS {
        return Err(Rejection::TooLong {
            words: raw_words,
            chars,
        });
    }
    if name.ends_with(['.', '?', '!', '¿', '؟', '。'])
        || name
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
            .any(lexicon::is_finite_verb)
    {
        return Err(Rejection::Sentence);
    }
    if words.iter().all(|w| w.chars().count() == 1) {
        return Err(Rejection::Symbol);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concept_names_pass() {
        for n in [
            "Osmosis",
            "cell membrane",
            "Ósmosis",
            "Golgi apparatus",
            "ATP",
            "Vitamin A",
            "sodium-potassium pump",
            "Sistema e ambiente",
            "الخلية",
            "Zellmembran",
        ] {
            assert_eq!(validate_name(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn furniture_sentences_and_noise_are_refused() {
        assert!(matches!(
            validate_name("Review Questions"),
            Err(Rejection::SectionTitle { .. })
        ));
        assert!(matches!(
            validate_name("Preguntas de repaso"),
            Err(Rejection::SectionTitle { .. })
        ));
        assert!(matches!(
            validate_name("Lernziele"),
            Err(Rejection::SectionTitle { .. })
        ));
        assert!(matches!(
            validate_name("Chapter 12"),
            Err(Rejection::SectionTitle { .. })
        ));
        assert!(matches!(
            validate_name("Capitolo XII"),
            Err(Rejection::SectionTitle { .. })
        ));
        assert_eq!(validate_name("   "), Err(Rejection::Empty));
        assert_eq!(validate_name("3.14"), Err(Rejection::Numeric));
        assert_eq!(
            validate_name("Osmosis is passive"),
            Err(Rejection::Sentence)
        );
        assert_eq!(
            validate_name("La ósmosis es pasiva"),
            Err(Rejection::Sentence)
        );
        assert_eq!(
            validate_name("L'osmosi è passiva"),
            Err(Rejection::Sentence)
        );
        assert_eq!(validate_name("Osmosis."), Err(Rejection::Sentence));
        assert_eq!(validate_name("g(x)"), Err(Rejection::Symbol));
        assert!(matches!(
            validate_name("the movement of water across a membrane by diffusion"),
            Err(Rejection::TooLong { words: 9, .. })
        ));
        assert!(matches!(
            validate_name(&"a".repeat(61)),
            Err(Rejection::TooLong { .. })
        ));
    }
}
