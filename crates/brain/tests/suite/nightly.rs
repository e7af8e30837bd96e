//! The nightly loop through the store, with an injected clock: quiet days
//! write nothing, a second run is a no-op, decay keeps history, calibration
//! waits for five predictions, citations are verified as holds / changed /
//! unverifiable.

use crate::common;

use chrono::{DateTime, Utc};
use tm_brain::nightly::{NightlyOptions, run};
use tm_model::subject::Subject;

use common::TestStore as Store;

const SUBJECT: &str =
    r#"{"type":"subject","learner":"ana","subject":"cells","title":"Cells","language":"en"}"#;
const NOTES_V1: &str = r##"{"type":"file","at":"2026-03-01T08:00:00Z","name":"notes.md","content":"# Osmosis\n**Osmosis** is the diffusion of water across a membrane.\n\n# Diffusion\n**Diffusion** is the spreading of particles."}"##;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn import(store: &mut dyn tm_store::Store, events: &[String]) {
    let mut text = String::from(SUBJECT);
    for e in events {
        text.push('\n');
        text.push_str(e);
    }
    common::import(store, &text).unwrap();
}

fn learner(id: &str, at: &str, text: &str) -> String {
    serde_json::json!({"id": id, "type": "learner", "at": at, "text": text}).to_string()
}

fn tutor(id: &str, at: &str, text: &str, cites: &[&str]) -> String {
    let cites: Vec<_> = cites
        .iter()
        .map(|f| serde_json::json!({"file": f}))
        .collect();
    serde_json::json!({"id": id, "type": "tutor", "at": at, "text": text, "cites": cites})
        .to_string()
}

fn check(id: &str, at: &str, topic: &str, verdict: &str, predicted: Option<f64>) -> String {
    let mut v = serde_json::json!({"id": id, "type": "check", "at": at, "topic": topic, "verdict": verdict});
    if let Some(p) = predicted {
        v["predicted"] = p.into();
    }
    v.to_string()
}

fn subject(store: &Store) -> Subject {
    common::subject(&**store, "ana/cells")
}

/// Rows in every table the night may write.
fn rows(store: &Store) -> Vec<(String, i64)> {
    [
        "episodes",
        "annotations",
        "beliefs",
        "nightly_runs",
        "citation_checks",
        "working_sets",
        "self_models",
        "concept_maps",
    ]
    .iter()
    .map(|t| (t.to_string(), store.count_rows(t)))
    .collect()
}

/// The latest citation label of each episode, by external id.
fn citation(store: &Store, external_id: &str) -> String {
    let s = subject(store);
    let e = store
        .episode_by_external_id(&s, external_id)
        .unwrap()
        .unwrap();
    let notes = store.annotations(e.id).unwrap();
    let last = notes
        .iter()
        .rev()
        .find(|a| a.kind == "citation")
        .unwrap_or_else(|| panic!("{external_id} was never verified"));
    last.data["label"].as_str().unwrap().to_string()
}

fn opts() -> NightlyOptions {
    NightlyOptions::default()
}

#[test]
fn a_quiet_day_writes_nothing() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            learner("q1", "2026-03-02T09:00:00Z", "What is osmosis?"),
        ],
    );
    let before = rows(&store);
    let report = run(&mut *store, t("2026-03-10T03:00:00Z"), &opts()).unwrap();
    assert_eq!(report.nights[0].active, 0);
    assert_eq!(rows(&store), before);
}

