//! Pre-registered questions (docs/formats.md "Question file"), generated per subject
//! from that subject's recorded data only: its history and the concept map
//! its files make. [`generate`] takes exactly those two and a seed — no
//! store, no recaller, no block — so it cannot peek at any design's output;
//! the runner writes the questions to a file before any design runs.
//!
//! Categories and what each is checked against:
//! - `explain`: a concept the learner asked about that a current file
//!   explains; the prompt must hold its name and a word of its definition.
//! - `review_before`: a concept with prerequisites in the map; the prompt's
//!   map line must list them (`builds_on`, in that direction).
//! - `got_wrong`: the newest wrong check of up to three concepts the learner
//!   got wrong (a check is about a concept when its topic is the concept's
//!   name or, failing that, its evaluation names it); those checks must be
//!   recalled.
//! - `active_month`: a month with work in it; its most salient episode
//!   (taught, then a missed check, a passed check, an answer, a question;
//!   the latest among equals) must be recalled.
//! - `empty_month`: a month inside the subject's span with no event at all;
//!   the block must say there is no record (`no_record`).
//! - `taught`: a class nickname the learner taught; the prompt must hold it
//!   and the teaching episode must be recalled.

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::templates::{LANGS, Templates, fill};
use crate::{Error, Result};
use tm_brain::history::History;
use tm_model::episodes::Verdict;
use tm_model::events::{EventBody, FileSource};
use tm_model::lang::canonical_key;
use tm_model::map::ConceptMap;

/// The categories, in the table's order.
pub const CATEGORIES: [&str; 6] = [
    "explain",
    "review_before",
    "got_wrong",
    "active_month",
    "empty_month",
    "taught",
];

/// One graded question (docs/formats.md "Question file").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub subject: String,
    pub at: DateTime<Utc>,
    pub category: String,
    pub question: String,
    pub expect: Expect,
}

/// What must hold (every key optional; all given ones must hold).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub none: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub episodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_episodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builds_on: Option<BuildsOn>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_record: bool,
}

/// `{"concept": C, "prerequisites": [P, …]}`: C builds on every P.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildsOn {
    pub concept: String,
    pub prerequisites: Vec<String>,
}

