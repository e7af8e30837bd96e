//! Recall: which past episodes answer this question, best first?
//!
//! The store gathers the candidate pools over the whole history (the 500 most
//! recent, full-text hits on [`distinctive_terms`], episodes touching a routed
//! concept, semantic neighbours), unions them and fills each [`Candidate`]'s
//! signals. This module then does what docs/mechanisms.md §3 asks, with no IO:
//!
//! 1. **Time is a filter**: with a window, recall runs inside it first (docs/mechanisms.md
//!    §3). Its
//!    candidates (no narrations) rank before anything else; an empty window
//!    is reported, never back-filled. When the question has content, what
//!    matches it outside the window follows, flagged. It used to be the
//!    window alone. The failure that changed it (issue 17, LoCoMo
//!    `not_matched`): a question naming a month or a year ("What did John
//!    attend with his colleagues in March 2023?") lost every turn outside
//!    it, among them those said later that tell of it ("last month").
//!    A turn that tells of a time inside the window counts as inside it
//!    ([`Candidate::tells_of`], [`tells_of`]): "I restored a car last year"
//!    said in 2023 is about 2022. Without it, "When did Dave sell the car he
//!    restored last year?" found the window of 2022 empty (the conversation
//!    began in 2023) and the block said there was no record of it, while the
//!    turn that answers it spoke of that very year (issue 17, LoCoMo
//!    `not_matched`).
//! 2. **The gate**: when the question has content and anything matches, every
//!    non-matching candidate is discarded. Weights alone cannot do this: a
//!    fresh irrelevant note scores 0.15 on recency alone.
//! 3. **Scoring**: `0.55·relevance + 0.30·salience`, the semantic part of
//!    relevance relative to the question's closest neighbour when that is below
//!    paraphrase level ([`RecallParams::semantic_full_for`]); recency
//!    (`0.5^(age_days/75)`) breaks ties — the newer first — and does not rank,
//!    as the original design has it. Its scoring
//!    weighed it 0.15 in the sum, where across a ten-month conversation it spans
//!    0.14 of the score and pushed older evidence past the budget: on LoCoMo
//!    (`past_budget` 473 → 439) evidence recall at 1,500 tokens went 0.736 →
//!    0.746 by id and 0.692 → 0.703 by content, the quality benchmark unchanged
//!    (BENCHMARKS.md). Inside a window with nothing matched, salience and recency
//!    keep their weights ([`Entry::by_standing`]). The weights are not tuned and
//!    not parameters.
//!    A match borrows from its sitting first ([`with_context`]): half the
//!    relevance of each match within [`CONTEXT_TURNS`] places of it in the
//!    chain and [`SITTING_MINUTES`] of it joins its own, by the same OR; an
//!    episode longer than a block line ([`Candidate::long`]) borrows nothing.
//! 4. **Collapse**: candidates with the same [`collapse_key`] become one
//!    [`Recalled`] that says how many it stands for.
//!
//! Kinds are plain strings (`"question"`, `"answer"`, `"check"`, `"quiz"`,
//! `"file"`, `"taught"`, `"consolidation"`): this module only compares them,
//! so it does not depend on the episode log's enum and never needs to change
//! when a kind is added.

mod narration;
mod terms;

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use crate::lang::canonical_key;

pub use narration::narrates_period;
pub(crate) use terms::is_cjk;
pub use terms::{distinctive_terms, episode_index_text, index_terms, index_text, lexical_overlap};

/// Weight of relevance in the score (docs/mechanisms.md §3; hand-set, not tuned).
pub const RELEVANCE_WEIGHT: f32 = 0.55;
/// Weight of salience in the score.
pub const SALIENCE_WEIGHT: f32 = 0.30;
/// Weight of recency beside salience where nothing matched inside a window (a matched
/// candidate's score leaves recency out: it breaks ties there).
pub const RECENCY_WEIGHT: f32 = 0.15;
/// Days after which recency halves.
pub const RECENCY_HALF_LIFE_DAYS: f64 = 75.0;
/// Turns said within this many minutes of each other belong to one sitting:
/// the same exchange, not the next session's first turn.
pub const SITTING_MINUTES: i64 = 30;

/// Whether two instants lie within [`SITTING_MINUTES`] of each other: the
/// one rule for "the same sitting", which both a match's context
/// ([`with_context`]) and the neighbours a strong match brings follow.
pub fn same_sitting(a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
    (a - b).abs() <= chrono::Duration::minutes(SITTING_MINUTES)
}
/// A match's context: the matches this many places before and after it in
/// the chain, in its sitting.
pub const CONTEXT_TURNS: u64 = 2;
/// The share of a context match's relevance that a match borrows from it.
pub const CONTEXT_SHARE: f32 = 0.5;

