//! What does the tutor's prompt receive on one turn, and how does it fit a
//! token budget? (docs/mechanisms.md §6, §8's citation label, docs/formats.md "Block as JSON".)
//!
//! This module is the pure renderer and budgeter: the orchestration gathers
//! beliefs, recalled episodes and the map, then calls [`render`] with plain
//! data ([`BlockInput`]) and a budget in tokens. It also answers whether a
//! question is about the learner's own record ([`is_record_question`]),
//! neutralises untrusted text ([`neutralise`]) and assembles the host prompt
//! around the block ([`assemble_prompt`]).
//!
//! # Layout
//! ```text
//! ===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====
//! THE STUDENT IS ASKING ABOUT THEIR OWN RECORD. …        (record mode only)
//! SUBJECT MAP (…):  + lines                               (ordinary mode: first)
//! WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (…):  + `- understands cytoplasm (0.72)`
//! <honest check sentence, when given>
//! <"There is no record of any work with this student in May 2026." when the window is empty>
//! EARLIER WORK WITH THIS STUDENT (oldest first):  + per day `12 Jul:` and its `- you were asked: …`
//! ALSO MATCHING THE QUESTION, OUTSIDE July 2026 (oldest first):  + the same (a window's question only)
//! SUBJECT MAP (…):  + lines                               (record mode: last)
//! HOW TO USE THIS: …
//! ===== END OF MEMORY =====
//! ```
//! A section with nothing in it is left out. Dates are the learner's (`tz`):
//! day and abbreviated English month ("12 Jul"), with the year added when it
//! is not the year of the turn in that zone ("12 Jul 2025"). Earlier work is
//! grouped by day: a day's line (`12 Jul:`, [`is_day_line`]) opens its
//! episodes, so a date is printed once a day, not once a line. It used to
//! open every line (`- 12 Jul · you were asked: …`, docs/mechanisms.md §6): about six
//! o200k tokens a line, a fifth of a short conversation turn (issue 17,
//! LoCoMo `past_budget`).
//!
//! # Budget
//! Tokens are counted with the o200k tokenizer (tiktoken-compatible,
//! `tiktoken-rs`, BPE data embedded in the binary, built once). The frame
//! (opener, record line, honest sentences, HOW TO USE THIS, closer) goes in
//! first; if even the frame does not fit, the block is empty (`text` is "",
//! `tokens` 0) — an empty memory slot is honest, a truncated frame is not.
//! Then beliefs (cheap; they stand for many episodes), then the map lines
//! about concepts the question names ([`MapSection::focus`]), then episodes in the
//! order given (most relevant first; printed oldest first), then map lines in
//! the order given (so the map is trimmed from the end of its list). Whole
//! lines only; a section header, and a day's line, is paid for with its first
//! line. The final text is counted again and lines are removed, last added
//! first, until it fits, so `tokens <= budget` always holds.
//!
//! # Snapshot tests
//! Whole blocks are snapshot-tested with `expect-test`; after an intended
//! change to the format, update them with:
//! `UPDATE_EXPECT=1 cargo test -p tm-model block::`

mod design;
mod excerpt;
mod prompt;
mod record;
mod sanitize;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;
use tiktoken_rs::CoreBPE;

use crate::episodes::{Kind, one_line};
use crate::map::{ConceptMap, render_line, teaching_order};

pub use design::{Design, UnknownDesign, WINDOW_TURNS};
pub use excerpt::excerpt;
pub use prompt::{BRIDGING_NOTE, HostSections, assemble_prompt, says_nothing_recorded};
pub use record::{is_record_question, record_words};
pub use sanitize::{HEADER_PHRASES, neutralise};

/// The block's first line.
pub const OPENER: &str = "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====";
/// The block's last line.
pub const CLOSER: &str = "===== END OF MEMORY =====";
/// The first line after the opener when the learner asks about their own record.
pub const RECORD_LINE: &str = "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD. Answer from the beliefs and the earlier work listed here, say when each thing happened, and do not describe any work that is not listed.";
/// Header of the beliefs section.
pub const BELIEFS_HEADER: &str =
    "WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (from their checks; confidence 0–1):";
