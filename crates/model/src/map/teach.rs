//! Which concept does a teaching message name, and what does it add?
//!
//! Called only for a message [`crate::teaching::teaching`] already found to
//! teach. The note is the sentence after its cue ("remember that …"), or the
//! whole sentence for "treat X as …" cues. Routing is by name only, exact
//! canonical match (a concept's key or alias occurring as whole words in the
//! note; the longest wins). The note lifts the concept to readiness 1.0 and is
//! rendered after its gist. When no concept is named, a new node is created at
//! the taught level with a short name: X for "treat X as", otherwise the first
//! noun phrase of the note (leading cues and function words skipped, at most
//! [`SHORT_NAME_WORDS`] words, cut at the first function word or finite verb).

use serde::{Deserialize, Serialize};

use super::{ConceptMap, Node, Origin, lexicon, validate_name};
use crate::lang::{canonical_key, entries};
use crate::teaching::Teaching;

/// A name cut from a sentence never has more words than this.
pub const SHORT_NAME_WORDS: usize = 4;

const CUE_FILES: [&str; 8] = [
    include_str!("../../data/teach/en.txt"),
    include_str!("../../data/teach/es.txt"),
    include_str!("../../data/teach/de.txt"),
    include_str!("../../data/teach/it.txt"),
    include_str!("../../data/teach/id.txt"),
    include_str!("../../data/teach/fr.txt"),
    include_str!("../../data/teach/pt.txt"),
    include_str!("../../data/teach/ar.txt"),
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TeachOutcome {
    /// The note joined the concept the message names.
    Attached {
        key: String,
        name: String,
        note: String,
    },
    /// No concept was named: a new one was created at the taught level.
    Created {
        key: String,
        name: String,
        note: String,
    },
    /// No concept was named and no usable short name could be cut from the message.
    Unnamed { note: String },
}

/// One word of the sentence: its byte span in the original and its canonical form.
struct Word {
    start: usize,
    end: usize,
    key: String,
    lower: String,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let is_word =
        |c: char| c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c);
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, is_word(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let key = canonical_key(&text[s..i]);
                if !key.is_empty() {
                    out.push(Word {
                        start: s,
                        end: i,
                        key,
                        lower: text[s..i].to_lowercase(),
                    });
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn cue_words(part: &str) -> Vec<String> {
    canonical_key(part)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn starts_with(words: &[Word], head: &[String]) -> bool {
    !head.is_empty()
        && words.len() >= head.len()
        && words.iter().zip(head).all(|(w, h)| &w.key == h)
}

/// Attaches the teaching in `text` to the concept it names, or creates one.
pub fn teach(map: &mut ConceptMap, text: &str, cue: &Teaching) -> TeachOutcome {
    let mut parts = cue.cue.split('*');
    let head = cue_words(parts.next().unwrap_or_default());
    let tail = parts.next().map(cue_words);
    let sentence = text
        .split(['.', '!', ';', '\n', '。', '،'])
        .find(|s| starts_with(&words(s), &head))
        .unwrap_or(text)
        .trim();
    let ws = words(sentence);
    let body = if starts_with(&ws, &head) {
        &ws[head.len()..]
    } else {
        &ws[..]
    };

    // "treat X as …": X is the concept, the whole sentence the note.
    if let Some(tail) = tail.filter(|t| !t.is_empty()) {
        let note = sentence.to_string();
        let end = (1..body.len())
            .find(|&i| starts_with(&body[i..], &tail))
            .unwrap_or(0);
        if end > 0 {
            let x = &body[..end];
            let key = x
                .iter()
                .map(|w| w.key.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(i) = map.index_of(&key) {
                return attach(map, i, note);
            }
            let name = &sentence[x[0].start..x[end - 1].end];
            return create(map, name, note);
        }
        return short_name_or_unnamed(map, body, sentence, note);
    }

    let note = match body.first() {
        Some(w) => sentence[w.start..].trim().to_string(),
        None => sentence.to_string(),
    };
    if let Some(i) = named_concept(map, body) {
        return attach(map, i, note);
    }
    short_name_or_unnamed(map, body, sentence, note)
}

/// The node whose key or alias occurs in `body` as whole words; longest wins.
fn named_concept(map: &ConceptMap, body: &[Word]) -> Option<usize> {
    let mut best: Option<(usize, usize, usize)> = None; // node, words, chars
    for (i, n) in map.nodes().iter().enumerate() {
        for key in std::iter::once(&n.key).chain(&n.aliases) {
            let kw: Vec<String> = key.split(' ').map(str::to_string).collect();
            let found = (0..body.len()).any(|s| starts_with(&body[s..], &kw));
            let score = (kw.len(), key.chars().count());
            if found && best.is_none_or(|(_, w, c)| score > (w, c)) {
                best = Some((i, score.0, score.1));
            }
        }
    }
    best.map(|(i, _, _)| i)
}

fn attach(map: &mut ConceptMap, i: usize, note: String) -> TeachOutcome {
    let node = &mut map.nodes[i];
    if node.origin == Origin::Assumed {
        node.origin = Origin::Taught;
    }
    node.taught.push(note.clone());
    let (key, name) = (node.key.clone(), node.name.clone());
    map.settle();
    TeachOutcome::Attached { key, name, note }
}

fn create(map: &mut ConceptMap, name: &str, note: String) -> TeachOutcome {
    let name = capitalise(name.trim());
    if validate_name(&name).is_err() {
        return TeachOutcome::Unnamed { note };
    }
    let mut node = Node::new(&name, Origin::Taught);
    node.taught.push(note.clone());
    let key = node.key.clone();
    map.nodes.push(node);
    map.settle();
    TeachOutcome::Created { key, name, note }
}

fn short_name_or_unnamed(
    map: &mut ConceptMap,
    body: &[Word],
    sentence: &str,
    note: String,
) -> TeachOutcome {
    let nested: Vec<Vec<String>> = CUE_FILES
        .iter()
        .flat_map(|f| entries(f))
        .filter(|c| !c.contains('*'))
        .map(cue_words)
        .collect();
    let mut rest = body;
    loop {
        if let Some(c) = nested.iter().find(|c| starts_with(rest, c)) {
            rest = &rest[c.len()..];
        } else if rest
            .first()
            .is_some_and(|w| lexicon::is_function_word(&w.key))
        {
            rest = &rest[1..];
        } else {
            break;
        }
    }
    let taken = rest
        .iter()
        .take(SHORT_NAME_WORDS)
        .take_while(|w| !lexicon::is_function_word(&w.key) && !lexicon::is_finite_verb(&w.lower))
        .count();
    if taken == 0 {
        return TeachOutcome::Unnamed { note };
    }
    create(map, &sentence[rest[0].start..rest[taken - 1].end], note)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_lowercase() => f.to_uppercase().chain(c).collect(),
        _ => s.to_string(),
    }
}
