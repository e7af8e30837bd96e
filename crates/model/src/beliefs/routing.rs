//! What a check is about: a concept of the map, a short topic outside it, or
//! nothing a belief could be held on.
//!
//! In teach mode a check's "topic" was often the learner's own words, which
//! produced beliefs such as *understands ask me the questions* (docs/mechanisms.md §5). So a
//! topic is routed **by name only**:
//!
//! 1. the topic's canonical key equals a concept's name or alias → that concept;
//! 2. when the topic reads as a sentence (more than [`SENTENCE_WORDS`] words,
//!    sentence punctuation, or an utterance word), the tutor's evaluation text
//!    is searched for concept names occurring as whole words, leftmost-longest
//!    ("cell membrane" over "cell"; of two separate names, the first named);
//!    nothing fuzzy. A short topic that is not an utterance is a name, so it
//!    never goes through the evaluation;
//! 3. otherwise a short phrase that is not an utterance and has at least one
//!    content word becomes an unmapped topic, marked so;
//! 4. everything else is evidence only: recorded, counted, never a belief.
//!
//! Utterance words (question words, asking verbs and imperatives, pronouns,
//! fillers) live in `data/utterance/<lang>.txt` for every language of
//! [`LANGS`](crate::lang::LANGS); one union set serves all, because a topic
//! does not say which language it is in.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::lang::{canonical_key, entries};
use crate::map::lexicon::{is_function_word, is_number};
use crate::map::{ConceptMap, Node};

/// A topic longer than this many words is a sentence, never a name (the map's
/// own short-name limit, `map::teach::SHORT_NAME_WORDS`).
pub const SENTENCE_WORDS: usize = crate::map::teach::SHORT_NAME_WORDS;

const UTTERANCE_FILES: [&str; 8] = [
    include_str!("../../data/utterance/en.txt"),
    include_str!("../../data/utterance/es.txt"),
    include_str!("../../data/utterance/de.txt"),
    include_str!("../../data/utterance/it.txt"),
    include_str!("../../data/utterance/id.txt"),
    include_str!("../../data/utterance/fr.txt"),
    include_str!("../../data/utterance/pt.txt"),
    include_str!("../../data/utterance/ar.txt"),
];

/// Characters that end or split a sentence in the learners' languages. A name
/// never carries them inside ("OSMOSIS." is matched exactly before this is asked).
const SENTENCE_PUNCTUATION: &[char] = &['?', '!', '¿', '¡', '؟', '،', '؛', ',', ';', ':', '.', '…'];

/// How a routed check found its concept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The topic is the concept's name.
    Topic,
    /// The topic was a sentence; the tutor's evaluation named the concept.
    Evaluation,
}

/// Where a check's evidence goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routing {
    /// A concept of the map (its name as given in the list routed against).
    Concept { name: String, via: Via },
    /// A short noun phrase outside the map: a belief may be held on it, marked unmapped.
    UnmappedTopic { topic: String },
    /// Kept as evidence, counted, never a belief.
    EvidenceOnly { reason: String },
}

struct Utterances {
    words: HashSet<String>,
    /// Multi-word entries, padded with spaces for whole-word search.
    phrases: Vec<String>,
}

fn utterances() -> &'static Utterances {
    static SET: OnceLock<Utterances> = OnceLock::new();
    SET.get_or_init(|| {
        let mut words = HashSet::new();
        let mut phrases = Vec::new();
        for key in UTTERANCE_FILES
            .iter()
            .flat_map(|file| entries(file))
            .map(canonical_key)
            .filter(|k| !k.is_empty())
        {
            if key.contains(' ') {
                phrases.push(format!(" {key} "));
            } else {
                words.insert(key);
            }
        }
        Utterances { words, phrases }
    })
}

/// Does this text read as something a learner said (a question, a request, a
/// filler) rather than a name? Whole words after canonical folding.
pub fn reads_as_utterance(text: &str) -> bool {
    let key = canonical_key(text);
    let set = utterances();
    if key.split(' ').any(|w| set.words.contains(w)) {
        return true;
    }
    let padded = format!(" {key} ");
    set.phrases.iter().any(|p| padded.contains(p.as_str()))
}