/// Header of the episodes section.
pub const EPISODES_HEADER: &str = "EARLIER WORK WITH THIS STUDENT (oldest first):";
/// How the header of the episodes outside the question's window begins.
const OUTSIDE_HEADER_START: &str = "ALSO MATCHING THE QUESTION, OUTSIDE ";
/// Header of the episodes outside the question's window that match it,
/// given the window's [`describe`](crate::window::Window::describe) phrase.
pub fn outside_header(describe: &str) -> String {
    format!(
        "{OUTSIDE_HEADER_START}{} (oldest first):",
        neutralise(describe)
    )
}

/// Whether a block line opens a section of episode lines: [`EPISODES_HEADER`]
/// or an [`outside_header`]. Untrusted text cannot forge either (their
/// phrases are among [`HEADER_PHRASES`]).
pub fn is_episodes_header(line: &str) -> bool {
    line == EPISODES_HEADER || (line.starts_with(OUTSIDE_HEADER_START) && line.ends_with(':'))
}
/// The label before the usage note.
pub const HOW_TO_USE_LABEL: &str = "HOW TO USE THIS:";
/// The usage note when the self-model gives none: how to read the memory.
pub const DEFAULT_HOW_TO_USE: &str = "it is your own memory of past work with this student, not their material. When you rely on it, say when it happened (\"in July we…\"). Never claim a memory that is not listed here.";
/// Added to the usage note when the block prints beliefs.
pub const BELIEFS_NOTE: &str = "Beliefs are estimates from checks, not grades.";
/// Added to the usage note when the block prints the subject map.
pub const MAP_NOTE: &str = "The subject map describes the material, not what the student knows.";
/// The sentence every usage note carried for both sections, printed or not,
/// before the block said only what applies: a self-model stored before then
/// still holds it, and it is taken out of the note. The failure that changed it
/// (issue 17, LoCoMo `past_budget`): a block of earlier work alone spent ~25
/// o200k tokens on sections it did not have, a twentieth of a 500-token block.
const JOINT_NOTE: &str = "Beliefs are estimates from checks, not grades; the subject map describes the material, not what the student knows.";
/// What [`BELIEFS_NOTE`] and [`MAP_NOTE`] add to the usage note's line, each
/// with the space before it, in o200k tokens: counted once, not every turn.
static NOTE_COSTS: LazyLock<(usize, usize)> = LazyLock::new(|| {
    (
        count_tokens(&format!(" {BELIEFS_NOTE}")),
        count_tokens(&format!(" {MAP_NOTE}")),
    )
});
/// The label carried by a recalled episode whose cited file changed (docs/mechanisms.md §8).
pub const CHANGED_NOTE: &str = "[note: the file cited here has since been replaced or removed]";
/// Longest episode text printed, in characters (about a paragraph, ~110
/// o200k tokens of English); a longer text is shown as an [`excerpt`] of the
/// sentences holding the searched words, else cut at a word with an ellipsis,
/// so one long answer cannot eat the budget.
///
/// It was 280. The failure that changed it (issue 17, LoCoMo `cut`): 91
/// evidence turns of 282–462 characters were in the block by id but their
/// line had lost the answer, while a whole-turn baseline carried 87 of them;
/// at 500, evidence by content at 1,500 tokens went 0.727 → 0.761 (`cut`
/// 91 → 0, `past_budget` 414 → 437), the quality benchmark unchanged.
pub const EPISODE_CHARS: usize = 500;

/// Whether `text` is longer than a block line ([`EPISODE_CHARS`]): a line
/// shows an excerpt of it, and recall lets it stand on its own evidence
/// ([`crate::recall::Candidate::long`]).
pub fn longer_than_a_line(text: &str) -> bool {
    text.chars().nth(EPISODE_CHARS).is_some()
}

