//! Which words and headings does the map treat specially, in each language?
//!
//! Every list lives in `crates/model/data/<concern>/<lang>.txt` and is read once:
//! section titles (the file's furniture), glossary headings, definition cues
//! ("* is a", "called *"), finite verbs that make a name a sentence, and
//! function words that never start or end a concept's name. The offline
//! extractor in `tm-ingest` reads the same lists through this module.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::lang::{LANGS, canonical_key, entries};

macro_rules! per_lang {
    ($concern:literal) => {
        [
            include_str!(concat!("../../data/", $concern, "/en.txt")),
            include_str!(concat!("../../data/", $concern, "/es.txt")),
            include_str!(concat!("../../data/", $concern, "/de.txt")),
            include_str!(concat!("../../data/", $concern, "/it.txt")),
            include_str!(concat!("../../data/", $concern, "/id.txt")),
            include_str!(concat!("../../data/", $concern, "/fr.txt")),
            include_str!(concat!("../../data/", $concern, "/pt.txt")),
            include_str!(concat!("../../data/", $concern, "/ar.txt")),
        ]
    };
}

const SECTION_TITLES: [&str; 8] = per_lang!("section_titles");
const GLOSSARY_TITLES: [&str; 8] = per_lang!("glossary_titles");
const DEFINITION_CUES: [&str; 8] = per_lang!("definition_cues");
const COPULAS: [&str; 8] = per_lang!("copulas");
const FUNCTION_WORDS: [&str; 8] = per_lang!("function_words");
const CONTENT_VERBS: [&str; 8] = per_lang!("verbs");
const NAMING: [&str; 8] = per_lang!("naming");
const INSTRUCTIONS: [&str; 8] = per_lang!("instructions");
const ABBREVIATIONS: [&str; 8] = per_lang!("abbreviations");

/// One section-title entry as canonical words; `None` stands for the `#` number slot.
type TitlePattern = Vec<Option<String>>;

static TITLES: LazyLock<Vec<TitlePattern>> = LazyLock::new(|| {
    SECTION_TITLES
        .iter()
        .flat_map(|file| title_entries(file))
        .map(|entry| {
            entry
                .split_whitespace()
                .flat_map(|word| {
                    if word == "#" {
                        vec![None]
                    } else {
                        canonical_key(word)
                            .split(' ')
                            .map(|w| Some(w.to_string()))
                            .collect()
                    }
                })
                .filter(|w| w.as_ref().is_none_or(|w| !w.is_empty()))
                .collect()
        })
        .collect()
});

/// Like [`entries`], but `#` only starts a comment at the start of a line:
/// inside an entry it is the number slot ("chapter #").
fn title_entries(file: &'static str) -> impl Iterator<Item = &'static str> {
    file.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

static GLOSSARIES: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    GLOSSARY_TITLES
        .iter()
        .flat_map(|f| entries(f))
        .map(canonical_key)
        .collect()
});

static VERBS: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    COPULAS
        .iter()
        .flat_map(|f| entries(f))
        .map(str::to_lowercase)
        .collect()
});

static FUNCTION: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    FUNCTION_WORDS
        .iter()
        .flat_map(|f| entries(f))
        .map(canonical_key)
        .collect()
});

static CONTENT: LazyLock<BTreeSet<String>> = LazyLock::new(|| lowercased(&CONTENT_VERBS));
/// Task verbs as canonical keys: those that open a heading ("solve"), and
/// those written `* lösen` that close one ("Gleichungen lösen").
static INSTRUCTION: LazyLock<(BTreeSet<String>, BTreeSet<String>)> = LazyLock::new(|| {
    let mut opening = BTreeSet::new();
    let mut closing = BTreeSet::new();
    for e in INSTRUCTIONS.iter().flat_map(|f| entries(f)) {
        match e.strip_prefix('*') {
            Some(verb) => closing.insert(canonical_key(verb)),
            None => opening.insert(canonical_key(e)),
        };
    }
    (opening, closing)
});
static ABBREVIATION: LazyLock<BTreeSet<String>> = LazyLock::new(|| lowercased(&ABBREVIATIONS));
static NAMERS: LazyLock<Vec<Vec<String>>> = LazyLock::new(|| {
    let mut out: Vec<Vec<String>> = NAMING
        .iter()
        .flat_map(|f| entries(f))
        .map(|e| canonical_key(e).split(' ').map(str::to_string).collect())
        .collect();
    // Longest first: "we call" before "call".
    out.sort_by_key(|w: &Vec<String>| std::cmp::Reverse(w.len()));
    out
});

