//! Where does each claim of the tutor's answer come from, and did the answer
//! answer? (docs/mechanisms.md §7, memory as citation.)
//!
//! The host's tracer knew only the learner's files, so a true "in July we
//! covered osmosis" read as "not in your notes". Here the memories recalled
//! for the turn are sources too, each labelled with when it happened
//! ("memory of 12 Jul"), beside the file passages (file, page, line).
//!
//! # Claims
//! The answer is cut into lines, each line into Unicode sentences (UAX #29).
//! A sentence is a **claim** unless it is a question (ends with `?` or `؟`,
//! or opens with `¿`) or has fewer than [`MIN_CLAIM_TERMS`] distinctive
//! words once words of courtesy are set aside (`data/courtesy/<lang>.txt`):
//! "Great question!" and "Happy to help." are not claims.
//!
//! # Tracing
//! A claim's terms are its distinctive words ([`distinctive_terms`], stop
//! words of every language removed). A source supports a claim when it holds
//! at least [`MIN_SHARED_TERMS`] of them and at least [`TRACE_SHARE`] of them
//! (both, so a two-word claim needs both words and a long claim needs half).
//! The source holding the largest share wins; on a tie a memory wins for a
//! claim that narrates a period ("in July we …", [`narrates_period`]), a file
//! line otherwise, then the earlier source given. Token overlap, not
//! meaning: a paraphrase in other words is not traced (an honest miss, never
//! an invented source).
//!
//! # Stance
//! `answered` when every claim is traced, `partial` when some are,
//! `couldnt` when none is (or there is no claim) or the answer says it
//! cannot answer (cue phrases in `data/cannot/<lang>.txt`, matched on whole
//! words after [`canonical_key`] folding).

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::lang::{LANGS, canonical_key, entries};
use crate::recall::{distinctive_terms, index_terms, narrates_period};

/// A claim needs at least this many distinctive, non-courtesy words.
pub const MIN_CLAIM_TERMS: usize = 2;
/// A source must hold at least this many of a claim's terms …
pub const MIN_SHARED_TERMS: usize = 2;
/// … and at least this share of them.
pub const TRACE_SHARE: f32 = 0.5;

const CANNOT_FILES: [&str; 8] = [
    include_str!("../../data/cannot/en.txt"),
    include_str!("../../data/cannot/es.txt"),
    include_str!("../../data/cannot/de.txt"),
    include_str!("../../data/cannot/it.txt"),
    include_str!("../../data/cannot/id.txt"),
    include_str!("../../data/cannot/fr.txt"),
    include_str!("../../data/cannot/pt.txt"),
    include_str!("../../data/cannot/ar.txt"),
];
const COURTESY_FILES: [&str; 8] = [
    include_str!("../../data/courtesy/en.txt"),
    include_str!("../../data/courtesy/es.txt"),
    include_str!("../../data/courtesy/de.txt"),
    include_str!("../../data/courtesy/it.txt"),
    include_str!("../../data/courtesy/id.txt"),
    include_str!("../../data/courtesy/fr.txt"),
    include_str!("../../data/courtesy/pt.txt"),
    include_str!("../../data/courtesy/ar.txt"),
];
const _: () = assert!(CANNOT_FILES.len() == LANGS.len() && COURTESY_FILES.len() == LANGS.len());

/// Cue phrases, folded and padded with spaces for whole-word search.
static CANNOT: LazyLock<Vec<String>> = LazyLock::new(|| {
    CANNOT_FILES
        .iter()
        .flat_map(|f| entries(f))
        .map(canonical_key)
        .filter(|k| !k.is_empty())
        .map(|k| format!(" {k} "))
        .collect()
});

static COURTESY: LazyLock<HashSet<String>> = LazyLock::new(|| {
    COURTESY_FILES
        .iter()
        .flat_map(|f| entries(f))
        .flat_map(index_terms)
        .collect()
});

/// The learner's file lines a claim may be traced to: the passages
/// retrieval hands over (one type for retrieval, the prompt and grounding).
pub use crate::passages::Passage;

/// A memory recalled for the turn: one more source, labelled with its date.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// The episode's id.
    pub id: i64,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// Where a claim was traced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Source {
    File {
        file: String,
        version_id: i64,
        page: usize,
        line: usize,
    },
    Memory {
        id: i64,
        at: DateTime<Utc>,
        /// "memory of 12 Jul", in the learner's time zone.
        label: String,
    },
}

impl Source {
    /// How a person reads the source: `cells.md p. 2 line 4` or `memory of 12 Jul`.
    pub fn label(&self) -> String {
        match self {
            Source::File {
                file, page, line, ..
            } => format!("{file} p. {page} line {line}"),
            Source::Memory { label, .. } => label.clone(),
        }
    }
}

/// One claim and its source, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub claim: String,
    pub source: Option<Source>,
    /// Share of the claim's terms the source holds (0 when untraced).
    pub share: f32,
}

/// How the answer stands towards the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stance {
    Answered,
    Partial,
    Couldnt,
}

