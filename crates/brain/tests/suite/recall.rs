//! Recall through the store, as a turn sees it: relevance beats recency,
//! repetitions collapse, time is a filter in many languages, narrations of a
//! period are not memories of it.

use crate::common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use std::sync::Arc;
use tm_brain::recall::{RecallQuery, RecallResult, Recaller};
use tm_embed::HashEmbedder;
use tm_model::subject::SubjectKey;

use common::TestStore as Store;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// Imports events (JSON lines without the subject line) and embeds them.
fn subject_with(events: &[String]) -> (Store, Recaller) {
    let mut store = common::memory();
    let mut text =
        String::from(r#"{"type":"subject","learner":"ana","subject":"cells","title":"Cells"}"#);
    for e in events {
        text.push('\n');
        text.push_str(e);
    }
    // Recorded and embedded with the hashing embedder the recaller reads with.
    common::import(&mut *store, &text).unwrap();
    (store, Recaller::new(Arc::new(HashEmbedder::new())))
}

fn key() -> SubjectKey {
    SubjectKey::parse("ana/cells").unwrap()
}

fn learner(id: &str, at: DateTime<Utc>, text: &str) -> String {
    serde_json::json!({"id": id, "type": "learner", "at": at.to_rfc3339(), "text": text})
        .to_string()
}

fn tutor(id: &str, at: DateTime<Utc>, text: &str) -> String {
    serde_json::json!({"id": id, "type": "tutor", "at": at.to_rfc3339(), "text": text}).to_string()
}

fn ask(
    store: &dyn tm_store::Store,
    r: &Recaller,
    question: &str,
    at: DateTime<Utc>,
) -> RecallResult {
    let subject = tm_store::require_subject(store, &key()).unwrap();
    r.recall(
        store,
        &subject,
        &RecallQuery {
            question,
            at,
            tz: chrono_tz::UTC,
            limit: 10,
            exclude: None,
        },
    )
    .unwrap()
}

fn ids(r: &RecallResult) -> Vec<String> {
    r.ranked
        .iter()
        .filter_map(|m| m.episode.external_id.clone())
        .collect()
}

#[test]
fn a_relevant_march_memory_beats_500_newer_irrelevant_ones() {
    let mut events = vec![
        learner(
            "march",
            t("2026-03-10T10:00:00Z"),
            "How does the sodium-potassium pump move ions?",
        ),
        tutor(
            "march-a",
            t("2026-03-10T10:00:05Z"),
            "The sodium-potassium pump spends ATP to move three sodium ions out.",
        ),
    ];
    let start = t("2026-04-01T08:00:00Z");
    for i in 0..520 {
        let at = start + Duration::hours(3 * i);
        events.push(learner(
            &format!("n{i}"),
            at,
            &format!(
                "Let us review chapter {} exercise {} on fractions",
                i % 13,
                i
            ),
        ));
    }
    let (store, r) = subject_with(&events);
    let res = ask(
        &*store,
        &r,
        "Remind me how the sodium-potassium pump works",
        t("2026-09-20T10:00:00Z"),
    );
    assert_eq!(res.basis, "matched");
    let got = ids(&res);
    assert!(
        got.contains(&"march".to_string()) && got.contains(&"march-a".to_string()),
        "{got:?}"
    );
    assert!(
        got.iter().all(|id| id.starts_with("march")),
        "non-matches must be gated out: {got:?}"
    );
}

/// The hashing embedder read as if its calibration took half the subject's
/// mean out, as MiniLM's does (the hashing one takes none), so a test with
/// no model can see the centred cosine.
struct Centring(HashEmbedder);

impl tm_embed::Embedder for Centring {
    fn calibration(&self) -> tm_embed::Calibration {
        tm_embed::Calibration {
            centred_share: tm_model::recall::CENTRED_SHARE,
            ..tm_embed::Calibration::HASHED
        }
    }
    fn name(&self) -> &str {
        self.0.name()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        self.0.embed(texts)
    }
}

/// A match by meaning shows the centred cosine it ranks by, where the
/// embedder's calibration takes a share of the subject's mean; where it
/// takes none, no episode has one.
#[test]
fn a_match_by_meaning_shows_its_centred_cosine() {
    let at = t("2026-03-10T10:00:00Z");
    let mut events = vec![
        learner("pump", at, "How does the sodium-potassium pump move ions?"),
        tutor(
            "pump-a",
            at + Duration::seconds(5),
            "The sodium-potassium pump spends ATP to move three sodium ions out.",
        ),
    ];
    for i in 0..30 {
        events.push(learner(
            &format!("n{i}"),
            at + Duration::hours(3 * (i + 1)),
            &format!("Let us review chapter {i} on fractions"),
        ));
    }
    let (store, plain) = subject_with(&events);
    let question = "Remind me how the sodium-potassium pump works";
    let later = at + Duration::days(10);
    let centring = Recaller::new(Arc::new(Centring(HashEmbedder::new())));
    let res = ask(&*store, &centring, question, later);
    assert_eq!(res.basis, "matched");
    let floor = tm_embed::Calibration::HASHED.match_floor;
    for m in res
        .ranked
        .iter()
        .filter(|m| m.signals.neighbour_of.is_none())
    {
        let by_meaning = m.signals.semantic >= floor;
        assert_eq!(m.signals.centred.is_some(), by_meaning, "{:?}", m.signals);
        if let Some(c) = m.signals.centred {
            assert!((-1.0..=1.0).contains(&c), "{c}");
        }
    }
    assert!(res.ranked.iter().any(|m| m.signals.centred.is_some()));
    let res = ask(&*store, &plain, question, later);
    assert!(res.ranked.iter().all(|m| m.signals.centred.is_none()));
}

/// A question's word finds its other forms by its words ("research" →
/// "researching", "studies" → "studied"), in the question's language, and no
/// word that only looks alike ("pain" for "paint").
#[test]
fn a_word_finds_its_other_forms_and_nothing_that_only_looks_alike() {
    let at = t("2026-03-10T10:00:00Z");
    let (store, r) = subject_with(&[
        learner("res", at, "Researching adoption agencies took all week"),
        learner("pain", at + Duration::hours(1), "My knee pain is back"),
        learner(
            "paint",
            at + Duration::hours(2),
            "We painted the fence green",
        ),
        learner(
            "es",
            at + Duration::hours(3),
            "Los alumnos estudiaron la célula ayer",
        ),
        learner("other", at + Duration::hours(4), "The bus was late again"),
    ]);
    let later = at + Duration::days(1);
    let res = ask(&*store, &r, "What did I research?", later);
    assert_eq!(res.terms, ["research", "researching"]);
    let lexical: Vec<String> = res
        .ranked
        .iter()
        .filter(|m| m.signals.lexical > 0.0)
        .filter_map(|m| m.episode.external_id.clone())
        .collect();
    assert_eq!(lexical, ["res"]);
    let res = ask(&*store, &r, "What did we paint?", later);
    assert_eq!(res.terms, ["paint", "painted"], "never \"pain\"");
    let res = ask(&*store, &r, "¿Quién estudia la célula?", later);
    assert!(
        res.terms.contains(&"estudiaron".to_string()),
        "{:?}",
        res.terms
    );
}

#[test]
fn nine_identical_questions_come_back_once_with_their_count() {
    let mut events = Vec::new();
    let start = t("2026-03-01T09:00:00Z");
    for i in 0..9 {
        events.push(learner(
            &format!("c{i}"),
            start + Duration::days(10 * i),
            "What is a cell?",
        ));
        events.push(learner(
            &format!("o{i}"),
            start + Duration::days(10 * i) + Duration::hours(1),
            &format!("Something else {i} about fractions"),
        ));
    }
    let (store, r) = subject_with(&events);
    let res = ask(&*store, &r, "what is a cell", t("2026-07-01T09:00:00Z"));
    let cells: Vec<_> = res
        .ranked
        .iter()
        .filter(|m| m.episode.text == "What is a cell?")
        .collect();
    assert_eq!(cells.len(), 1, "collapsed into one");
    assert_eq!(cells[0].count, 9);
    assert_eq!(
        cells[0].episode.external_id.as_deref(),
        Some("c8"),
        "the newest stands for the group"
    );
}

fn year_of_work() -> (Store, Recaller) {
    let mut events = Vec::new();
    for (month, topic) in [
        (3, "cell membrane"),
        (4, "osmosis"),
        (7, "eukaryotic cells"),
        (9, "mitochondria"),
    ] {
        let at = Utc.with_ymd_and_hms(2026, month, 12, 9, 0, 0).unwrap();
        events.push(learner(
            &format!("m{month}"),
            at,
            &format!("Can we go over {topic} today?"),
        ));
        events.push(tutor(
            &format!("m{month}-a"),
            at + Duration::seconds(5),
            &format!("Of course, {topic} it is."),
        ));
    }
    // A September answer narrating July: not a July memory.
    events.push(tutor(
        "narration",
        t("2026-09-18T10:05:00Z"),
        "In July we covered eukaryotic cells and their nucleus.",
    ));
    subject_with(&events)
}

#[test]
fn a_month_question_recalls_that_month_only_in_many_languages() {
    let (store, r) = year_of_work();
    let at = t("2026-11-29T10:00:00Z");
    for q in [
        "What did we cover in July?",
        "¿Qué vimos en julio?",
        "Was haben wir im Juli gemacht?",
        "Cosa abbiamo fatto a luglio?",
        "Apa yang kita pelajari pada bulan Juli?",
        "ماذا درسنا في يوليو؟",
    ] {
        let res = ask(&*store, &r, q, at);
        let w = res
            .window
            .as_ref()
            .unwrap_or_else(|| panic!("{q}: no window"));
        assert_eq!(w.label, "July 2026", "{q}");
        assert!(!w.empty, "{q}");
        let mut got = ids(&res);
        got.sort();
        assert_eq!(
            got,
            ["m7", "m7-a"],
            "{q}: only July, and never the September narration"
        );
    }
}

#[test]
fn an_empty_month_is_reported_empty_in_many_languages() {
    let (store, r) = year_of_work();
    let at = t("2026-11-29T10:00:00Z");
    for q in [
        "What did we cover in May?",
        "¿Qué estudiamos en junio?",
        "Was haben wir im Juni gelernt?",
        "Cosa abbiamo fatto a giugno?",
        "Apa yang kita pelajari pada bulan Juni?",
        "ماذا درسنا في يونيو؟",
    ] {
        let res = ask(&*store, &r, q, at);
        let w = res
            .window
            .as_ref()
            .unwrap_or_else(|| panic!("{q}: no window"));
        assert!(w.empty, "{q}: {w:?}");
        assert!(
            res.ranked.is_empty(),
            "{q}: nothing from outside the window may stand in for it"
        );
    }
}

#[test]
fn a_topic_inside_a_month_is_gated_within_the_month() {
    let (store, r) = year_of_work();
    let res = ask(
        &*store,
        &r,
        "What did we say about osmosis in April?",
        t("2026-11-29T10:00:00Z"),
    );
    assert_eq!(res.basis, "matched");
    let mut got = ids(&res);
    got.sort();
    assert_eq!(got, ["m4", "m4-a"]);
}

#[test]
fn no_question_means_recency() {
    let (store, r) = year_of_work();
    let res = ask(&*store, &r, "", t("2026-11-29T10:00:00Z"));
    assert_eq!(res.basis, "no_question");
    assert_eq!(ids(&res)[0], "narration", "the newest first");
}

/// A stand-in for another model: same vectors as the hashing embedder, another name.
struct Renamed(HashEmbedder);
impl tm_embed::Embedder for Renamed {
    fn name(&self) -> &str {
        "another-model"
    }
    fn dim(&self) -> usize {
        tm_embed::Embedder::dim(&self.0)
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        self.0.embed(texts)
    }
}

#[test]
fn a_model_change_is_detected_and_reembedding_rebuilds_every_vector() {
    let (mut store, _) = year_of_work();
    let subject = tm_store::require_subject(&*store, &key()).unwrap();
    let total = store.episode_count(&subject).unwrap() as usize;
    assert_eq!(
        store.vector_models(&subject).unwrap(),
        [("hash-v1-384".to_string(), total as u64)]
    );
    let other = Recaller::new(Arc::new(Renamed(HashEmbedder::new())));
    assert_eq!(
        store
            .episodes_missing_vectors(&subject, "another-model", usize::MAX)
            .unwrap()
            .len(),
        total
    );
    assert_eq!(
        other
            .embed_missing(&mut *store, &subject, &mut |_, _| {})
            .unwrap(),
        total
    );
    assert_eq!(
        store.vector_models(&subject).unwrap(),
        [("another-model".to_string(), total as u64)]
    );
    assert_eq!(
        other
            .embed_missing(&mut *store, &subject, &mut |_, _| {})
            .unwrap(),
        0,
        "nothing left to do"
    );
}

/// Another model that stops answering after `works_for` texts (an outage, or
/// a kill: every 512 episodes commit on their own either way).
struct FailsAfter {
    works_for: usize,
    done: std::sync::atomic::AtomicUsize,
}
impl tm_embed::Embedder for FailsAfter {
    fn name(&self) -> &str {
        "another-model"
    }
    fn dim(&self) -> usize {
        tm_embed::Embedder::dim(&HashEmbedder::new())
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        let before = self
            .done
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        if before + texts.len() > self.works_for {
            return Err(tm_embed::Error::Inference("the model went away".into()));
        }
        HashEmbedder::new().embed(texts)
    }
}

/// A reembed stopped midway keeps every batch it committed; the next run
/// embeds only the rest, and then every episode has a vector of the new model
/// and none of the old.
#[test]
fn a_reembed_stopped_midway_resumes_where_it_stopped() {
    let base = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
    let events: Vec<String> = (0..1300)
        .map(|i| {
            let at = base + Duration::minutes(i);
            learner(
                &format!("q{i}"),
                at,
                &format!("Question {i} about the cell"),
            )
        })
        .collect();
    let (mut store, _) = subject_with(&events);
    let subject = tm_store::require_subject(&*store, &key()).unwrap();
    let stopping = Recaller::new(Arc::new(FailsAfter {
        works_for: 600,
        done: Default::default(),
    }));
    let mut seen = Vec::new();
    let err = stopping
        .embed_missing(&mut *store, &subject, &mut |done, total| {
            seen.push((done, total))
        })
        .unwrap_err();
    assert!(err.to_string().contains("the model went away"), "{err}");
    assert_eq!(
        seen.last(),
        Some(&(576, 1300)),
        "progress up to the failure"
    );
    // The first 512 were committed as one batch; the next batch was not.
    assert_eq!(
        store.vector_models(&subject).unwrap(),
        [
            ("another-model".to_string(), 512),
            ("hash-v1-384".to_string(), 788)
        ]
    );
    let working = Recaller::new(Arc::new(Renamed(HashEmbedder::new())));
    let err = working.verify_vectors(&*store, &subject).unwrap_err();
    assert!(
        err.to_string()
            .contains("788 episodes of ana/cells still have no vector from another-model"),
        "{err}"
    );
    assert_eq!(
        working
            .embed_missing(&mut *store, &subject, &mut |_, _| {})
            .unwrap(),
        788,
        "only what the stopped run had not committed"
    );
    assert_eq!(
        store.vector_models(&subject).unwrap(),
        [("another-model".to_string(), 1300)]
    );
    assert_eq!(
        store
            .count_missing_vectors(&subject, "another-model")
            .unwrap(),
        0
    );
    assert_eq!(
        working.verify_vectors(&*store, &subject).unwrap(),
        (1300, 3),
        "every vector is the model's; the oldest, middle and newest embedded again alike"
    );
    // A vector stored under the model's name that is not what the model
    // gives for its episode's text (the newest's, here) fails the check.
    let oldest = store
        .episodes_missing_vectors(&subject, "nobody", 1)
        .unwrap();
    let newest = 1299;
    let (newest_id, _) = store
        .episodes_missing_vectors(&subject, "nobody", 1300)
        .unwrap()
        .swap_remove(newest);
    let wrong = tm_embed::Embedder::embed(&HashEmbedder::new(), &[&oldest[0].1]).unwrap();
    tm_store::StoreExt::write(&mut *store, |tx| {
        tx.put_vectors(&subject, "another-model", &[(newest_id, wrong[0].clone())])
    })
    .unwrap();
    let err = working.verify_vectors(&*store, &subject).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "the stored vector of episode {newest_id} of ana/cells"
        )),
        "{err}"
    );
}

