//! Beliefs through the store: a change of mind is a new row, utterances never
//! become beliefs, re-derivation retires and replays without touching episodes.

use crate::common;

use tm_model::beliefs::Claim;
use tm_model::subject::SubjectKey;

fn history(events: &[String]) -> common::TestStore {
    let mut store = common::memory();
    let mut text = String::from(r#"{"type":"subject","learner":"ana","subject":"cells"}"#);
    text.push('\n');
    text.push_str(r##"{"type":"file","at":"2026-03-01T09:00:00Z","name":"t.md","content":"# Osmosis\n**Osmosis** is the diffusion of water across a membrane."}"##);
    for e in events {
        text.push('\n');
        text.push_str(e);
    }
    common::import(&mut *store, &text).unwrap();
    store
}

fn check(id: &str, at: &str, topic: &str, verdict: &str, evaluation: Option<&str>) -> String {
    let mut v = serde_json::json!({"id": id, "type": "check", "at": at, "topic": topic, "verdict": verdict});
    if let Some(e) = evaluation {
        v["evaluation"] = e.into();
    }
    v.to_string()
}

fn key() -> SubjectKey {
    SubjectKey::parse("ana/cells").unwrap()
}

#[test]
fn wrong_then_right_leaves_two_rows_the_older_pointing_at_the_newer() {
    let store = history(&[
        check("c1", "2026-03-02T09:00:00Z", "osmosis", "wrong", None),
        check("c2", "2026-09-18T09:00:00Z", "Osmosis", "right", None),
    ]);
    let subject = tm_store::require_subject(&*store, &key()).unwrap();
    let rows = store.belief_history(&subject, "osmosis").unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].claim, Claim::StrugglesWith);
    assert_eq!(
        rows[0].superseded_by, rows[1].id,
        "the old row points at the new one"
    );
    assert_eq!(rows[1].superseded_by, None);
    assert!(
        rows[1].reason.contains("2026-09-18") && rows[1].reason.contains("right"),
        "{}",
        rows[1].reason
    );
    let current = store.current_beliefs(&subject).unwrap();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].id, rows[1].id);
    let walk = tm_model::beliefs::render_history(&rows);
    assert!(
        walk[0].contains("wrong") && walk[1].contains("right"),
        "{walk:?}"
    );
    // The store refuses to turn a row into another claim.
    let err = store.raw_execute(&format!(
        "UPDATE beliefs SET claim = 'understands' WHERE id = {}",
        rows[0].id.unwrap()
    ));
    assert!(err.unwrap_err().contains("never updated in place"));
}

#[test]
fn utterance_checks_never_become_beliefs_and_the_count_is_honest() {
    let topics = [
        "what is 3 times 4",
        "ok now do the next one",
        "¿y ahora qué?",
        "ask me the questions",
        "bueno ahora explícame todos los pasos",
        "und jetzt?",
        "e adesso?",
        "lalu bagaimana?",
    ];
    let events: Vec<String> = (0..32)
        .map(|i| {
            let at = format!("2026-03-{:02}T10:00:00Z", 2 + i / 2);
            check(
                &format!("a{i}"),
                &at,
                topics[i % topics.len()],
                if i % 3 == 0 { "wrong" } else { "right" },
                Some("Correct, that is 12."),
            )
        })
        .collect();
    let store = history(&events);
    let subject = tm_store::require_subject(&*store, &key()).unwrap();
    assert!(store.current_beliefs(&subject).unwrap().is_empty());
    let map = tm_brain::map::load(&*store, &subject).unwrap();
    let counts = tm_brain::beliefs::counts(&*store, &subject, &map).unwrap();
    assert_eq!((counts.recorded, counts.linked), (32, 0));
    assert_eq!(
        counts.sentence.as_deref(),
        Some("32 checks are recorded, but none could yet be linked to a concept in the map.")
    );
}

#[test]
fn rederivation_retires_replays_and_touches_no_episode() {
    let mut store = history(&[
        check("c1", "2026-03-02T09:00:00Z", "osmosis", "wrong", None),
        check(
            "c2",
            "2026-03-20T09:00:00Z",
            "can you check what I said",
            "right",
            Some("Correct: osmosis moves water."),
        ),
    ]);
    let subject = tm_store::require_subject(&*store, &key()).unwrap();
    let before = tm_store::verify(&*store, &subject, None).unwrap();
    let old = store.belief_history(&subject, "osmosis").unwrap();
    let at = chrono::DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
        .unwrap()
        .to_utc();
    let r = tm_brain::beliefs::rederive(&mut *store, &subject, at).unwrap();
    assert_eq!((r.retired, r.derived, r.checks), (1, 1, 2));
    let after = tm_store::verify(&*store, &subject, None).unwrap();
    assert_eq!(before.head_hash, after.head_hash, "no episode touched");
    let rows = store.belief_history(&subject, "osmosis").unwrap();
    assert_eq!(
        &rows[..old.len()]
            .iter()
            .map(|b| (b.id, b.claim))
            .collect::<Vec<_>>(),
        &old.iter().map(|b| (b.id, b.claim)).collect::<Vec<_>>()
    );
    assert!(
        rows.iter().any(|b| b.reason == "retired"),
        "the old belief stays readable, retired"
    );
    let current = store.current_beliefs(&subject).unwrap();
    assert_eq!(current.len(), 1);
    assert!(current[0].reason.starts_with("re-derived under rules v"));
}
