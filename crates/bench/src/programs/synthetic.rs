//! Synthetic subjects for the latency benchmarks: `n` questions and answers
//! over two years, written straight into the store (benchmark data, made in
//! seconds), with each distinct text embedded once and its vector stored
//! beside every episode that has it: the vectors the record path would have
//! made, without embedding 100,000 texts that repeat.

use crate::rng::Rng;
use anyhow::{Context, Result};
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::collections::HashMap;
use tm_embed::Embedder;
use tm_model::episodes::{Kind, NewEpisode, salience};
use tm_model::subject::{Subject, SubjectKey};
use tm_store::{Store, StoreExt};

pub const TOPICS: &[&str] = &[
    "osmosis",
    "diffusion",
    "the cell membrane",
    "mitochondria",
    "the nucleus",
    "ribosomes",
    "cytoplasm",
    "active transport",
    "ATP",
    "photosynthesis",
    "chloroplasts",
    "the Golgi apparatus",
    "lysosomes",
    "the endoplasmic reticulum",
    "eukaryotic cells",
    "prokaryotic cells",
    "DNA replication",
    "mitosis",
    "meiosis",
    "enzymes",
    "proteins",
    "amino acids",
    "glucose",
    "cellular respiration",
    "the cell wall",
    "vacuoles",
    "the cytoskeleton",
    "vesicles",
    "endocytosis",
    "exocytosis",
    "concentration gradients",
    "tonicity",
    "hypertonic solutions",
    "hypotonic solutions",
    "linear equations",
    "slope",
    "the y-intercept",
    "inequalities",
    "fractions",
    "percentages",
    "ratios",
    "functions",
    "the distributive property",
    "like terms",
    "absolute value",
    "graphing lines",
    "parallel lines",
    "perpendicular lines",
    "systems of equations",
    "exponents",
];
const PHRASINGS: &[&str] = &[
    "Can we go over {t} today?",
    "I still don't understand {t}.",
    "What is the difference between {t} and {u}?",
    "Why does {t} matter for {u}?",
    "Could you give me an example of {t}?",
    "I keep mixing up {t} with {u}.",
    "Explain {t} again please, slowly.",
    "Is {t} on the exam?",
    "How does {t} work step by step?",
    "What should I review before {t}?",
];
const ANSWERS: &[&str] = &[
    "Of course. {T} is easiest to see next to {u}: start with what each one does.",
    "Think of {t} as a process; {u} is what it acts on.",
    "Here is an example of {t}, and how it differs from {u}.",
];
/// The questions the latency benchmarks ask, in several languages.
pub const QUESTIONS: &[&str] = &[
    "How does osmosis work again?",
    "What is the difference between mitochondria and ribosomes?",
    "What did we cover in July?",
    "What have I got wrong so far?",
    "Can you remind me what we said about slope?",
    "¿Qué vimos sobre la ósmosis?",
    "Was haben wir im März gemacht?",
    "Explain active transport and ATP",
    "ماذا درسنا في يوليو؟",
    "What is a cell?",
];

fn fill(template: &str, t: &str, u: &str) -> String {
    let cap: String = t
        .chars()
        .take(1)
        .flat_map(char::to_uppercase)
        .chain(t.chars().skip(1))
        .collect();
    template
        .replace("{T}", &cap)
        .replace("{t}", t)
        .replace("{u}", u)
}

/// Vectors of texts seen before, kept across subject sizes.
pub type VectorCache = HashMap<String, Vec<f32>>;

/// For each size in `sizes`: a synthetic subject of that many episodes in a
/// fresh database (a temporary SQLite file, or the scratch PostgreSQL
/// database `db` wiped), a brain over it with `embedder`, and the instant a day
/// after its end, handed to `measure` (the database lives as long as the call).
pub fn each_size(
    sizes: &[usize],
    db: Option<&str>,
    embedder: &std::sync::Arc<dyn Embedder>,
    mut measure: impl FnMut(usize, &tm_brain::Brain, &Subject, DateTime<Utc>) -> Result<()>,
) -> Result<()> {
    let mut cache = VectorCache::new();
    for &n in sizes {
        let scratch = super::Scratch::new(db, "bench.db")?;
        let (subject, at) = {
            let mut store = scratch.store()?;
            self::subject(&mut *store, n, &**embedder, &mut cache)?
        };
        scratch.settle()?;
        let brain = super::brain(&scratch.location, embedder.clone())?;
        measure(n, &brain, &subject, at)?;
    }
    Ok(())
}

/// Writes a subject of `n` episodes into `store` and its vectors (each
/// distinct text embedded once); returns it and the instant a day after its end.
pub fn subject(
    store: &mut dyn Store,
    n: usize,
    embedder: &dyn Embedder,
    cache: &mut VectorCache,
) -> Result<(Subject, DateTime<Utc>)> {
    subject_as(store, "bench/recall", n, embedder, cache)
}

/// [`subject`] under another key.
pub fn subject_as(
    store: &mut dyn Store,
    key: &str,
    n: usize,
    embedder: &dyn Embedder,
    cache: &mut VectorCache,
) -> Result<(Subject, DateTime<Utc>)> {
    let key = SubjectKey::parse(key)?;
    let start = Utc
        .with_ymd_and_hms(2025, 1, 1, 8, 0, 0)
        .single()
        .context("start")?;
    let span_secs = 700 * 86_400i64;
    let subject = store.write(|tx| {
        tx.ensure_subject(tm_store::Owner::Operator, &key, "bench", Some("en"), start)
    })?;
    let mut rng = Rng::new(42);
    let mut texts: Vec<(i64, String)> = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let end = (i + 10_000).min(n);
        let batch: Vec<NewEpisode> = (i..end)
            .map(|j| {
                let t = TOPICS[rng.below(TOPICS.len())];
                let u = TOPICS[rng.below(TOPICS.len())];
                let (kind, text) = match j % 3 {
                    0 | 1 => (
                        Kind::Question,
                        fill(PHRASINGS[rng.below(PHRASINGS.len())], t, u),
                    ),
                    _ => (Kind::Answer, fill(ANSWERS[rng.below(ANSWERS.len())], t, u)),
                };
                NewEpisode {
                    kind,
                    at: start + Duration::seconds(span_secs * j as i64 / n as i64),
                    salience: salience(kind, None),
                    summary: text.clone(),
                    text,
                    concepts: vec![t.to_string()],
                    evidence: vec![],
                    data: serde_json::Map::new(),
                    external_id: None,
                    import_key: None,
                    salt: None,
                }
            })
            .collect();
        let ids = store.write(|tx| {
            batch
                .iter()
                .map(|e| tx.append(&subject, e).map(|a| a.id))
                .collect::<tm_store::Result<Vec<_>>>()
        })?;
        texts.extend(ids.into_iter().zip(batch.into_iter().map(|e| e.text)));
        i = end;
    }
    let mut distinct: Vec<String> = texts
        .iter()
        .map(|(_, t)| t.clone())
        .filter(|t| !cache.contains_key(t))
        .collect();
    distinct.sort();
    distinct.dedup();
    for chunk in distinct.chunks(32) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for (t, v) in chunk.iter().zip(embedder.embed(&refs)?) {
            cache.insert(t.clone(), v);
        }
    }
    let vectors: Vec<(i64, Vec<f32>)> = texts
        .iter()
        .filter_map(|(id, t)| cache.get(t).map(|v| (*id, v.clone())))
        .collect();
    store.write(|tx| tx.put_vectors(&subject, embedder.name(), &vectors))?;
    Ok((subject, start + Duration::seconds(span_secs + 86_400)))
}