/// The evidence a relative signal carries at its top: the lexical and the
/// semantic signal reach 1 at the pool's best full-text hit and at the
/// question's closest neighbour ([`RecallParams::semantic_full_for`]), and
/// being the best of this pool is strong evidence, not proof. Scaled by this
/// before they are joined, so a turn best by one signal alone no longer ties
/// at relevance 1 with one that both signals put at their top.
///
/// The failure that motivates it (issue 17, LoCoMo `past_budget`): "What
/// health scares did Sam and Evan experience?" — the evidence turn was
/// second-best by words (0.96) and the closest by meaning, and ranked 11th,
/// behind turns that reached 1 by one signal alone (and their neighbours),
/// where only kind and time break ties; the rank fusion baseline, which
/// rewards agreement, ranked it first.
pub const BEST_OF_POOL: f32 = 0.8;

/// The share of the subject's mean vector that MiniLM's recall takes from the
/// question's and each episode's before their cosine ranks a match by
/// meaning ([`Candidate::centred`], [`RecallParams::centred_share`]).
///
/// What every episode of a subject shares (on a conversation the speakers'
/// names, which open and fill its turns) raises every cosine with a question
/// that holds it: the question's nearest turns were greetings ("Thanks,
/// Dave!", cosine 0.6 with "Which country do Calvin and Dave want to meet
/// in?") while the turn that answers it sat at 0.52, ranked 115th (issue 17,
/// LoCoMo open-domain, `past_budget`). Taking the mean out compares what sets
/// each episode apart. With MiniLM, half of it, measured on LoCoMo against none, a
/// quarter, three quarters and all (BENCHMARKS.md): three quarters and all
/// gained at every budget from 1,000 tokens, half gained at 500, 1,000 and
/// 3,000 tokens (0.001 less at 1,500) and was the one share that took
/// open-domain at 3,000 tokens past the fusion baseline, by 0.003. On
/// LongMemEval half was neutral from 1,000 tokens and cost 0.006 at 500. Other
/// embedders set their own (`tm_embed::Calibration::centred_share`): with
/// multilingual-e5-small, whose vectors share one large direction, half lost at
/// every budget and the whole gained at every budget, so it takes all of it.
pub const CENTRED_SHARE: f32 = 0.5;

/// The cosine of `q − m` and `d − m` for unit vectors `q` and `d` and a vector
/// `m`, from their dot products: `qd` = q·d, `qm` = q·m, `dm` = d·m and `mm` =
/// m·m. With `m` a share of the subject's mean vector
/// ([`RecallParams::centred_share`]), that share of what the subject's episodes have in
/// common no longer counts as likeness. 0 when either difference vanishes
/// or an input is not finite.
pub fn centred_cosine(qd: f32, qm: f32, dm: f32, mm: f32) -> f32 {
    let norms = (1.0 - 2.0 * qm + mm) * (1.0 - 2.0 * dm + mm);
    let c = (qd - qm - dm + mm) / norms.sqrt();
    if norms > f32::EPSILON && c.is_finite() {
        c.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

/// How one question's cosines become the semantic part of relevance, from
/// the candidates it is ranked among ([`RecallParams::semantic_scale`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SemanticScale {
    /// The cosine at which the semantic signal reaches 1
    /// ([`RecallParams::semantic_full_for`]).
    pub full: f32,
    /// What the closest neighbour's cosine gives on that scale: 1 unless it
    /// lies below the scale's middle.
    pub top: f32,
    /// The best centred cosine among the candidates that match by meaning,
    /// when it is above 0: a match's centred cosine over it, times `top`, is
    /// its semantic signal.
    pub centred_best: Option<f32>,
}

/// One episode offered to recall, with the signals the store measured for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: i64,
    /// The episode's place in its subject's chain (1, 2, …): which turns
    /// are next to it.
    pub seq: u64,
    /// The episode's kind as stored (`"question"`, `"check"`…).
    pub kind: String,
    pub at: DateTime<Utc>,
    /// Fixed at write time by kind, in [0, 1].
    pub salience: f32,
    /// From [`collapse_key`]; an empty key never collapses with anything.
    pub collapse_key: String,
    /// Lexical evidence in [0, 1]: BM25 divided by the pool's best, or
    /// [`lexical_overlap`]. Zero means no distinctive word of the question.
    pub lexical: f32,
    /// Cosine between question and episode vectors, in [-1, 1].
    pub semantic: f32,
    /// The same cosine once [`RecallParams::centred_share`] of the subject's
    /// mean vector is taken from both ([`centred_cosine`]): how alike the two are in what
    /// sets the episode apart from the subject's others. Ranks a match by
    /// meaning in place of `semantic` ([`RecallParams::relevance`]) when the
    /// best match's is above 0; the gate stays with `semantic`. `None` when
    /// there is no subject mean, no vector of the episode, or its cosine is
    /// under the floor (then `semantic` ranks it; from the brain, a match
    /// by meaning always has one).
    pub centred: Option<f32>,
    /// The episode touches a concept the question was routed to.
    pub concept: bool,
    /// The episode narrates memory (an answer whose grounding traced a claim
    /// to a recalled memory, or one for which [`narrates_period`] holds).
    pub narration: bool,
    /// The period the episode's text tells of, read at the episode's own
    /// instant ([`tells_of`]): a question's window holds the episode when it
    /// holds this period whole, as well as when the episode was said in it.
    pub tells_of: Option<Window>,
    /// Its text is longer than a block line
    /// ([`longer_than_a_line`](crate::block::longer_than_a_line)): it holds
    /// its own context, so it borrows nothing from its sitting
    /// ([`with_context`]), though it still lends. Any kind: a tutor's
    /// paragraph, a long question, a taught note.
    pub long: bool,
}