/// Is this topic a sentence: too long to be a name, punctuated, or an utterance?
pub fn reads_as_sentence(topic: &str) -> bool {
    let key = canonical_key(topic);
    let words = key.split(' ').filter(|w| !w.is_empty()).count();
    words > SENTENCE_WORDS
        || topic.trim().contains(SENTENCE_PUNCTUATION)
        || reads_as_utterance(topic)
}

/// Routes a check's topic against the map's concept names (and aliases).
///
/// `evaluation` is the tutor's own verdict text, which usually names the concept.
pub fn route_check(topic: &str, evaluation: Option<&str>, concepts: &[&str]) -> Routing {
    let topic_key = canonical_key(topic);
    if topic_key.is_empty() {
        return match evaluation.and_then(|e| named_in(e, concepts)) {
            Some(name) => Routing::Concept {
                name: name.to_string(),
                via: Via::Evaluation,
            },
            None => evidence("the check has no topic"),
        };
    }
    if let Some(name) = concepts.iter().find(|c| canonical_key(c) == topic_key) {
        return Routing::Concept {
            name: (*name).to_string(),
            via: Via::Topic,
        };
    }
    if reads_as_sentence(topic) {
        if let Some(name) = evaluation.and_then(|e| named_in(e, concepts)) {
            return Routing::Concept {
                name: name.to_string(),
                via: Via::Evaluation,
            };
        }
        return if reads_as_utterance(topic) {
            evidence("the topic reads as an utterance and no concept is named")
        } else {
            evidence("the topic is a sentence and no concept is named")
        };
    }
    // Short, not an utterance: a name unless it is only numbers and function words
    // ("3 x 4", "of the").
    let has_content = topic_key
        .split(' ')
        .any(|w| !is_number(w) && !w.chars().any(|c| c.is_numeric()) && !is_function_word(w));
    if has_content {
        Routing::UnmappedTopic {
            topic: topic.trim().to_string(),
        }
    } else {
        evidence("the topic has no word a concept could be named by")
    }
}

/// [`route_check`] against a concept map; an alias routes to its node's name.
pub fn route_in_map(topic: &str, evaluation: Option<&str>, map: &ConceptMap) -> Routing {
    let names = concept_names(map);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    match route_check(topic, evaluation, &names) {
        Routing::Concept { name, via } => Routing::Concept {
            name: map.get(&name).map_or(name, |n: &Node| n.name.clone()),
            via,
        },
        other => other,
    }
}

/// Every name and alias of the map, for [`route_check`].
pub fn concept_names(map: &ConceptMap) -> Vec<String> {
    map.nodes()
        .iter()
        .flat_map(|n| std::iter::once(n.name.clone()).chain(n.aliases.iter().cloned()))
        .collect()
}

/// The concept named in `text` as whole words (after folding), leftmost-longest:
/// of names starting at the same word the longest wins ("cell membrane" over
/// "cell"), and of separate names the first named wins, because a tutor's
/// evaluation leads with what was checked ("Correct: osmosis moves water,
/// unlike diffusion"). Ties keep list order.
fn named_in<'a>(text: &str, concepts: &[&'a str]) -> Option<&'a str> {
    let folded = canonical_key(text);
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    let mut best: Option<(usize, std::cmp::Reverse<usize>, &'a str)> = None;
    for &concept in concepts {
        let key = canonical_key(concept);
        let name: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
        if name.is_empty() || name.len() > words.len() {
            continue;
        }
        let Some(start) = words.windows(name.len()).position(|w| w == name.as_slice()) else {
            continue;
        };
        let rank = (start, std::cmp::Reverse(name.len()), concept);
        if best.is_none_or(|b| (rank.0, rank.1) < (b.0, b.1)) {
            best = Some(rank);
        }
    }
    best.map(|(_, _, c)| c)
}

fn evidence(reason: &str) -> Routing {
    Routing::EvidenceOnly {
        reason: reason.to_string(),
    }
}
