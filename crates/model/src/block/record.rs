//! Is this question about the learner's own record ("what have I got wrong so
//! far", "qué he fallado", "ماذا أخطأت")?
//!
//! Cues live in `data/record/<lang>.txt`, one a line, matched on whole words
//! after [`canonical_key`] folding; `*` stands for one to three words, and a
//! cue written `window: CUE` counts only when the question also names a time
//! window ("what did we do in July").

use std::sync::LazyLock;

use crate::lang::{LANGS, canonical_key, entries};

pub(crate) const FILES: [&str; 8] = [
    include_str!("../../data/record/en.txt"),
    include_str!("../../data/record/es.txt"),
    include_str!("../../data/record/de.txt"),
    include_str!("../../data/record/it.txt"),
    include_str!("../../data/record/id.txt"),
    include_str!("../../data/record/fr.txt"),
    include_str!("../../data/record/pt.txt"),
    include_str!("../../data/record/ar.txt"),
];
const _: () = assert!(FILES.len() == LANGS.len());

/// One token of a cue: a folded word, or `*` (one to three words).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Any,
}

/// A parsed cue line.
#[derive(Debug, Clone)]
struct Cue {
    window_only: bool,
    toks: Vec<Tok>,
}

/// Splits a cue into folded word tokens, keeping `*` as a wildcard.
pub(crate) fn parse_words(raw: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    for part in raw.split_whitespace() {
        if part == "*" {
            toks.push(Tok::Any);
            continue;
        }
        // canonical_key may split one written word ("qu'est-ce") into several.
        toks.extend(
            canonical_key(part)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(|w| Tok::Word(w.to_string())),
        );
    }
    toks
}

static CUES: LazyLock<Vec<Cue>> = LazyLock::new(|| {
    FILES
        .iter()
        .flat_map(|f| entries(f))
        .filter_map(|line| {
            let (window_only, body) = match line.strip_prefix("window:") {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            let toks = parse_words(body);
            // A cue with no word (only `*`) would match everything.
            toks.iter()
                .any(|t| matches!(t, Tok::Word(_)))
                .then_some(Cue { window_only, toks })
        })
        .collect()
});

/// Whether `words` starting at `at` match `toks` (contiguous, `*` = 1..=3 words).
fn matches_at(toks: &[Tok], words: &[&str], at: usize) -> bool {
    let Some((first, rest)) = toks.split_first() else {
        return true;
    };
    match first {
        Tok::Word(w) => words.get(at) == Some(&w.as_str()) && matches_at(rest, words, at + 1),
        Tok::Any => (1..=3).any(|n| at + n <= words.len() && matches_at(rest, words, at + n)),
    }
}

/// Whether the cue `toks` occurs anywhere in `words`.
pub(crate) fn contains(toks: &[Tok], words: &[&str]) -> bool {
    (0..words.len()).any(|i| matches_at(toks, words, i))
}

/// Whether `question` asks about the learner's own record.
///
/// `has_window` is whether the caller found a time window in the question
/// (`window::parse_window(..).is_some()`): then the looser `window:` cues
/// count too, so "what did we do in July" is a record question while "what
/// is the July Revolution" is not.
pub fn is_record_question(question: &str, has_window: bool) -> bool {
    let key = canonical_key(question);
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    CUES.iter()
        .filter(|c| has_window || !c.window_only)
        .any(|c| contains(&c.toks, &words))
}

/// The folded words of every record cue `question` holds (wildcards left
/// out): words that say the question is about the record ("what did we
/// do", "cosa abbiamo fatto"), not what it is about, so recall does not
/// search for them.
pub fn record_words(question: &str, has_window: bool) -> Vec<String> {
    let key = canonical_key(question);
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    for c in CUES.iter().filter(|c| has_window || !c.window_only) {
        if contains(&c.toks, &words) {
            for t in &c.toks {
                if let Tok::Word(w) = t
                    && !out.contains(w)
                {
                    out.push(w.clone());
                }
            }
        }
    }
    out
}