#[test]
fn a_day_is_consolidated_once_and_a_second_run_is_a_no_op() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            learner("q1", "2026-03-02T09:00:00Z", "What is osmosis?"),
            tutor(
                "a1",
                "2026-03-02T09:00:05Z",
                "Osmosis is the diffusion of water.",
                &["notes.md"],
            ),
            check("c1", "2026-03-02T09:05:00Z", "osmosis", "wrong", None),
            check("c2", "2026-03-02T09:10:00Z", "osmosis", "right", None),
        ],
    );
    let at = t("2026-03-03T03:00:00Z");
    let first = run(&mut *store, at, &opts()).unwrap();
    assert_eq!(first.nights[0].consolidated, 1, "{first:?}");
    let s = subject(&store);
    let digest = store
        .episode_by_external_id(&s, "consolidation:2026-03-02")
        .unwrap()
        .unwrap();
    assert_eq!(digest.kind, tm_model::episodes::Kind::Consolidation);
    assert_eq!(digest.at, at);
    assert_eq!(digest.data["checks"]["right"], 1);
    assert_eq!(digest.data["checks"]["wrong"], 1);
    assert_eq!(digest.data["counts"]["check"], 2);
    assert!(digest.text.contains("Topics: Osmosis"), "{}", digest.text);

    let after_first = rows(&store);
    let again = run(&mut *store, at, &opts()).unwrap();
    assert_eq!(rows(&store), after_first, "a second run wrote something");
    assert_eq!((again.nights[0].ran, again.nights[0].skipped), (0, 1));
    // Later the same night (same day consolidated): still nothing.
    run(&mut *store, t("2026-03-03T09:00:00Z"), &opts()).unwrap();
    assert_eq!(rows(&store), after_first);
    // The next night sees only the digest in its window: quiet, not a digest of a digest.
    let next = run(&mut *store, t("2026-03-04T03:00:00Z"), &opts()).unwrap();
    assert_eq!(next.nights[0].active, 0);
    assert_eq!(rows(&store), after_first);
    // The chain still verifies with the digest in it.
    let chain = tm_store::verify(&*store, &s, None).unwrap();
    assert_eq!(chain.state, tm_model::episodes::ChainState::Intact);
}

#[test]
fn a_belief_untouched_45_days_decays_by_exactly_15_percent_and_the_next_check_clears_the_flag() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            check("c1", "2026-03-02T09:00:00Z", "osmosis", "right", None),
            check("c2", "2026-03-20T09:00:00Z", "diffusion", "right", None),
        ],
    );
    let s = subject(&store);
    let before = store.belief_history(&s, "osmosis").unwrap();
    assert_eq!(before.len(), 1);
    // 44 days later, with activity: nothing decays yet.
    import(
        &mut *store,
        &[learner("q1", "2026-04-14T10:00:00Z", "hello again")],
    );
    let r = run(&mut *store, t("2026-04-15T03:00:00Z"), &opts()).unwrap();
    assert!(r.nights[0].subjects[0].decayed.is_empty(), "{r:?}");
    // 49 days after the osmosis check (31 after diffusion): osmosis decays, diffusion not.
    import(
        &mut *store,
        &[learner("q2", "2026-04-20T10:00:00Z", "and now?")],
    );
    let r = run(&mut *store, t("2026-04-21T03:00:00Z"), &opts()).unwrap();
    assert_eq!(r.nights[0].subjects[0].decayed, vec!["Osmosis"]);
    let history = store.belief_history(&s, "osmosis").unwrap();
    assert_eq!(history.len(), 2, "history kept: {history:?}");
    let (old, new) = (&history[0], &history[1]);
    assert_eq!(old.superseded_by, new.id);
    assert_eq!(
        old.confidence, before[0].confidence,
        "the old row is unchanged"
    );
    assert!(
        (new.confidence - old.confidence * 0.85).abs() < 1e-12,
        "{new:?}"
    );
    assert!(new.flagged);
    assert_eq!(new.reason, "decayed");
    assert_eq!(new.created_at, t("2026-04-21T03:00:00Z"));
    assert_eq!(store.belief_history(&s, "diffusion").unwrap().len(), 1);
    let model = tm_brain::nightly::self_model(&*store, &s).unwrap().unwrap();
    assert_eq!(model.flagged, 1);
    assert!(
        model.how_to_use.contains("awaits reconfirmation"),
        "{}",
        model.how_to_use
    );

    // The next check on osmosis clears the flag.
    import(
        &mut *store,
        &[check(
            "c3",
            "2026-04-22T09:00:00Z",
            "osmosis",
            "right",
            None,
        )],
    );
    let history = store.belief_history(&s, "osmosis").unwrap();
    assert_eq!(history.len(), 3);
    assert!(!history[2].flagged);
    assert_eq!(history[1].superseded_by, history[2].id);
    // The check recorded the decayed confidence as its prediction.
    let c3 = store.episode_by_external_id(&s, "c3").unwrap().unwrap();
    assert!((c3.data["predicted"].as_f64().unwrap() - history[1].confidence).abs() < 1e-12);
}

