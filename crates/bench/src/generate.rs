//! Seeded, deterministic learner-subject histories in v1 (docs/formats.md).
//!
//! Each history is one learner working on one subject, in one of six
//! languages, for weeks to a year, with quiet months; it asks about the
//! subject's concepts (about a third of its questions repeat an earlier one
//! word for word), gets answers that cite the file page, is checked (the
//! check's topic is usually the concept's name, sometimes the learner's own
//! words with the concept named only in the tutor's evaluation, sometimes
//! words that name nothing), takes quizzes, sometimes teaches the tutor a
//! class nickname, hears the tutor narrate earlier months, and sees the main
//! file replaced and the notes file removed. Every file is inline
//! (`content`), so a history file stands alone.
//!
//! The same seed gives the same bytes: the generator draws only from
//! [`Rng`], iterates only over ordered collections, and writes JSON with
//! sorted keys.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use serde_json::{Value, json};

use crate::rng::Rng;
use crate::subjects::SubjectSource;
use crate::templates::{LANGS, Templates, fill};
use crate::{Error, Result};
use tm_ingest::extract::ConceptExtractor;

/// Smallest and largest history, in events.
pub const MIN_EVENTS: usize = 15;
pub const MAX_EVENTS: usize = 1_200;
/// Histories in the shipped benchmark.
pub const DEFAULT_COUNT: usize = 54;
/// The shipped benchmark's seed.
pub const DEFAULT_SEED: u64 = 20_261_129;

/// A paragraph appended to a main file that ships no revised text, so the
/// replacement is a real new version.
const REVISION_NOTE: &str = "\n\n## Revision note\n\nThis revised handout corrects two typing errors and adds page references for the class.\n";

/// One concept a history can talk about, with the file page that explains it.
#[derive(Debug, Clone)]
struct Topic {
    name: String,
    definition: String,
    file: String,
    page: u32,
}

/// A generated history.
#[derive(Debug, Clone)]
pub struct History {
    /// `learner/subject`.
    pub subject: String,
    /// File stem to write it under (`NN-learner-subject`).
    pub name: String,
    pub language: String,
    /// Event lines (the subject line not counted).
    pub events: usize,
    /// The JSONL text.
    pub text: String,
}

/// `count` histories over `sources` from `seed`. History `i` takes subject
/// `i mod sources`, language `i mod 6` and a size on a log scale from
/// [`MIN_EVENTS`] to [`MAX_EVENTS`] (shuffled by the seed).
pub fn generate(sources: &[SubjectSource], count: usize, seed: u64) -> Result<Vec<History>> {
    if sources.is_empty() {
        return Err(Error::Invalid(
            "no subject to generate histories about".into(),
        ));
    }
    let topics: Vec<Vec<Topic>> = sources.iter().map(topics_of).collect::<Result<_>>()?;
    let mut rng = Rng::new(seed);
    let mut sizes: Vec<usize> = (0..count)
        .map(|i| {
            let f = if count > 1 {
                i as f64 / (count - 1) as f64
            } else {
                0.0
            };
            let ratio = MAX_EVENTS as f64 / MIN_EVENTS as f64;
            (MIN_EVENTS as f64 * ratio.powf(f)).round() as usize
        })
        .collect();
    // Fisher–Yates with our own generator.
    for i in (1..sizes.len()).rev() {
        let j = rng.below(i + 1);
        sizes.swap(i, j);
    }
    let mut out = Vec::with_capacity(count);
    for (i, size) in sizes.into_iter().enumerate() {
        let s = i % sources.len();
        if topics[s].len() < 2 {
            return Err(Error::Invalid(format!(
                "subject {} explains fewer than two concepts",
                sources[s].slug
            )));
        }
        let lang = LANGS[i % LANGS.len()];
        let sub_seed = rng.next_u64();
        out.push(one(&sources[s], &topics[s], lang, i, size, sub_seed)?);
    }
    Ok(out)
}

