//! Which language a question is written in, and the word stems that let a
//! question's "research" find a turn's "researching".
//!
//! The language comes from the question's own stop words (the files under
//! `data/stopwords/`, one per language): the language with the most of them,
//! when one has strictly more than every other. Stems are Snowball's
//! (`rust-stemmers`) for the languages it has; Indonesian has none, so its
//! words are only ever matched as they are written.

use std::collections::HashSet;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::{LANGS, canonical_key, entries};

const STOPWORDS: [(&str, &str); 8] = [
    ("en", include_str!("../../data/stopwords/en.txt")),
    ("es", include_str!("../../data/stopwords/es.txt")),
    ("de", include_str!("../../data/stopwords/de.txt")),
    ("it", include_str!("../../data/stopwords/it.txt")),
    ("id", include_str!("../../data/stopwords/id.txt")),
    ("fr", include_str!("../../data/stopwords/fr.txt")),
    ("pt", include_str!("../../data/stopwords/pt.txt")),
    ("ar", include_str!("../../data/stopwords/ar.txt")),
];

/// Each language's stop words, folded as terms are (an entry such as
/// "est-ce" folds to several words: each one is a stop word).
pub(crate) fn stopword_sets() -> &'static [(&'static str, HashSet<String>)] {
    static SETS: OnceLock<Vec<(&'static str, HashSet<String>)>> = OnceLock::new();
    SETS.get_or_init(|| {
        STOPWORDS
            .iter()
            .map(|(lang, file)| {
                let set = entries(file)
                    .flat_map(|e| {
                        canonical_key(e)
                            .split(' ')
                            .map(str::to_owned)
                            .collect::<Vec<_>>()
                    })
                    .filter(|w| !w.is_empty())
                    .collect();
                (*lang, set)
            })
            .collect()
    })
}

/// The language of `text` by its stop words: the one with the most of them,
/// when it has strictly more than any other; `None` when no language leads
/// (no stop word at all, or a tie).
pub fn language_of(text: &str) -> Option<&'static str> {
    let words: Vec<String> = canonical_key(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let mut best: Option<(&'static str, usize)> = None;
    let mut tied = false;
    for (lang, set) in stopword_sets() {
        let n = words.iter().filter(|w| set.contains(*w)).count();
        match best {
            _ if n == 0 => {}
            Some((_, b)) if n < b => {}
            Some((_, b)) if n == b => tied = true,
            _ => {
                best = Some((lang, n));
                tied = false;
            }
        }
    }
    if tied { None } else { best.map(|(l, _)| l) }
}

/// The Snowball stemmer of a language (a BCP 47 primary subtag such as `en`,
/// or a longer tag such as `pt-BR`), if there is one.
fn stemmer(lang: &str) -> Option<&'static Stemmer> {
    static STEMMERS: OnceLock<Vec<(&'static str, Option<Stemmer>)>> = OnceLock::new();
    let primary = super::primary_subtag(lang);
    let all = STEMMERS.get_or_init(|| {
        LANGS
            .iter()
            .map(|l| {
                let algorithm = match *l {
                    "en" => Some(Algorithm::English),
                    "es" => Some(Algorithm::Spanish),
                    "de" => Some(Algorithm::German),
                    "it" => Some(Algorithm::Italian),
                    "fr" => Some(Algorithm::French),
                    "pt" => Some(Algorithm::Portuguese),
                    "ar" => Some(Algorithm::Arabic),
                    _ => None,
                };
                (*l, algorithm.map(Stemmer::create))
            })
            .collect()
    });
    all.iter()
        .find(|(l, _)| *l == primary)
        .and_then(|(_, s)| s.as_ref())
}

/// The stem of a folded term in `lang`, or `None` when the language has no
/// stemmer or the term is not a word of letters (digits, CJK bigrams and
/// mixed tokens are matched only as written).
pub fn stem(term: &str, lang: &str) -> Option<String> {
    if term.is_empty()
        || !term.chars().all(char::is_alphabetic)
        || term.chars().any(crate::recall::is_cjk)
    {
        return None;
    }
    Some(stemmer(lang)?.stem(term).into_owned())
}

/// Shortest stem that is looked up at all: below this a stem is a fragment
/// ("ar", "th") shared by unrelated words.
pub const MIN_STEM_CHARS: usize = 3;

/// Where to look for a term's inflections in a sorted vocabulary: its stem,
/// less the stem's last letter when the stem is long (Snowball's stem is not
/// always a prefix of every form: "studi" for "study"). `None` when the term
/// has no stem or too short a one. Whatever the prefix finds must still have
/// the same stem ([`same_stem`]).
pub fn inflection_prefix(term: &str, lang: &str) -> Option<String> {
    let s = stem(term, lang)?;
    let n = s.chars().count();
    if n < MIN_STEM_CHARS {
        return None;
    }
    let keep = if n >= 5 { n - 1 } else { n };
    Some(s.chars().take(keep).collect())
}

/// Whether two folded terms are forms of one word in `lang` (same stem).
pub fn same_stem(a: &str, b: &str, lang: &str) -> bool {
    match (stem(a, lang), stem(b, lang)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_says_its_language_by_its_stop_words() {
        assert_eq!(language_of("What did Caroline research?"), Some("en"));
        assert_eq!(
            language_of("¿Qué investigó Carolina el año pasado?"),
            Some("es")
        );
        assert_eq!(
            language_of("Was hat Carolina über die Zelle gelernt?"),
            Some("de")
        );
        assert_eq!(language_of("Caroline"), None);
        assert_eq!(language_of(""), None);
    }

    #[test]
    fn inflections_share_a_stem_and_unrelated_words_do_not() {
        assert!(same_stem("research", "researching", "en"));
        assert!(same_stem("paint", "painted", "en"));
        assert!(same_stem("study", "studies", "en"));
        assert!(same_stem("adopt", "adoption", "en"));
        assert!(!same_stem("art", "article", "en"));
        assert!(!same_stem("paint", "pain", "en"));
        assert!(same_stem("investigar", "investigado", "es"));
        // Indonesian has no stemmer: forms match only as written.
        assert!(!same_stem("belajar", "belajar", "id"));
        // Digits and CJK are never stemmed.
        assert_eq!(stem("2023", "en"), None);
        assert_eq!(stem("細胞", "en"), None);
    }

    #[test]
    fn the_prefix_finds_every_form_the_stem_stands_for() {
        let p = inflection_prefix("studies", "en").unwrap();
        for form in ["study", "studies", "studied", "studying"] {
            assert!(form.starts_with(&p), "{form} does not start with {p}");
            assert!(same_stem("studies", form, "en"));
        }
        assert_eq!(inflection_prefix("go", "en"), None);
        assert_eq!(inflection_prefix("x1", "en"), None);
        assert!(inflection_prefix("research", "pt-BR").is_some());
    }
}
