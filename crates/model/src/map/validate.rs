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

/// Longest gist or definition kept, in characters; past it a sentence is cut
/// at a clause boundary and marked with an ellipsis.
pub const MAX_DEFINITION_CHARS: usize = 240;

/// A cut never leaves fewer characters than this before its ellipsis.
const MIN_CUT_CHARS: usize = 40;

/// Marks after which a definition is unfinished: "…, such as the cell membrane,".
const CLAUSE_MARKS: [char; 7] = [',', ';', ':', '(', '\u{2014}', '\u{2013}', '-'];

/// Why a would-be definition (or gist) was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DefinitionRejection {
    Empty,
    TooLong {
        chars: usize,
    },
    /// It ends inside a clause: on a comma, a colon, an open parenthesis…
    Unfinished,
}

impl std::fmt::Display for DefinitionRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "empty definition"),
            Self::TooLong { chars } => write!(
                f,
                "too long ({chars} characters, at most {MAX_DEFINITION_CHARS})"
            ),
            Self::Unfinished => write!(f, "ends inside a clause"),
        }
    }
}

/// Accepts a concept's gist or definition, or says why not: not empty, at most
/// [`MAX_DEFINITION_CHARS`] (an ellipsis aside), and never ending inside a
/// clause (",.", ";", ":" or an unclosed parenthesis at its end). Both
/// extractors' output passes it ([`fit_definition`] makes it so).
pub fn validate_definition(text: &str) -> Result<(), DefinitionRejection> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DefinitionRejection::Empty);
    }
    let chars = text.trim_end_matches('\u{2026}').chars().count();
    if chars > MAX_DEFINITION_CHARS {
        return Err(DefinitionRejection::TooLong { chars });
    }
    let body = text.trim_end_matches(['.', '\u{2026}', ' ']);
    if body.ends_with(CLAUSE_MARKS) || depth_at_end(text) > 0 {
        return Err(DefinitionRejection::Unfinished);
    }
    Ok(())
}

/// Open parentheses left unclosed at the end of `text`.
fn depth_at_end(text: &str) -> usize {
    text.chars().fold(0usize, |d, c| match c {
        '(' => d + 1,
        ')' => d.saturating_sub(1),
        _ => d,
    })
}

/// Fits a sentence or phrase to [`validate_definition`]: whitespace collapsed;
/// a text ending on a clause mark (a sentence cut by a list or a page) loses
/// the mark and takes an ellipsis; one longer than the bound is cut at its last
/// clause boundary outside parentheses (a comma, semicolon, colon, dash or an
/// opening parenthesis) within the bound, else at a word, with an ellipsis.
/// Nothing is added to a text that fits: a phrase stays a phrase.
pub fn fit_definition(text: &str) -> String {
    let s = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // "…amino acids,." and "…amino acids," alike end inside a clause.
    let before_dots = s.trim_end_matches(['.', ' ']);
    let cut_short = before_dots.ends_with(CLAUSE_MARKS);
    let trimmed = if cut_short {
        before_dots.trim_end_matches(|c: char| CLAUSE_MARKS.contains(&c) || c == ' ')
    } else {
        s.as_str()
    };
    if trimmed.chars().count() <= MAX_DEFINITION_CHARS && depth_at_end(trimmed) == 0 {
        return if cut_short {
            format!("{trimmed}\u{2026}")
        } else {
            trimmed.to_string()
        };
    }
    // The last clause boundary outside parentheses within the bound.
    let mut depth = 0usize;
    let mut clause: Option<usize> = None;
    let mut word: Option<usize> = None;
    for (n, (i, c)) in trimmed.char_indices().enumerate() {
        if n > MAX_DEFINITION_CHARS {
            break;
        }
        match c {
            '(' => {
                if depth == 0 && n >= MIN_CUT_CHARS {
                    clause = Some(i);
                }
                depth += 1;
            }
            ')' => depth = depth.saturating_sub(1),
            ',' | ';' | ':' | '\u{2014}' | '\u{2013}' if depth == 0 && n >= MIN_CUT_CHARS => {
                clause = Some(i)
            }
            ' ' if depth == 0 => word = Some(i),
            _ => {}
        }
    }
    let at = clause.or(word).unwrap_or_else(|| {
        trimmed
            .char_indices()
            .nth(MAX_DEFINITION_CHARS)
            .map_or(trimmed.len(), |(i, _)| i)
    });
    let head = trimmed[..at].trim_end_matches(|c: char| CLAUSE_MARKS.contains(&c) || c == ' ');
    format!("{head}\u{2026}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_whole_or_cut_at_a_clause() {
        assert_eq!(fit_definition("diffusion of water"), "diffusion of water");
        assert_eq!(
            fit_definition(
                "Osmosis is the diffusion of water across a membrane, such as the cell membrane,"
            ),
            "Osmosis is the diffusion of water across a membrane, such as the cell membrane\u{2026}"
        );
        let long = format!(
            "Active transport is the movement of particles against a gradient, which costs the cell energy (from {}), and it {}.",
            "ATP, mostly, ".repeat(5),
            "happens in every cell all the time ".repeat(4)
        );
        let cut = fit_definition(&long);
        assert!(cut.ends_with('\u{2026}'), "{cut}");
        assert!(cut.chars().count() <= MAX_DEFINITION_CHARS + 1, "{cut}");
        assert!(long.starts_with(cut.trim_end_matches('\u{2026}')), "{cut}");
        assert_eq!(validate_definition(&cut), Ok(()), "{cut}");
        for bad in [
            "Ribosomes build proteins from amino acids,.",
            "The nucleus stores DNA;",
            "Water moves (through pores",
            "",
        ] {
            assert!(validate_definition(bad).is_err(), "{bad}");
            if !bad.is_empty() {
                assert_eq!(validate_definition(&fit_definition(bad)), Ok(()), "{bad}");
            }
        }
        assert_eq!(
            validate_definition("Water crossing a membrane is osmosis."),
            Ok(())
        );
    }

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