/// Thresholds that turn signals into "matches" and relevance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallParams {
    /// A candidate matches lexically when `lexical > lexical_floor`. Default
    /// 0: one distinctive word of the question is evidence.
    pub lexical_floor: f32,
    /// The relevance a concept hit carries on its own. Default 0.6: it says the
    /// episode is about the same topic, not that it holds the words asked.
    pub concept_relevance: f32,
    /// Cosine at or above which a candidate matches semantically. Depends on
    /// the embedder. Default 0.3, for all-MiniLM-L6-v2, where unrelated short
    /// texts sit around 0–0.2 and related ones at 0.3–0.4 and above (0.35
    /// until issue 17: see `tm_embed::Calibration::MINILM`). A
    /// hashing embedder shares character n-grams between unrelated texts and
    /// needs its own floor, measured on its own output.
    pub semantic_floor: f32,
    /// Cosine at which semantic relevance reaches 1. Default 0.8 (MiniLM
    /// paraphrases). Between the floor and this, relevance rises linearly.
    pub semantic_full: f32,
    /// Cosine between the question's vector and a concept name's vector at
    /// or above which the question is routed to that concept (docs/mechanisms.md §1: one
    /// query vector serves routing and recall). Default 0.5 for MiniLM: a
    /// question and a short name are less alike than two sentences, so the
    /// floor sits above the episode floor yet below paraphrase level; chosen
    /// by hand, not tuned on benchmark data. Routing by name (whole words)
    /// needs no floor and always applies.
    pub route_floor: f32,
    /// At most this many concepts join the route by vector, closest first:
    /// a question is about a few things, and each routed concept widens the
    /// concept pool by every episode touching it.
    pub route_limit: usize,
    /// The share of the subject's mean vector taken out before a match by
    /// meaning is ranked ([`Candidate::centred`]); 0 ranks by the cosine
    /// itself. Default [`CENTRED_SHARE`], for MiniLM.
    pub centred_share: f32,
    /// A subject with fewer episodes than this ranks by the cosine itself:
    /// the mean of a few episodes is mostly each of them. Default 0.
    pub centred_from: usize,
}

/// What recall needs of a candidate episode before it knows which win: kind,
/// time, salience, and a check's topic and verdict (no text).
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateFacts {
    pub id: i64,
    pub seq: u64,
    pub kind: crate::episodes::Kind,
    pub at: DateTime<Utc>,
    pub salience: f64,
    pub topic: Option<String>,
    pub verdict: Option<String>,
}

impl Default for RecallParams {
    fn default() -> Self {
        Self::MINILM
    }
}

impl RecallParams {
    /// Thresholds for all-MiniLM-L6-v2 vectors.
    pub const MINILM: Self = Self {
        lexical_floor: 0.0,
        concept_relevance: 0.6,
        semantic_floor: 0.3,
        semantic_full: 0.8,
        route_floor: 0.5,
        route_limit: 3,
        centred_share: CENTRED_SHARE,
        centred_from: 0,
    };

