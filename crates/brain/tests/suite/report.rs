//! The subject report: what a teacher reads, as text (snapshot) and JSON.

use chrono::{DateTime, Utc};
use common::TestStore as Store;
use expect_test::expect;
use tm_brain::nightly::{NightlyOptions, run};
use tm_store::StoreExt;

use crate::common;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn import(store: &mut dyn tm_store::Store, events: &[serde_json::Value]) {
    let mut text = String::from(
        r#"{"type":"subject","learner":"ana","subject":"cells","title":"Cells","language":"en"}"#,
    );
    for e in events {
        text.push('\n');
        text.push_str(&e.to_string());
    }
    common::import(store, &text).unwrap();
}

fn sample() -> Store {
    use serde_json::json;
    let mut store = common::memory();
    import(
        &mut *store,
        &[
            json!({"type":"file","at":"2026-03-01T08:00:00Z","name":"notes.md",
                   "content":"# Osmosis\n**Osmosis** is the diffusion of water across a membrane.\n\n# Diffusion\n**Diffusion** is the spreading of particles."}),
            json!({"id":"q1","type":"learner","at":"2026-03-02T09:00:00Z","text":"What is osmosis?"}),
            json!({"id":"a1","type":"tutor","at":"2026-03-02T09:00:05Z","text":"Osmosis is the diffusion of water across a membrane.","cites":[{"file":"notes.md","page":1}]}),
            json!({"id":"c1","type":"check","at":"2026-03-02T09:05:00Z","topic":"osmosis","verdict":"wrong","predicted":0.7}),
            json!({"id":"c2","type":"check","at":"2026-03-02T09:10:00Z","topic":"osmosis","verdict":"right","predicted":0.4}),
            json!({"id":"c3","type":"check","at":"2026-03-02T09:15:00Z","topic":"ask me the questions","verdict":"right"}),
            json!({"id":"q2","type":"learner","at":"2026-04-10T09:00:00Z","text":"Who discovered the ribosome?"}),
            json!({"id":"a2","type":"tutor","at":"2026-04-10T09:00:05Z","text":"Your notes do not say who discovered it."}),
            json!({"type":"file","at":"2026-04-11T08:00:00Z","name":"notes.md",
                   "content":"# Osmosis\n**Osmosis** is water moving across a membrane, revised."}),
        ],
    );
    let subject = common::subject(&*store, "ana/cells");
    let a2 = store
        .episode_by_external_id(&subject, "a2")
        .unwrap()
        .unwrap();
    let a1 = store
        .episode_by_external_id(&subject, "a1")
        .unwrap()
        .unwrap();
    store
        .write(|tx| {
            tx.annotate(
                a2.id,
                "grounding",
                t("2026-04-10T09:00:06Z"),
                &json!({"stance": "couldnt"}),
            )?;
            // An answer first judged "couldnt", then re-judged: the newest stance wins.
            tx.annotate(
                a1.id,
                "grounding",
                t("2026-03-02T09:00:06Z"),
                &json!({"stance": "couldnt"}),
            )?;
            tx.annotate(
                a1.id,
                "grounding",
                t("2026-03-02T09:00:07Z"),
                &json!({"stance": "answered"}),
            )?;
            Ok(())
        })
        .unwrap();
    let opts = NightlyOptions::default();
    run(&mut *store, t("2026-03-03T00:00:00Z"), &opts).unwrap();
    run(&mut *store, t("2026-04-12T00:00:00Z"), &opts).unwrap();
    store
}

