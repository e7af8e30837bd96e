//! The graders on hand-made cases: each key of docs/formats.md "Question file" holds
//! and fails where it should, prerequisite direction included.

use chrono::{DateTime, TimeZone, Utc};
use tm_bench::grade::{Graded, Level, Recalled, grade, map_line_prerequisites};
use tm_bench::questions::{BuildsOn, Expect};

fn t(d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, d, 10, 0, 0).unwrap()
}

fn prompt<'a>(text: &'a str, recalled: &'a [Recalled]) -> Graded<'a> {
    Graded {
        level: Level::Prompt,
        text,
        recalled,
        window: None,
    }
}

const MAP: &str = "SUBJECT MAP (3 concepts; …):\n- Diffusion: particles spread out.\n- Osmosis: water crosses a membrane. (builds on: Diffusion, Concentration gradient)\n- Concentration gradient: a difference. (builds on: Diffusion)";

#[test]
fn strings_compare_under_unicode_case_folding() {
    let g = prompt("Die STRASSE und die Cytoplasm-Frage", &[]);
    let ok = Expect {
        all: vec!["straße".into(), "CYTOPLASM".into()],
        any: vec!["nope".into(), "frage".into()],
        none: vec!["osmosis".into()],
        ..Expect::default()
    };
    assert!(grade(&ok, &g).is_empty(), "{:?}", grade(&ok, &g));
    let bad = Expect {
        all: vec!["osmosis".into()],
        any: vec!["nope".into()],
        none: vec!["Straße".into()],
        ..Expect::default()
    };
    assert_eq!(grade(&bad, &g).len(), 3, "{:?}", grade(&bad, &g));
}

#[test]
fn episodes_count_what_a_recalled_line_stands_for() {
    let recalled = [Recalled {
        external_ids: vec!["e5".into(), "e9".into()],
        at: t(3),
    }];
    let g = prompt("", &recalled);
    let ok = Expect {
        episodes: vec!["e9".into()],
        not_episodes: vec!["e7".into()],
        ..Expect::default()
    };
    assert!(grade(&ok, &g).is_empty());
    let bad = Expect {
        episodes: vec!["e7".into()],
        not_episodes: vec!["e5".into()],
        ..Expect::default()
    };
    assert_eq!(grade(&bad, &g).len(), 2);
}

#[test]
fn builds_on_holds_in_the_right_direction_and_fails_reversed() {
    let g = prompt(MAP, &[]);
    let right = Expect {
        builds_on: Some(BuildsOn {
            concept: "osmosis".into(),
            prerequisites: vec!["Diffusion".into(), "concentration gradient".into()],
        }),
        ..Expect::default()
    };
    assert!(grade(&right, &g).is_empty(), "{:?}", grade(&right, &g));
    // Reversed: Diffusion does not build on Osmosis, although both lines exist.
    let reversed = Expect {
        builds_on: Some(BuildsOn {
            concept: "Diffusion".into(),
            prerequisites: vec!["Osmosis".into()],
        }),
        ..Expect::default()
    };
    assert!(!grade(&reversed, &g).is_empty());
    // A prerequisite named elsewhere in the prompt but not on the line fails too.
    let partial = Expect {
        builds_on: Some(BuildsOn {
            concept: "Concentration gradient".into(),
            prerequisites: vec!["Osmosis".into()],
        }),
        ..Expect::default()
    };
    assert!(!grade(&partial, &g).is_empty());
    assert_eq!(
        map_line_prerequisites(MAP, "Osmosis"),
        Some(vec![
            "Diffusion".to_string(),
            "Concentration gradient".to_string()
        ])
    );
    assert_eq!(map_line_prerequisites(MAP, "Diffusion"), None);
    // At answer level every prerequisite must simply occur.
    let answer = Graded {
        level: Level::Answer,
        text: "First review diffusion and the concentration gradient.",
        recalled: &[],
        window: None,
    };
    assert!(grade(&right, &answer).is_empty());
}

#[test]
fn no_record_needs_an_empty_window_the_words_and_nothing_from_inside() {
    let expect = Expect {
        no_record: true,
        ..Expect::default()
    };
    let may = (t(1), Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap());
    let text = "There is no record of any work with this student in May 2026.";
    let ok = Graded {
        level: Level::Prompt,
        text,
        recalled: &[],
        window: Some((may.0, may.1, true)),
    };
    assert!(grade(&expect, &ok).is_empty());
    // No window at all (the plain and window designs): fails.
    assert!(!grade(&expect, &prompt(text, &[])).is_empty());
    // A window that held something: fails.
    let full = Graded {
        window: Some((may.0, may.1, false)),
        ..ok.clone()
    };
    assert!(!grade(&expect, &full).is_empty());
    // An episode from inside the period recalled: fails.
    let inside = [Recalled {
        external_ids: vec!["e1".into()],
        at: t(12),
    }];
    let leaked = Graded {
        recalled: &inside,
        ..ok.clone()
    };
    assert!(!grade(&expect, &leaked).is_empty());
    // The sentence missing: fails.
    let silent = Graded {
        text: "We covered osmosis.",
        ..ok
    };
    assert!(!grade(&expect, &silent).is_empty());
}
