//! Where does the block go in the host's prompt (docs/mechanisms.md §6, "Legacy sections")?
//!
//! Order: system, memory slot (our block), material passages, then the legacy
//! assessment section behind a bridging note. A model reads the first
//! authoritative statement about a record and stops, so the block must come
//! first, and an assessment section that only says nothing is recorded is
//! dropped when a block exists (it would contradict the block).
//!
//! "Only says nothing is recorded": after an optional first heading line (one
//! ending in `:` or starting with `#`), every non-empty line begins, after
//! [`canonical_key`] folding and on whole words, with a cue from
//! `data/record/nothing-recorded.txt` ("NO QUIZ ATTEMPTS recorded", "nothing
//! recorded"…). A section with any other line is kept, behind the note.

use std::sync::LazyLock;

use super::record::{Tok, parse_words};
use crate::lang::{canonical_key, entries};

/// Joins the block to a legacy assessment section that follows it.
pub const BRIDGING_NOTE: &str = "NOTE: the memory block above is the authoritative record of this student's work. The assessment results below come from an older part of the system and may be incomplete; where they disagree with the memory above, trust the memory.";

static NOTHING: LazyLock<Vec<Vec<Tok>>> = LazyLock::new(|| {
    entries(include_str!("../../data/record/nothing-recorded.txt"))
        .map(parse_words)
        .filter(|t| !t.is_empty())
        .collect()
});

/// The host prompt's parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSections {
    pub system: String,
    /// Our rendered block, when one was built in time.
    pub memory_slot: Option<String>,
    /// The material's passages.
    pub passages: String,
    /// A legacy "assessment results" section, when the host has one.
    pub assessment: Option<String>,
}

fn starts_with_cue(line: &str) -> bool {
    let key = canonical_key(line);
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    NOTHING.iter().any(|cue| {
        cue.len() <= words.len()
            && cue
                .iter()
                .zip(&words)
                .all(|(t, w)| matches!(t, Tok::Word(c) if c == w))
    })
}

/// Whether an assessment section only says that nothing is recorded (rule in
/// the module docs).
pub fn says_nothing_recorded(section: &str) -> bool {
    let mut lines = section.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return true;
    };
    let is_heading = first.ends_with(':') || first.starts_with('#');
    let rest: Vec<&str> = if is_heading && !starts_with_cue(first) {
        lines.collect()
    } else {
        std::iter::once(first).chain(lines).collect()
    };
    !rest.is_empty() && rest.iter().all(|l| starts_with_cue(l))
}

/// The prompt, sections separated by a blank line; empty sections left out.
pub fn assemble_prompt(sections: HostSections) -> String {
    let block = sections.memory_slot.filter(|b| !b.trim().is_empty());
    let mut parts: Vec<String> = Vec::new();
    parts.push(sections.system);
    let has_block = block.is_some();
    parts.extend(block);
    parts.push(sections.passages);
    if let Some(a) = sections.assessment.filter(|a| !a.trim().is_empty()) {
        if !has_block {
            parts.push(a);
        } else if !says_nothing_recorded(&a) {
            parts.push(BRIDGING_NOTE.to_string());
            parts.push(a);
        }
    }
    parts.retain(|p| !p.trim().is_empty());
    parts.join("\n\n")
}