#[test]
fn the_report_reads_as_a_teacher_needs_it() {
    let store = sample();
    let subject = common::subject(&*store, "ana/cells");
    let report = tm_brain::report::build(&*store, &subject, t("2026-04-12T00:00:00Z")).unwrap();
    let text = tm_model::nightly::render_text(&report);
    expect![[r#"
        Subject report — Cells (ana/cells, 2026-04-12 00:00 UTC)

        ## Readiness of the material
        Material: 85 % — this measures how well the files explain the concepts, not what the learner has mastered
        - Osmosis 0.85

        ## Teaching order
        1. Osmosis

        ## What the tutor believes (current, with history)
        - is still learning Osmosis (0.50)
            2026-03-02 struggles with Osmosis (0.33) — check 2026-03-02 wrong [episodes 4]
            2026-03-02 is still learning Osmosis (0.50) — check 2026-03-02 right [episodes 4, 5]

        ## Checks
        recorded: 3, linked to a concept: 2, not linked: 1
        3 checks are recorded; 2 are linked to concepts in the map, 1 is kept as evidence only.

        ## Calibration of predicted mastery
        n = 3, ECE = 0.600, Brier = 0.367, log loss = 0.938 — too few predicted checks
        predicted     n mean pred.  observed
        0.4–0.5       1      0.400     1.000
        0.5–0.6       1      0.500     1.000
        0.7–0.8       1      0.700     0.000

        ## Stale citations
        - 2026-03-02 answer #3: Osmosis is the diffusion of water across a membrane. — changed: replaced by notes.md v2

        ## Questions the files could not answer
        - 2026-04-10 Who discovered the ribosome?

        ## Activity by month
        month    episodes questions checks right wrong partial
        2026-03         6         1      3     2     1       0
        2026-04         3         1      0     0     0       0
    "#]].assert_eq(&text);
}

#[test]
fn the_report_as_json_keeps_every_section() {
    let store = sample();
    let subject = common::subject(&*store, "ana/cells");
    let report = tm_brain::report::build(&*store, &subject, t("2026-04-12T00:00:00Z")).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "readiness",
        "teaching_order",
        "beliefs",
        "checks",
        "calibration",
        "stale_citations",
        "couldnt_answer",
        "activity",
    ] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    assert!(
        json["readiness"]["note"]
            .as_str()
            .unwrap()
            .contains("not what the learner has mastered")
    );
    assert_eq!(json["checks"]["recorded"], 3);
    assert_eq!(json["checks"]["unlinked"], 1);
    assert_eq!(json["couldnt_answer"].as_array().unwrap().len(), 1);
    assert_eq!(
        json["couldnt_answer"][0]["question"],
        "Who discovered the ribosome?"
    );
    assert_eq!(
        json["stale_citations"][0]["change"],
        "changed: replaced by notes.md v2"
    );
}

/// Times outside years 1900-9999 (UTC) are refused where they come in, and a
/// row stored before that rule (the log cannot be repaired) never fails the
/// report: it is counted under its own label.
#[test]
fn a_time_past_year_9999_is_refused_and_an_old_one_never_breaks_the_report() {
    use serde_json::json;
    let mut store = sample();
    let subject = common::subject(&*store, "ana/cells");
    let before = store.episode_count(&subject).unwrap();
    for at in ["9999-12-31T23:59:59-00:01", "1899-12-31T23:59:59Z"] {
        let line = json!({"type":"learner","at":at,"text":"x"});
        let text = format!(
            "{}\n{line}",
            r#"{"type":"subject","learner":"ana","subject":"cells","title":"Cells","language":"en"}"#
        );
        let err = common::import(&mut *store, &text).unwrap_err().to_string();
        assert!(err.contains("outside the accepted range"), "{err}");
    }
    assert_eq!(store.episode_count(&subject).unwrap(), before);
    // As an event built in code (teach, an answer, a turn): refused too.
    let late = DateTime::<Utc>::from_timestamp_millis(253_402_300_800_000).unwrap();
    let event = tm_model::events::Event::new(
        late,
        tm_model::events::EventBody::Learner { text: "x".into() },
    );
    assert!(event.validate().is_err());
    // A row written past the rule straight into the store still reports.
    store
        .write(|tx| {
            tx.append(
                &subject,
                &tm_model::episodes::NewEpisode {
                    kind: tm_model::episodes::Kind::Question,
                    at: late,
                    salience: 0.4,
                    summary: "x".into(),
                    text: "x".into(),
                    concepts: vec![],
                    evidence: vec![],
                    data: Default::default(),
                    external_id: None,
                    import_key: None,
                    salt: None,
                },
            )
        })
        .unwrap();
    let report = tm_brain::report::build(&*store, &subject, t("2026-04-12T00:00:00Z")).unwrap();
    let last = report.activity.last().unwrap();
    assert_eq!((last.month.as_str(), last.episodes), ("out of range", 1));
    assert!(tm_model::nightly::report::render_text(&report).contains("out of range"));
}
