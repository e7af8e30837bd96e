//! One turn's memory block: beliefs, recalled episodes, the map and the
//! window, gathered from the stores and rendered inside a token budget, under
//! a hard time cap. Nothing here calls a generative model.

use crate::Result;
use crate::recall::{RecallQuery, Recaller};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use std::time::{Duration, Instant};
use tm_model::block::{
    BeliefLine, BlockInput, Design, EpisodeLine, MapSection, Mode, WINDOW_TURNS,
    is_record_question, render,
};
use tm_model::episodes::{Episode, Kind};
use tm_model::files::FileVersion;
use tm_model::nightly::VersionFacts;
use tm_model::subject::Subject;
use tm_store::Reader;

/// Default token budget (o200k tokens).
pub const DEFAULT_BUDGET: usize = 1_200;
/// Default hard time cap (docs/mechanisms.md §6: 2.5 s).
pub const DEFAULT_CAP: Duration = Duration::from_millis(2_500);
/// Fewest recalled memories offered to the renderer before the budget trims them.
pub const RECALL_LIMIT: usize = 24;
/// o200k tokens of the shortest useful episode line: the budget divided by
/// it is how many memories can possibly fit.
pub const MIN_LINE_TOKENS: usize = 20;

/// How many recalled memories to offer for a budget: as many as could fit,
/// never fewer than [`RECALL_LIMIT`]. A fixed 24 left half of a 1,500-token
/// budget empty while relevant turns stayed out (LoCoMo evidence recall).
pub fn recall_limit(budget: usize) -> usize {
    (budget / MIN_LINE_TOKENS).max(RECALL_LIMIT)
}

/// The block as docs/formats.md "Block as JSON" describes it: the one type the CLI,
/// the HTTP API and the benchmark print.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Block {
    pub block: String,
    /// `record` or `ordinary`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub mode: &'static str,
    pub tokens: usize,
    pub elapsed_ms: f64,
    pub dropped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<BlockWindow>,
    pub recalled: Vec<RecalledRef>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlockWindow {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub empty: bool,
}

/// A memory that reached the block.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecalledRef {
    pub id: i64,
    pub external_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub kind: &'static str,
    pub at: DateTime<Utc>,
    pub count: usize,
    /// holds | changed | unverifiable | unchecked (docs/mechanisms.md §8), looked up from
    /// the file versions.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub citation: &'static str,
}

/// What a turn asks for.
#[derive(Debug, Clone)]
pub struct BlockRequest {
    pub question: String,
    pub at: DateTime<Utc>,
    pub tz: Tz,
    pub budget: usize,
    /// Which design fills the slot (docs/mechanisms.md §9); the product runs `Full`.
    pub design: Design,
}

impl BlockRequest {
    /// A request for the full design.
    pub fn new(question: impl Into<String>, at: DateTime<Utc>, tz: Tz, budget: usize) -> Self {
        BlockRequest {
            question: question.into(),
            at,
            tz,
            budget,
            design: Design::Full,
        }
    }
}

/// Whether an episode's cited files still hold, by the one citation rule
/// (`tm_model::nightly::verify`, the night's): `unverifiable` when it cites
/// none, `changed` when a cited version was replaced or removed.
pub fn citation(e: &Episode, versions: &[VersionFacts]) -> &'static str {
    tm_model::nightly::verify(&e.evidence, versions).status()
}

/// The file versions as they stand now, for [`citation`].
fn now(versions: &[FileVersion]) -> Vec<VersionFacts> {
    VersionFacts::now(versions)
}

