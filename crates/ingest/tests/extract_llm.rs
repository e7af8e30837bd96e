//! The generative extractor against a local stub of an OpenAI-compatible chat
//! endpoint: the stub checks what we send, answers with fixed JSON (invalid
//! once, then valid with a cycle and an invented page), and we check what we keep.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use tm_ingest::extract::{ConceptExtractor, LlmConfig, LlmExtractor};
use tm_model::map::{ConceptMap, teaching_order};

/// Serves `answers` in order, one per request, recording each request body;
/// a request past the last answer finds nothing listening.
fn stub(answers: Vec<String>) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let answers = Mutex::new(std::collections::VecDeque::from(answers));
    let (url, _) = tm_ingest::stand_in::chat_endpoint(move |body| {
        record.lock().unwrap().push(body.clone());
        answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("asked more often than the test answers")
    });
    (url, seen)
}

fn pages() -> Vec<String> {
    vec![
        "Diffusion is the movement of particles down a gradient.".into(),
        "Osmosis is the diffusion of water across a membrane. Review questions follow.".into(),
    ]
}

#[test]
fn invalid_output_is_retried_once_pages_are_never_invented_and_a_cycle_is_survivable() {
    let valid = serde_json::json!({"concepts": [
        {"name": "Osmosis", "gist": "Water diffuses across a membrane.", "definition": "diffusion of water",
         "builds_on": ["Diffusion"], "pages": [2, 7]},
        {"name": "Diffusion", "gist": "Particles spread out.", "definition": "movement down a gradient",
         "builds_on": ["Osmosis", "Thermodynamics"], "pages": [5]},
        {"name": "Review questions", "gist": "x", "pages": [2]}
    ]})
    .to_string();
    let (url, seen) = stub(vec![
        "Sure! Here are the concepts: osmosis, diffusion".into(),
        format!("```json\n{valid}\n```"),
    ]);
    let x = LlmExtractor::new(LlmConfig::new(url, "tutor-extractor")).unwrap();
    let concepts = x.extract("transport.md", &pages()).unwrap();

    let names: Vec<&str> = concepts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["Osmosis", "Diffusion"],
        "the section title is rejected"
    );
    assert_eq!(concepts[0].pages, [2], "page 7 does not exist");
    assert_eq!(
        concepts[1].pages,
        [1, 2],
        "page 5 does not exist: the pages where the name stands instead"
    );
    assert_eq!(
        concepts[1].builds_on,
        ["Osmosis"],
        "builds-on only from the file's own list"
    );

    // What we sent: the model, a system instruction, the file with page markers; then the retry naming the problem.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "exactly one retry");
    assert_eq!(seen[0]["model"], "tutor-extractor");
    let user = seen[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("File: transport.md") && user.contains("=== page 2 ==="),
        "{user}"
    );
    let retry = seen[1]["messages"][3]["content"].as_str().unwrap();
    assert!(retry.contains("could not be used"), "{retry}");

    // The model's cycle (osmosis ⇄ diffusion) is broken and reported, never a panic.
    let mut map = ConceptMap::new();
    map.merge_file(
        "transport.md",
        Some(1),
        &concepts,
        &|_, _| 0.0,
        f32::INFINITY,
    );
    let order = teaching_order(&map);
    assert_eq!(order.broken.len(), 1, "{order:?}");
    assert_eq!(order.layers.iter().map(Vec::len).sum::<usize>(), 2);
}

#[test]
fn two_invalid_answers_are_an_error_that_says_so() {
    let (url, _) = stub(vec!["not json".into(), "{\"concepts\": 3}".into()]);
    let x = LlmExtractor::new(LlmConfig::new(url, "m")).unwrap();
    let err = x.extract("a.md", &pages()).unwrap_err().to_string();
    assert!(err.contains("invalid twice"), "{err}");
}

/// A model's gist or definition passes the same whole-text validator as the
/// offline extractor's: one cut on a comma is marked, one too long is cut at
/// a clause, an empty definition falls back to the gist.
#[test]
fn model_definitions_pass_the_same_validator() {
    let long = format!(
        "Osmosis moves water across a membrane, {}and it never needs energy.",
        "from the dilute side toward the concentrated side, ".repeat(6)
    );
    let answer = serde_json::json!({"concepts": [
        {"name": "Osmosis", "gist": long, "definition": "diffusion of water across a membrane, such as the cell membrane,",
         "builds_on": [], "pages": [2]},
        {"name": "Diffusion", "gist": "Particles spread out.", "definition": "", "builds_on": [], "pages": [1]}
    ]})
    .to_string();
    let cs = tm_ingest::extract::validate_answer(&answer, &pages(), 40).unwrap();
    assert_eq!(
        cs[0].definition,
        "diffusion of water across a membrane, such as the cell membrane\u{2026}"
    );
    assert!(
        cs[0].gist.ends_with('\u{2026}')
            && long.starts_with(cs[0].gist.trim_end_matches('\u{2026}'))
    );
    assert_eq!(cs[1].definition, "Particles spread out.");
    for c in &cs {
        for t in [&c.gist, &c.definition] {
            assert_eq!(tm_model::map::validate_definition(t), Ok(()), "{t}");
        }
    }
}