/// The concepts the offline extractor reads from the subject's files (a
/// removed notes file's concepts are left out: nothing is asked about them).
fn topics_of(source: &SubjectSource) -> Result<Vec<Topic>> {
    let extractor = tm_ingest::extract::OfflineExtractor::default();
    let mut out: Vec<Topic> = Vec::new();
    for (name, text) in &source.files {
        if name == "notes.txt" {
            continue;
        }
        let pages = tm_ingest::read_pages(name, text.as_bytes())
            .map_err(|e| Error::Invalid(format!("{}: {e}", name)))?;
        let concepts = extractor
            .extract(name, &pages.pages)
            .map_err(|e| Error::Invalid(format!("{}: {e}", name)))?;
        for c in concepts {
            if c.definition.trim().is_empty() || out.iter().any(|t| t.name == c.name) {
                continue;
            }
            out.push(Topic {
                name: c.name,
                definition: c.definition,
                file: name.clone(),
                page: c.pages.first().copied().unwrap_or(1),
            });
        }
    }
    Ok(out)
}

/// Writes events as JSONL with sorted keys (serde_json's map is ordered).
struct Writer {
    lines: Vec<String>,
    next_id: usize,
    last: DateTime<Utc>,
}

impl Writer {
    fn push(&mut self, at: DateTime<Utc>, mut v: Value, with_id: bool) -> String {
        let at = at.max(self.last);
        self.last = at;
        let mut id = String::new();
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "at".into(),
                json!(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            );
            if with_id {
                self.next_id += 1;
                id = format!("e{}", self.next_id);
                obj.insert("id".into(), json!(id));
            }
        }
        self.lines.push(v.to_string());
        id
    }
}