/// The best match is printed whole, however long, when its whole text takes
/// at most this share of the budget (a quarter: 300 tokens, some 1,200
/// characters, at the default 1,200): "remind me what you told me about X"
/// asks for one earlier answer, and its excerpt by the question's words keeps
/// the words and loses what was said ([`shown_chars`]).
///
/// The failure that set it (issue 43, LongMemEval single-session-assistant
/// with distractor sessions, class `cut`): the tutor's turn ranked first, 949
/// characters, printed as an excerpt of its sentences naming the question's
/// topic, without the title it recommended.
pub const WHOLE_SHARE: f64 = 0.25;

/// How many characters of an episode's `text` its line prints: all of them
/// (`usize::MAX`) when it is the best match (`best`) and fits [`WHOLE_SHARE`]
/// of `budget_tokens`, else [`EPISODE_CHARS`].
pub fn shown_chars(text: &str, best: bool, budget_tokens: usize) -> usize {
    if best
        && longer_than_a_line(text)
        && count_tokens(text) as f64 <= WHOLE_SHARE * budget_tokens as f64
    {
        usize::MAX
    } else {
        EPISODE_CHARS
    }
}

/// Which order the block takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The map first: the question is about the material.
    Ordinary,
    /// The record line, beliefs and earlier work first, the map last.
    Record,
}

impl Mode {
    /// `ordinary` or `record`, as in docs/formats.md "Block as JSON".
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ordinary => "ordinary",
            Mode::Record => "record",
        }
    }
}

/// One belief, already phrased: `understands cytoplasm`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefLine {
    pub text: String,
    /// 0–1; printed with two decimals, clamped.
    pub confidence: f64,
}

/// One recalled episode (the representative of `count` identical ones).
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeLine {
    pub at: DateTime<Utc>,
    /// An [`episodes::Kind`](crate::episodes::Kind) name; anything else is printed as its own label.
    pub kind: String,
    pub text: String,
    pub count: usize,
    /// The cited file has since been replaced or removed.
    pub changed_citation: bool,
    pub external_id: Option<String>,
    pub id: i64,
    /// Outside the question's window: printed under [`outside_header`], after
    /// the window's own work.
    pub outside_window: bool,
    /// The longest text its line prints, in characters ([`shown_chars`]):
    /// [`EPISODE_CHARS`] but for a best match printed whole.
    pub max_chars: usize,
}

/// The subject map as the block shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSection {
    pub concept_count: usize,
    /// Share of concepts the files explain, whole percent.
    pub explained_pct: u32,
    /// Rendered concept lines, best first (teaching order, then centrality);
    /// the budget trims from the end.
    pub lines: Vec<String>,
    /// How many of the first `lines` are about concepts the question names
    /// (each after what it builds on): they are offered to the budget right
    /// after the beliefs, before the episodes, so "what should I review
    /// before X" keeps X's line however much earlier work there is.
    pub focus: usize,
}

impl MapSection {
    /// The map's lines in teaching order (prerequisites first, each layer
    /// already by centrality, see [`teaching_order`]), with the honest
    /// percentage of [`crate::map::header`].
    pub fn from_map(map: &ConceptMap) -> MapSection {
        let n = map.len();
        let explained = map.nodes().iter().filter(|x| x.explained()).count();
        let pct = (explained * 100 + n / 2).checked_div(n).unwrap_or(0);
        let lines = teaching_order(map)
            .layers
            .iter()
            .flatten()
            .filter_map(|k| map.nodes().iter().find(|x| &x.key == k))
            .map(|x| render_line(map, x))
            .collect();
        MapSection {
            concept_count: n,
            explained_pct: u32::try_from(pct).unwrap_or(100),
            lines,
            focus: 0,
        }
    }

    fn header(&self) -> String {
        let n = self.concept_count;
        let noun = if n == 1 { "concept" } else { "concepts" };
        format!(
            "SUBJECT MAP ({n} {noun}; the files explain {}% of it, this is about the material, NOT the student's mastery):",
            self.explained_pct.min(100)
        )
    }
}