/// A concept the file never names is the model's invention and is dropped;
/// an answer of nothing but such concepts is refused.
#[test]
fn a_concept_the_file_never_names_is_dropped_and_a_list_of_only_those_refused() {
    let answer = serde_json::json!({"concepts": [
        {"name": "Osmosis", "gist": "Water crosses a membrane.", "pages": [2]},
        {"name": "Photosynthesis", "gist": "Plants make sugar.", "pages": [1]}
    ]})
    .to_string();
    let cs = tm_ingest::extract::validate_answer(&answer, &pages(), 40).unwrap();
    assert_eq!(
        cs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Osmosis"]
    );
    let invented = serde_json::json!({"concepts": [
        {"name": "Photosynthesis", "gist": "Plants make sugar.", "pages": [1]},
        {"name": "Mitochondria", "gist": "They make ATP.", "pages": [2]}
    ]})
    .to_string();
    let err = tm_ingest::extract::validate_answer(&invented, &pages(), 40).unwrap_err();
    assert!(err.contains("none of its 2 concepts"), "{err}");
    // A file that explains nothing may get an empty list.
    let none = tm_ingest::extract::validate_answer("{\"concepts\": []}", &pages(), 40).unwrap();
    assert!(none.is_empty());
}

/// What the store asks: a list refused twice is replaced by the offline
/// extractor's, with a warning naming the file and the reason.
#[test]
fn a_list_refused_twice_falls_back_to_the_offline_extractor_with_a_warning() {
    use tm_ingest::extract::OfflineExtractor;
    let (url, _) = stub(vec!["not json".into(), "{\"concepts\": 3}".into()]);
    let x = LlmExtractor::new(LlmConfig::new(url, "m")).unwrap();
    let mut warnings = Vec::new();
    let got = x.extract_noting("a.md", &pages(), &mut warnings).unwrap();
    let offline = OfflineExtractor::default()
        .extract("a.md", &pages())
        .unwrap();
    assert_eq!(got, offline);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("a.md: the model's concept list was refused (")
            && warnings[0].contains("invalid twice")
            && warnings[0].contains("the offline extractor's"),
        "{}",
        warnings[0]
    );
    // A valid list comes through with no warning.
    let valid = serde_json::json!({"concepts": [
        {"name": "Osmosis", "gist": "Water crosses a membrane.", "pages": [2]}
    ]})
    .to_string();
    let (url, _) = stub(vec![valid]);
    let x = LlmExtractor::new(LlmConfig::new(url, "m")).unwrap();
    let mut warnings = Vec::new();
    let got = x.extract_noting("a.md", &pages(), &mut warnings).unwrap();
    assert_eq!(got.len(), 1);
    assert!(warnings.is_empty());
}

/// An endpoint that cannot be reached is an error even for the store: the
/// file is not mapped by another way while the model is down.
#[test]
fn an_unreachable_endpoint_is_still_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let mut config = LlmConfig::new(url, "m");
    config.retries = 0;
    let x = LlmExtractor::new(config).unwrap();
    let mut warnings = Vec::new();
    let err = x
        .extract_noting("a.md", &pages(), &mut warnings)
        .unwrap_err()
        .to_string();
    assert!(err.contains("request to"), "{err}");
    assert!(warnings.is_empty());
}

/// `max_tokens` is sent when configured, and only then.
#[test]
fn an_answers_length_cap_is_sent_when_set() {
    let valid = serde_json::json!({"concepts": []}).to_string();
    let (url, seen) = stub(vec![valid.clone(), valid]);
    let mut config = LlmConfig::new(url, "m");
    LlmExtractor::new(config.clone())
        .unwrap()
        .extract("a.md", &pages())
        .unwrap();
    config.max_tokens = Some(300);
    LlmExtractor::new(config)
        .unwrap()
        .extract("a.md", &pages())
        .unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen[0].get("max_tokens").is_none(), "{}", seen[0]);
    assert_eq!(seen[1]["max_tokens"], 300);
}