fn one(
    source: &SubjectSource,
    topics: &[Topic],
    lang: &'static str,
    index: usize,
    size: usize,
    seed: u64,
) -> Result<History> {
    let t = Templates::of(lang)?;
    let mut rng = Rng::new(seed);
    let learner = format!("l{index:02}-{lang}");
    let key = format!("{learner}/{}", source.slug);
    // A span of weeks to a year, longer for bigger histories.
    let months = (1 + size / 90 + rng.below(3)).clamp(1, 12);
    let start_day = rng.below(200) as i64;
    let start = Utc
        .with_ymd_and_hms(2025, 3, 3, 8, 0, 0)
        .single()
        .ok_or_else(|| Error::Invalid("start date".into()))?
        + Duration::days(start_day);
    let first_month = month_start(start);
    // Which months hold sessions: the first and last always; one in the
    // middle is always quiet when there is a middle; others with 0.75.
    let quiet_forced = if months >= 3 {
        Some(1 + rng.below(months - 2))
    } else {
        None
    };
    let active: Vec<usize> = (0..months)
        .filter(|&m| m == 0 || m + 1 == months || (Some(m) != quiet_forced && rng.chance(0.75)))
        .collect();
    // Sessions of about eight events, spread over the active months.
    let sessions = size.div_ceil(8).max(1);
    let mut days: Vec<DateTime<Utc>> = (0..sessions)
        .map(|k| {
            let m = active[k * active.len() / sessions];
            let ms = add_months(first_month, m);
            let len = days_in_month(ms);
            let mut day = rng.below(len as usize) as i64;
            if m == 0 {
                day = day.max(start.day() as i64 - 1 + 1);
            }
            ms + Duration::days(day.min(len as i64 - 1)) + Duration::hours(9 + rng.below(9) as i64)
        })
        .collect();
    days.sort();

    let mut w = Writer {
        lines: Vec::new(),
        next_id: 0,
        last: start,
    };
    w.lines.push(
        json!({"type":"subject","learner":learner,"subject":source.slug,"title":source.title,"language":lang})
            .to_string(),
    );
    for (k, (name, text)) in source.files.iter().enumerate() {
        w.push(
            start + Duration::minutes(k as i64),
            json!({"type":"file","name":name,"content":text}),
            false,
        );
    }
    let replace_at = days.get(days.len() * 3 / 5).copied();
    let remove_at = days.get(days.len() * 4 / 5).copied();
    let mut replaced = false;
    let mut removed = false;
    let mut asked: Vec<String> = Vec::new();
    let mut taught = 0usize;
    let mut quizzes = 0usize;
    let mut total = source.files.len();
    let mut covered: Vec<(DateTime<Utc>, String)> = Vec::new();
    for (s, day) in days.iter().enumerate() {
        if total >= size && s > 0 {
            break;
        }
        let mut at = *day;
        if !replaced && replace_at.is_some_and(|r| at >= r) && size >= 40 {
            let (name, text) = &source.files[0];
            let revised = source
                .revised
                .clone()
                .unwrap_or_else(|| format!("{text}{REVISION_NOTE}"));
            w.push(
                at,
                json!({"type":"file","name":name,"content":revised}),
                false,
            );
            replaced = true;
            total += 1;
            at += Duration::minutes(2);
        }
        if !removed
            && remove_at.is_some_and(|r| at >= r)
            && size >= 40
            && let Some((name, _)) = source.files.iter().find(|(n, _)| n == "notes.txt")
        {
            w.push(at, json!({"type":"file_removed","name":name}), false);
            removed = true;
            total += 1;
            at += Duration::minutes(2);
        }
        // A session: questions, answers, checks until about eight events.
        let budget = 8.min(size.saturating_sub(total)).max(3);
        let mut used = 0;
        while used < budget {
            let topic = &topics[rng.below(topics.len())];
            // About a third of questions repeat an earlier one word for word.
            let question = if !asked.is_empty() && rng.chance(0.33) {
                asked[rng.below(asked.len())].clone()
            } else {
                // A new question is new: try a few phrasings (with or without
                // a sentence after it) before accepting a repeat.
                let mut q = String::new();
                for _ in 0..12 {
                    q = fill(
                        rng.pick(t.all("ask")).map_or("", |s| s),
                        &[("c", &topic.name)],
                    );
                    if rng.chance(0.75) {
                        q = format!("{q} {}", rng.pick(t.all("tail")).map_or("", |s| s));
                    }
                    if !asked.contains(&q) {
                        break;
                    }
                }
                if !asked.contains(&q) {
                    asked.push(q.clone());
                }
                q
            };
            w.push(at, json!({"type":"learner","text":question}), true);
            at += Duration::seconds(20 + rng.below(60) as i64);
            w.push(
                at,
                json!({"type":"tutor","text":format!("{}: {}", topic.name, topic.definition),
                       "cites":[{"file":topic.file,"page":topic.page}]}),
                true,
            );
            used += 2;
            covered.push((at, topic.name.clone()));
            at += Duration::minutes(1 + rng.below(4) as i64);
            if rng.chance(0.25) {
                let f = rng.pick(t.all("followup")).cloned().unwrap_or_default();
                w.push(at, json!({"type":"learner","text":f}), true);
                at += Duration::seconds(30);
                w.push(
                    at,
                    json!({"type":"tutor","text":format!("Put simply: {}", topic.definition),
                           "cites":[{"file":topic.file,"page":topic.page}]}),
                    true,
                );
                used += 2;
                at += Duration::minutes(2);
            }
            if rng.chance(0.65) {
                let roll = rng.unit();
                let verdict = if roll < 0.35 {
                    "wrong"
                } else if roll < 0.5 {
                    "partial"
                } else {
                    "right"
                };
                let form = rng.unit();
                let utterance = rng.pick(t.all("utterance")).cloned().unwrap_or_default();
                let (topic_text, evaluation) = if form < 0.7 {
                    (topic.name.clone(), evaluation(verdict, Some(&topic.name)))
                } else if form < 0.85 {
                    // Named only in the evaluation text.
                    (utterance, evaluation(verdict, Some(&topic.name)))
                } else {
                    // The learner's own words; nothing names a concept.
                    (utterance, evaluation(verdict, None))
                };
                let predicted = (30 + rng.below(50)) as f64 / 100.0;
                w.push(
                    at,
                    json!({"type":"check","topic":topic_text,"verdict":verdict,
                           "evaluation":evaluation,"predicted":predicted}),
                    true,
                );
                used += 1;
                at += Duration::minutes(3);
            }
            if taught < 2 && s > 0 && rng.chance(0.06) {
                let nick = rng.pick(t.all("nick")).cloned().unwrap_or_default();
                let line = fill(
                    rng.pick(t.all("teach")).map_or("", |s| s),
                    &[("c", &topic.name), ("n", &nick)],
                );
                w.push(at, json!({"type":"learner","text":line}), true);
                taught += 1;
                used += 1;
                at += Duration::minutes(1);
            }
            if quizzes < 6 && rng.chance(0.06) {
                quizzes += 1;
                let other = &topics[rng.below(topics.len())];
                w.push(
                    at,
                    json!({"type":"quiz","title":format!("Quiz {quizzes}"),
                           "score":3 + rng.below(8),"max":10,
                           "concepts":[topic.name, other.name]}),
                    true,
                );
                used += 1;
                at += Duration::minutes(5);
            }
        }
        // Now and then the tutor narrates an earlier month.
        if let Some((when, name)) = covered
            .iter()
            .find(|(when, _)| month_start(*when) < month_start(*day))
            .cloned()
            && rng.chance(0.2)
        {
            let month = &t.months[when.month0() as usize];
            let text = fill(
                rng.pick(t.all("narration")).map_or("", |s| s),
                &[("month", month), ("c", &name)],
            );
            w.push(at, json!({"type":"tutor","text":text}), true);
            used += 1;
        }
        total += used;
    }
    let events = w.lines.len() - 1;
    let mut text = w.lines.join("\n");
    text.push('\n');
    Ok(History {
        name: format!("{index:02}-{learner}-{}", source.slug),
        subject: key,
        language: lang.to_string(),
        events,
        text,
    })
}