impl Stance {
    /// `answered`, `partial` or `couldnt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stance::Answered => "answered",
            Stance::Partial => "partial",
            Stance::Couldnt => "couldnt",
        }
    }
}

/// The grounding of one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grounding {
    pub stance: Stance,
    /// The answer says it cannot answer (a cue phrase was found).
    pub says_cannot: bool,
    /// Every claim, in answer order.
    pub traces: Vec<Trace>,
}

impl Grounding {
    /// How many claims found a source.
    pub fn traced(&self) -> usize {
        self.traces.iter().filter(|t| t.source.is_some()).count()
    }
}

/// The claim sentences of an answer, in order (see the module docs).
pub fn claims(answer: &str) -> Vec<String> {
    answer
        .lines()
        .flat_map(|line| line.unicode_sentences())
        .map(|s| s.trim().trim_start_matches(['-', '*', '•']).trim())
        .filter(|s| !s.is_empty() && !is_question(s))
        .filter(|s| claim_terms(s).len() >= MIN_CLAIM_TERMS)
        .map(str::to_string)
        .collect()
}

/// Whether the answer says it cannot answer, in any supported language.
pub fn says_cannot(answer: &str) -> bool {
    let folded = format!(" {} ", canonical_key(answer));
    CANNOT.iter().any(|cue| folded.contains(cue.as_str()))
}

/// Traces each claim of `answer` to a file passage or a recalled memory and
/// gives the answer its stance. `at` and `tz` date the memories' labels the
/// way the block dates them (the year only when it is not the turn's).
pub fn ground(
    answer: &str,
    passages: &[Passage],
    memories: &[Memory],
    at: DateTime<Utc>,
    tz: Tz,
) -> Grounding {
    let passage_terms: Vec<HashSet<String>> = passages.iter().map(|p| term_set(&p.text)).collect();
    let memory_terms: Vec<HashSet<String>> = memories.iter().map(|m| term_set(&m.text)).collect();
    let traces: Vec<Trace> = claims(answer)
        .into_iter()
        .map(|claim| {
            let terms = claim_terms(&claim);
            let support = |have: &HashSet<String>| -> Option<f32> {
                let shared = terms.iter().filter(|t| have.contains(*t)).count();
                let share = shared as f32 / terms.len().max(1) as f32;
                (shared >= MIN_SHARED_TERMS && share >= TRACE_SHARE).then_some(share)
            };
            let best_file = best(passage_terms.iter().map(&support));
            let best_memory = best(memory_terms.iter().map(&support));
            let memory_first = narrates_period(&claim);
            let pick = match (best_file, best_memory) {
                (Some((fi, fs)), Some((mi, ms))) => {
                    if ms > fs || (ms == fs && memory_first) {
                        Some((false, mi, ms))
                    } else {
                        Some((true, fi, fs))
                    }
                }
                (Some((fi, fs)), None) => Some((true, fi, fs)),
                (None, Some((mi, ms))) => Some((false, mi, ms)),
                (None, None) => None,
            };
            match pick {
                None => Trace {
                    claim,
                    source: None,
                    share: 0.0,
                },
                Some((true, i, share)) => {
                    let p = &passages[i];
                    Trace {
                        claim,
                        source: Some(Source::File {
                            file: p.file.clone(),
                            version_id: p.version_id,
                            page: p.page as usize,
                            line: p.line as usize,
                        }),
                        share,
                    }
                }
                Some((false, i, share)) => {
                    let m = &memories[i];
                    Trace {
                        claim,
                        source: Some(Source::Memory {
                            id: m.id,
                            at: m.at,
                            label: format!("memory of {}", crate::block::date_label(m.at, at, tz)),
                        }),
                        share,
                    }
                }
            }
        })
        .collect();
    let says_cannot = says_cannot(answer);
    let traced = traces.iter().filter(|t| t.source.is_some()).count();
    let stance = if says_cannot || traced == 0 {
        Stance::Couldnt
    } else if traced == traces.len() {
        Stance::Answered
    } else {
        Stance::Partial
    };
    Grounding {
        stance,
        says_cannot,
        traces,
    }
}

/// The index of the largest share, the first on a tie.
fn best(shares: impl Iterator<Item = Option<f32>>) -> Option<(usize, f32)> {
    shares
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s)))
        .fold(None, |acc, (i, s)| match acc {
            Some((_, b)) if b >= s => acc,
            _ => Some((i, s)),
        })
}

fn is_question(s: &str) -> bool {
    let s = s.trim_end_matches(|c: char| c.is_whitespace() || c == '"' || c == ')');
    s.ends_with('?') || s.ends_with('؟') || s.starts_with('¿')
}

/// A sentence's distinctive words, courtesy set aside.
fn claim_terms(s: &str) -> Vec<String> {
    distinctive_terms(s)
        .into_iter()
        .filter(|t| !COURTESY.contains(t))
        .collect()
}

fn term_set(text: &str) -> HashSet<String> {
    index_terms(text).into_iter().collect()
}
