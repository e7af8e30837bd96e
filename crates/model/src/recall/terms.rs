//! Which words of a question say what it is about, and how the full-text pool
//! is asked for them.
//!
//! One tokenisation serves both sides: [`index_text`] is what the store puts
//! in its FTS5 column, [`distinctive_terms`] is what a question contributes,
//! and [`fts5_query`] turns those terms into a MATCH expression that can never
//! be malformed.
//!
//! # Tokenisation
//! The text is folded with [`canonical_key`] (NFKC, case fold, accents off
//! where they are optional, punctuation to spaces) and cut at Unicode word
//! boundaries (UAX #29). Runs of Han, Hiragana, Katakana and Hangul have no
//! spaces worth trusting, so each run becomes its overlapping character
//! bigrams ("細胞膜" → "細胞", "胞膜"; a lone character stays itself).
//!
//! # What the store must index
//! Neither stock FTS5 tokenizer agrees with this: `unicode61` keeps a whole CJK
//! sentence as one token and splits at combining marks, `trigram` never matches
//! a term shorter than three characters (every CJK bigram). So the store keeps a
//! column holding [`index_text`] (terms already folded and separated by single
//! spaces) in a table declared with `tokenize = 'ascii'`: that tokenizer splits
//! only at ASCII non-alphanumerics and treats every other character as part of
//! a token, so each of our terms is exactly one FTS5 token and a quoted query
//! term matches it exactly.

use std::collections::HashSet;
use std::sync::OnceLock;

use unicode_segmentation::UnicodeSegmentation;

use crate::lang::canonical_key;

/// The union of every language's stop words, folded like the terms they are
/// compared with. One set for all languages because a question does not say
/// which language it is in; the price is that a few words that are function
/// words in one language ("son", "die") are dropped in all of them.
fn stopwords() -> &'static HashSet<String> {
    static SET: OnceLock<HashSet<String>> = OnceLock::new();
    SET.get_or_init(|| {
        crate::lang::stem::stopword_sets()
            .iter()
            .flat_map(|(_, set)| set.iter().cloned())
            .collect()
    })
}

/// Every term of `text`, in order and with repeats: what the store indexes.
pub fn index_terms(text: &str) -> Vec<String> {
    let folded = canonical_key(text);
    let mut terms = Vec::new();
    // A CJK run may span several UAX #29 segments (each ideograph is its own
    // word there); adjacent segments are glued back into one run first.
    let mut run = String::new();
    let mut run_end = 0;
    for (start, word) in folded.unicode_word_indices() {
        for (offset, piece) in split_cjk(word) {
            let at = start + offset;
            if piece.cjk {
                if !run.is_empty() && run_end != at {
                    push_bigrams(&run, &mut terms);
                    run.clear();
                }
                run.push_str(piece.text);
                run_end = at + piece.text.len();
            } else {
                push_bigrams(&run, &mut terms);
                run.clear();
                terms.push(piece.text.to_owned());
            }
        }
    }
    push_bigrams(&run, &mut terms);
    terms
}

/// [`index_terms`] joined by single spaces: the text of the store's FTS5 column.
pub fn index_text(text: &str) -> String {
    index_terms(text).join(" ")
}

/// What one episode is indexed under, in either engine: its text's terms,
/// then each concept's terms.
pub fn episode_index_text(text: &str, concepts: &[String]) -> String {
    let mut terms = index_text(text);
    for concept in concepts {
        terms.push(' ');
        terms.push_str(&index_text(concept));
    }
    terms
}

/// The words of a question that say what it is about, each once, in order of
/// first appearance: index terms minus stop words, one-letter Latin tokens and
/// numbers (a four-digit number is kept: it is most likely a year).
pub fn distinctive_terms(question: &str) -> Vec<String> {
    let stop = stopwords();
    let mut seen = HashSet::new();
    index_terms(question)
        .into_iter()
        .filter(|t| !stop.contains(t))
        .filter(|t| !is_single_latin(t))
        .filter(|t| !is_number(t) || t.chars().count() == 4)
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// The fraction of `terms` found among the index terms of `text`, in [0, 1]:
/// a lexical signal for stores that do not rank with BM25. Empty terms give 0.
pub fn lexical_overlap(terms: &[String], text: &str) -> f32 {
    if terms.is_empty() {
        return 0.0;
    }
    let have: HashSet<String> = index_terms(text).into_iter().collect();
    let hits = terms.iter().filter(|t| have.contains(*t)).count();
    hits as f32 / terms.len() as f32
}

struct Piece<'a> {
    text: &'a str,
    cjk: bool,
}