    /// The concepts a question's vector routes to: given each concept's
    /// cosine with the question, the [`route_limit`](Self::route_limit)
    /// closest at or above [`route_floor`](Self::route_floor), closest first
    /// (ties by key, so the route is deterministic). Non-finite cosines never route.
    pub fn route_by_vector(&self, scored: &[(String, f32)]) -> Vec<String> {
        let mut above: Vec<&(String, f32)> = scored
            .iter()
            .filter(|(_, c)| c.is_finite() && *c >= self.route_floor)
            .collect();
        above.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        above
            .into_iter()
            .take(self.route_limit)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Whether any signal of `c` counts as evidence that it answers the question.
    pub fn matches(&self, c: &Candidate) -> bool {
        clean_unit(c.lexical) > self.lexical_floor
            || c.concept
            || clean_cosine(c.semantic) >= self.semantic_floor
    }

    /// Relevance in [0, 1]: the probabilistic OR `1 − (1−b·l)(1−c)(1−b·s)` of
    /// the lexical signal `l`, the concept hit `c` and the semantic signal `s`
    /// (the cosine rescaled from the floor to `full`, the question's scale,
    /// [`semantic_full_for`](Self::semantic_full_for), or the centred cosine
    /// on it, below), where `b` is
    /// [`BEST_OF_POOL`] (the two relative signals reach 1 at the pool's best).
    /// Each reads as independent evidence that the episode answers the
    /// question: one strong signal keeps its value, and signals that agree add
    /// up without exceeding 1, with no weight to set.
    ///
    /// It was the strongest single signal. The failure that changed it (issue
    /// 9, LoCoMo): a turn that matched a question both by its words and by its
    /// meaning, each moderately, ranked below one that matched by one of them
    /// strongly, while agreement of the two is the better evidence (the
    /// rank fusion of BM25 and vector search beat us on exactly those turns).
    ///
    /// The semantic signal of a match with a centred cosine
    /// ([`Candidate::centred`]) is that cosine relative to the best match's,
    /// times what the best raw cosine gets on the scale above
    /// ([`SemanticScale`]); a candidate under the floor gets none, as before.
    pub fn relevance(&self, c: &Candidate, scale: &SemanticScale) -> f32 {
        let full = scale.full;
        let lexical = clean_unit(c.lexical);
        let lexical = if lexical > self.lexical_floor {
            lexical
        } else {
            0.0
        };
        let concept = if c.concept {
            self.concept_relevance.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let cosine = clean_cosine(c.semantic);
        let span = full - self.semantic_floor;
        let centred = c.centred.filter(|x| x.is_finite()).zip(scale.centred_best);
        let semantic = if cosine < self.semantic_floor {
            0.0
        } else if let Some((x, best)) = centred {
            (x / best).clamp(0.0, 1.0) * scale.top
        } else if span > 0.0 {
            ((cosine - self.semantic_floor) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let (lexical, semantic) = (BEST_OF_POOL * lexical, BEST_OF_POOL * semantic);
        1.0 - (1.0 - lexical) * (1.0 - concept) * (1.0 - semantic)
    }

    /// Where the semantic signal reaches 1 for one question, given the cosines
    /// of its candidates: at the best of them when that lies between the
    /// middle of the floor–full scale and [`semantic_full`](Self::semantic_full)
    /// (at the middle when the best is lower but matches), so
    /// the closest neighbour counts as fully as the best full-text hit does
    /// (lexical is BM25 relative to the pool's best); otherwise at
    /// `semantic_full`.
    ///
    /// The failure that motivates it (issue 17, LoCoMo `past_budget`): on a
    /// conversation the question's nearest turns sit at cosine 0.4–0.6, so on
    /// the fixed floor–0.8 scale a turn that matched by meaning alone weighed
    /// ~0.2 and ranked below every turn sharing one word with the question,
    /// while the rank fusion baseline put it in its first thirty.
    pub fn semantic_full_for(&self, cosines: impl IntoIterator<Item = f32>) -> f32 {
        let best = cosines
            .into_iter()
            .map(clean_cosine)
            .fold(f32::NEG_INFINITY, f32::max);
        self.full_at(best)
    }

    /// [`semantic_full_for`](Self::semantic_full_for) of a question whose
    /// candidates' best (clean) cosine is `best`.
    fn full_at(&self, best: f32) -> f32 {
        // Never below the middle of the scale: a question whose closest
        // neighbour barely clears the floor has no neighbour that close.
        let middle = (self.semantic_floor + self.semantic_full) / 2.0;
        if best >= self.semantic_floor {
            best.clamp(middle.min(self.semantic_full), self.semantic_full)
        } else {
            self.semantic_full
        }
    }

    /// The [`SemanticScale`] of one question over `candidates`.
    pub fn semantic_scale<'c>(
        &self,
        candidates: impl IntoIterator<Item = &'c Candidate>,
    ) -> SemanticScale {
        let mut best = f32::NEG_INFINITY;
        let mut centred_best = f32::NEG_INFINITY;
        for c in candidates {
            let cosine = clean_cosine(c.semantic);
            best = best.max(cosine);
            if cosine >= self.semantic_floor
                && let Some(x) = c.centred.filter(|x| x.is_finite())
            {
                centred_best = centred_best.max(x);
            }
        }
        let full = self.full_at(best);
        let span = full - self.semantic_floor;
        // What the closest neighbour gets, when one matches by meaning.
        let top = if span > 0.0 && best >= self.semantic_floor {
            ((best - self.semantic_floor) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        SemanticScale {
            full,
            top,
            centred_best: (centred_best > 0.0).then_some(centred_best),
        }
    }
}

/// `0.5^(age_days/75)`: 1 now, 0.5 at 75 days, ≈ 0.156 at 200 days. An
/// instant in the future counts as now.
pub fn recency(episode_at: DateTime<Utc>, now: DateTime<Utc>) -> f32 {
    let age_days = (now - episode_at).num_milliseconds().max(0) as f64 / 86_400_000.0;
    0.5f64.powf(age_days / RECENCY_HALF_LIFE_DAYS) as f32
}

fn combine(relevance: f32, salience: f32) -> f32 {
    RELEVANCE_WEIGHT * relevance + SALIENCE_WEIGHT * salience
}

/// The key under which identical episodes collapse: the same kind and the same
/// folded text, or, when both are known, the same check topic and verdict
/// ("checked osmosis, missed" twice is one memory with a count of two).
pub fn collapse_key(
    kind: &str,
    text: &str,
    check_topic: Option<&str>,
    verdict: Option<&str>,
) -> String {
    // U+001F (unit separator) cannot survive canonical_key, so parts never run together.
    match (check_topic, verdict) {
        (Some(topic), Some(verdict)) => format!(
            "{}\u{1f}topic\u{1f}{}\u{1f}{}",
            canonical_key(kind),
            canonical_key(topic),
            canonical_key(verdict)
        ),
        _ => format!(
            "{}\u{1f}text\u{1f}{}",
            canonical_key(kind),
            canonical_key(text)
        ),
    }
}

/// Why the ranked list holds what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The question had content and these episodes matched it; nothing that
    /// failed to match was kept.
    Matched,
    /// There was no question: recency is all there is.
    NoQuestion,
    /// The question had content but nothing matched: this is the recent past,
    /// offered as such (the block must not present it as an answer).
    NothingMatched,
}

/// One recalled memory: the representative of a group of identical episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The member that ranked first. For identical text that is the newest,
    /// since its signals equal its twins' and it is the most recent; the
    /// newest is also the one a learner recognises ("you asked this yesterday").
    pub candidate: Candidate,
    /// How many episodes this stands for (1 when nothing collapsed into it).
    pub count: usize,
    /// Ids of every member, the representative included, ascending.
    pub members: Vec<i64>,
    /// Its own relevance joined with its context's ([`Recalled::context`]).
    pub relevance: f32,
    /// What the matches next to it in its sitting lend it (see
    /// [`with_context`]), before it joins its own relevance: `relevance` is
    /// `1 − (1 − own)(1 − context)`. 0 when none did, and always for a
    /// [`long`](Candidate::long) episode, which borrows nothing.
    pub context: f32,
    pub recency: f32,
    pub score: f32,
    /// Whether the representative matched the question (see [`RecallParams::matches`]).
    pub matched: bool,
    /// The representative lies outside the question's window: it matched the
    /// question and ranks after every episode inside the window.
    pub outside_window: bool,
}

/// The ranked memories and how to read them.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallOutcome {
    pub ranked: Vec<Recalled>,
    pub basis: Basis,
    /// A window was asked for and held no candidate at all: the caller says so
    /// ("no record of July") and `ranked` is empty.
    pub window_empty: bool,
}

/// A half-open interval of instants `[start, end)`.
pub type Window = (DateTime<Utc>, DateTime<Utc>);

/// How much of an episode's text [`tells_of`] reads.
pub const TELLS_OF_CHARS: usize = 2_000;

/// The period an episode's `text` tells of, its time expressions read as a
/// question's are ([`parse_window`](crate::window::parse_window)) but at the
/// episode's own instant `at`: "last year" said in March 2023 is 2022, "in
/// May" said in June is that May. `None` for a text that names no time, and
/// for one that speaks of the record rather than of what happened: a
/// narration ("in July we covered…", [`narrates_period`]) or a question about
/// the record ("what did we do in July?"): neither is work of that period.
///
/// Only the first [`TELLS_OF_CHARS`] characters are read: a turn says when
/// early, and a long file's text would cost its whole length to scan.
pub fn tells_of(text: &str, at: DateTime<Utc>, tz: chrono_tz::Tz) -> Option<Window> {
    let text = text
        .char_indices()
        .nth(TELLS_OF_CHARS)
        .map_or(text, |(end, _)| &text[..end]);
    let w = crate::window::parse_window(text, at, tz)?;
    if narrates_period(text) || crate::block::is_record_question(text, true) {
        return None;
    }
    Some((w.from, w.to))
}

/// Ranks `candidates` for a turn at instant `at`.
///
/// `question_present` says whether the question has content left once the
/// window's own words are removed: "what did we cover in July?" has none, so
/// July is ranked by recency rather than gated on the word "july". A natural
/// test is `!distinctive_terms(question_without_window_words).is_empty()`.
///
/// Candidates with the same id (one per pool that found it) are merged,
/// keeping each signal's strongest value. Candidates after `at` are ignored: a
/// turn cannot recall what had not happened yet (replays rely on this). The
/// caller leaves out the episode of the current question itself.
///
/// With a `window`, recall runs inside it first: the candidates inside it
/// that are not narrations are ranked as above; if none is left, the outcome
/// is empty with `window_empty` set. When the question has content, the
/// candidates outside the window that match it (narrations left out) follow,
/// by score, each flagged [`Recalled::outside_window`].
/// Results are deterministic: ties break by time (newer first), then by id.
pub fn recall(
    candidates: Vec<Candidate>,
    question_present: bool,
    window: Option<Window>,
    at: DateTime<Utc>,
    params: &RecallParams,
    limit: usize,
) -> RecallOutcome {
    let mut pool: Vec<Option<Candidate>> = merge_by_id(candidates).into_iter().map(Some).collect();
    // Scoring and sorting work on small entries; candidates move out only for
    // the few groups that are returned.
    let inside = |c: &Candidate| match window {
        Some((start, end)) => {
            (start <= c.at && c.at < end)
                || c.tells_of
                    .is_some_and(|(from, to)| start <= from && to <= end)
        }
        None => true,
    };
    let past: Vec<(usize, &Candidate)> = pool
        .iter()
        .enumerate()
        .filter_map(|(idx, c)| c.as_ref().map(|c| (idx, c)))
        .filter(|(_, c)| c.at <= at && (window.is_none() || !c.narration))
        .collect();
    let (live, outside): (Vec<_>, Vec<_>) = past.into_iter().partition(|(_, c)| inside(c));
    let scale = params.semantic_scale(live.iter().map(|(_, c)| *c));
    let mut entries: Vec<Entry> = live
        .into_iter()
        .map(|(idx, c)| Entry::new(idx, c, at, params, &scale))
        .collect();
    let window_empty = window.is_some() && entries.is_empty();

    let any_match = question_present && entries.iter().any(|e| e.matched);
    let basis = match (question_present, any_match) {
        (false, _) => Basis::NoQuestion,
        (true, true) => Basis::Matched,
        (true, false) => Basis::NothingMatched,
    };
    if basis == Basis::Matched {
        entries.retain(|e| e.matched);
        with_context(&mut entries, &pool);
    }
    match basis {
        Basis::Matched => entries.sort_unstable_by(Entry::by_score),
        // Inside a window the window is what matched ("what did we cover in
        // September"): the period's most salient work ranks first (salience
        // and recency with their weights), recency breaking ties. Ordering by recency alone showed the last days
        // of the month and buried a taught note or a missed check from its
        // first week (found by the quality benchmark's active_month questions).
        Basis::NoQuestion | Basis::NothingMatched if window.is_some() => {
            entries.sort_unstable_by(Entry::by_standing)
        }
        Basis::NoQuestion | Basis::NothingMatched => entries.sort_unstable_by(Entry::by_recency),
    }

    // Recall runs inside the window first (docs/mechanisms.md §3); when the question has content, what
    // matches it outside the window follows every episode inside it.
    if window.is_some() && question_present && !window_empty {
        let scale = params.semantic_scale(outside.iter().map(|(_, c)| *c));
        let mut after: Vec<Entry> = outside
            .into_iter()
            .map(|(idx, c)| Entry::new(idx, c, at, params, &scale))
            .filter(|e| e.matched)
            .collect();
        with_context(&mut after, &pool);
        after.sort_unstable_by(Entry::by_score);
        entries.extend(after);
    }
    let groups = collapse(&entries, &pool, limit);
    let ranked = groups
        .into_iter()
        .filter_map(|(first, mut members)| {
            let e = &entries[first];
            let candidate = pool[e.idx].take()?;
            members.sort_unstable();
            Some(Recalled {
                outside_window: !inside(&candidate),
                candidate,
                count: members.len(),
                members,
                relevance: e.relevance,
                context: e.context,
                recency: e.recency,
                score: e.score,
                matched: e.matched,
            })
        })
        .collect();
    RecallOutcome {
        ranked,
        basis,
        window_empty,
    }
}

/// A candidate's place in the ranking: everything the sort and the gate need.
struct Entry {
    idx: usize,
    id: i64,
    seq: u64,
    at: DateTime<Utc>,
    salience: f32,
    relevance: f32,
    context: f32,
    recency: f32,
    score: f32,
    matched: bool,
}

impl Entry {
    fn new(
        idx: usize,
        c: &Candidate,
        now: DateTime<Utc>,
        params: &RecallParams,
        scale: &SemanticScale,
    ) -> Self {
        let relevance = params.relevance(c, scale);
        let recency = recency(c.at, now);
        let salience = clean_unit(c.salience);
        Self {
            idx,
            id: c.id,
            seq: c.seq,
            at: c.at,
            salience,
            relevance,
            context: 0.0,
            recency,
            score: combine(relevance, salience),
            matched: params.matches(c),
        }
    }

    /// Its candidate's [`collapse_key`] ("" once the candidate has left the pool).
    fn collapse_key<'p>(&self, pool: &'p [Option<Candidate>]) -> &'p str {
        pool[self.idx]
            .as_ref()
            .map_or("", |c| c.collapse_key.as_str())
    }