fn lowercased(files: &[&'static str]) -> BTreeSet<String> {
    files
        .iter()
        .flat_map(|f| entries(f))
        .map(str::to_lowercase)
        .collect()
}

static CUES: LazyLock<Vec<DefinitionCue>> = LazyLock::new(|| {
    LANGS
        .iter()
        .zip(DEFINITION_CUES)
        .flat_map(|(lang, file)| entries(file).filter_map(move |e| DefinitionCue::parse(lang, e)))
        .collect()
});

/// A pattern that marks a sentence as defining a term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionCue {
    pub lang: &'static str,
    /// `true` for "* is a" (the term opens the sentence), `false` for "called *"
    /// (the term closes it).
    pub term_first: bool,
    /// The cue's canonical words, without the `*`.
    pub words: Vec<String>,
}

impl DefinitionCue {
    fn parse(lang: &'static str, entry: &str) -> Option<Self> {
        let term_first = entry.starts_with('*');
        let rest = entry.trim_matches('*');
        let key = canonical_key(rest);
        if key.is_empty() || !(term_first || entry.ends_with('*')) {
            return None;
        }
        Some(Self {
            lang,
            term_first,
            words: key.split(' ').map(str::to_string).collect(),
        })
    }
}

/// Every definition cue of every language.
pub fn definition_cues() -> &'static [DefinitionCue] {
    &CUES
}

/// Is this heading (or would-be name) a section title in any supported language?
/// Returns the matching entry's canonical form for reports.
pub fn section_title(name: &str) -> Option<String> {
    let key = canonical_key(name);
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    // "3.1 Review Questions": a leading section number is part of the furniture.
    let start = words.iter().take_while(|w| is_number(w)).count();
    let words = &words[start..];
    if words.is_empty() {
        return None;
    }
    TITLES
        .iter()
        .find(|pattern| title_matches(pattern, words))
        .map(|p| {
            p.iter()
                .map(|w| w.as_deref().unwrap_or("#"))
                .collect::<Vec<_>>()
                .join(" ")
        })
}

/// Is this heading a key-term list or glossary ("Key Terms", "Glosario")?
pub fn is_glossary_title(heading: &str) -> bool {
    let key = canonical_key(heading);
    let start = key.split(' ').take_while(|w| is_number(w)).count();
    let rest = key.split(' ').skip(start).collect::<Vec<_>>().join(" ");
    GLOSSARIES.contains(&rest)
}

/// Is this lowercased word a finite verb ("is", "ist", "è", "adalah") in some language?
pub fn is_finite_verb(word: &str) -> bool {
    VERBS.contains(&word.to_lowercase())
}

/// Is this lowercased word a verb of explanation ("packages", "produce",
/// "menghasilkan") in some language? A short name cut from a sentence ends
/// before one; unlike [`is_finite_verb`] it does not make a name a sentence.
pub fn is_content_verb(word: &str) -> bool {
    CONTENT.contains(&word.to_lowercase())
}

/// Is this heading a task in some language: opened by a task verb ("Solve
/// …", "Representing …", "Calcola …", "Tentukan …"), or closed by one where
/// the language puts the verb last ("Gleichungen lösen")?
pub fn is_task_heading(heading: &str) -> bool {
    let key = canonical_key(heading);
    let mut words = key.split(' ').filter(|w| !w.is_empty());
    let (opening, closing) = &*INSTRUCTION;
    words.next().is_some_and(|w| opening.contains(w))
        || words.next_back().is_some_and(|w| closing.contains(w))
}

/// Is `word` (lowercased, without its final dot) an abbreviation whose dot
/// does not end a sentence ("e.g", "fig", "bzw")?
pub fn is_abbreviation(word: &str) -> bool {
    ABBREVIATION.contains(&word.to_lowercase())
}