/// Builds the block on the calling thread (no time cap).
pub fn build(
    store: &dyn Reader,
    recaller: &Recaller,
    subject: &Subject,
    req: &BlockRequest,
) -> Result<Block> {
    let started = Instant::now();
    match req.design {
        Design::Plain => return Ok(empty_block(started, false)),
        Design::Window => return window_block(store, subject, req, started),
        Design::Episodes | Design::Full => {}
    }
    // The episodes design keeps ranked recall (its time filter included) and
    // drops the map, the beliefs and the record-question branch.
    let full = req.design == Design::Full;
    let recall = recaller.recall(
        store,
        subject,
        &RecallQuery {
            question: &req.question,
            at: req.at,
            tz: req.tz,
            limit: recall_limit(req.budget),
            exclude: None,
        },
    )?;
    let has_window = recall.window.is_some();
    let mode = if full && is_record_question(&req.question, has_window) {
        Mode::Record
    } else {
        Mode::Ordinary
    };
    let beliefs: Vec<BeliefLine> = if !full {
        Vec::new()
    } else {
        store
            .current_beliefs(subject)?
            .into_iter()
            .map(|b| BeliefLine {
                text: format!(
                    "{} {}",
                    b.claim.as_str(),
                    b.concept
                        .as_deref()
                        .unwrap_or(&b.subject_key)
                        .to_lowercase()
                ),
                confidence: b.confidence,
            })
            .collect()
    };
    let versions = now(&store.file_versions(subject)?);
    let mut citations = std::collections::HashMap::new();
    // The record branch without a window: the newest missed check of each
    // concept (or topic) goes first (a miss matters more than a pass; "what have I got
    // wrong" must not depend on the question sharing a word with "wrong").
    // The subject's stamp, read once for the caches below (before the map is
    // loaded: a map saved in between is at worst used under the older stamp).
    let stamp = store.subject_stamp(subject)?;
    let missed = if full && mode == Mode::Record && recall.window.is_none() {
        missed_checks(recaller, store, subject, stamp, req.at)?
    } else {
        Vec::new()
    };
    let mut refs: std::collections::HashMap<i64, (&Episode, usize)> =
        std::collections::HashMap::new();
    for e in &missed {
        refs.insert(e.id, (e, 1));
    }
    for m in &recall.ranked {
        refs.insert(m.episode.id, (&m.episode, m.count));
    }
    // A long episode shows the sentences that carry the words recall searched
    // for (the question's, in their other forms too; an excerpt, marked "…"),
    // not just its first characters.
    // The best match is printed whole where the budget allows it
    // (`tm_model::block::shown_chars`).
    let terms = &recall.terms;
    let best = recall
        .ranked
        .iter()
        .find(|m| m.signals.matched)
        .map(|m| m.episode.id);
    let episodes: Vec<EpisodeLine> = missed
        .iter()
        .map(|e| (e, 1, false))
        .chain(
            recall
                .ranked
                .iter()
                .filter(|m| !missed.iter().any(|e| e.id == m.episode.id))
                .map(|m| (&m.episode, m.count, m.signals.outside_window)),
        )
        .map(|(e, count, outside_window)| {
            let c = citation(e, &versions);
            citations.insert(e.id, c);
            let max_chars = tm_model::block::shown_chars(&e.text, best == Some(e.id), req.budget);
            EpisodeLine {
                at: e.at,
                kind: e.kind.as_str().to_string(),
                text: tm_model::block::excerpt(&e.text, terms, max_chars)
                    .unwrap_or_else(|| e.text.clone()),
                count,
                changed_citation: c == "changed",
                external_id: e.external_id.clone(),
                id: e.id,
                outside_window,
                max_chars,
            }
        })
        .collect();
    let map = if full {
        crate::map::load(store, subject)?
    } else {
        tm_model::map::ConceptMap::default()
    };
    // The night's working set holds the check counts while nothing new was
    // recorded (saves re-routing every check on every turn); otherwise they
    // are computed here. The usage note is the night's self-model, if any.
    let honest_checks = if !full {
        None
    } else {
        match crate::nightly::fresh_working_set_at(store, subject, stamp)? {
            Some(ws) => ws
                .honest_checks
                .filter(|_| ws.checks_linked < ws.checks_recorded),
            None => {
                let counts = recaller.honest_counts(store, subject, stamp, &map)?;
                counts
                    .sentence
                    .clone()
                    .filter(|_| counts.linked < counts.recorded)
            }
        }
    };
    let how_to_use = if full {
        crate::nightly::self_model(store, subject)?
            .map(|m| m.how_to_use)
            .unwrap_or_default()
    } else {
        String::new()
    };
    let input = BlockInput {
        mode,
        at: req.at,
        beliefs,
        episodes,
        map: (!map.is_empty()).then(|| focused_map(&map, &req.question)),
        window: recall.window.as_ref().map(|w| (w.label.clone(), w.empty)),
        honest_checks,
        how_to_use,
        tz: req.tz,
    };
    let rendered = render(&input, req.budget);
    let recalled = rendered
        .included_episode_ids
        .iter()
        .filter_map(|id| refs.get(id))
        .map(|(e, count)| RecalledRef {
            id: e.id,
            external_id: e.external_id.clone(),
            kind: e.kind.as_str(),
            at: e.at,
            count: *count,
            citation: citations.get(&e.id).copied().unwrap_or("unchecked"),
        })
        .collect();
    Ok(Block {
        block: rendered.text,
        mode: mode.as_str(),
        tokens: rendered.tokens,
        elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        dropped: false,
        window: recall.window.map(|w| BlockWindow {
            from: w.from,
            to: w.to,
            empty: w.empty,
        }),
        recalled,
    })
}

/// Most missed checks the record branch puts first.
pub const MISSED_CHECKS: usize = 8;

