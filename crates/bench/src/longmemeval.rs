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

use std::path::Path;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use serde_json::Value;

use crate::locomo::{Categories, Conversation, Qa, Turn, answer_text, bad};
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

/// Reads a LongMemEval file. With `limit`, keeps that many instances spread
/// evenly over the file (every k-th), so the question types keep their mix.
pub fn load(path: &Path, limit: Option<usize>) -> Result<Vec<Conversation>> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(path, format!("not JSON: {e}")))?;
    let list = v
        .as_array()
        .ok_or_else(|| bad(path, "expected a list of instances"))?;
    let step = match limit {
        Some(0) => return Err(bad(path, "--limit takes a positive count")),
        Some(n) => list.len().div_ceil(n).max(1),
        None => 1,
    };
    list.iter()
        .step_by(step)
        .take(limit.unwrap_or(usize::MAX))
        .enumerate()
        .map(|(i, x)| instance(path, i, x))
        .collect()
}

fn instance(path: &Path, i: usize, x: &Value) -> Result<Conversation> {
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
    // Sessions in time order (the oracle file does not sort them).
    let mut order: Vec<(DateTime<Utc>, usize)> = Vec::with_capacity(dates.len());
    for (n, d) in dates.iter().enumerate() {
        order.push((at(d, "haystack_dates")?, n));
    }
    order.sort();
    let mut turns: Vec<Turn> = Vec::new();
    let mut evidence = Vec::new();
    for (start, n) in order {
        let Some(session) = sessions[n].as_array() else {
            continue;
        };
        for (k, t) in session.iter().enumerate() {
            let (Some(role), Some(content)) = (t["role"].as_str(), t["content"].as_str()) else {
                continue;
            };
            let dia_id = format!("S{}:{}", n + 1, k + 1);
            if t["has_answer"].as_bool() == Some(true) {
                evidence.push(dia_id.clone());
            }
            // A minute apart, and after the turn before: a session may start
            // before the one before it has ended at a turn a minute.
            let at = (start + Duration::minutes(k as i64))
                .max(turns.last().map_or(start, |t| t.at + Duration::minutes(1)));
            turns.push(Turn {
                speaker: role.to_string(),
                dia_id,
                text: content.to_string(),
                at,
            });
        }
    }
    let qa = Qa {
        question: x["question"].as_str().unwrap_or("").to_string(),
        answer: answer_text(&x["answer"]),
        evidence,
        category,
        asked_at: Some(at(&x["question_date"], "question_date")?),
    };
    Ok(Conversation {
        dataset: "longmemeval",
        sample_id: id,
        speaker_a: "user".into(),
        turns,
        qa: vec![qa],
    })
}

#[cfg(test)]
mod tests {
    use super::load;

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
        let convs = load(&path, None).unwrap();
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
        assert_eq!(load(&path, Some(1)).unwrap().len(), 1);
        assert!(load(&path, Some(0)).is_err());
        // A session that starts before the one before it has ended follows it.
        let overlapping = sample
            .replace("2024/02/20 (Tue) 08:15", "2024/03/02 (Sat) 18:29")
            .replace(
                r#"[{"role": "user", "content": "Any tips for tomatoes?"}]"#,
                r#"[{"role": "user", "content": "Any tips?"}, {"role": "user", "content": "Tomatoes?"}]"#,
            );
        std::fs::write(&path, &overlapping).unwrap();
        let o = &load(&path, None).unwrap()[0];
        assert_eq!(o.turns.len(), 4);
        assert!(o.turns.windows(2).all(|w| w[0].at < w[1].at));
    }

    /// The real oracle file (../shared/data/longmemeval), when it is there:
    /// every instance reads, with the published count of each question type.
    #[test]
    fn the_oracle_file_reads_with_the_published_types() {
        let path = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/longmemeval/longmemeval_oracle.json"
        ));
        if !path.is_file() {
            println!("skipped: LongMemEval not found at {}", path.display());
            return;
        }
        let convs = load(&path, None).unwrap();
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
        let some = load(&path, Some(100)).unwrap();
        assert_eq!(some.len(), 100);
        assert!((1..=6).all(|c| some.iter().any(|x| x.qa[0].category == c)));
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
        let e = load(&path, None).unwrap_err().to_string();
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
        let e = load(&path, None).unwrap_err().to_string();
        assert!(e.contains("unknown question_type"), "{e}");
    }
}