#[test]
fn calibration_is_claimed_only_from_five_predicted_checks() {
    let mut store = common::memory();
    let mut events = vec![NOTES_V1.to_string()];
    for i in 0..4 {
        events.push(check(
            &format!("c{i}"),
            &format!("2026-03-02T09:0{i}:00Z"),
            "osmosis",
            "right",
            Some(0.95),
        ));
    }
    import(&mut *store, &events);
    run(&mut *store, t("2026-03-03T00:00:00Z"), &opts()).unwrap();
    let s = subject(&store);
    let model = tm_brain::nightly::self_model(&*store, &s).unwrap().unwrap();
    assert_eq!(model.calibration.n, 4);
    assert!(!model.calibrated);
    assert!(
        model
            .how_to_use
            .contains("treat confidence as a ranking, not a probability")
    );

    import(
        &mut *store,
        &[check(
            "c9",
            "2026-03-03T09:00:00Z",
            "osmosis",
            "right",
            Some(0.95),
        )],
    );
    let r = run(&mut *store, t("2026-03-04T00:00:00Z"), &opts()).unwrap();
    assert_eq!(r.nights[0].subjects[0].calibration, "calibrated");
    let model = tm_brain::nightly::self_model(&*store, &s).unwrap().unwrap();
    assert_eq!(model.calibration.n, 5);
    assert!(model.calibrated);
    assert!((model.calibration.ece.unwrap() - 0.05).abs() < 1e-9);
    assert!(
        !model.how_to_use.contains("ranking"),
        "{}",
        model.how_to_use
    );
}

#[test]
fn replacing_or_removing_a_cited_file_is_reported_as_changed_and_a_check_is_unverifiable() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            r##"{"type":"file","at":"2026-03-01T08:00:00Z","name":"extra.md","content":"# Cytoplasm\n**Cytoplasm** is the gel inside the cell."}"##.into(),
            learner("q1", "2026-03-02T09:00:00Z", "What is osmosis?"),
            tutor("a1", "2026-03-02T09:00:05Z", "Osmosis is the diffusion of water.", &["notes.md"]),
            tutor("a2", "2026-03-02T09:01:05Z", "Cytoplasm is the gel.", &["extra.md"]),
            check("c1", "2026-03-02T09:05:00Z", "osmosis", "right", None),
        ],
    );
    run(&mut *store, t("2026-03-03T00:00:00Z"), &opts()).unwrap();
    assert_eq!(citation(&store, "a1"), "holds");
    assert_eq!(citation(&store, "a2"), "holds");
    assert_eq!(citation(&store, "c1"), "unverifiable");
    assert_eq!(citation(&store, "q1"), "unverifiable");

    import(
        &mut *store,
        &[
            r##"{"type":"file","at":"2026-03-05T08:00:00Z","name":"notes.md","content":"# Osmosis\n**Osmosis** is water crossing a membrane, revised."}"##.into(),
            r#"{"type":"file_removed","at":"2026-03-05T08:10:00Z","name":"extra.md"}"#.into(),
        ],
    );
    let r = run(&mut *store, t("2026-03-06T00:00:00Z"), &opts()).unwrap();
    assert_eq!(citation(&store, "a1"), "changed: replaced by notes.md v2");
    assert_eq!(citation(&store, "a2"), "changed: removed");
    // A check cites no file: unverifiable, never "holds", night after night.
    assert_eq!(citation(&store, "c1"), "unverifiable");
    let found: Vec<&str> = r.nights[0].subjects[0]
        .citations
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert!(
        found.contains(&"changed: replaced by notes.md v2"),
        "{found:?}"
    );
    assert!(found.contains(&"changed: removed"), "{found:?}");
    let s = subject(&store);
    assert_eq!(store.citation_checks(&s, "changed").unwrap().len(), 2);
    // The episodes themselves are untouched: the chain verifies.
    assert_eq!(
        tm_store::verify(&*store, &s, None).unwrap().state,
        tm_model::episodes::ChainState::Intact
    );
}