/// The newest missed check of each concept, newest first, at most
/// [`MISSED_CHECKS`], none after `at`. A check linked to no concept counts
/// under its own topic: a miss on a topic the map lacks (often a learner's
/// phrase taken as the topic) is still a miss, and left to recall it waited
/// on the question matching it (with e5, tenth behind the learner's own
/// questions in a Spanish subject of the quality benchmark).
fn missed_checks(
    recaller: &Recaller,
    store: &dyn Reader,
    subject: &Subject,
    stamp: (i64, i64),
    at: DateTime<Utc>,
) -> Result<Vec<Episode>> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Episode> = recaller
        .check_episodes(store, subject, stamp)?
        .iter()
        .rev()
        .filter(|e| e.at <= at)
        .filter(|e| e.data.get("verdict").and_then(|v| v.as_str()) == Some("wrong"))
        .filter(|e| {
            e.concepts
                .first()
                .map(String::as_str)
                .or_else(|| e.data.get("topic").and_then(|t| t.as_str()))
                .is_some_and(|c| seen.insert(tm_model::lang::canonical_key(c)))
        })
        .take(MISSED_CHECKS)
        .cloned()
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse((e.at, e.seq)));
    Ok(out)
}

/// The map section with the lines of the concepts the question names first,
/// each after the lines of what it builds on ("what should I review before
/// X" needs X's line, and the budget trims the map from the end); the rest
/// follow in teaching order.
fn focused_map(map: &tm_model::map::ConceptMap, question: &str) -> MapSection {
    let mut section = MapSection::from_map(map);
    let mut first: Vec<String> = Vec::new();
    for name in crate::map::named_in(map, question) {
        let Some(node) = map.nodes().iter().find(|n| n.name == name) else {
            continue;
        };
        for edge in &node.builds_on {
            if let Some(p) = map.nodes().iter().find(|m| m.key == edge.to) {
                first.push(tm_model::map::render_line(map, p));
            }
        }
        first.push(tm_model::map::render_line(map, node));
    }
    let mut seen = std::collections::HashSet::new();
    first.retain(|l| seen.insert(l.clone()));
    section.lines.retain(|l| !seen.contains(l));
    section.focus = first.len();
    first.append(&mut section.lines);
    section.lines = first;
    section
}

/// An empty slot: the plain design's, or a build dropped at the cap.
pub(crate) fn empty_block(started: Instant, dropped: bool) -> Block {
    Block {
        block: String::new(),
        mode: Mode::Ordinary.as_str(),
        tokens: 0,
        elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        dropped,
        window: None,
        recalled: Vec::new(),
    }
}

/// The window design: the last [`WINDOW_TURNS`] turns (learner and tutor
/// messages, checks) before the turn, unranked; the budget keeps the newest.
fn window_block(
    store: &dyn Reader,
    subject: &Subject,
    req: &BlockRequest,
    started: Instant,
) -> Result<Block> {
    let recent = store.recent_ids(subject, req.at, crate::recall::RECENT_POOL)?;
    let turns: Vec<i64> = store
        .candidate_facts(subject, &recent)?
        .into_iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::Question | Kind::Answer | Kind::Check | Kind::Taught
            )
        })
        .map(|f| (f.at, f.id))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .rev()
        .take(WINDOW_TURNS)
        .map(|(_, id)| id)
        .collect();
    let mut episodes = store.subject_episodes_by_ids(subject, &turns)?;
    episodes.sort_by_key(|e| std::cmp::Reverse((e.at, e.seq)));
    let versions = now(&store.file_versions(subject)?);
    let lines: Vec<EpisodeLine> = episodes
        .iter()
        .map(|e| EpisodeLine {
            at: e.at,
            kind: e.kind.as_str().to_string(),
            text: e.text.clone(),
            count: 1,
            changed_citation: citation(e, &versions) == "changed",
            external_id: e.external_id.clone(),
            id: e.id,
            outside_window: false,
            max_chars: tm_model::block::EPISODE_CHARS,
        })
        .collect();
    let input = BlockInput {
        mode: Mode::Ordinary,
        at: req.at,
        beliefs: Vec::new(),
        episodes: lines,
        map: None,
        window: None,
        honest_checks: None,
        how_to_use: String::new(),
        tz: req.tz,
    };
    let rendered = render(&input, req.budget);
    let recalled = rendered
        .included_episode_ids
        .iter()
        .filter_map(|id| episodes.iter().find(|e| e.id == *id))
        .map(|e| RecalledRef {
            id: e.id,
            external_id: e.external_id.clone(),
            kind: e.kind.as_str(),
            at: e.at,
            count: 1,
            citation: citation(e, &versions),
        })
        .collect();
    Ok(Block {
        block: rendered.text,
        mode: Mode::Ordinary.as_str(),
        tokens: rendered.tokens,
        elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        dropped: false,
        window: None,
        recalled,
    })
}
