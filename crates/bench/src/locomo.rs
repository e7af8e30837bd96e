//! Evidence recall on LoCoMo (Maharana et al. 2024, `locomo10.json`): each
//! conversation becomes a subject (the first speaker's turns as `learner`
//! events, the second's as `tutor` events, text `speaker: text`, each turn's
//! `dia_id` its external id, timed at its session's date a minute apart), and
//! for each QA item we measure the fraction of its evidence turns that reach
//! the block at the budget. Baselines rank the same turns by BM25 alone, by
//! cosine alone, by their reciprocal-rank fusion and by recency, and take
//! turns in rank order while they fit the budget (o200k tokens of
//! `speaker: text` per turn). Category 5 (adversarial) is reported apart.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use tm_brain::Brain;
use tm_brain::block::BlockRequest;
use tm_model::block::{Design, count_tokens};
use tm_model::recall::distinctive_terms;
use tm_model::subject::Subject;

use crate::split::Split;
use crate::{Error, Result, io_err};

/// One turn of a conversation.
#[derive(Debug, Clone)]
pub struct Turn {
    pub speaker: String,
    pub dia_id: String,
    pub text: String,
    pub at: DateTime<Utc>,
}

/// One QA item.
#[derive(Debug, Clone)]
pub struct Qa {
    pub question: String,
    /// The reference answer (empty for the adversarial category, which has none).
    pub answer: String,
    pub evidence: Vec<String>,
    pub category: u8,
    /// When the question is asked; `None`: a day after the conversation's
    /// last turn (LoCoMo gives no time).
    pub asked_at: Option<DateTime<Utc>>,
}

/// One conversation.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The benchmark it comes from: the learner of its subject key.
    pub dataset: &'static str,
    pub sample_id: String,
    pub speaker_a: String,
    pub turns: Vec<Turn>,
    pub qa: Vec<Qa>,
}

/// A file that is not what its benchmark expects.
pub(crate) fn bad(path: &Path, m: impl Into<String>) -> Error {
    Error::File {
        path: path.display().to_string(),
        message: m.into(),
    }
}