/// An exchange at `at`, then later, unrelated work its neighbours must not
/// be confused with (a question a day for 20 days, ids `n0`…), imported and
/// asked `question` on 1 June 2026.
fn exchange_then_other_days(
    mut events: Vec<String>,
    at: DateTime<Utc>,
    question: &str,
) -> RecallResult {
    for i in 0..20 {
        events.push(learner(
            &format!("n{i}"),
            at + Duration::days(1 + i),
            &format!("Could we practise fractions, part {i}?"),
        ));
    }
    let (store, r) = subject_with(&events);
    ask(&*store, &r, question, t("2026-06-01T10:00:00Z"))
}

/// Issue 43: through the store, an episode longer than a block line is read
/// as long and borrows nothing from its sitting, while the short turn beside
/// it, in the same exchange, still borrows.
#[test]
fn a_paragraph_borrows_nothing_from_its_sitting_and_a_short_reply_still_does() {
    let at = t("2026-05-04T09:00:00Z");
    let paragraph = format!(
        "Osmosis moves water across the membrane toward the saltier side. {}",
        "The membrane lets water through and holds the salt back, so osmosis evens them out. "
            .repeat(6)
    );
    assert!(tm_model::block::longer_than_a_line(&paragraph));
    let events = vec![
        learner(
            "ask",
            at,
            "Why does osmosis move water across the membrane?",
        ),
        tutor("paragraph", at + Duration::seconds(30), &paragraph),
        learner(
            "reply",
            at + Duration::seconds(60),
            "So osmosis evens out the membrane?",
        ),
    ];
    let res = exchange_then_other_days(
        events,
        at,
        "What did we say about osmosis and the membrane?",
    );
    let signals = |id: &str| {
        res.ranked
            .iter()
            .find(|m| m.episode.external_id.as_deref() == Some(id))
            .map(|m| m.signals.clone())
            .unwrap_or_else(|| panic!("{id} not recalled: {:?}", ids(&res)))
    };
    let (p, r) = (signals("paragraph"), signals("reply"));
    assert!(p.matched && r.matched, "{p:?} {r:?}");
    assert_eq!(p.context, 0.0, "{p:?}");
    assert!(r.context > 0.0, "{r:?}");
}