/// Everything one block is made of, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockInput {
    pub mode: Mode,
    /// The turn's instant: decides whether a date needs its year.
    pub at: DateTime<Utc>,
    /// Most important first.
    pub beliefs: Vec<BeliefLine>,
    /// Most relevant first; printed oldest first. With a non-empty window,
    /// those flagged [`EpisodeLine::outside_window`] are printed after the
    /// window's own, under [`outside_header`].
    pub episodes: Vec<EpisodeLine>,
    pub map: Option<MapSection>,
    /// The question's window: its [`Window::describe`](crate::window::Window::describe)
    /// phrase and whether it held nothing. An empty window prints the
    /// no-record sentence and no episode at all.
    pub window: Option<(String, bool)>,
    /// The honest sentence about checks linked to no concept, when there are any.
    pub honest_checks: Option<String>,
    /// The usage note printed after the `HOW TO USE THIS:` label (the label
    /// itself is ours, do not include it); empty means [`DEFAULT_HOW_TO_USE`].
    pub how_to_use: String,
    /// The learner's time zone.
    pub tz: Tz,
}

/// A rendered block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// o200k tokens of `text`.
    pub tokens: usize,
    /// Ids of the episodes actually printed, in printed order.
    pub included_episode_ids: Vec<i64>,
    /// Belief, episode and map lines given but not printed.
    pub dropped_lines: usize,
}

static O200K: LazyLock<Option<CoreBPE>> = LazyLock::new(|| tiktoken_rs::o200k_base().ok());

/// o200k tokens of `text`. Should the embedded tokenizer ever fail to load,
/// the byte length stands in: every token covers at least one byte, so it
/// over-counts and the budget still holds.
pub fn count_tokens(text: &str) -> usize {
    match O200K.as_ref() {
        Some(bpe) => bpe.count_ordinary(text),
        None => text.len(),
    }
}

/// How many entries each per-thread memo of the renderer ([`line_tokens`],
/// [`printed_text`]) keeps before it starts over: a few MB a thread.
const MEMO_ENTRIES: usize = 16_384;

/// A per-thread memo of a pure function of a text. Exact: the key is the
/// whole text, compared in full, so a hit is always that text's own value.
struct Memo<V>(HashMap<Box<str>, V>);

impl<V: Clone> Memo<V> {
    fn get_or(&mut self, key: &str, make: impl FnOnce() -> V) -> V {
        if let Some(v) = self.0.get(key) {
            return v.clone();
        }
        let v = make();
        if self.0.len() >= MEMO_ENTRIES {
            self.0.clear();
        }
        self.0.insert(key.into(), v.clone());
        v
    }
}

/// o200k tokens of `line` with its newline, remembered per thread. A
/// subject's memories come back turn after turn, and counting them was most
/// of rendering's cost (issue 18; `fancy_regex` under the tokenizer).
fn line_tokens(line: &str) -> usize {
    thread_local! {
        static MEMO: RefCell<Memo<u32>> = RefCell::new(Memo(HashMap::new()));
    }
    MEMO.with(|memo| {
        memo.borrow_mut().get_or(line, || {
            u32::try_from(count_tokens(&format!("{line}\n"))).unwrap_or(u32::MAX)
        }) as usize
    })
}

/// o200k tokens of `lines` joined by newlines, from the remembered count of
/// each line: the same figure as [`count_tokens`] of the joined text, which
/// rendering used to tokenise whole on every turn (issue 18: 8 % of a loaded
/// server's CPU). o200k's pre-split lets a piece run past a newline into
/// the next line only through `[\r\n/]*` after punctuation and
/// `\s*[\r\n]+`: so unless a line starts with `/`, is blank, or its leading
/// white space holds a line break, each line's pieces, and so its tokens, are
/// the same alone (with its newline) as in the whole. Lines with such a line
/// among them are counted the slow way. `joined_lines_count_as_the_whole`
/// holds it to the tokenizer.
fn joined_tokens(lines: &[&str]) -> usize {
    let Some((last, before)) = lines.split_last() else {
        return 0;
    };
    let splits = |l: &&str| {
        let rest = l.trim_start();
        rest.is_empty() || l.starts_with('/') || l[..l.len() - rest.len()].contains(['\r', '\n'])
    };
    if lines.iter().any(splits) {
        return count_tokens(&lines.join("\n"));
    }
    before.iter().map(|l| line_tokens(l)).sum::<usize>() + count_tokens(last)
}