fn eleven_answers_then_removal(store: &mut dyn tm_store::Store) {
    let mut events = vec![NOTES_V1.to_string()];
    for i in 0..11 {
        events.push(tutor(
            &format!("a{i}"),
            &format!("2026-03-02T09:{i:02}:00Z"),
            "Osmosis is the diffusion of water.",
            &["notes.md"],
        ));
    }
    events.push(r#"{"type":"file_removed","at":"2026-03-02T12:00:00Z","name":"notes.md"}"#.into());
    import(store, &events);
}

#[test]
fn eleven_stale_citations_are_all_flagged_in_one_night_with_the_default_batch() {
    let mut store = common::memory();
    eleven_answers_then_removal(&mut *store);
    let r = run(&mut *store, t("2026-03-03T00:00:00Z"), &opts()).unwrap();
    let stale: Vec<_> = r.nights[0].subjects[0]
        .citations
        .iter()
        .filter(|c| c.label == "changed: removed")
        .collect();
    assert_eq!(stale.len(), 11);
    for i in 0..11 {
        assert_eq!(citation(&store, &format!("a{i}")), "changed: removed");
    }
    let model = tm_brain::nightly::self_model(&*store, &subject(&store))
        .unwrap()
        .unwrap();
    assert_eq!(model.stale_citations, 11);
    assert!(model.how_to_use.contains("11 memories cite a file"));
}

#[test]
fn a_small_batch_reaches_every_citation_over_successive_nights_never_checked_first() {
    let mut store = common::memory();
    eleven_answers_then_removal(&mut *store);
    let small = NightlyOptions {
        batch: 4,
        since: None,
    };
    let s = subject(&store);
    // 11 answers, plus one message a night to keep the subject active: three
    // nights of four reach them all, never-checked first.
    let mut stale = Vec::new();
    for day in 3..7 {
        import(
            &mut *store,
            &[learner(
                &format!("m{day}"),
                &format!("2026-03-0{}T10:00:00Z", day - 1),
                "hi",
            )],
        );
        run(&mut *store, t(&format!("2026-03-0{day}T00:00:00Z")), &small).unwrap();
        stale.push(store.citation_checks(&s, "changed").unwrap().len());
    }
    // The answers were never checked, so they come before the later messages.
    assert_eq!(stale, [4, 8, 11, 11]);
}

#[test]
fn since_catches_up_missed_nights_in_day_order() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            learner("q1", "2026-03-02T09:00:00Z", "What is osmosis?"),
            learner("q2", "2026-03-04T09:00:00Z", "And diffusion?"),
        ],
    );
    let r = run(
        &mut *store,
        t("2026-03-05T00:00:00Z"),
        &NightlyOptions {
            batch: 200,
            since: Some("2026-03-01".parse().unwrap()),
        },
    )
    .unwrap();
    let days: Vec<String> = r.nights.iter().map(|n| n.day.to_string()).collect();
    assert_eq!(
        days,
        [
            "2026-02-28",
            "2026-03-01",
            "2026-03-02",
            "2026-03-03",
            "2026-03-04"
        ]
    );
    let consolidated: Vec<usize> = r.nights.iter().map(|n| n.consolidated).collect();
    // The file arrived on 03-01, the questions on 03-02 and 03-04.
    assert_eq!(consolidated, [0, 1, 1, 0, 1]);
    let s = subject(&store);
    let d1 = store
        .episode_by_external_id(&s, "consolidation:2026-03-02")
        .unwrap()
        .unwrap();
    let d2 = store
        .episode_by_external_id(&s, "consolidation:2026-03-04")
        .unwrap()
        .unwrap();
    assert!(d1.seq < d2.seq, "nights ran in day order");
    assert!(
        run(
            &mut *store,
            t("2026-03-01T00:00:00Z"),
            &NightlyOptions {
                batch: 200,
                since: Some("2026-03-02".parse().unwrap())
            }
        )
        .is_err()
    );
}