    /// Best score first; ties go to the newer, then to the smaller id (ids
    /// are unique after merging, so the order is total and reproducible).
    fn by_score(a: &Self, b: &Self) -> Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.at.cmp(&a.at))
            .then_with(|| a.id.cmp(&b.id))
    }

    /// Salience and recency with their weights, relevance left out (nothing
    /// in the window matched a topic, so no signal of it may rank); ties by
    /// time (newer first), then id.
    fn by_standing(a: &Self, b: &Self) -> Ordering {
        let standing = |e: &Self| SALIENCE_WEIGHT * e.salience + RECENCY_WEIGHT * e.recency;
        standing(b)
            .total_cmp(&standing(a))
            .then_with(|| b.at.cmp(&a.at))
            .then_with(|| a.id.cmp(&b.id))
    }

    /// Newest first; ties go to the more salient, then to the smaller id.
    fn by_recency(a: &Self, b: &Self) -> Ordering {
        b.at.cmp(&a.at)
            .then_with(|| b.salience.total_cmp(&a.salience))
            .then_with(|| a.id.cmp(&b.id))
    }
}

/// Lends each matched entry that is not [`long`](Candidate::long) the
/// relevance of the matches next to it: the
/// probabilistic OR of [`CONTEXT_SHARE`] of the relevance of every match
/// within [`CONTEXT_TURNS`] places of it in the chain and in its sitting
/// ([`SITTING_MINUTES`]), joined with its own relevance by the same OR. Only
/// the matches' own relevance is lent (one step, so the order of the entries
/// does not matter), and only among `entries`, which hold matches alone: the
/// gate still decides what is ranked. Twins (the same non-empty
/// [`collapse_key`], which become one memory) lend each other nothing, or a
/// memory would be credited with its own copy. Within a window's question the
/// matches inside the window and those outside it are two rankings, and lend
/// only within their own.
///
/// An exchange is evidence as a whole: the turns of the sitting where the
/// question's words and meaning meet tell of the same thing, while each of
/// them alone may match weakly. The failure that motivates it (issue 17,
/// LoCoMo `past_budget`): an evidence turn matched by meaning alone (cosine
/// 0.4–0.5) ranked past the budget behind turns of other days that shared one
/// word with the question, while the turns around it matched strongly.
///
/// A [`long`](Candidate::long) turn borrows nothing (it still lends): a
/// paragraph says what it is about by itself, while a short reply ("yes,
/// the second one") means what its exchange means. The failure that set it
/// (issue 43, LongMemEval with distractor sessions, `past_budget` across
/// every type): a tutor's answers run to paragraphs, and each one of a
/// sitting that touched the question borrowed from its four neighbours by
/// the OR until all stood at relevance 0.9–0.98, so the order fell to
/// salience (an answer's 0.40 over a learner's turn's 0.35) and the
/// learner's own turns that held the facts went past the budget: "What time
/// do I wake up on Saturday mornings?" found its answer, in the learner's
/// later sitting, 21st, behind tutor paragraphs of that sitting, of an
/// earlier one and of the distractor sittings.
fn with_context(entries: &mut [Entry], pool: &[Option<Candidate>]) {
    let key = |e: &Entry| e.collapse_key(pool);
    let by_seq: HashMap<u64, (f32, DateTime<Utc>, &str)> = entries
        .iter()
        .map(|e| (e.seq, (e.relevance, e.at, key(e))))
        .collect();
    for e in entries.iter_mut() {
        if pool[e.idx].as_ref().is_none_or(|c| c.long) {
            continue;
        }
        let own_key = key(e);
        let mut apart = 1.0f32;
        for d in 1..=CONTEXT_TURNS {
            for near in [e.seq.checked_sub(d), e.seq.checked_add(d)] {
                let Some((relevance, at, near_key)) = near.and_then(|s| by_seq.get(&s)) else {
                    continue;
                };
                let twin = !own_key.is_empty() && own_key == *near_key;
                if !twin && same_sitting(*at, e.at) {
                    apart *= 1.0 - CONTEXT_SHARE * relevance;
                }
            }
        }
        e.context = 1.0 - apart;
        e.relevance = 1.0 - (1.0 - e.relevance) * apart;
        e.score = combine(e.relevance, e.salience);
    }
}