/// The tutor's evaluation of a check, in English (the tutor's language here).
fn evaluation(verdict: &str, concept: Option<&str>) -> String {
    match (verdict, concept) {
        ("right", Some(c)) => format!("Correct: the answer on {c} was right."),
        ("wrong", Some(c)) => format!("Not quite: the learner mixed up {c}."),
        (_, Some(c)) => format!("Half right on {c}: one part was missing."),
        ("right", None) => "Good, that was right.".into(),
        ("wrong", None) => "Not quite, try again next time.".into(),
        _ => "Partly there.".into(),
    }
}

fn month_start(t: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(t.year(), t.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(t)
}

fn add_months(t: DateTime<Utc>, n: usize) -> DateTime<Utc> {
    let total = t.year() * 12 + t.month0() as i32 + n as i32;
    Utc.with_ymd_and_hms(
        total.div_euclid(12),
        total.rem_euclid(12) as u32 + 1,
        1,
        0,
        0,
        0,
    )
    .single()
    .unwrap_or(t)
}

fn days_in_month(t: DateTime<Utc>) -> u32 {
    let next = add_months(t, 1);
    let a = NaiveDate::from_ymd_opt(t.year(), t.month(), 1);
    let b = NaiveDate::from_ymd_opt(next.year(), next.month(), 1);
    match (a, b) {
        (Some(a), Some(b)) => (b - a).num_days() as u32,
        _ => 28,
    }
}

/// Writes each history to `dir/<name>.jsonl`; returns the paths.
pub fn write_all(histories: &[History], dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
    histories
        .iter()
        .map(|h| {
            let p = dir.join(format!("{}.jsonl", h.name));
            std::fs::write(&p, &h.text).map_err(crate::io_err(&p))?;
            Ok(p)
        })
        .collect()
}