/// The naming phrases ("we call", "chiamiamo", "menyebut") as canonical
/// words, longest first.
pub fn naming_phrases() -> &'static [Vec<String>] {
    &NAMERS
}

/// Is this word (compared canonically) a function word in some language?
pub fn is_function_word(word: &str) -> bool {
    FUNCTION.contains(&canonical_key(word))
}

/// Digits or a roman numeral: what a `#` slot in a section title matches.
pub fn is_number(word: &str) -> bool {
    !word.is_empty()
        && (word.chars().all(|c| c.is_ascii_digit())
            || word
                .chars()
                .all(|c| matches!(c, 'i' | 'v' | 'x' | 'l' | 'c' | 'd' | 'm')))
}

/// Exact match for plain titles; a numbered title (`chapter #`) matches its
/// words, one or more number words for each `#`, and then anything after.
fn title_matches(pattern: &[Option<String>], words: &[&str]) -> bool {
    let numbered = pattern.iter().any(Option::is_none);
    let mut i = 0;
    for slot in pattern {
        match slot {
            Some(w) => {
                if words.get(i) != Some(&w.as_str()) {
                    return false;
                }
                i += 1;
            }
            None => {
                let n = words[i.min(words.len())..]
                    .iter()
                    .take_while(|w| is_number(w))
                    .count();
                if n == 0 {
                    return false;
                }
                i += n;
            }
        }
    }
    if numbered { true } else { i == words.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_titles_in_every_language() {
        for t in [
            "Introduction",
            "KEY TERMS",
            "3.1 Review Questions",
            "Chapter 3",
            "Chapter IV",
            "Chapter 4: Cells",
            "Section 3.2",
            "Términos clave",
            "Capítulo 11",
            "Zusammenfassung",
            "Kapitel 2",
            "Riassunto",
            "Ringkasan",
            "Résumé",
            "Glossário",
            "الملخص",
            // "What to keep" boxes, in every language listed.
            "Key points",
            "Punti chiave",
            "Wichtige Punkte",
            "Poin penting",
            "Puntos clave",
            "À retenir",
            "Pontos-chave",
            "النقاط الرئيسية",
            "¿Sabías que…?",
            "L'essentiel",
        ] {
            assert!(section_title(t).is_some(), "{t}");
        }
        for t in [
            "Osmosis",
            "Chapter",
            "Cell membrane",
            "Key enzymes",
            "Section size",
        ] {
            assert_eq!(section_title(t), None, "{t}");
        }
    }

    #[test]
    fn task_headings_in_every_language() {
        for t in [
            "Solve Equations with Fractions",
            "Representing Linear Functions",
            "Resuelve ecuaciones lineales",
            "Calcula el área",
            "Gleichungen lösen",
            "Lineare Gleichungen mit zwei Variablen lösen",
            "Berechne den Umfang",
            "Risolvi le equazioni",
            "Calcoliamo la pendenza",
            "Tentukan nilai x",
            "Hitunglah luas segitiga",
            "Résolvez l'équation",
            "Calculez la pente",
            "Resolva a equação",
            "أوجد قيمة س",
        ] {
            assert!(is_task_heading(t), "{t}");
        }
        for t in [
            "Osmosis",
            "Linear equations",
            "Lösungen",
            "Das Lösen von Salzen im Wasser", // a closing verb must end it
            "Cell membrane",
            "Trace elements",
            "Persamaan linear",
            "Equazioni di secondo grado",
        ] {
            assert!(!is_task_heading(t), "{t}");
        }
    }

    #[test]
    fn glossary_headings() {
        assert!(is_glossary_title("Key Terms"));
        assert!(is_glossary_title("Glosario"));
        assert!(!is_glossary_title("Review Questions"));
    }

    #[test]
    fn cues_parse_both_sides() {
        let cues = definition_cues();
        assert!(
            cues.iter()
                .any(|c| c.lang == "de" && c.term_first && c.words == ["ist", "ein"])
        );
        assert!(
            cues.iter()
                .any(|c| c.lang == "en" && !c.term_first && c.words == ["called"])
        );
    }
}