/// The questions for one subject, from its parsed history and its concept
/// map (the map the subject's files make on import), asked one day after
/// the last event. `seed` picks among candidates.
pub fn generate(history: &History, map: &ConceptMap, seed: u64) -> Result<Vec<Question>> {
    let lang = history
        .subject
        .language
        .as_deref()
        .filter(|l| LANGS.contains(l))
        .unwrap_or("en");
    let t = Templates::of(lang)?;
    let subject = history.subject.key.to_string();
    let Some(last) = history.events.last() else {
        return Ok(Vec::new());
    };
    let first = &history.events[0];
    let at = Utc
        .with_ymd_and_hms(last.at.year(), last.at.month(), last.at.day(), 10, 0, 0)
        .single()
        .ok_or_else(|| Error::Invalid("question time".into()))?
        + Duration::days(1);
    let mut rng = Rng::new(seed);
    let mut out: Vec<Question> = Vec::new();
    let mut push = |category: &str, question: String, expect: Expect| {
        out.push(Question {
            id: format!("{subject}#{}", out.len() + 1),
            subject: subject.clone(),
            at,
            category: category.to_string(),
            question,
            expect,
        });
    };

    // The files as they stand at the end: name → current text (removed gone).
    let mut current: Vec<(String, String)> = Vec::new();
    for e in &history.events {
        match &e.body {
            EventBody::File { name, source } => {
                let text = match source {
                    FileSource::Content(c) => c.clone(),
                    FileSource::Pages(p) => p.join("\n"),
                    FileSource::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                    FileSource::Path(_) => String::new(),
                };
                current.retain(|(n, _)| n != name);
                current.push((name.clone(), text));
            }
            EventBody::FileRemoved { name } => current.retain(|(n, _)| n != name),
            _ => {}
        }
    }
    let fold = |s: &str| caseless::default_case_fold_str(s);
    let learner_texts: Vec<String> = history
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Learner { text } => Some(fold(text)),
            _ => None,
        })
        .collect();
    let asked = |name: &str| learner_texts.iter().any(|t| t.contains(&fold(name)));
    let in_current = |name: &str| {
        current
            .iter()
            .any(|(_, text)| fold(text).contains(&fold(name)))
    };

    // explain
    let mut explainable: Vec<&tm_model::map::Node> = map
        .nodes()
        .iter()
        .filter(|n| !n.gist.is_empty() && asked(&n.name) && in_current(&n.name))
        .collect();
    shuffle(&mut explainable, &mut rng);
    for n in explainable.iter().take(2) {
        let mut all = vec![n.name.clone()];
        if let Some(w) = gist_word(&n.gist, &n.name) {
            all.push(w);
        }
        push(
            "explain",
            fill(t.first("q_explain"), &[("c", &n.name)]),
            Expect {
                all,
                ..Expect::default()
            },
        );
    }

    // review_before
    let mut with_edges: Vec<&tm_model::map::Node> = map
        .nodes()
        .iter()
        .filter(|n| !n.builds_on.is_empty())
        .collect();
    shuffle(&mut with_edges, &mut rng);
    for n in with_edges.iter().take(2) {
        let prerequisites: Vec<String> = n
            .builds_on
            .iter()
            .filter_map(|e| map.nodes().iter().find(|m| m.key == e.to))
            .map(|m| m.name.clone())
            .collect();
        if prerequisites.is_empty() {
            continue;
        }
        push(
            "review_before",
            fill(t.first("q_review"), &[("c", &n.name)]),
            Expect {
                builds_on: Some(BuildsOn {
                    concept: n.name.clone(),
                    prerequisites,
                }),
                ..Expect::default()
            },
        );
    }

    // got_wrong: the newest wrong check per concept, newest concepts first.
    let mut wrong: Vec<(String, String)> = Vec::new(); // (concept key, external id)
    for e in history.events.iter().rev() {
        if let EventBody::Check {
            topic,
            verdict: Verdict::Wrong,
            evaluation,
            ..
        } = &e.body
            && let Some(id) = &e.id
            && let Some(concept) = check_concept(map, topic, evaluation.as_deref())
            && !wrong.iter().any(|(c, _)| *c == concept)
        {
            wrong.push((concept, id.clone()));
        }
    }
    if !wrong.is_empty() {
        push(
            "got_wrong",
            t.first("q_wrong").to_string(),
            Expect {
                episodes: wrong.iter().take(3).map(|(_, id)| id.clone()).collect(),
                ..Expect::default()
            },
        );
    }

    // active_month / empty_month, over the months of the subject's span.
    let mut months: Vec<(i32, u32)> = Vec::new();
    let (mut y, mut m) = (first.at.year(), first.at.month());
    while (y, m) <= (last.at.year(), last.at.month()) {
        months.push((y, m));
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    let in_month = |at: DateTime<Utc>, (y, m): (i32, u32)| at.year() == y && at.month() == m;
    let mut active: Vec<((i32, u32), String)> = Vec::new();
    let mut empty: Vec<(i32, u32)> = Vec::new();
    for &ym in &months {
        let best = history
            .events
            .iter()
            .filter(|e| in_month(e.at, ym))
            .filter_map(|e| Some((weight(&e.body)?, e.at, e.id.clone()?)))
            .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        if let Some((_, _, id)) = best {
            active.push((ym, id));
        } else if !history.events.iter().any(|e| in_month(e.at, ym)) {
            empty.push(ym);
        }
    }
    shuffle(&mut active, &mut rng);
    let month_q = |(y, m): (i32, u32)| {
        fill(
            t.first("q_month"),
            &[
                ("month", &t.months[m as usize - 1]),
                ("year", &y.to_string()),
            ],
        )
    };
    for (ym, id) in active.iter().take(2) {
        push(
            "active_month",
            month_q(*ym),
            Expect {
                episodes: vec![id.clone()],
                ..Expect::default()
            },
        );
    }
    shuffle(&mut empty, &mut rng);
    for ym in empty.iter().take(2) {
        push(
            "empty_month",
            month_q(*ym),
            Expect {
                no_record: true,
                ..Expect::default()
            },
        );
    }

    // taught: a nickname in quotes, on a concept the teaching names.
    for e in history.events.iter().rev() {
        if let EventBody::Learner { text } = &e.body
            && tm_model::teaching::teaching(text).is_some()
            && let Some(id) = &e.id
            && let Some(nick) = quoted(text)
            && let Some(node) = map
                .nodes()
                .iter()
                .find(|n| fold(text).contains(&fold(&n.name)))
        {
            push(
                "taught",
                fill(t.first("q_taught"), &[("c", &node.name)]),
                Expect {
                    all: vec![nick],
                    episodes: vec![id.clone()],
                    ..Expect::default()
                },
            );
            break;
        }
    }
    Ok(out)
}