/// A QA item's reference answer as text: a string as it is, none as empty,
/// a number (or anything else) as its JSON.
pub(crate) fn answer_text(v: &Value) -> String {
    match v {
        Value::String(a) => a.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Parses `1:56 pm on 8 May, 2023`.
pub fn session_time(s: &str) -> Option<DateTime<Utc>> {
    let norm = s.trim().replace("  ", " ");
    ["%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&norm, f).ok())
        .map(|t| t.and_utc())
}

/// Reads `locomo10.json`, the conversations of one half ([`crate::split`]).
pub fn load(path: &Path, split: Split) -> Result<Vec<Conversation>> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(path, format!("not JSON: {e}")))?;
    let list = v
        .as_array()
        .ok_or_else(|| bad(path, "expected a list of conversations"))?;
    let mut out = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let sample_id = c["sample_id"]
            .as_str()
            .map_or_else(|| format!("conv-{i}"), str::to_string);
        let conv = &c["conversation"];
        let speaker_a = conv["speaker_a"].as_str().unwrap_or("A").to_string();
        let mut turns = Vec::new();
        for n in 1.. {
            let Some(session) = conv.get(format!("session_{n}")) else {
                if conv.get(format!("session_{n}_date_time")).is_some() {
                    continue;
                }
                break;
            };
            let Some(session) = session.as_array() else {
                continue;
            };
            let date = conv[format!("session_{n}_date_time")]
                .as_str()
                .unwrap_or("");
            let at = session_time(date)
                .ok_or_else(|| bad(path, format!("{sample_id}: session {n}: date {date:?}")))?;
            for (k, t) in session.iter().enumerate() {
                let (Some(speaker), Some(dia_id), Some(text)) = (
                    t["speaker"].as_str(),
                    t["dia_id"].as_str(),
                    t["text"].as_str(),
                ) else {
                    continue;
                };
                turns.push(Turn {
                    speaker: speaker.to_string(),
                    dia_id: dia_id.to_string(),
                    text: text.to_string(),
                    at: at + Duration::minutes(k as i64),
                });
            }
        }
        let qa = c["qa"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|q| {
                        Some(Qa {
                            question: q["question"].as_str()?.to_string(),
                            answer: answer_text(&q["answer"]),
                            evidence: q["evidence"]
                                .as_array()
                                .map(|e| {
                                    e.iter()
                                        .filter_map(Value::as_str)
                                        .flat_map(|s| s.split([';', ',', ' ']))
                                        .map(str::trim)
                                        .filter(|s| !s.is_empty())
                                        .map(str::to_string)
                                        .collect()
                                })
                                .unwrap_or_default(),
                            category: q["category"].as_u64()? as u8,
                            asked_at: None,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(Conversation {
            dataset: "locomo",
            sample_id,
            speaker_a,
            turns,
            qa,
        });
    }
    let ids: Vec<&str> = out.iter().map(|c| c.sample_id.as_str()).collect();
    let halves = crate::split::by_conversation(&ids);
    Ok(out
        .into_iter()
        .zip(halves)
        .filter(|(_, half)| split.keeps(*half))
        .map(|(c, _)| c)
        .collect())
}

fn slug(s: &str) -> String {
    let s: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.trim_matches('-').chars().take(60).collect()
}

/// The subject key of a conversation.
pub fn subject_key(c: &Conversation) -> String {
    format!("{}/{}", c.dataset, slug(&c.sample_id))
}

/// The conversation as a v1 history (docs/formats.md).
pub fn history(c: &Conversation) -> String {
    let key = subject_key(c);
    let (learner, subject) = key.split_once('/').unwrap_or(("locomo", "conv"));
    let mut lines = vec![
        json!({"type":"subject","learner":learner,"subject":subject,"title":c.sample_id,"language":"en"})
            .to_string(),
    ];
    let mut seen = HashSet::new();
    for t in &c.turns {
        let kind = if t.speaker == c.speaker_a {
            "learner"
        } else {
            "tutor"
        };
        let mut v = json!({"type":kind,"at":t.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                           "text":format!("{}: {}", t.speaker, t.text)});
        // A repeated dia_id keeps its first turn's id (ids are unique per subject).
        if seen.insert(t.dia_id.clone()) {
            v["id"] = json!(t.dia_id);
        }
        lines.push(v.to_string());
    }
    lines.join("\n") + "\n"
}

/// A benchmark's question categories: those that make its overall figure,
/// in the table's order, and one reported apart (LoCoMo's adversarial
/// questions, whose evidence is what the answer must not claim).
#[derive(Debug, Clone, Serialize)]
pub struct Categories {
    pub ranked: &'static [(u8, &'static str)],
    pub apart: Option<(u8, &'static str)>,
}

/// LoCoMo's: 1–4 make the overall figure, 5 (adversarial) is apart.
pub const LOCOMO: Categories = Categories {
    ranked: &[
        (1, "multi-hop"),
        (2, "temporal"),
        (3, "open-domain"),
        (4, "single-hop"),
    ],
    apart: Some((5, "adversarial")),
};

/// Mean evidence recall per method and category, at one budget.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub budget: usize,
    pub categories: Categories,
    pub embedder: String,
    /// method → category → (sum of recall, questions): an evidence turn
    /// counts when its id is among the block's (the baselines': the turns that fit).
    pub cells: Cells,
    /// The same by content ([`carried`]): an evidence turn counts only when
    /// its own line in the block holds [`words_that_matter`]. A baseline
    /// holds whole turns, so there it equals the id score.
    pub content: Cells,
    /// Block precision: the share of the recalled episodes' tokens (their
    /// texts, as a baseline counts them) that come from evidence turns.
    pub precision: Cells,
    /// QA items left out: none of their evidence ids names a turn said by
    /// the time of the question.
    pub skipped: usize,
    pub seconds: f64,
    /// Every evidence turn the full design did not carry by content, with
    /// why: what the `failures` a change to recall must name are drawn from.
    pub failures: Vec<Failure>,
    /// With a model ([`Answering`]): method ([`crate::answers::METHODS`]) →
    /// category → (answers holding the reference answer, answers).
    pub answers: Option<Cells>,
    pub answer_model: Option<String>,
    /// Every answer behind `answers`, with its reference and grade.
    pub answered: Vec<crate::answers::Answered>,
}

/// The answer level of a run: the model, and the questions it answers (by
/// conversation and question position, [`choose`]).
pub struct Answering<'a> {
    pub chat: &'a crate::chat::Chat,
    pub questions: &'a HashSet<(usize, usize)>,
}

/// One evidence turn the full block did not carry, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub sample: String,
    pub category: u8,
    pub question: String,
    pub dia_id: String,
    /// `not_matched` (no pool found it or the gate discarded it),
    /// `past_budget` (ranked, but the block filled before it), `cut` (in the
    /// block by id, its line without the turn's words).
    pub class: &'static str,
    /// Its place in recall's ranking with no limit (1 = first), if ranked.
    pub rank: Option<usize>,
    /// Its place in the fusion baseline's ranking, and whether that baseline
    /// fitted it into the budget.
    pub rrf_rank: Option<usize>,
    pub rrf_fit: bool,
    /// How many memories the block printed, and its tokens.
    pub block_lines: usize,
    pub block_tokens: usize,
    /// Recall's signals for it when ranked: lexical, semantic, relevance, score.
    pub signals: Option<[f32; 4]>,
}

