//! Evidence recall on LongMemEval (Wu et al. 2025, `longmemeval_oracle.json`
//! or an `_s` file): each instance is a history of chat sessions between a
//! user and an assistant, with one question asked at a given time. It becomes
//! a subject (the user's turns as `learner` events, the assistant's as `tutor`
//! events, text `role: content`, timed at the session's date a minute apart,
//! each turn's external id `S<session>:<turn>`), and its evidence is the
//! turns marked `has_answer`. The measurement is LoCoMo's
//! ([`crate::locomo::run`]): the same designs, baselines, budgets and
//! failure classes, with LongMemEval's six question types as categories and
//! the question asked at its own date. It is a second conversation set beside
//! LoCoMo.

use std::collections::HashSet;
use std::path::Path;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use serde_json::Value;

use crate::locomo::{Categories, Conversation, Qa, Turn, answer_text, bad};
use crate::rng::Rng;
use crate::split::{Split, by_question, fnv1a};
use crate::{Result, io_err};

/// The six question types, in the table's order. An abstention question
/// (`_abs`) that marks no evidence is skipped (21 of the oracle's 30).
pub const CATEGORIES: Categories = Categories {
    ranked: &[
        (1, "single-session-user"),
        (2, "single-session-assistant"),
        (3, "single-session-preference"),
        (4, "multi-session"),
        (5, "temporal-reasoning"),
        (6, "knowledge-update"),
    ],
    apart: None,
};

/// Parses `2023/05/22 (Mon) 13:42`.
pub fn lme_time(s: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(s.trim(), "%Y/%m/%d (%a) %H:%M")
        .ok()
        .map(|t| t.and_utc())
}

/// Which instances a run reads, and how their haystacks are built.
#[derive(Debug, Clone)]
pub struct Pick {
    /// The half ([`crate::split::by_question`]).
    pub split: Split,
    /// At most this many of each question type, spread evenly over the
    /// type's instances in the half.
    pub per_type: Option<usize>,
    /// At most this many instances, spread evenly over those left (every
    /// k-th), so the question types keep their mix.
    pub limit: Option<usize>,
    /// Sessions of other instances of the same half added to each haystack,
    /// redated into its span, none of them evidence: the haystacks look like
    /// LongMemEval_S's rather than the oracle file's evidence alone.
    pub distractors: usize,
    /// Seeds the choice and the dates of the distractors (with the question id).
    pub seed: u64,
}

impl Default for Pick {
    fn default() -> Pick {
        Pick {
            split: Split::All,
            per_type: None,
            limit: None,
            distractors: 0,
            seed: 1,
        }
    }
}

/// One session of an instance's haystack, in the file's order.
#[derive(Debug, Clone)]
struct Session {
    id: String,
    start: DateTime<Utc>,
    /// role, content, has_answer
    turns: Vec<(String, String, bool)>,
}

/// One instance as the file has it.
#[derive(Debug, Clone)]
struct Instance {
    id: String,
    category: u8,
    question: String,
    answer: String,
    asked: DateTime<Utc>,
    sessions: Vec<Session>,
}

/// Every k-th of `items`, at most `n` of them (all when `n` is `None`).
fn spread<T>(items: Vec<T>, n: Option<usize>) -> Vec<T> {
    let step = n.map_or(1, |n| items.len().div_ceil(n.max(1)).max(1));
    items
        .into_iter()
        .step_by(step)
        .take(n.unwrap_or(usize::MAX))
        .collect()
}

/// Reads a LongMemEval file: the instances `pick` names, each a conversation
/// of its own sessions and, with [`Pick::distractors`], other instances'.
pub fn load(path: &Path, pick: &Pick) -> Result<Vec<Conversation>> {
    if pick.limit == Some(0) || pick.per_type == Some(0) {
        return Err(bad(path, "--limit and --per-type take a positive count"));
    }
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(path, format!("not JSON: {e}")))?;
    let list = v
        .as_array()
        .ok_or_else(|| bad(path, "expected a list of instances"))?;
    let all = list
        .iter()
        .enumerate()
        .map(|(i, x)| instance(path, i, x))
        .collect::<Result<Vec<_>>>()?;
    let half: Vec<&Instance> = all
        .iter()
        .filter(|x| pick.split.keeps(by_question(&x.id)))
        .collect();
    let chosen: Vec<&Instance> = match pick.per_type {
        Some(n) => {
            let mut at: Vec<usize> = Vec::new();
            for (c, _) in CATEGORIES.ranked {
                let of: Vec<usize> = (0..half.len())
                    .filter(|&i| half[i].category == *c)
                    .collect();
                // Evenly: the i-th of n at i·len/n.
                let (len, n) = (of.len(), n.min(of.len()));
                at.extend((0..n).map(|i| of[i * len / n]));
            }
            // Back in the file's order.
            at.sort_unstable();
            at.into_iter().map(|i| half[i]).collect()
        }
        None => half.clone(),
    };
    let chosen = spread(chosen, pick.limit);
    // Distractors come from the same half: nothing of the other half is read.
    let pool: Vec<(&Instance, &Session)> = half
        .iter()
        .flat_map(|x| x.sessions.iter().map(move |s| (*x, s)))
        .collect();
    Ok(chosen
        .into_iter()
        .map(|x| conversation(x, &distractors(x, &pool, pick)))
        .collect())
}