/// The concept (canonical key) a recorded check is about: its topic when
/// that is a concept's name, else the one concept its evaluation names.
fn check_concept(map: &ConceptMap, topic: &str, evaluation: Option<&str>) -> Option<String> {
    let key = canonical_key(topic);
    if let Some(n) = map.nodes().iter().find(|n| n.key == key) {
        return Some(n.key.clone());
    }
    let eval = format!(" {} ", canonical_key(evaluation?));
    let named: Vec<&tm_model::map::Node> = map
        .nodes()
        .iter()
        .filter(|n| eval.contains(&format!(" {} ", n.key)))
        .collect();
    // The longest name wins ("cell membrane" over "cell").
    named
        .into_iter()
        .max_by_key(|n| n.key.len())
        .map(|n| n.key.clone())
}

/// How much an event says about its month: taught, a missed check, a
/// passed check, an answer, a question; None for files and removals.
fn weight(body: &EventBody) -> Option<u8> {
    match body {
        EventBody::Learner { text } if tm_model::teaching::teaching(text).is_some() => Some(6),
        EventBody::Check { verdict, .. } => Some(match verdict {
            Verdict::Wrong => 5,
            _ => 4,
        }),
        EventBody::Quiz { .. } => Some(3),
        EventBody::Tutor { .. } => Some(2),
        EventBody::Learner { .. } => Some(1),
        _ => None,
    }
}

/// The longest word of the gist that is not part of the name (a word of
/// the definition the passage must carry).
fn gist_word(gist: &str, name: &str) -> Option<String> {
    let name = caseless::default_case_fold_str(name);
    gist.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 5)
        .filter(|w| !name.contains(&caseless::default_case_fold_str(w)))
        .max_by_key(|w| (w.chars().count(), std::cmp::Reverse(w.to_string())))
        .map(str::to_string)
}

/// The text between the first pair of double quotes.
fn quoted(text: &str) -> Option<String> {
    let start = text.find('"')? + 1;
    let len = text[start..].find('"')?;
    Some(text[start..start + len].trim().to_string()).filter(|s| !s.is_empty())
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
}

/// Writes questions as JSONL.
pub fn write(questions: &[Question], path: &std::path::Path) -> Result<()> {
    let mut text = String::new();
    for q in questions {
        text.push_str(
            &serde_json::to_string(q)
                .map_err(|e| Error::Invalid(format!("question {}: {e}", q.id)))?,
        );
        text.push('\n');
    }
    std::fs::write(path, text).map_err(crate::io_err(path))
}

/// Reads a question file; a malformed line is an error naming its number.
pub fn read(path: &std::path::Path) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path).map_err(crate::io_err(path))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| Error::File {
                path: path.display().to_string(),
                message: format!("line {}: {e}", i + 1),
            })
        })
        .collect()
}
