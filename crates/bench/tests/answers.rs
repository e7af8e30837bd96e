//! The conversation benchmarks' answer level end to end, against a stand-in
//! chat endpoint that answers with the prompt it was given: such a model is
//! right exactly when a method's context holds the reference answer, so the
//! figures can be checked against the contexts themselves.

use chrono::{DateTime, Duration, Utc};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tm_bench::chat::Chat;
use tm_bench::locomo::{self, Answering, Conversation, LOCOMO, Qa, Turn};
use tm_ingest::extract::LlmConfig;

/// An OpenAI-compatible endpoint whose answer is the system message it was
/// sent (checking that the answer's cap was sent too).
fn echo_model() -> (String, Arc<AtomicUsize>) {
    tm_ingest::stand_in::chat_endpoint(|body| {
        assert!(body["max_tokens"].is_u64(), "the cap is sent: {body}");
        body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    })
}

/// A conversation of 40 turns; turn 7 says where Ana's sister lives, the
/// rest is small talk.
fn conversation() -> Conversation {
    let start: DateTime<Utc> = "2023-05-01T10:00:00Z".parse().unwrap();
    let turns = (0..40)
        .map(|i| Turn {
            speaker: if i % 2 == 0 { "Ana" } else { "Ben" }.into(),
            dia_id: format!("D1:{i}"),
            text: if i == 7 {
                "My sister moved to Valparaiso last spring, she loves the harbour.".into()
            } else {
                format!("Small talk number {i} about the weather and lunch.")
            },
            at: start + Duration::minutes(i),
        })
        .collect();
    let qa = |q: &str, a: &str, e: &[&str], category| Qa {
        question: q.into(),
        answer: a.into(),
        evidence: e.iter().map(|s| s.to_string()).collect(),
        category,
        asked_at: None,
    };
    Conversation {
        dataset: "locomo",
        sample_id: "conv-echo".into(),
        speaker_a: "Ana".into(),
        turns,
        qa: vec![
            qa(
                "Where did Ana's sister move to?",
                "Valparaiso",
                &["D1:7"],
                4,
            ),
            // Its reference is nowhere in the conversation: never held.
            qa("What is Ben's dog called?", "Biscuit", &["D1:8"], 1),
            // Adversarial (reported apart): never asked, even with an answer.
            qa(
                "Where did Ben's sister move to?",
                "Valparaiso",
                &["D1:7"],
                5,
            ),
            qa(
                "Where does Ana's sister live now?",
                "Valparaiso",
                &["D1:7"],
                4,
            ),
        ],
    }
}

#[test]
fn an_echoing_model_is_right_exactly_when_the_context_holds_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let brain = tm_bench::programs::brain(
        dir.path().join("a.db").to_str().unwrap(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    let convs = vec![conversation()];
    let subjects = locomo::import(&brain, &convs, &mut |_, _| {}).unwrap();
    let (url, asked) = echo_model();
    let mut config = LlmConfig::new(url, "echo");
    config.max_tokens = Some(64);
    let chat = Chat::new(config)
        .unwrap()
        .with_cache(dir.path().join("answers"))
        .unwrap();
    // Two of the three questions with a reference: the categories in turn.
    let chosen = locomo::choose(&convs, &LOCOMO, 2);
    assert_eq!(chosen.len(), 2);
    assert!(
        chosen.contains(&(0, 0)) && chosen.contains(&(0, 1)),
        "{chosen:?}"
    );
    let answering = Answering {
        chat: &chat,
        questions: &chosen,
    };
    let run = |answering: Option<&Answering<'_>>| {
        locomo::run(
            &brain,
            &convs,
            &subjects,
            &[300],
            &LOCOMO,
            answering,
            &mut |_, _| {},
        )
        .unwrap()
    };
    let reports = run(Some(&answering));
    let answers = reports[0].answers.as_ref().expect("an answer level");
    // Two questions × two methods, each asked once.
    assert_eq!(asked.load(Ordering::SeqCst), 4);
    for method in tm_bench::answers::METHODS {
        let per = &answers[method];
        assert_eq!(per[&4], (1.0, 1), "{method}: Valparaiso is in its context");
        assert_eq!(per[&1], (0.0, 1), "{method}: Biscuit is said nowhere");
        assert!(!per.contains_key(&5));
    }
    assert_eq!(reports[0].answer_model.as_deref(), Some("echo"));
    // Every answer is in the report with its reference and grade.
    let log = &reports[0].answered;
    assert_eq!(log.len(), 4);
    for a in log {
        assert_eq!(a.held, a.reference == "Valparaiso", "{a:?}");
        assert!(a.answer.starts_with(tm_bench::answers::SYSTEM));
    }
    let table = locomo::markdown(&reports[0]);
    assert!(
        table.contains("answers holding the reference answer (echo, normalised containment)"),
        "{table}"
    );
    // A rerun asks the model nothing.
    run(Some(&answering));
    assert_eq!(asked.load(Ordering::SeqCst), 4);
    // Without an answer level, no model is asked and no table is printed.
    let plain = run(None);
    assert!(plain[0].answers.is_none());
    assert!(!locomo::markdown(&plain[0]).contains("reference answer"));
}

#[test]
fn only_references_that_are_answers_are_graded() {
    let qa = |category, answer: &str| Qa {
        question: "q".into(),
        answer: answer.into(),
        evidence: Vec::new(),
        category,
        asked_at: None,
    };
    let conv = |dataset, id: &str, qa| Conversation {
        dataset,
        sample_id: id.into(),
        speaker_a: "A".into(),
        turns: Vec::new(),
        qa: vec![qa],
    };
    let locomo = LOCOMO;
    let lme = tm_bench::longmemeval::CATEGORIES;
    let c = conv("locomo", "c1", qa(4, "Paris"));
    assert!(locomo::gradable(&c, &c.qa[0], &locomo));
    let c = conv("locomo", "c1", qa(5, "Paris"));
    assert!(!locomo::gradable(&c, &c.qa[0], &locomo), "adversarial");
    let c = conv("locomo", "c1", qa(4, " . "));
    assert!(!locomo::gradable(&c, &c.qa[0], &locomo), "no words");
    let c = conv("longmemeval", "e47becba", qa(1, "Business Administration"));
    assert!(locomo::gradable(&c, &c.qa[0], &lme));
    let c = conv("longmemeval", "p1", qa(3, "The user would prefer …"));
    assert!(!locomo::gradable(&c, &c.qa[0], &lme), "a preference rubric");
    let c = conv("longmemeval", "x_abs", qa(1, "You did not mention this"));
    assert!(!locomo::gradable(&c, &c.qa[0], &lme), "an abstention");
}