/// `pick.distractors` sessions of other instances for `x`, redated into its
/// span (its first session to its question), each a minute a turn.
fn distractors(x: &Instance, pool: &[(&Instance, &Session)], pick: &Pick) -> Vec<Session> {
    let own: HashSet<&str> = x.sessions.iter().map(|s| s.id.as_str()).collect();
    let mut rng = Rng::new(pick.seed ^ fnv1a(&x.id));
    let mut taken: HashSet<usize> = HashSet::new();
    let mut out = Vec::new();
    let first = x.sessions.iter().map(|s| s.start).min().unwrap_or(x.asked);
    let mut tries = 0;
    while out.len() < pick.distractors && tries < pick.distractors * 20 + 100 {
        tries += 1;
        let k = rng.below(pool.len());
        let (from, s) = pool[k];
        if std::ptr::eq(from, x) || own.contains(s.id.as_str()) || !taken.insert(k) {
            continue;
        }
        let length = Duration::minutes(s.turns.len() as i64);
        let room = (x.asked - length - first).num_minutes().max(0);
        let start = first + Duration::minutes((rng.unit() * room as f64) as i64);
        out.push(Session {
            id: s.id.clone(),
            start,
            turns: s
                .turns
                .iter()
                .map(|(r, c, _)| (r.clone(), c.clone(), false))
                .collect(),
        });
    }
    out
}

/// The instance's sessions and its distractors in time order as one
/// conversation: own turns `S<session>:<turn>`, distractors' `D<n>:<turn>`.
fn conversation(x: &Instance, extra: &[Session]) -> Conversation {
    let mut order: Vec<(DateTime<Utc>, char, usize, &Session)> = x
        .sessions
        .iter()
        .enumerate()
        .map(|(n, s)| (s.start, 'S', n + 1, s))
        .chain(
            extra
                .iter()
                .enumerate()
                .map(|(n, s)| (s.start, 'D', n + 1, s)),
        )
        .collect();
    // In time order (the oracle file does not sort its sessions).
    order.sort_by_key(|&(start, tag, n, _)| (start, std::cmp::Reverse(tag), n));
    let mut turns: Vec<Turn> = Vec::new();
    let mut evidence = Vec::new();
    for (start, tag, n, session) in order {
        for (k, (role, content, has_answer)) in session.turns.iter().enumerate() {
            let dia_id = format!("{tag}{n}:{}", k + 1);
            if *has_answer {
                evidence.push(dia_id.clone());
            }
            // A minute apart, and after the turn before: a session may start
            // before the one before it has ended at a turn a minute.
            let at = (start + Duration::minutes(k as i64))
                .max(turns.last().map_or(start, |t| t.at + Duration::minutes(1)));
            turns.push(Turn {
                speaker: role.clone(),
                dia_id,
                text: content.clone(),
                at,
            });
        }
    }
    let sample_id = if extra.is_empty() {
        x.id.clone()
    } else {
        // A kept store holds one haystack a subject key.
        format!("{}+{}d", x.id, extra.len())
    };
    Conversation {
        dataset: "longmemeval",
        sample_id,
        speaker_a: "user".into(),
        turns,
        qa: vec![Qa {
            question: x.question.clone(),
            answer: x.answer.clone(),
            evidence,
            category: x.category,
            asked_at: Some(x.asked),
        }],
    }
}

