//! The generator is deterministic and makes the histories the benchmark
//! needs; the questions come from recorded data only, before any design runs.

use std::collections::BTreeSet;
use tm_bench::generate::{DEFAULT_COUNT, DEFAULT_SEED, generate};
use tm_bench::questions::{self, Question};
use tm_bench::subjects::shipped;
use tm_brain::history::{History, parse};
use tm_model::events::EventBody;
use tm_model::map::ConceptMap;

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_does_not() {
    let a = generate(&shipped(), 12, 7).unwrap();
    let b = generate(&shipped(), 12, 7).unwrap();
    let c = generate(&shipped(), 12, 8).unwrap();
    assert_eq!(a.len(), 12);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.text.as_bytes(), y.text.as_bytes());
        assert_eq!(x.name, y.name);
    }
    assert!(a.iter().zip(&c).any(|(x, z)| x.text != z.text));
}

#[test]
fn the_shipped_histories_vary_in_size_and_language_and_hold_what_the_categories_need() {
    let hs = generate(&shipped(), DEFAULT_COUNT, DEFAULT_SEED).unwrap();
    assert!(hs.len() >= 45);
    let sizes: Vec<usize> = hs.iter().map(|h| h.events).collect();
    assert!(*sizes.iter().min().unwrap() <= 25, "{sizes:?}");
    assert!(*sizes.iter().max().unwrap() >= 1000, "{sizes:?}");
    let langs: BTreeSet<&str> = hs.iter().map(|h| h.language.as_str()).collect();
    assert_eq!(langs.len(), 6, "{langs:?}");
    let (mut asked, mut repeats, mut utterance_topics, mut teach, mut removed, mut replaced) =
        (0, 0, 0, 0, 0, 0);
    for h in &hs {
        let parsed = parse(&h.name, h.text.as_bytes()).unwrap();
        let mut seen = BTreeSet::new();
        let mut files = BTreeSet::new();
        for e in &parsed.events {
            match &e.body {
                EventBody::Learner { text } if tm_model::teaching::teaching(text).is_some() => {
                    teach += 1
                }
                EventBody::Learner { text } if text.contains('?') => {
                    asked += 1;
                    if !seen.insert(text.clone()) {
                        repeats += 1;
                    }
                }
                EventBody::Check { topic, .. }
                    if topic
                        .chars()
                        .all(|c| c.is_lowercase() || c == ' ' || !c.is_alphabetic()) =>
                {
                    utterance_topics += 1
                }
                EventBody::File { name, .. } if !files.insert(name.clone()) => replaced += 1,
                EventBody::FileRemoved { .. } => removed += 1,
                _ => {}
            }
        }
    }
    let share = repeats as f64 / asked as f64;
    assert!((0.2..0.5).contains(&share), "repeats {repeats} of {asked}");
    assert!(utterance_topics > 50 && teach > 20 && removed > 10 && replaced > 10);
}

/// Question generation sees a history and a map, nothing else: its type
/// admits no store, no recaller and no block, so no design's output can
/// reach it.
#[test]
fn question_generation_takes_only_recorded_data() {
    let f: fn(&History, &ConceptMap, u64) -> tm_bench::Result<Vec<Question>> = questions::generate;
    let h = &generate(&shipped(), 1, 3).unwrap()[0];
    let parsed = parse(&h.name, h.text.as_bytes()).unwrap();
    let a = f(&parsed, &ConceptMap::default(), 1).unwrap();
    let b = f(&parsed, &ConceptMap::default(), 1).unwrap();
    assert_eq!(a, b);
    // Every expected episode is an event of the history.
    let ids: BTreeSet<String> = parsed.events.iter().filter_map(|e| e.id.clone()).collect();
    for q in &a {
        for id in q.expect.episodes.iter() {
            assert!(ids.contains(id), "{id}");
        }
        assert!(q.at > parsed.events.last().unwrap().at);
    }
}

#[test]
fn each_language_asks_record_and_month_questions_the_block_understands() {
    use chrono::{TimeZone, Utc};
    for lang in tm_bench::templates::LANGS {
        let t = tm_bench::templates::Templates::of(lang).unwrap();
        assert!(
            tm_model::block::is_record_question(t.first("q_wrong"), false),
            "{lang}: {}",
            t.first("q_wrong")
        );
        let q = tm_bench::templates::fill(
            t.first("q_month"),
            &[("month", &t.months[2]), ("year", "2026")],
        );
        let at = Utc.with_ymd_and_hms(2026, 9, 1, 10, 0, 0).unwrap();
        let w = tm_model::window::parse_window(&q, at, chrono_tz::UTC)
            .unwrap_or_else(|| panic!("{lang}: {q} names no window"));
        assert_eq!(
            w.from,
            Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap(),
            "{lang}: {q}"
        );
        for teach in t.all("teach") {
            let line = tm_bench::templates::fill(teach, &[("c", "Osmosis"), ("n", "x")]);
            assert!(
                tm_model::teaching::teaching(&line).is_some(),
                "{lang}: {line}"
            );
        }
    }
}