#[test]
fn inside_a_window_a_strong_match_brings_no_narration_as_its_turn_before() {
    let at = t("2026-05-04T09:00:00Z");
    let events = vec![
        // The tutor telling of an earlier month: never evidence of May.
        tutor(
            "narration",
            at,
            "In April we covered respiration, so this should feel familiar.",
        ),
        learner(
            "reply",
            at + Duration::seconds(30),
            "ATP, mostly through respiration.",
        ),
    ];
    let res = exchange_then_other_days(events, at, "What did I answer about ATP in May?");
    let got = ids(&res);
    assert_eq!(got.first().map(String::as_str), Some("reply"), "{got:?}");
    assert!(res.ranked[0].signals.relevance >= tm_brain::recall::NEIGHBOUR_RELEVANCE);
    assert!(!got.iter().any(|g| g == "narration"), "{got:?}");
}

#[test]
fn a_strong_match_brings_the_turn_that_answers_it_in_the_same_sitting() {
    let at = t("2026-05-04T09:00:00Z");
    let events = vec![
        tutor(
            "check",
            at,
            "Quick check: what does the mitochondrion produce?",
        ),
        learner(
            "reply",
            at + Duration::seconds(40),
            "Energy for the cell, as adenosine triphosphate.",
        ),
    ];
    let res = exchange_then_other_days(events, at, "What did you ask me about the mitochondrion?");
    let got = ids(&res);
    assert_eq!(got[..2], ["check", "reply"], "{got:?}");
    let (check, reply) = (&res.ranked[0], &res.ranked[1]);
    assert!(check.signals.matched && check.signals.neighbour_of.is_none());
    assert!(!reply.signals.matched);
    assert_eq!(reply.signals.neighbour_of, Some(check.episode.id));
    // The next day's first turn is another sitting: not the check's context.
    assert!(!got.iter().any(|g| g.starts_with('n')), "{got:?}");
}

#[test]
fn a_strong_match_brings_the_turn_it_replies_to() {
    let at = t("2026-05-04T09:00:00Z");
    let events = vec![
        tutor(
            "check",
            at,
            "Quick check: what does the organelle with folds produce?",
        ),
        learner(
            "reply",
            at + Duration::seconds(30),
            "ATP, mostly through respiration.",
        ),
    ];
    let res = exchange_then_other_days(events, at, "What did I answer about ATP?");
    assert_eq!(res.basis, "matched");
    let got = ids(&res);
    assert_eq!(got[..2], ["reply", "check"], "{got:?}");
    let reply = &res.ranked[0];
    let check = &res.ranked[1];
    assert!(reply.signals.matched && reply.signals.neighbour_of.is_none());
    // The check question matched nothing: it is there as the reply's context, and says so.
    assert!(!check.signals.matched);
    assert_eq!(check.signals.neighbour_of, Some(reply.episode.id));
    assert!(!got.iter().any(|g| g.starts_with('n')), "{got:?}");
}