/// Cuts a word into maximal runs of CJK and non-CJK characters, with byte offsets.
fn split_cjk(word: &str) -> Vec<(usize, Piece<'_>)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (i, c) in word.char_indices() {
        let cjk = is_cjk(c);
        match current {
            Some(kind) if kind != cjk => {
                pieces.push((
                    start,
                    Piece {
                        text: &word[start..i],
                        cjk: kind,
                    },
                ));
                start = i;
            }
            _ => {}
        }
        current = Some(cjk);
    }
    if let Some(kind) = current {
        pieces.push((
            start,
            Piece {
                text: &word[start..],
                cjk: kind,
            },
        ));
    }
    pieces
}

fn push_bigrams(run: &str, terms: &mut Vec<String>) {
    let chars: Vec<char> = run.chars().collect();
    match chars.len() {
        0 => {}
        1 => terms.push(run.to_owned()),
        _ => terms.extend(chars.windows(2).map(|w| w.iter().collect::<String>())),
    }
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF     // Hangul Jamo
        | 0x3040..=0x309F   // Hiragana
        | 0x30A0..=0x30FF   // Katakana
        | 0x3130..=0x318F   // Hangul Compatibility Jamo
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xAC00..=0xD7AF   // Hangul Syllables
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F   // Halfwidth Katakana (NFKC folds most, not all uses)
        | 0x20000..=0x3134F) // CJK Extensions B–G
}

fn is_single_latin(term: &str) -> bool {
    let mut chars = term.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c.is_ascii_alphabetic() || matches!(c as u32, 0x00C0..=0x024F),
        _ => false,
    }
}

fn is_number(term: &str) -> bool {
    term.chars().all(char::is_numeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(q: &str) -> Vec<String> {
        distinctive_terms(q)
    }

    #[test]
    fn english_question_keeps_only_its_subject() {
        assert_eq!(terms("What is a cell?"), ["cell"]);
        assert_eq!(terms("Can you explain osmosis again, please?"), ["osmosis"]);
        assert!(terms("what did we cover?").is_empty());
    }

    #[test]
    fn pieces_of_contractions_are_not_the_subject() {
        // "wouldn't" folds to "wouldn t": the piece matched any turn that
        // said "wouldn't" and outranked the question's topic (LoCoMo).
        assert_eq!(
            terms("What pets wouldn't cause any discomfort to Joanna?"),
            ["pets", "cause", "discomfort", "joanna"]
        );
        assert_eq!(
            terms("Why didn't I've the enzyme list?"),
            ["enzyme", "list"]
        );
        assert_eq!(
            terms("Cosa ho detto dell'osmosi nell'ultima lezione?"),
            ["detto", "osmosi", "ultima", "lezione"]
        );
        assert_eq!(
            terms("Qu'est-ce que j'ai appris jusqu'à la mitose ?"),
            ["mitose"]
        );
        // "won" stays: it is a word as well as a piece of "won't".
        assert_eq!(terms("Who won the prize?"), ["won", "prize"]);
    }

    #[test]
    fn other_languages_keep_only_their_subject() {
        assert_eq!(terms("¿Qué es la ósmosis? Explícame"), ["osmosis"]);
        assert_eq!(terms("Erkläre mir bitte die Zellmembran"), ["zellmembran"]);
        assert_eq!(terms("Spiegami cos'è la mitosi"), ["mitosi"]);
        assert_eq!(terms("Jelaskan apa itu fotosintesis"), ["fotosintesis"]);
        assert_eq!(terms("Explique-moi la photosynthèse"), ["photosynthese"]);
        assert_eq!(terms("O que é a mitocôndria?"), ["mitocondria"]);
        assert_eq!(terms("ما هي الخلية؟ اشرح لي"), ["الخلية"]);
    }

    #[test]
    fn numbers_go_but_years_stay() {
        assert_eq!(terms("osmosis 3 12 2025"), ["osmosis", "2025"]);
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(index_terms("細胞膜とは"), ["細胞", "胞膜", "膜と", "とは"]);
        assert_eq!(index_terms("猫"), ["猫"]);
        assert_eq!(index_terms("DNA複製"), ["dna", "複製"]);
        assert_eq!(index_terms("세포막"), ["세포", "포막"]);
    }

    #[test]
    fn repeated_terms_come_once() {
        assert_eq!(terms("cell cell Cell CELL"), ["cell"]);
    }

    #[test]
    fn overlap_counts_terms_present() {
        let t = terms("osmosis and diffusion");
        assert_eq!(lexical_overlap(&t, "Osmosis is passive"), 0.5);
        assert_eq!(lexical_overlap(&t, "Diffusion; OSMOSIS."), 1.0);
        assert_eq!(lexical_overlap(&[], "anything"), 0.0);
    }
}
