//! One query embedding serves routing and recall (docs/mechanisms.md §1): a paraphrase that
//! names no concept still reaches the concept's episodes through the
//! question's vector, and the question is embedded exactly once per block.

use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tm_brain::Brain;
use tm_embed::Embedder;

const QUESTION: &str = "How do green plants turn sunlight into their food?";

/// Maps chosen texts to chosen vectors (everything else to one unrelated
/// direction) and counts how often each text is embedded.
#[derive(Default)]
struct Scripted {
    calls: Mutex<HashMap<String, usize>>,
}

impl Scripted {
    fn calls(&self, text: &str) -> usize {
        self.calls.lock().unwrap().get(text).copied().unwrap_or(0)
    }
}

impl Embedder for Scripted {
    fn name(&self) -> &str {
        "scripted-4"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        let mut calls = self.calls.lock().unwrap();
        Ok(texts
            .iter()
            .map(|t| {
                *calls.entry(t.to_string()).or_default() += 1;
                match *t {
                    "Photosynthesis" => vec![1.0, 0.0, 0.0, 0.0],
                    "Osmosis" => vec![0.0, 1.0, 0.0, 0.0],
                    // Close to photosynthesis (cosine ≈ 0.99), far from osmosis.
                    QUESTION => vec![0.99, 0.14, 0.0, 0.0],
                    _ => vec![0.0, 0.0, 0.0, 1.0],
                }
            })
            .collect())
    }
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn history() -> String {
    let lines = [
        serde_json::json!({"type":"subject","learner":"ana","subject":"plants","title":"Plants"}),
        serde_json::json!({"type":"file","at":"2026-03-02T09:00:00Z","name":"notes.md",
            "content":"# Plant notes\n\n## Photosynthesis\n\n**Photosynthesis** is the process by which chloroplasts make glucose.\n\n## Osmosis\n\n**Osmosis** is the movement of water across a membrane.\n"}),
        serde_json::json!({"id":"a1","type":"tutor","at":"2026-03-03T09:00:00Z",
            "text":"Photosynthesis happens inside chloroplasts and releases oxygen."}),
        serde_json::json!({"id":"q1","type":"learner","at":"2026-03-04T09:00:00Z",
            "text":"Is osmosis faster in warm water?"}),
    ];
    lines.map(|l| l.to_string()).join("\n")
}

#[test]
fn a_paraphrase_routes_by_its_vector_and_the_question_is_embedded_once_per_block() {
    let dir = tempfile::tempdir().unwrap();
    let db = tm_store::postgres::cluster::location(dir.path().join("r.db"));
    let embedder = Arc::new(Scripted::default());
    let mut brain = Brain::open(db.as_str(), embedder.clone()).unwrap();
    // Not a test of the cap: a loaded machine must not drop the block.
    brain.set_cap(std::time::Duration::from_secs(120));
    // Recorded and embedded in one go.
    brain
        .import_bytes("h.jsonl", history().as_bytes(), None, &mut |_, _, _| {})
        .unwrap();
    assert_eq!(embedder.calls(QUESTION), 0);

    // Recall directly: the route and why the answer was chosen.
    let subject = brain.subject("ana/plants").unwrap();
    let r = brain
        .recall(
            &subject,
            &tm_brain::recall::RecallQuery {
                question: QUESTION,
                at: at("2026-04-01T10:00:00Z"),
                tz: chrono_tz::UTC,
                limit: 10,
                exclude: None,
            },
        )
        .unwrap();
    assert_eq!(r.routed_by_vector, vec!["photosynthesis"]);
    assert_eq!(r.routed, vec!["photosynthesis"], "no concept is named");
    assert_eq!(r.basis, "matched");
    let ids: Vec<_> = r
        .ranked
        .iter()
        .filter_map(|m| m.episode.external_id.as_deref())
        .collect();
    assert!(ids.contains(&"a1"), "{ids:?}");
    assert!(!ids.contains(&"q1"), "osmosis is not routed: {ids:?}");
    assert_eq!(embedder.calls(QUESTION), 1);

    // Through the brain: one embedding of the question per block, the
    // concept names once per map snapshot.
    let names_before = embedder.calls("Photosynthesis");
    for n in 1..=2 {
        let b = brain
            .block(
                &subject,
                brain.block_request(&subject, QUESTION, at("2026-04-01T10:00:00Z"), None),
            )
            .unwrap();
        assert!(!b.dropped);
        assert!(
            b.recalled
                .iter()
                .any(|x| x.external_id.as_deref() == Some("a1")),
            "{:?}",
            b.recalled
        );
        assert_eq!(embedder.calls(QUESTION), 1 + n, "block {n}");
    }
    assert_eq!(embedder.calls("Photosynthesis"), names_before);
    assert_eq!(names_before, 1, "embedded once for the snapshot");
}
