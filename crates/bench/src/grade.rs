//! The graders, exactly as docs/formats.md "Question file" defines them: string and
//! id comparisons, never opinions, so the same text always gets the same
//! score. Strings compare after Unicode default case folding.

use chrono::{DateTime, Utc};

use crate::questions::Expect;

/// Where the graded text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The assembled prompt (deterministic, needs no model).
    Prompt,
    /// A model's answer to that prompt.
    Answer,
}

/// A recalled episode as the grader sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// External ids it stands for: its own, and those of the identical
    /// episodes collapsed into it ("and 3 more times like it").
    pub external_ids: Vec<String>,
    pub at: DateTime<Utc>,
}

/// What one design put in front of the model for one question.
#[derive(Debug, Clone)]
pub struct Graded<'a> {
    pub level: Level,
    /// The prompt (prompt level) or the answer (answer level).
    pub text: &'a str,
    pub recalled: &'a [Recalled],
    /// The block's window: (from, to, empty).
    pub window: Option<(DateTime<Utc>, DateTime<Utc>, bool)>,
}

fn fold(s: &str) -> String {
    caseless::default_case_fold_str(s)
}

/// Why the expectation failed; empty when it holds.
pub fn grade(expect: &Expect, g: &Graded<'_>) -> Vec<String> {
    let text = fold(g.text);
    let has = |s: &str| text.contains(&fold(s));
    let mut fails = Vec::new();
    for s in &expect.all {
        if !has(s) {
            fails.push(format!("all: {s:?} does not occur"));
        }
    }
    if !expect.any.is_empty() && !expect.any.iter().any(|s| has(s)) {
        fails.push(format!("any: none of {:?} occurs", expect.any));
    }
    for s in &expect.none {
        if has(s) {
            fails.push(format!("none: {s:?} occurs"));
        }
    }
    let recalled = |id: &str| {
        g.recalled
            .iter()
            .any(|r| r.external_ids.iter().any(|x| x == id))
    };
    for id in &expect.episodes {
        if !recalled(id) {
            fails.push(format!("episodes: {id} was not recalled"));
        }
    }
    for id in &expect.not_episodes {
        if recalled(id) {
            fails.push(format!("not_episodes: {id} was recalled"));
        }
    }
    if let Some(b) = &expect.builds_on {
        match g.level {
            Level::Prompt => match map_line_prerequisites(g.text, &b.concept) {
                None => fails.push(format!(
                    "builds_on: no map line for {:?} lists what it builds on",
                    b.concept
                )),
                Some(listed) => {
                    for p in &b.prerequisites {
                        if !listed.iter().any(|l| fold(l) == fold(p)) {
                            fails.push(format!(
                                "builds_on: the map line for {:?} does not list {p:?} (it lists {listed:?})",
                                b.concept
                            ));
                        }
                    }
                }
            },
            Level::Answer => {
                for p in &b.prerequisites {
                    if !has(p) {
                        fails.push(format!("builds_on: prerequisite {p:?} does not occur"));
                    }
                }
            }
        }
    }
    if expect.no_record {
        match g.window {
            Some((from, to, empty)) => {
                if g.level == Level::Prompt && !empty {
                    fails.push("no_record: the block's window is not empty".into());
                }
                if g.recalled.iter().any(|r| r.at >= from && r.at < to) {
                    fails.push("no_record: an episode from inside the period was recalled".into());
                }
            }
            None if g.level == Level::Prompt => {
                fails.push("no_record: the block names no window for the period".into())
            }
            None => {}
        }
        if !has("no record") {
            fails.push("no_record: the text does not say \"no record\"".into());
        }
    }
    fails
}

/// The prerequisites the prompt's map line for `concept` lists in its
/// `(builds on: …)`, or None when no such line is there. A map line is
/// `- Concept: gist … (builds on: A, B)`.
pub fn map_line_prerequisites(prompt: &str, concept: &str) -> Option<Vec<String>> {
    let head = fold(&format!("- {concept}:"));
    prompt.lines().find_map(|line| {
        if !fold(line.trim_start()).starts_with(&head) {
            return None;
        }
        let start = line.rfind("(builds on: ")? + "(builds on: ".len();
        let end = line[start..].find(')')? + start;
        Some(
            line[start..end]
                .split(", ")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        )
    })
}
