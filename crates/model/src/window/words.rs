//! The per-language time words of `data/time/<lang>.txt` (format in that
//! folder's README.md), read once into one table keyed by folded phrase.

use std::collections::{HashMap, HashSet};

use crate::lang::{LANGS, canonical_key, entries};

use super::months::lang_bit;

const FILES: [&str; 8] = [
    include_str!("../../data/time/en.txt"),
    include_str!("../../data/time/es.txt"),
    include_str!("../../data/time/de.txt"),
    include_str!("../../data/time/it.txt"),
    include_str!("../../data/time/id.txt"),
    include_str!("../../data/time/fr.txt"),
    include_str!("../../data/time/pt.txt"),
    include_str!("../../data/time/ar.txt"),
];

/// The calendar unit of a relative phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Day,
    Week,
    Month,
    Year,
}

/// What one data-file line says about its phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meaning {
    Relative { unit: Unit, offset: i32, weak: bool },
    Prep,
    Link,
    Weak,
    Hint,
    None,
    And,
}

/// Every phrase of every language: folded phrase → (meaning, language bit).
pub(crate) struct Words {
    pub phrases: HashMap<String, Vec<(Meaning, u8)>>,
    pub max_tokens: usize,
    /// Folded month names marked `weak`.
    pub weak_months: HashSet<String>,
}

impl Words {
    pub fn load() -> Words {
        let mut phrases: HashMap<String, Vec<(Meaning, u8)>> = HashMap::new();
        let mut weak_months = HashSet::new();
        for (lang, file) in LANGS.iter().zip(FILES) {
            for line in entries(file) {
                // A malformed line is skipped here and caught by a test.
                let Some((phrase, meaning)) = parse_line(line) else {
                    continue;
                };
                let key = canonical_key(phrase);
                if key.is_empty() {
                    continue;
                }
                if meaning == Meaning::Weak {
                    weak_months.insert(key.clone());
                }
                phrases
                    .entry(key)
                    .or_default()
                    .push((meaning, lang_bit(lang)));
            }
        }
        let max_tokens = phrases
            .keys()
            .map(|k| k.split(' ').count())
            .max()
            .unwrap_or(1);
        Words {
            phrases,
            max_tokens,
            weak_months,
        }
    }

    /// The meanings of a folded phrase.
    pub fn get(&self, key: &str) -> &[(Meaning, u8)] {
        self.phrases.get(key).map_or(&[], Vec::as_slice)
    }
}

/// `phrase = meaning`; the phrase may itself hold no `=`.
pub(crate) fn parse_line(line: &str) -> Option<(&str, Meaning)> {
    let (phrase, meaning) = line.rsplit_once('=')?;
    let phrase = phrase.trim();
    if phrase.is_empty() {
        return None;
    }
    let mut parts = meaning.split_whitespace();
    let head = parts.next()?;
    let tail: Vec<&str> = parts.collect();
    let meaning = match (head, tail.as_slice()) {
        ("prep", []) => Meaning::Prep,
        ("link", []) => Meaning::Link,
        ("weak", []) => Meaning::Weak,
        ("hint", []) => Meaning::Hint,
        ("none", []) => Meaning::None,
        ("and", []) => Meaning::And,
        (relative, rest) => {
            let weak = match rest {
                [] => false,
                ["weak"] => true,
                _ => return None,
            };
            let (unit, offset) = relative.split_once(':')?;
            let unit = match unit {
                "day" => Unit::Day,
                "week" => Unit::Week,
                "month" => Unit::Month,
                "year" => Unit::Year,
                _ => return None,
            };
            let offset: i32 = offset.parse().ok()?;
            Meaning::Relative { unit, offset, weak }
        }
    };
    Some((phrase, meaning))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_line_parses() {
        for (lang, file) in LANGS.iter().zip(FILES) {
            for line in entries(file) {
                assert!(parse_line(line).is_some(), "{lang}: bad line {line:?}");
            }
        }
    }

    #[test]
    fn every_language_has_the_core_relative_phrases() {
        for (lang, file) in LANGS.iter().zip(FILES) {
            let relatives: Vec<(Unit, i32)> = entries(file)
                .filter_map(parse_line)
                .filter_map(|(_, m)| match m {
                    Meaning::Relative { unit, offset, .. } => Some((unit, offset)),
                    _ => None,
                })
                .collect();
            for wanted in [
                (Unit::Day, -1),
                (Unit::Day, 0),
                (Unit::Week, -1),
                (Unit::Week, 0),
                (Unit::Month, -1),
                (Unit::Month, 0),
                (Unit::Year, -1),
                (Unit::Year, 0),
            ] {
                assert!(relatives.contains(&wanted), "{lang} lacks {wanted:?}");
            }
        }
    }

    #[test]
    fn malformed_lines_are_rejected() {
        assert_eq!(parse_line("yesterday = day"), None);
        assert_eq!(parse_line("yesterday = fortnight:-1"), None);
        assert_eq!(parse_line("= prep"), None);
        assert_eq!(parse_line("hier = day:-1 strong"), None);
        assert_eq!(
            parse_line("hier = day:-1 weak"),
            Some((
                "hier",
                Meaning::Relative {
                    unit: Unit::Day,
                    offset: -1,
                    weak: true
                }
            ))
        );
    }
}