fn instance(path: &Path, i: usize, x: &Value) -> Result<Instance> {
    let id = x["question_id"]
        .as_str()
        .map_or_else(|| format!("instance-{i}"), str::to_string);
    let at = |v: &Value, what: &str| {
        v.as_str()
            .and_then(lme_time)
            .ok_or_else(|| bad(path, format!("{id}: {what}: not a date: {v}")))
    };
    let kind = x["question_type"].as_str().unwrap_or("");
    let category = CATEGORIES
        .ranked
        .iter()
        .find(|(_, name)| *name == kind)
        .map(|(c, _)| *c)
        .ok_or_else(|| bad(path, format!("{id}: unknown question_type {kind:?}")))?;
    let sessions = x["haystack_sessions"]
        .as_array()
        .ok_or_else(|| bad(path, format!("{id}: no haystack_sessions")))?;
    let dates = x["haystack_dates"]
        .as_array()
        .ok_or_else(|| bad(path, format!("{id}: no haystack_dates")))?;
    if dates.len() != sessions.len() {
        return Err(bad(
            path,
            format!(
                "{id}: {} dates for {} sessions",
                dates.len(),
                sessions.len()
            ),
        ));
    }
    let ids = x["haystack_session_ids"].as_array();
    let mut out = Vec::with_capacity(sessions.len());
    for (n, (session, date)) in sessions.iter().zip(dates).enumerate() {
        let turns = session
            .as_array()
            .map(|turns| {
                turns
                    .iter()
                    .filter_map(|t| {
                        Some((
                            t["role"].as_str()?.to_string(),
                            t["content"].as_str()?.to_string(),
                            t["has_answer"].as_bool() == Some(true),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(Session {
            id: ids
                .and_then(|a| a.get(n))
                .and_then(Value::as_str)
                .map_or_else(|| format!("{id}/{n}"), str::to_string),
            start: at(date, "haystack_dates")?,
            turns,
        });
    }
    Ok(Instance {
        id: id.clone(),
        category,
        question: x["question"].as_str().unwrap_or("").to_string(),
        answer: answer_text(&x["answer"]),
        asked: at(&x["question_date"], "question_date")?,
        sessions: out,
    })
}

#[cfg(test)]
mod tests {
    use super::{Pick, load};
    use crate::split::Split;

    #[test]
    fn an_instance_becomes_a_conversation_with_its_evidence_and_question_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lme.json");
        // Our own sample, in the file's schema: two sessions listed out of
        // time order, one evidence turn, one abstention question.
        let sample = r#"[
          {"question_id": "q1", "question_type": "multi-session",
           "question": "Which bike did I buy?", "answer": "a red one",
           "question_date": "2024/03/10 (Sun) 09:00",
           "haystack_dates": ["2024/03/02 (Sat) 18:30", "2024/02/20 (Tue) 08:15"],
           "haystack_session_ids": ["answer_a", "other"],
           "haystack_sessions": [
             [{"role": "user", "content": "I bought a red bike today.", "has_answer": true},
              {"role": "assistant", "content": "Nice choice!", "has_answer": false}],
             [{"role": "user", "content": "Any tips for tomatoes?"}]
           ]},
          {"question_id": "q2_abs", "question_type": "single-session-user",
           "question": "What is my cat called?", "answer": "You never said.",
           "question_date": "2024/03/10 (Sun) 09:00",
           "haystack_dates": ["2024/03/01 (Fri) 10:00"],
           "haystack_session_ids": ["s"],
           "haystack_sessions": [[{"role": "user", "content": "Hello"}]]}
        ]"#;
        std::fs::write(&path, sample).unwrap();
        let convs = load(&path, &Pick::default()).unwrap();
        assert_eq!(convs.len(), 2);
        let c = &convs[0];
        // The February session comes first.
        let ids: Vec<&str> = c.turns.iter().map(|t| t.dia_id.as_str()).collect();
        assert_eq!(ids, ["S2:1", "S1:1", "S1:2"]);
        assert!(c.turns.windows(2).all(|w| w[0].at < w[1].at));
        assert_eq!(c.qa[0].evidence, ["S1:1"]);
        assert_eq!(c.qa[0].category, 4);
        assert_eq!(
            c.qa[0].asked_at.unwrap().to_rfc3339(),
            "2024-03-10T09:00:00+00:00"
        );
        assert!(convs[1].qa[0].evidence.is_empty());
        // Spread evenly: one of two.
        let limit = |n| Pick {
            limit: Some(n),
            ..Pick::default()
        };
        assert_eq!(load(&path, &limit(1)).unwrap().len(), 1);
        assert!(load(&path, &limit(0)).is_err());
        // A session that starts before the one before it has ended follows it.
        let overlapping = sample
            .replace("2024/02/20 (Tue) 08:15", "2024/03/02 (Sat) 18:29")
            .replace(
                r#"[{"role": "user", "content": "Any tips for tomatoes?"}]"#,
                r#"[{"role": "user", "content": "Any tips?"}, {"role": "user", "content": "Tomatoes?"}]"#,
            );
        std::fs::write(&path, &overlapping).unwrap();
        let o = &load(&path, &Pick::default()).unwrap()[0];
        assert_eq!(o.turns.len(), 4);
        assert!(o.turns.windows(2).all(|w| w[0].at < w[1].at));
    }

    /// The real oracle file, when it is there; else says the test is skipped.
    fn oracle() -> Option<std::path::PathBuf> {
        crate::public_data("longmemeval/longmemeval_oracle.json", "LongMemEval")
    }

    /// The real oracle file (../shared/data/longmemeval), when it is there:
    /// every instance reads, with the published count of each question type,
    /// and its halves by question id hold every type.
    #[test]
    fn the_oracle_file_reads_with_the_published_types() {
        let Some(path) = oracle() else { return };
        let convs = load(&path, &Pick::default()).unwrap();
        assert_eq!(convs.len(), 500);
        let of = |c: u8| convs.iter().filter(|x| x.qa[0].category == c).count();
        assert_eq!(
            [of(1), of(2), of(3), of(4), of(5), of(6)],
            [70, 56, 30, 133, 133, 78]
        );
        // Every question that does not abstain marks its evidence (of the 30
        // abstention questions, 21 mark none).
        for c in convs.iter().filter(|c| !c.sample_id.ends_with("_abs")) {
            assert!(!c.qa[0].evidence.is_empty(), "{}", c.sample_id);
        }
        assert_eq!(
            convs.iter().filter(|c| c.qa[0].evidence.is_empty()).count(),
            21
        );
        let some = load(
            &path,
            &Pick {
                limit: Some(100),
                ..Pick::default()
            },
        )
        .unwrap();
        assert_eq!(some.len(), 100);
        assert!((1..=6).all(|c| some.iter().any(|x| x.qa[0].category == c)));
        // The halves by question id: together the whole file, each with every type.
        let half = |split| {
            load(
                &path,
                &Pick {
                    split,
                    ..Pick::default()
                },
            )
            .unwrap()
        };
        let (dev, test) = (half(Split::Dev), half(Split::Test));
        assert_eq!(dev.len() + test.len(), 500);
        for h in [&dev, &test] {
            assert!((1..=6).all(|c| h.iter().any(|x| x.qa[0].category == c)));
        }
    }

    /// The oracle file with distractors: each haystack gains the sessions
    /// asked for, from its own half, dated inside its span and never
    /// evidence; the same seed gives the same haystack, another seed another.
    #[test]
    fn distractors_come_from_the_same_half_and_stay_in_the_span() {
        let Some(path) = oracle() else { return };
        let pick = |seed| Pick {
            split: Split::Test,
            per_type: Some(2),
            distractors: 5,
            seed,
            ..Pick::default()
        };
        let plain = load(
            &path,
            &Pick {
                distractors: 0,
                ..pick(1)
            },
        )
        .unwrap();
        let a = load(&path, &pick(1)).unwrap();
        assert_eq!(a.len(), 12);
        assert_eq!(plain.len(), 12);
        for (c, p) in a.iter().zip(&plain) {
            assert!(c.sample_id.starts_with(&p.sample_id) && c.sample_id.ends_with("+5d"));
            assert_eq!(crate::split::by_question(&p.sample_id), Split::Test);
            assert_eq!(c.qa[0].evidence, p.qa[0].evidence);
            let sessions: std::collections::HashSet<&str> = c
                .turns
                .iter()
                .filter_map(|t| t.dia_id.split(':').next())
                .filter(|s| s.starts_with('D'))
                .collect();
            assert_eq!(sessions.len(), 5, "{}", c.sample_id);
            let first = p.turns.first().unwrap().at;
            for t in c.turns.iter().filter(|t| t.dia_id.starts_with('D')) {
                assert!(t.at >= first, "{} before the span", t.dia_id);
            }
            assert!(c.turns.windows(2).all(|w| w[0].at < w[1].at));
        }
        let again = load(&path, &pick(1)).unwrap();
        let texts = |cs: &[crate::locomo::Conversation]| -> Vec<String> {
            cs.iter()
                .flat_map(|c| c.turns.iter().map(|t| t.text.clone()))
                .collect()
        };
        assert_eq!(texts(&a), texts(&again));
        assert_ne!(texts(&a), texts(&load(&path, &pick(2)).unwrap()));
        // Ten of each type, as a held-out set is built.
        let ten = load(
            &path,
            &Pick {
                per_type: Some(10),
                ..pick(1)
            },
        )
        .unwrap();
        for c in 1..=6 {
            assert_eq!(ten.iter().filter(|x| x.qa[0].category == c).count(), 10);
        }
    }

    #[test]
    fn a_bad_date_or_type_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lme.json");
        std::fs::write(
            &path,
            r#"[{"question_id": "q", "question_type": "multi-session", "question": "?",
                "answer": "", "question_date": "yesterday", "haystack_dates": [],
                "haystack_sessions": []}]"#,
        )
        .unwrap();
        let e = load(&path, &Pick::default()).unwrap_err().to_string();
        assert!(
            e.contains("question_date") && e.contains("not a date"),
            "{e}"
        );
        std::fs::write(
            &path,
            r#"[{"question_id": "q", "question_type": "poetry", "question": "?",
                "answer": "", "question_date": "2024/03/10 (Sun) 09:00",
                "haystack_dates": [], "haystack_sessions": []}]"#,
        )
        .unwrap();
        let e = load(&path, &Pick::default()).unwrap_err().to_string();
        assert!(e.contains("unknown question_type"), "{e}");
    }
}