/// The words of an evidence turn that must reach the prompt for it to count:
/// the distinctive words of the QA item's answer that the turn holds, its
/// numbers among them (an excerpt that kept the sentence with the answer
/// keeps them); when the turn holds none of them (a date the reader must
/// work out, a paraphrase), every distinctive word of the turn. Empty when
/// the turn has no distinctive word.
///
/// A search leaves out numbers other than years, but an answer's number is
/// what it says: an answer "4" once asked for every distinctive word of a
/// 3,000-character turn, so an excerpt that kept "Mummies (4)" did not count
/// (LongMemEval, `cut`).
pub fn words_that_matter(turn: &str, answer: &str) -> Vec<String> {
    let have: HashSet<String> = tm_model::recall::index_terms(turn).into_iter().collect();
    let numbers = tm_model::recall::index_terms(answer)
        .into_iter()
        .filter(|t| t.chars().all(|c| c.is_ascii_digit()));
    let mut from_answer: Vec<String> = Vec::new();
    for t in distinctive_terms(answer).into_iter().chain(numbers) {
        if have.contains(&t) && !from_answer.contains(&t) {
            from_answer.push(t);
        }
    }
    if from_answer.is_empty() {
        distinctive_terms(turn)
    } else {
        from_answer
    }
}

/// Whether the turn's own line in the block (`line`, `None` when the turn is
/// not in the block) carries its content: the line holds every one of
/// [`words_that_matter`], so a line cut or excerpted past the answer does not
/// count. `None` when the turn has no distinctive word (then its id decides).
pub fn carried(line: Option<&str>, turn: &str, answer: &str) -> Option<bool> {
    let want = words_that_matter(turn, answer);
    if want.is_empty() {
        return None;
    }
    Some(line.is_some_and(|l| tm_model::recall::lexical_overlap(&want, l) >= 1.0))
}

/// The block's memory lines by episode id: the lines of the earlier-work
/// sections (the window's own and the one outside it, their day lines left
/// out), in printed order, zipped with the ids the block says it printed in
/// that order.
pub fn episode_lines<'a>(block: &'a str, printed: &[i64]) -> HashMap<i64, &'a str> {
    let mut lines: Vec<&str> = Vec::new();
    let mut inside = false;
    for l in block.lines() {
        if tm_model::block::is_episodes_header(l) {
            inside = true;
        } else if l.starts_with("- ") {
            if inside {
                lines.push(l);
            }
        } else if !tm_model::block::is_day_line(l) {
            inside = false;
        }
    }
    printed.iter().copied().zip(lines).collect()
}

/// method → category → (sum, questions).
pub type Cells = BTreeMap<String, BTreeMap<u8, (f64, usize)>>;

fn add(cells: &mut Cells, method: &str, category: u8, value: f64) {
    let cell = cells
        .entry(method.to_string())
        .or_default()
        .entry(category)
        .or_default();
    cell.0 += value;
    cell.1 += 1;
}

