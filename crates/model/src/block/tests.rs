use chrono::{TimeZone, Utc};
use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;

fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).single().unwrap()
}

fn ep(id: i64, when: DateTime<Utc>, kind: &str, text: &str) -> EpisodeLine {
    EpisodeLine {
        at: when,
        kind: kind.into(),
        text: text.into(),
        count: 1,
        changed_citation: false,
        external_id: Some(format!("e{id}")),
        id,
    }
}

fn belief(text: &str, confidence: f64) -> BeliefLine {
    BeliefLine {
        text: text.into(),
        confidence,
    }
}

fn map() -> MapSection {
    MapSection {
        concept_count: 16,
        explained_pct: 79,
        lines: vec![
            "- Cell: the basic unit of life".into(),
            "- Cytoplasm: the fluid inside the cell membrane (builds on: Cell)".into(),
            "- Mitochondria: organelles that release energy [taught: the powerhouse of the cell] (builds on: Cytoplasm)".into(),
        ],
    }
}

/// A record-or-ordinary input for `question`, the mode chosen by the cues.
fn input(question: &str, has_window: bool) -> BlockInput {
    let mode = if is_record_question(question, has_window) {
        Mode::Record
    } else {
        Mode::Ordinary
    };
    BlockInput {
        mode,
        at: at(2026, 11, 29, 16),
        beliefs: vec![
            belief("understands cytoplasm", 0.72),
            belief("understands eukaryotic cells", 0.72),
        ],
        episodes: vec![
            ep(
                4,
                at(2026, 9, 18, 9),
                "check",
                "Check on cytoplasm: right",
            ),
            ep(
                1,
                at(2026, 7, 12, 9),
                "question",
                "Can we go over Eukaryotic Cells today? I keep mixing it up.",
            ),
            ep(
                2,
                at(2026, 7, 12, 9),
                "answer",
                "Of course. Eukaryotic Cells: Eukaryotic cells contain a nucleus and organelles.",
            ),
            ep(
                3,
                at(2026, 9, 18, 8),
                "taught",
                "Taught: in our class we call the mitochondria the powerhouse of the cell",
            ),
        ],
        map: Some(map()),
        window: None,
        honest_checks: None,
        how_to_use: String::new(),
        tz: chrono_tz::Europe::Madrid,
    }
}

fn check(input: &BlockInput, budget: usize, expected: Expect) {
    let r = render(input, budget);
    assert!(r.tokens <= budget);
    assert_eq!(r.tokens, count_tokens(&r.text));
    expected.assert_eq(&format!(
        "{}\n-- tokens {} · ids {:?} · dropped {}",
        r.text, r.tokens, r.included_episode_ids, r.dropped_lines
    ));
}

#[test]
fn smoke() {
    let r = render(&input("What is the cytoplasm?", false), 1200);
    println!("{}", r.text);
}