/// Groups ranked entries by collapse key, in rank order: each group is the
/// position of its first (best ranked) entry, which represents it, and the ids
/// of all its members. At most `limit` groups are opened, but every later twin
/// of an open group still joins it, so counts are complete.
fn collapse(entries: &[Entry], pool: &[Option<Candidate>], limit: usize) -> Vec<(usize, Vec<i64>)> {
    let mut groups: Vec<(usize, Vec<i64>)> = Vec::new();
    let mut group_of: HashMap<&str, usize> = HashMap::default();
    for (pos, e) in entries.iter().enumerate() {
        let key = e.collapse_key(pool);
        if !key.is_empty()
            && let Some(&g) = group_of.get(key)
        {
            groups[g].1.push(e.id);
            continue;
        }
        if groups.len() < limit {
            if !key.is_empty() {
                group_of.insert(key, groups.len());
            }
            groups.push((pos, vec![e.id]));
        }
    }
    groups
}

/// Merges candidates with the same id (one per pool that found it), keeping
/// each signal's strongest value; the first occurrence keeps its place.
fn merge_by_id(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let mut position: HashMap<i64, usize> =
        HashMap::with_capacity_and_hasher(candidates.len(), Default::default());
    let mut merged: Vec<Candidate> = Vec::with_capacity(candidates.len());
    for c in candidates {
        match position.get(&c.id) {
            None => {
                position.insert(c.id, merged.len());
                merged.push(c);
            }
            Some(&i) => {
                let seen = &mut merged[i];
                seen.lexical = clean_unit(seen.lexical).max(clean_unit(c.lexical));
                seen.semantic = clean_cosine(seen.semantic).max(clean_cosine(c.semantic));
                seen.centred = match (seen.centred, c.centred) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                seen.concept |= c.concept;
                seen.narration |= c.narration;
                seen.long |= c.long;
            }
        }
    }
    merged
}

/// A signal meant to lie in [0, 1]; anything not finite counts as absent.
fn clean_unit(x: f32) -> f32 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// A cosine; anything not finite counts as opposite (it cannot match).
fn clean_cosine(x: f32) -> f32 {
    if x.is_finite() {
        x.clamp(-1.0, 1.0)
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests;
