use chrono::{DateTime, TimeZone, Utc};

use super::*;

fn t(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 10, 0, 0)
        .single()
        .expect("date")
}

fn passage(line: u32, text: &str) -> Passage {
    Passage {
        file: "cells.md".into(),
        version_id: 7,
        page: 2,
        line,
        text: text.into(),
    }
}

fn turn() -> DateTime<Utc> {
    t(2026, 11, 20)
}

#[test]
fn questions_and_courtesy_are_not_claims() {
    let answer = "Great question, Ana! The cell membrane controls what enters the cell.\n\
                  - Ribosomes build proteins from amino acids.\n\
                  Does that make sense? ¿Lo ves claro ahora? Happy to help.";
    assert_eq!(
        claims(answer),
        vec![
            "The cell membrane controls what enters the cell.",
            "Ribosomes build proteins from amino acids."
        ]
    );
}

#[test]
fn each_claim_is_traced_to_a_file_line_or_a_dated_memory() {
    let passages = [
        passage(
            3,
            "The cell membrane is a thin barrier that controls what enters and leaves the cell.",
        ),
        passage(9, "Ribosomes build proteins from amino acids."),
    ];
    let memories = [Memory {
        id: 41,
        at: t(2026, 7, 12),
        text: "Osmosis moves water through a membrane towards the saltier side.".into(),
    }];
    let answer = "The cell membrane controls what enters the cell. \
                  In July we saw that osmosis moves water towards the saltier side. \
                  Mitochondria release energy from glucose.";
    let g = ground(answer, &passages, &memories, turn(), chrono_tz::UTC);
    let labels: Vec<Option<String>> = g
        .traces
        .iter()
        .map(|t| t.source.as_ref().map(Source::label))
        .collect();
    assert_eq!(
        labels,
        vec![
            Some("cells.md p. 2 line 3".to_string()),
            Some("memory of 12 Jul".to_string()),
            None,
        ]
    );
    assert_eq!(g.stance, Stance::Partial);
    assert_eq!(g.traced(), 2);
}

#[test]
fn a_memory_from_another_year_carries_its_year_in_the_learners_zone() {
    // 31 Dec 2025 23:30 UTC is already 1 Jan 2026 in Berlin: the turn's year.
    let memories = [Memory {
        id: 1,
        at: Utc
            .with_ymd_and_hms(2025, 12, 31, 23, 30, 0)
            .single()
            .unwrap(),
        text: "Diffusion spreads particles from high to low concentration.".into(),
    }];
    let answer = "Diffusion spreads particles from high to low concentration.";
    let berlin = ground(answer, &[], &memories, turn(), chrono_tz::Europe::Berlin);
    assert_eq!(
        berlin.traces[0]
            .source
            .as_ref()
            .map(Source::label)
            .as_deref(),
        Some("memory of 1 Jan")
    );
    let utc = ground(answer, &[], &memories, turn(), chrono_tz::UTC);
    assert_eq!(
        utc.traces[0].source.as_ref().map(Source::label).as_deref(),
        Some("memory of 31 Dec 2025")
    );
    assert_eq!(utc.stance, Stance::Answered);
}

#[test]
fn one_shared_word_is_not_a_trace() {
    let passages = [passage(1, "The nucleus stores the cell's DNA.")];
    let g = ground(
        "Plant cells have a rigid wall made of cellulose.",
        &passages,
        &[],
        turn(),
        chrono_tz::UTC,
    );
    assert_eq!(g.traces.len(), 1);
    assert!(g.traces[0].source.is_none());
    assert_eq!(g.stance, Stance::Couldnt);
}

#[test]
fn saying_it_cannot_answer_is_couldnt_in_every_language() {
    let passages = [passage(1, "The nucleus stores the cell's DNA.")];
    for answer in [
        "I couldn't find that in your files. The nucleus stores the cell's DNA.",
        "No puedo responder con tus apuntes. The nucleus stores the cell's DNA.",
        "Ich kann diese Frage nicht beantworten.",
        "Non posso rispondere a questa domanda.",
        "Saya tidak bisa menjawab pertanyaan ini.",
        "Je ne peux pas répondre à cette question.",
        "Não consigo responder a isso.",
        "لا أستطيع الإجابة عن هذا السؤال.",
    ] {
        let g = ground(answer, &passages, &[], turn(), chrono_tz::UTC);
        assert!(g.says_cannot, "{answer}");
        assert_eq!(g.stance, Stance::Couldnt, "{answer}");
    }
    let fine = ground(
        "The nucleus stores the cell's DNA.",
        &passages,
        &[],
        turn(),
        chrono_tz::UTC,
    );
    assert!(!fine.says_cannot);
    assert_eq!(fine.stance, Stance::Answered);
}

#[test]
fn an_answer_with_no_claim_could_not_answer() {
    let g = ground(
        "Hello! What would you like to study?",
        &[],
        &[],
        turn(),
        chrono_tz::UTC,
    );
    assert!(g.traces.is_empty());
    assert_eq!(g.stance, Stance::Couldnt);
}

#[test]
fn a_narrating_claim_prefers_the_memory_on_a_tie() {
    let text = "Osmosis moves water across the membrane.";
    let passages = [passage(5, text)];
    let memories = [Memory {
        id: 9,
        at: t(2026, 7, 12),
        text: text.into(),
    }];
    let narrated = ground(
        "In July we covered that osmosis moves water across the membrane.",
        &passages,
        &memories,
        turn(),
        chrono_tz::UTC,
    );
    let plain = ground(text, &passages, &memories, turn(), chrono_tz::UTC);
    assert!(matches!(
        narrated.traces[0].source,
        Some(Source::Memory { id: 9, .. })
    ));
    assert!(matches!(
        plain.traces[0].source,
        Some(Source::File { line: 5, .. })
    ));
}

#[test]
fn grounding_round_trips_as_json() {
    let g = ground(
        "The nucleus stores the cell's DNA.",
        &[passage(1, "The nucleus stores the cell's DNA.")],
        &[],
        turn(),
        chrono_tz::UTC,
    );
    let json = serde_json::to_value(&g).unwrap();
    assert_eq!(json["stance"], "answered");
    assert_eq!(json["traces"][0]["source"]["type"], "file");
    let back: Grounding = serde_json::from_value(json).unwrap();
    assert_eq!(back, g);
}