#[test]
fn the_block_takes_its_usage_note_from_the_self_model_and_never_trusts_a_stale_working_set() {
    use std::sync::Arc;
    use tm_brain::block::{BlockRequest, build};
    use tm_brain::recall::Recaller;
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            check(
                "c1",
                "2026-03-02T09:00:00Z",
                "ask me the questions",
                "right",
                None,
            ),
        ],
    );
    let recaller = Recaller::new(Arc::new(tm_embed::HashEmbedder::new()));
    let s = subject(&store);
    let request = |at: &str| BlockRequest::new("What is osmosis?", t(at), chrono_tz::UTC, 1200);
    let before = build(&*store, &recaller, &s, &request("2026-03-02T20:00:00Z")).unwrap();
    assert!(!before.block.contains("Confidence is untested"));

    run(&mut *store, t("2026-03-03T00:00:00Z"), &opts()).unwrap();
    let ws = tm_brain::nightly::fresh_working_set(&*store, &s).unwrap();
    assert!(ws.is_some(), "a night leaves a fresh working set");
    let after = build(&*store, &recaller, &s, &request("2026-03-03T08:00:00Z")).unwrap();
    assert!(
        after
            .block
            .contains("treat confidence as a ranking, not a probability"),
        "{}",
        after.block
    );
    assert!(
        after
            .block
            .contains("1 check is recorded, but none could yet be linked"),
        "{}",
        after.block
    );

    // A check after the night: the set is stale, the block counts afresh.
    import(
        &mut *store,
        &[check(
            "c2",
            "2026-03-03T09:00:00Z",
            "ask me more",
            "wrong",
            None,
        )],
    );
    assert!(
        tm_brain::nightly::fresh_working_set(&*store, &s)
            .unwrap()
            .is_none()
    );
    let later = build(&*store, &recaller, &s, &request("2026-03-03T10:00:00Z")).unwrap();
    assert!(
        later.block.contains("2 checks are recorded, but none"),
        "{}",
        later.block
    );
}

#[test]
fn a_failure_half_way_through_a_subject_leaves_none_of_its_night_written() {
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            NOTES_V1.into(),
            learner("q1", "2026-03-02T09:00:00Z", "What is osmosis?"),
        ],
    );
    let s = subject(&store);
    // A belief no rule could have written (negative posterior): decay, step 2,
    // fails after the consolidation (step 1) was appended in the same transaction.
    store
        .raw_execute(&format!(
            "INSERT INTO beliefs (subject_id, about, concept, unmapped, claim, confidence, alpha, beta, support,
                                  created_at, reason, flagged)
             VALUES ({}, 'osmosis', 'Osmosis', FALSE, 'understands', 0.9, -1.0, 1.0, '[]', 0, 'test', FALSE)",
            s.id
        ))
        .unwrap();
    // Another learner, active the same day, is not held back by it.
    let mut text = String::from(r#"{"type":"subject","learner":"ben","subject":"cells"}"#);
    text.push('\n');
    text.push_str(&learner("b1", "2026-03-02T10:00:00Z", "Hello"));
    common::import(&mut *store, &text).unwrap();
    let ben = common::subject(&*store, "ben/cells");
    let before = rows(&store);
    let r = run(&mut *store, t("2026-03-03T00:00:00Z"), &opts()).unwrap();
    assert_eq!(r.failures(), 1);
    assert_eq!(r.nights[0].failed[0].subject, "ana/cells");
    assert!(
        r.nights[0].failed[0].error.contains("impossible posterior"),
        "{r:?}"
    );
    assert!(!store.nightly_ran(&s, "2026-03-02").unwrap());
    assert!(store.nightly_ran(&ben, "2026-03-02").unwrap());
    // Of ana's night nothing remains: no digest, no decay, no caches.
    assert!(
        store
            .episode_by_external_id(&s, "consolidation:2026-03-02")
            .unwrap()
            .is_none()
    );
    assert!(store.working_set(&s).unwrap().is_none());
    assert!(store.self_model(&s).unwrap().is_none());
    let after = rows(&store);
    let episodes = |r: &[(String, i64)]| r.iter().find(|(t, _)| t == "episodes").unwrap().1;
    assert_eq!(episodes(&after), episodes(&before) + 1, "only ben's digest");
}