/// An episode's text as its line prints it: [`neutralise`]d, on one line of
/// at most `max_chars`; at [`EPISODE_CHARS`], remembered per thread (its
/// Unicode normalisation and header search were 7 % of a loaded server's CPU,
/// for texts that come back turn after turn).
fn printed_text(text: &str, max_chars: usize) -> String {
    if max_chars != EPISODE_CHARS {
        return one_line(&neutralise(text), max_chars);
    }
    thread_local! {
        static MEMO: RefCell<Memo<std::rc::Rc<str>>> = RefCell::new(Memo(HashMap::new()));
    }
    MEMO.with(|memo| {
        memo.borrow_mut()
            .get_or(text, || one_line(&neutralise(text), EPISODE_CHARS).into())
            .to_string()
    })
}

/// How a kind reads in `- you were asked: …`.
fn kind_label(kind: &str) -> String {
    match Kind::parse(kind) {
        Some(Kind::Question) => "you were asked".into(),
        Some(Kind::Answer) => "you answered".into(),
        Some(Kind::Taught) => "the student taught you".into(),
        Some(Kind::Check) => "check".into(),
        Some(Kind::Quiz) => "quiz".into(),
        Some(Kind::File) => "file".into(),
        Some(Kind::Consolidation) => "digest".into(),
        None => Some(neutralise(kind))
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "note".into()),
    }
}

pub(crate) fn date_label(at: DateTime<Utc>, turn: DateTime<Utc>, tz: Tz) -> String {
    let local = at.with_timezone(&tz);
    if local.year() == turn.with_timezone(&tz).year() {
        local.format("%-d %b").to_string()
    } else {
        local.format("%-d %b %Y").to_string()
    }
}

fn belief_line(b: &BeliefLine) -> Option<String> {
    let text = neutralise(&b.text);
    if text.is_empty() {
        return None;
    }
    Some(if b.confidence.is_finite() {
        format!("- {text} ({:.2})", b.confidence.clamp(0.0, 1.0))
    } else {
        format!("- {text} (confidence unknown)")
    })
}

/// The line that opens a day's episodes in the earlier-work section: its
/// date label and a colon (`12 Jul:`, `3 Mar 2025:`).
fn day_line(at: DateTime<Utc>, turn: DateTime<Utc>, tz: Tz) -> String {
    format!("{}:", date_label(at, turn, tz))
}

/// Whether a line of the earlier-work section opens a day (see [`day_line`])
/// rather than being one of its episodes (`- …`) or the next section.
pub fn is_day_line(line: &str) -> bool {
    line.ends_with(':') && line.starts_with(|c: char| c.is_ascii_digit()) && !line.contains('\n')
}

/// The learner's calendar day of an instant, for grouping lines by day.
fn local_day(at: DateTime<Utc>, tz: Tz) -> chrono::NaiveDate {
    at.with_timezone(&tz).date_naive()
}

fn episode_line(e: &EpisodeLine) -> String {
    let mut line = format!(
        "- {}: {}",
        kind_label(&e.kind),
        printed_text(&e.text, e.max_chars)
    );
    match e.count.saturating_sub(1) {
        0 => {}
        1 => line.push_str(" (and 1 more time like it)"),
        n => line.push_str(&format!(" (and {n} more times like it)")),
    }
    if e.changed_citation {
        line.push(' ');
        line.push_str(CHANGED_NOTE);
    }
    line
}

/// Which section a content line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Beliefs,
    Episodes,
    Map,
    /// Episodes outside the question's window that match it.
    Outside,
}

/// A content line offered to the budget, in priority order.
struct Offer {
    part: Part,
    line: String,
    /// For episodes: the id and the instant (for oldest-first printing).
    episode: Option<(DateTime<Utc>, i64)>,
    /// For episodes: the learner's day and its [`day_line`].
    day: Option<(chrono::NaiveDate, String)>,
}

