//! Which concept does a teaching message name, and what does it add?
//!
//! Called only for a message [`crate::teaching::teaching`] already found to
//! teach. The note is the sentence after its cue ("remember that …"), or the
//! whole sentence for "treat X as …" cues. Routing is by the concept the
//! sentence is *about*, by exact name:
//! - "treat X as …", "considera X come …": X;
//! - a naming phrase ("in our class we call X …", "chiamiamo X …", "kami
//!   menyebut X …", from `data/naming/`): the noun phrase after it;
//! - otherwise the sentence's subject: the noun phrase that opens the note
//!   ("the Golgi apparatus packages …"), nested cues and function words skipped.
//!
//! A concept whose key or alias opens that noun phrase (word for word, plurals
//! aside; the longest wins) takes the note; a name that merely appears
//! elsewhere in the sentence ("… the powerhouse of the cell") does not attract
//! it. The note lifts the concept to readiness 1.0 and is rendered after its
//! gist. With no such concept a new node is created at the taught level, named
//! by the noun phrase: at most [`SHORT_NAME_WORDS`] words, ending before a
//! function word, a copula or a verb of explanation (`data/verbs/`), except a
//! function word that joins a proper name ("ciclo di Krebs"). Only when no
//! noun phrase can be cut does a name anywhere in the note route it.

use serde::{Deserialize, Serialize};

use super::{ConceptMap, Node, Origin, lexicon, validate_name};
use crate::lang::{canonical_key, capitalise, entries, same_word};
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
        // "treat the mitochondria as …": the article is not the name.
        let lead = body[..end]
            .iter()
            .take_while(|w| lexicon::is_function_word(&w.key))
            .count();
        if end > lead {
            let x = &body[lead..end];
            let end = x.len();
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
        return match noun_phrase(focus(body), sentence) {
            Some(name) => create(map, name, note),
            None => TeachOutcome::Unnamed { note },
        };
    }

    let note = match body.first() {
        Some(w) => sentence[w.start..].trim().to_string(),
        None => sentence.to_string(),
    };
    let focus = focus(body);
    if let Some(i) = concept_opening(map, focus) {
        return attach(map, i, note);
    }
    if let Some(name) = noun_phrase(focus, sentence) {
        return create(map, name, note);
    }
    match named_concept(map, body) {
        Some(i) => attach(map, i, note),
        None => TeachOutcome::Unnamed { note },
    }
}

/// Where the concept's noun phrase starts: after a naming phrase among the
/// note's first words, else after the nested cues and function words that
/// open it.
fn focus(body: &[Word]) -> &[Word] {
    let namers = lexicon::naming_phrases();
    let after_namer = (0..body.len().min(8)).find_map(|p| {
        namers
            .iter()
            .find(|n| starts_with(&body[p..], n))
            .map(|n| &body[p + n.len()..])
    });
    let mut rest = after_namer.unwrap_or(body);
    let nested = nested_cues();
    loop {
        if after_namer.is_none()
            && let Some(c) = nested.iter().find(|c| starts_with(rest, c))
        {
            rest = &rest[c.len()..];
        } else if rest
            .first()
            .is_some_and(|w| lexicon::is_function_word(&w.key))
        {
            rest = &rest[1..];
        } else {
            return rest;
        }
    }
}

fn nested_cues() -> Vec<Vec<String>> {
    CUE_FILES
        .iter()
        .flat_map(|f| entries(f))
        .filter(|c| !c.contains('*'))
        .map(cue_words)
        .collect()
}

/// A word that ends a noun phrase: a copula or a verb of explanation.
fn is_verb(w: &Word) -> bool {
    lexicon::is_finite_verb(&w.lower) || lexicon::is_content_verb(&w.lower)
}

/// The node whose key or alias opens `focus`, word for word (a plural "s" or
/// "es" aside) and before any verb; the longest wins.
fn concept_opening(map: &ConceptMap, focus: &[Word]) -> Option<usize> {
    let span = focus
        .iter()
        .take(super::MAX_WORDS)
        .take_while(|w| !is_verb(w))
        .count();
    let phrase = &focus[..span];
    let mut best: Option<(usize, usize, usize)> = None; // node, words, chars
    for (i, n) in map.nodes().iter().enumerate() {
        for key in std::iter::once(&n.key).chain(&n.aliases) {
            let kw: Vec<&str> = key.split(' ').collect();
            let opens = kw.len() <= phrase.len()
                && phrase.iter().zip(&kw).all(|(w, k)| same_word(&w.key, k));
            let score = (kw.len(), key.chars().count());
            if opens && best.is_none_or(|(_, w, c)| score > (w, c)) {
                best = Some((i, score.0, score.1));
            }
        }
    }
    best.map(|(i, _, _)| i)
}

/// The short name `focus` opens with, as the sentence spells it.
fn noun_phrase<'s>(focus: &[Word], sentence: &'s str) -> Option<&'s str> {
    let proper = |w: &Word| {
        sentence[w.start..w.end]
            .chars()
            .next()
            .is_some_and(char::is_uppercase)
    };
    let mut taken = 0;
    while taken < focus.len() && taken < SHORT_NAME_WORDS {
        let w = &focus[taken];
        if is_verb(w) {
            break;
        }
        if lexicon::is_function_word(&w.key) {
            // "ciclo di Krebs": a function word joining a lowercase noun to a
            // proper name (not German's capitalised nouns: "die Mitochondrien
            // das Kraftwerk" stops at "das").
            match focus.get(taken + 1) {
                Some(next)
                    if taken > 0
                        && !proper(&focus[0])
                        && taken + 2 <= SHORT_NAME_WORDS
                        && proper(next)
                        && !is_verb(next) =>
                {
                    taken += 2;
                    continue;
                }
                _ => break,
            }
        }
        taken += 1;
    }
    (taken > 0).then(|| &sentence[focus[0].start..focus[taken - 1].end])
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