/// Mean of a method over the categories that make the overall figure.
fn overall_of(cells: &Cells, method: &str, cats: &Categories) -> (f64, usize) {
    cells.get(method).map_or((0.0, 0), |per| {
        let (s, n) = per
            .iter()
            .filter(|(c, _)| cats.counts(**c))
            .fold((0.0, 0), |(s, n), (_, (a, b))| (s + a, n + b));
        (if n == 0 { 0.0 } else { s / n as f64 }, n)
    })
}

impl Categories {
    /// Whether a category makes the overall figure.
    pub fn counts(&self, category: u8) -> bool {
        self.ranked.iter().any(|(c, _)| *c == category)
    }
}

impl Report {
    /// Mean recall of a method over the categories that make the overall figure.
    pub fn overall(&self, method: &str) -> (f64, usize) {
        overall_of(&self.cells, method, &self.categories)
    }
}

/// The methods, in the table's order.
pub const METHODS: [&str; 7] = [
    "recent", "bm25", "vector", "rrf", "window", "episodes", "full",
];

/// Imports every conversation through the brain (recorded and embedded in
/// one transaction each).
pub fn import(
    brain: &Brain,
    convs: &[Conversation],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Subject>> {
    let mut out = Vec::new();
    for (i, c) in convs.iter().enumerate() {
        let text = history(c);
        let report = brain.import_bytes(&c.sample_id, text.as_bytes(), None, &mut |_, _, _| {})?;
        out.push(brain.subject(&report.subject)?);
        progress(i + 1, convs.len());
    }
    Ok(out)
}

/// Turns in rank order while their `speaker: text` fits the budget.
fn fill(ranked: &[i64], cost: &HashMap<i64, usize>, budget: usize) -> Vec<i64> {
    let mut used = 0;
    let mut out = Vec::new();
    for id in ranked {
        let c = cost.get(id).copied().unwrap_or(0);
        if used + c > budget {
            break;
        }
        used += c;
        out.push(*id);
    }
    out
}

/// Whether a question's reference is an answer the answer level's
/// containment ([`crate::answers::contains_answer`]) can grade: it
/// has one, its category makes the overall figure (not LoCoMo's
/// adversarial questions, reported apart), and it is not one of
/// LongMemEval's whose reference is a description instead (the preference
/// questions' rubric, category 3, and the abstentions, `_abs`, "you did not
/// mention …").
pub fn gradable(c: &Conversation, qa: &Qa, categories: &Categories) -> bool {
    let description =
        c.dataset == "longmemeval" && (qa.category == 3 || c.sample_id.ends_with("_abs"));
    !crate::answers::normalise(&qa.answer).is_empty()
        && categories.counts(qa.category)
        && !description
}

/// Which questions are answered: at most `n` [`gradable`] ones, the
/// categories in turn (in the order each first appears), each category's in
/// file order. Keys are (conversation, question) positions.
pub fn choose(
    convs: &[Conversation],
    categories: &Categories,
    n: usize,
) -> HashSet<(usize, usize)> {
    let answerable = convs.iter().enumerate().flat_map(|(ci, c)| {
        c.qa.iter()
            .enumerate()
            .filter(move |(_, qa)| gradable(c, qa, categories))
            .map(move |(qi, qa)| (qa.category, (ci, qi)))
    });
    crate::round_robin(answerable, n).into_iter().collect()
}

/// Runs every method on every QA item at each budget: one report a budget.
pub fn run(
    brain: &Brain,
    convs: &[Conversation],
    subjects: &[Subject],
    budgets: &[usize],
    categories: &Categories,
    answering: Option<&Answering<'_>>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Report>> {
    let started = std::time::Instant::now();
    let mut per: Vec<(Cells, Cells, Cells)> = vec![Default::default(); budgets.len()];
    let mut answered: Vec<(Cells, Vec<crate::answers::Answered>)> =
        vec![Default::default(); budgets.len()];
    let mut skipped = 0;
    let mut failures: Vec<Vec<Failure>> = vec![Vec::new(); budgets.len()];
    let total: usize = convs.iter().map(|c| c.qa.len()).sum();
    let mut done = 0;
    let recaller = brain.recaller()?;
    let model = recaller.embedder().name().to_string();
    for (ci, (c, subject)) in convs.iter().zip(subjects).enumerate() {
        let episodes = brain.episodes(subject, 1, usize::MAX)?;
        let dia: HashMap<i64, String> = episodes
            .iter()
            .filter_map(|e| Some((e.id, e.external_id.clone()?)))
            .collect();
        let by_dia: HashMap<&str, (i64, &str)> = episodes
            .iter()
            .filter_map(|e| Some((e.external_id.as_deref()?, (e.id, e.text.as_str()))))
            .collect();
        let known: HashSet<&str> = dia.values().map(String::as_str).collect();
        let cost: HashMap<i64, usize> = episodes
            .iter()
            .map(|e| (e.id, count_tokens(&e.text)))
            .collect();
        let mut by_time: Vec<(DateTime<Utc>, u64, i64)> =
            episodes.iter().map(|e| (e.at, e.seq, e.id)).collect();
        by_time.sort();
        let newest_first: Vec<i64> = by_time.iter().rev().map(|x| x.2).collect();
        let said_at: HashMap<i64, DateTime<Utc>> = episodes.iter().map(|e| (e.id, e.at)).collect();
        let text_of: HashMap<i64, &str> =
            episodes.iter().map(|e| (e.id, e.text.as_str())).collect();
        // The baselines read the store as it is, not through recall.
        let vectors = brain.with_store(|s| Ok(s.vectors(subject, &model)?))?;
        let last = by_time.last().map(|x| x.0).unwrap_or_default() + Duration::days(1);
        for (qi, qa) in c.qa.iter().enumerate() {
            done += 1;
            let chat = answering
                .filter(|a| a.questions.contains(&(ci, qi)))
                .map(|a| a.chat);
            // The model's answer to a method's context, graded into `cells`.
            let answer = |level: &mut (Cells, Vec<crate::answers::Answered>),
                          method: &'static str,
                          context: &str|
             -> Result<()> {
                if let Some(chat) = chat {
                    let said = chat.answer(&crate::answers::prompt(context), &qa.question)?;
                    let held = crate::answers::contains_answer(&said, &qa.answer);
                    add(
                        &mut level.0,
                        method,
                        qa.category,
                        if held { 1.0 } else { 0.0 },
                    );
                    level.1.push(crate::answers::Answered {
                        sample: c.sample_id.clone(),
                        category: qa.category,
                        question: qa.question.clone(),
                        reference: qa.answer.clone(),
                        method,
                        answer: said,
                        held,
                    });
                }
                Ok(())
            };
            let at = qa.asked_at.unwrap_or(last);
            // Only what was said by the time of the question can be recalled
            // then (LongMemEval's oracle dates some sessions after their
            // question); the baselines rank those turns alone too.
            let said = |id: &i64| said_at.get(id).is_some_and(|t| *t <= at);
            let evidence: Vec<&str> = qa
                .evidence
                .iter()
                .map(String::as_str)
                .filter(|e| known.contains(e))
                .filter(|e| by_dia.get(e).is_some_and(|(id, _)| said(id)))
                .collect();
            if evidence.is_empty() {
                skipped += 1;
                continue;
            }
            let found = |ids: &[i64]| -> HashSet<&str> {
                ids.iter()
                    .filter_map(|i| dia.get(i))
                    .map(String::as_str)
                    .collect()
            };
            let share = |hit: usize| hit as f64 / evidence.len() as f64;
            let by_id = |ids: &[i64]| {
                let got = found(ids);
                share(evidence.iter().filter(|e| got.contains(*e)).count())
            };
            // By content: the evidence turns whose own line in the block holds
            // the words that matter (a turn without distinctive words counts
            // by its id).
            let carried_in = |ids: &[i64], block: &str| -> HashSet<&str> {
                let lines = episode_lines(block, ids);
                let got = found(ids);
                evidence
                    .iter()
                    .copied()
                    .filter(|e| {
                        match by_dia.get(e).and_then(|(id, turn)| {
                            carried(lines.get(id).copied(), turn, &qa.answer)
                        }) {
                            Some(held) => held,
                            None => got.contains(e),
                        }
                    })
                    .collect()
            };
            let precision = |ids: &[i64]| {
                let wanted: HashSet<&str> = evidence.iter().copied().collect();
                let (mut hit, mut all) = (0usize, 0usize);
                for id in ids {
                    let c = cost.get(id).copied().unwrap_or(0);
                    all += c;
                    if dia.get(id).is_some_and(|d| wanted.contains(d.as_str())) {
                        hit += c;
                    }
                }
                if all == 0 {
                    0.0
                } else {
                    hit as f64 / all as f64
                }
            };
            let recent: Vec<i64> = newest_first.iter().copied().filter(said).collect();
            let terms = distinctive_terms(&qa.question);
            let bm25: Vec<i64> = brain
                .with_store(|s| Ok(s.term_hits(subject, &terms, 5_000)?))?
                .into_iter()
                .map(|(id, _)| id)
                .filter(said)
                .collect();
            let qvec = recaller.embed_question(&qa.question)?;
            let vector: Vec<i64> = match &qvec {
                Some(q) => {
                    let mut s: Vec<(f32, i64)> = vectors
                        .iter()
                        .filter(|(id, _)| said(id))
                        .map(|(id, v)| (tm_embed::cosine(q, v), *id))
                        .collect();
                    s.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    s.into_iter().map(|x| x.1).collect()
                }
                None => Vec::new(),
            };
            let rrf: Vec<i64> = tm_model::passages::rrf(&[bm25.clone(), vector.clone()], 60.0)
                .into_iter()
                .map(|x| x.0)
                .collect();
            // Recall's whole ranking, for the failures' ranks (with the
            // question vector the baselines used).
            let whole = tm_brain::recall::RecallQuery {
                question: &qa.question,
                at,
                tz: chrono_tz::UTC,
                limit: usize::MAX,
                exclude: None,
            };
            let full_rank = brain.with_store(|s| {
                recaller.recall_with_vector(&*s, subject, &whole, qvec.as_deref(), 0.0)
            })?;
            let rank_of = |d: &str| {
                full_rank
                    .ranked
                    .iter()
                    .position(|r| r.members.iter().any(|m| dia.get(m).is_some_and(|x| x == d)))
            };
            let rrf_rank_of = |d: &str| rrf.iter().position(|i| dia.get(i).is_some_and(|x| x == d));
            for (((&budget, (cells, content, prec)), fails), answers) in budgets
                .iter()
                .zip(per.iter_mut())
                .zip(failures.iter_mut())
                .zip(answered.iter_mut())
            {
                let mut record = |method: &str, ids: &[i64], carried: Option<&HashSet<&str>>| {
                    let id_score = by_id(ids);
                    add(cells, method, qa.category, id_score);
                    // A baseline holds whole turns: their words are there.
                    let content_score = carried.map_or(id_score, |c| share(c.len()));
                    add(content, method, qa.category, content_score);
                    add(prec, method, qa.category, precision(ids));
                };
                // The fusion baseline's turns that fit: scored, answered
                // from, and what the failures say it fitted.
                let rrf_fitted = fill(&rrf, &cost, budget);
                for (method, ranked) in [("recent", &recent), ("bm25", &bm25), ("vector", &vector)]
                {
                    record(method, &fill(ranked, &cost, budget), None);
                }
                record("rrf", &rrf_fitted, None);
                if chat.is_some() {
                    let turns = rrf_fitted
                        .iter()
                        .filter_map(|id| Some((*said_at.get(id)?, *text_of.get(id)?)))
                        .collect();
                    answer(answers, "rrf", &crate::answers::baseline_context(turns))?;
                }
                for design in [Design::Window, Design::Episodes, Design::Full] {
                    let req = BlockRequest {
                        design,
                        ..BlockRequest::new(qa.question.clone(), at, chrono_tz::UTC, budget)
                    };
                    let block = brain.build_block(subject, &req)?;
                    let ids: Vec<i64> = block.recalled.iter().map(|r| r.id).collect();
                    let held = carried_in(&ids, &block.block);
                    record(design.as_str(), &ids, Some(&held));
                    if design != Design::Full {
                        continue;
                    }
                    answer(answers, "full", &block.block)?;
                    let got = found(&ids);
                    let rrf_fit = found(&rrf_fitted);
                    for e in evidence.iter().filter(|e| !held.contains(*e)) {
                        let in_block = got.contains(e);
                        let rank = rank_of(e);
                        fails.push(Failure {
                            sample: c.sample_id.clone(),
                            category: qa.category,
                            question: qa.question.clone(),
                            dia_id: e.to_string(),
                            class: if in_block {
                                "cut"
                            } else if rank.is_some() {
                                "past_budget"
                            } else {
                                "not_matched"
                            },
                            rank: rank.map(|r| r + 1),
                            rrf_rank: rrf_rank_of(e).map(|r| r + 1),
                            rrf_fit: rrf_fit.contains(e),
                            block_lines: ids.len(),
                            block_tokens: block.tokens,
                            signals: rank.map(|r| {
                                let s = &full_rank.ranked[r].signals;
                                [s.lexical, s.semantic, s.relevance, s.score]
                            }),
                        });
                    }
                }
            }
            progress(done, total);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(budgets
        .iter()
        .zip(per)
        .zip(failures)
        .zip(answered)
        .map(
            |(((&budget, (cells, content, precision)), failures), answers)| Report {
                budget,
                categories: categories.clone(),
                embedder: model.clone(),
                cells,
                content,
                precision,
                skipped,
                seconds,
                failures,
                answers: answering.map(|_| answers.0),
                answer_model: answering.map(|a| a.chat.model().to_string()),
                answered: answers.1,
            },
        )
        .collect())
}

/// The report as Markdown: one table a score (evidence by id, by content,
/// block precision), rows methods, columns categories.
pub fn markdown(r: &Report) -> String {
    let cats = &r.categories;
    let mut s = String::new();
    let answers = r.answers.as_ref().map(|a| {
        (
            format!(
                "answers holding the reference answer ({}, normalised containment)",
                r.answer_model.as_deref().unwrap_or("model")
            ),
            a,
        )
    });
    for (title, cells) in [
        ("evidence recall by id".to_string(), &r.cells),
        ("evidence recall by content".to_string(), &r.content),
        (
            "block precision (share of episode tokens from evidence turns)".to_string(),
            &r.precision,
        ),
    ]
    .into_iter()
    .chain(answers)
    {
        s.push_str(&format!("{title}, {} tokens:\n\n| method |", r.budget));
        for (c, name) in cats.ranked {
            s.push_str(&format!(" cat {c} ({name}) |"));
        }
        s.push_str(" **overall** |");
        if let Some((c, name)) = cats.apart {
            s.push_str(&format!(" cat {c} ({name}) |"));
        }
        let columns = cats.ranked.len() + 1 + usize::from(cats.apart.is_some());
        s.push_str(&format!("\n|---|{}\n", "---|".repeat(columns)));
        let cell = |per: &BTreeMap<u8, (f64, usize)>, cat: u8| {
            let (a, n) = per.get(&cat).copied().unwrap_or((0.0, 0));
            format!(" {:.3} (n={n}) |", if n == 0 { 0.0 } else { a / n as f64 })
        };
        for m in METHODS {
            let Some(per) = cells.get(m) else { continue };
            s.push_str(&format!("| {m} |"));
            for (cat, _) in cats.ranked {
                s.push_str(&cell(per, *cat));
            }
            let (o, n) = overall_of(cells, m, cats);
            s.push_str(&format!(" **{o:.3}** (n={n}) |"));
            if let Some((cat, _)) = cats.apart {
                s.push_str(&cell(per, cat));
            }
            s.push('\n');
        }
        s.push('\n');
    }
    s.push_str(&failure_summary(&r.failures, cats));
    s
}

/// The full design's misses by content, by class (the categories of the
/// overall figure), and how many of each the fusion baseline fitted.
pub fn failure_summary(failures: &[Failure], cats: &Categories) -> String {
    let mut s = String::from(
        "full's evidence turns not carried (the overall figure's categories), by class:\n\n| class | turns | of which rrf fitted |\n|---|---|---|\n",
    );
    for class in ["not_matched", "past_budget", "cut"] {
        let of: Vec<&Failure> = failures
            .iter()
            .filter(|f| f.class == class && cats.counts(f.category))
            .collect();
        let fit = of.iter().filter(|f| f.rrf_fit).count();
        s.push_str(&format!("| {class} | {} | {fit} |\n", of.len()));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::{carried, episode_lines, words_that_matter};

    #[test]
    fn a_turn_is_carried_only_by_its_line_holding_the_answer() {
        let turn =
            "Melanie: Hi! We went camping in the mountains. It rained, but the kids loved it.";
        // The answer's words the turn holds are what matter.
        assert_eq!(words_that_matter(turn, "the mountains"), vec!["mountains"]);
        let kept = "- you answered: Melanie: … We went camping in the mountains. …";
        let lost = "- you answered: Melanie: Hi! …";
        assert_eq!(carried(Some(kept), turn, "the mountains"), Some(true));
        assert_eq!(carried(Some(lost), turn, "the mountains"), Some(false));
        // A number in the answer is a word that matters.
        let long = "Stat blocks. Mummies (4): armour 11, speed 20. Guardians (2): armour 17.";
        assert_eq!(words_that_matter(long, "4"), vec!["4"]);
        assert_eq!(
            carried(
                Some("- you answered: … Mummies (4): armour 11 …"),
                long,
                "4"
            ),
            Some(true)
        );
        assert_eq!(
            carried(Some("- you answered: … Guardians (2) …"), long, "4"),
            Some(false)
        );
        // A turn not in the block is not carried, whatever other lines hold.
        assert_eq!(carried(None, turn, "the mountains"), Some(false));
        // An answer the turn does not hold word for word (a date to work
        // out): every distinctive word of the turn must be on its line.
        assert_eq!(carried(Some(kept), turn, "7 July 2023"), Some(false));
        assert_eq!(
            carried(
                Some(&format!("- you answered: {turn}")),
                turn,
                "7 July 2023"
            ),
            Some(true)
        );
        // A turn of stop words only is decided by its id.
        assert_eq!(carried(Some(kept), "ok, and you?", "yes"), None);
    }

    #[test]
    fn memory_lines_are_read_in_printed_order() {
        let block = "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====\nEARLIER WORK WITH THIS STUDENT (oldest first):\n1 May:\n- you were asked: a\n2 May:\n- you answered: b\nSUBJECT MAP (1 concept; …):\n- Osmosis: …\nHOW TO USE THIS: …\n===== END OF MEMORY =====";
        let lines = episode_lines(block, &[7, 3]);
        assert_eq!(lines[&7], "- you were asked: a");
        assert_eq!(lines[&3], "- you answered: b");
        assert_eq!(lines.len(), 2);
        // The section outside the question's window follows the window's own.
        let outside = tm_model::block::outside_header("May 2026");
        let block = format!(
            "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====\nEARLIER WORK WITH THIS STUDENT (oldest first):\n1 May:\n- you were asked: a\n{outside}\n2 Jun:\n- you answered: b\nHOW TO USE THIS: …\n===== END OF MEMORY ====="
        );
        let lines = episode_lines(&block, &[7, 3]);
        assert_eq!(lines[&3], "- you answered: b");
        assert_eq!(lines.len(), 2);
    }

    /// The real file, when it is there: its ten conversations split five and five.
    #[test]
    fn locomo_splits_five_and_five() {
        use crate::split::{Split, by_conversation};
        let Some(path) = crate::public_data("locomo/locomo10.json", "LoCoMo") else {
            return;
        };
        let convs = super::load(&path, Split::All).unwrap();
        let ids: Vec<&str> = convs.iter().map(|c| c.sample_id.as_str()).collect();
        let halves = by_conversation(&ids);
        assert_eq!(halves.iter().filter(|h| **h == Split::Dev).count(), 5);
        let dev = super::load(&path, Split::Dev).unwrap();
        let test = super::load(&path, Split::Test).unwrap();
        assert_eq!((dev.len(), test.len()), (5, 5));
        assert!(
            dev.iter()
                .all(|d| test.iter().all(|t| t.sample_id != d.sample_id))
        );
    }
}