/// Renders the block for `input` within `budget_tokens` o200k tokens (see
/// the module docs for layout and budget rules).
pub fn render(input: &BlockInput, budget_tokens: usize) -> Rendered {
    let record_line = (input.mode == Mode::Record).then(|| RECORD_LINE.to_string());
    let honest = input
        .honest_checks
        .as_deref()
        .map(neutralise)
        .filter(|s| !s.is_empty());
    let window_empty = matches!(input.window, Some((_, true)));
    let no_record = match &input.window {
        Some((describe, true)) => Some(format!(
            "There is no record of any work with this student in {}.",
            neutralise(describe)
        )),
        _ => None,
    };
    let how = neutralise(&input.how_to_use.replace(JOINT_NOTE, " "));
    let how = if how.is_empty() {
        DEFAULT_HOW_TO_USE.to_string()
    } else {
        how
    };

    // Offers in budget priority: beliefs, episodes, map.
    let mut offers: Vec<Offer> = Vec::new();
    offers.extend(
        input
            .beliefs
            .iter()
            .filter_map(belief_line)
            .map(|line| Offer {
                part: Part::Beliefs,
                line,
                episode: None,
                day: None,
            }),
    );
    let mut dropped = input.beliefs.len() - offers.len();
    let map_offer = |l: &String| -> Option<Offer> {
        let l = neutralise(l);
        if l.is_empty() {
            return None;
        }
        // Every map line is a list item, never a line of the frame.
        let line = if l.starts_with("- ") {
            l
        } else {
            format!("- {l}")
        };
        Some(Offer {
            part: Part::Map,
            line,
            episode: None,
            day: None,
        })
    };
    let focus = input.map.as_ref().map_or(0, |m| m.focus.min(m.lines.len()));
    if let Some(map) = &input.map {
        let before = offers.len();
        offers.extend(map.lines[..focus].iter().filter_map(map_offer));
        dropped += focus - (offers.len() - before);
    }
    if window_empty {
        // Nothing may be presented as if it were inside an empty window.
        dropped += input.episodes.len();
    } else {
        offers.extend(input.episodes.iter().map(|e| Offer {
            part: if e.outside_window && input.window.is_some() {
                Part::Outside
            } else {
                Part::Episodes
            },
            line: episode_line(e),
            episode: Some((e.at, e.id)),
            day: Some((
                local_day(e.at, input.tz),
                day_line(e.at, input.at, input.tz),
            )),
        }));
    }
    let map_header = input.map.as_ref().map(MapSection::header);
    let outside = input.window.as_ref().map(|(d, _)| outside_header(d));
    if let Some(map) = &input.map {
        let before = offers.len();
        offers.extend(map.lines[focus..].iter().filter_map(map_offer));
        dropped += map.lines.len() - focus - (offers.len() - before);
    }

    // The block's text and its o200k tokens.
    let assemble = |taken: &[bool]| -> (String, usize) {
        let pick = |part: Part| -> Vec<&Offer> {
            offers
                .iter()
                .zip(taken)
                .filter(|(o, t)| **t && o.part == part)
                .map(|(o, _)| o)
                .collect()
        };
        let mut lines: Vec<&str> = vec![OPENER];
        if let Some(l) = &record_line {
            lines.push(l);
        }
        let map_lines = pick(Part::Map);
        let mut map_part: Vec<&str> = Vec::new();
        if let (Some(h), false) = (&map_header, map_lines.is_empty()) {
            map_part.push(h);
            map_part.extend(map_lines.iter().map(|o| o.line.as_str()));
        }
        let beliefs = pick(Part::Beliefs);
        let mut episodes = pick(Part::Episodes);
        episodes.sort_by_key(|o| o.episode);
        let mut elsewhere = pick(Part::Outside);
        elsewhere.sort_by_key(|o| o.episode);
        if input.mode == Mode::Ordinary {
            lines.extend(&map_part);
        }
        if !beliefs.is_empty() {
            lines.push(BELIEFS_HEADER);
            lines.extend(beliefs.iter().map(|o| o.line.as_str()));
        }
        if let Some(h) = &honest {
            lines.push(h);
        }
        if let Some(n) = &no_record {
            lines.push(n);
        }
        let sections = [
            (Some(EPISODES_HEADER), &episodes),
            (outside.as_deref(), &elsewhere),
        ];
        for (header, part) in sections {
            let Some(header) = header.filter(|_| !part.is_empty()) else {
                continue;
            };
            lines.push(header);
            let mut day = None;
            for o in part.iter() {
                if let Some((d, label)) = &o.day
                    && day != Some(d)
                {
                    day = Some(d);
                    lines.push(label);
                }
                lines.push(o.line.as_str());
            }
        }
        if input.mode == Mode::Record {
            lines.extend(&map_part);
        }
        // The note speaks of the beliefs and of the map only when the block
        // prints them; its sentence on each is paid for with the section's
        // header ([`NOTE_COSTS`]).
        let mut how_line = format!("{HOW_TO_USE_LABEL} {how}");
        if !beliefs.is_empty() {
            how_line.push(' ');
            how_line.push_str(BELIEFS_NOTE);
        }
        if !map_part.is_empty() {
            how_line.push(' ');
            how_line.push_str(MAP_NOTE);
        }
        lines.push(&how_line);
        lines.push(CLOSER);
        (lines.join("\n"), joined_tokens(&lines))
    };

    let mut taken = vec![false; offers.len()];
    let (_, mut used) = assemble(&taken);
    if used > budget_tokens {
        return Rendered {
            text: String::new(),
            tokens: 0,
            included_episode_ids: Vec::new(),
            dropped_lines: dropped + offers.len(),
        };
    }
    // Greedy by priority. A belief or episode that does not fit is skipped
    // and a later, shorter one may still fit; the map stops at its first
    // misfit, so it keeps a prefix of its teaching order and never shows a
    // concept without the prerequisites listed before it.
    let mut header_paid = [false; 4];
    // Each day's line is paid for with the first episode of that day (in
    // its section).
    let mut days_paid: std::collections::HashSet<(Part, chrono::NaiveDate)> =
        std::collections::HashSet::new();
    let mut order = Vec::new();
    let mut map_full = false;
    for (i, o) in offers.iter().enumerate() {
        let slot = o.part as usize;
        if o.part == Part::Map && map_full {
            continue;
        }
        // A line costs its tokens with its own newline: o200k's pre-split
        // ends a piece at a newline, so these costs add up to the real count
        // (the recount below guards the rest).
        let mut cost = line_tokens(&o.line);
        if !header_paid[slot] {
            cost += match o.part {
                Part::Beliefs => line_tokens(BELIEFS_HEADER) + NOTE_COSTS.0,
                Part::Episodes => line_tokens(EPISODES_HEADER),
                Part::Map => map_header.as_deref().map_or(0, line_tokens) + NOTE_COSTS.1,
                Part::Outside => outside.as_deref().map_or(0, line_tokens),
            };
        }
        if let Some((d, label)) = &o.day
            && !days_paid.contains(&(o.part, *d))
        {
            cost += line_tokens(label);
        }
        if used + cost <= budget_tokens {
            used += cost;
            header_paid[slot] = true;
            if let Some((d, _)) = &o.day {
                days_paid.insert((o.part, *d));
            }
            taken[i] = true;
            order.push(i);
        } else if o.part == Part::Map {
            map_full = true;
        }
    }
    // The real count decides, removing the last-added lines until it fits.
    let (mut text, mut tokens) = assemble(&taken);
    while tokens > budget_tokens {
        let Some(i) = order.pop() else { break };
        taken[i] = false;
        (text, tokens) = assemble(&taken);
    }
    // In printed order: the window's own work, then what lies outside it.
    let mut printed: Vec<(bool, DateTime<Utc>, i64)> = offers
        .iter()
        .zip(&taken)
        .filter(|(_, t)| **t)
        .filter_map(|(o, _)| o.episode.map(|(at, id)| (o.part == Part::Outside, at, id)))
        .collect();
    printed.sort();
    Rendered {
        text,
        tokens,
        included_episode_ids: printed.into_iter().map(|(_, _, id)| id).collect(),
        dropped_lines: dropped + taken.iter().filter(|t| !**t).count(),
    }
}
