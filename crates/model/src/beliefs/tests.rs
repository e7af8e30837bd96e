use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;

use super::*;
use crate::episodes::Verdict;

const CONCEPTS: &[&str] = &["Osmosis", "Cell membrane", "Cell", "Diffusion"];

fn day(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 10, 0, 0).single().unwrap()
}

fn check(episode_id: i64, at: DateTime<Utc>, verdict: Verdict, topic: &str) -> CheckFact {
    RecordedCheck {
        episode_id,
        at,
        verdict,
        topic: topic.to_string(),
        evaluation: None,
    }
    .fact(CONCEPTS)
}

/// Plays the store: inserts each new row with the next id and points the old one at it.
fn insert(rows: &mut Vec<BeliefRow>, old: Option<usize>, mut new: NewBelief) -> usize {
    let id = rows.len() as i64 + 1;
    new.id = Some(id);
    if let Some(i) = old {
        rows[i].superseded_by = Some(id);
    }
    rows.push(new);
    rows.len() - 1
}

fn apply_all(facts: &[CheckFact]) -> Vec<BeliefRow> {
    let mut rows: Vec<BeliefRow> = Vec::new();
    for fact in facts {
        let Some((key, _, _)) = subject_of(&fact.routing) else {
            continue;
        };
        let cur = rows
            .iter()
            .position(|r| r.subject_key == key && r.superseded_by.is_none());
        if let Some(new) = apply_check(cur.map(|i| &rows[i]), fact).unwrap() {
            insert(&mut rows, cur, new);
        }
    }
    rows
}

#[test]
fn topic_routes_by_exact_canonical_name() {
    for topic in ["Osmosis", "OSMOSIS ", "osmosis.", " osmosis"] {
        assert_eq!(
            route_check(topic, None, CONCEPTS),
            Routing::Concept {
                name: "Osmosis".into(),
                via: Via::Topic
            },
            "{topic:?}"
        );
    }
    // Exact only: a near miss is not the concept.
    assert!(!matches!(
        route_check("osmosi", None, CONCEPTS),
        Routing::Concept { .. }
    ));
}

#[test]
fn a_sentence_topic_routes_through_the_evaluation() {
    let r = route_check(
        "can you check what I said",
        Some("Correct: osmosis moves water"),
        CONCEPTS,
    );
    assert_eq!(
        r,
        Routing::Concept {
            name: "Osmosis".into(),
            via: Via::Evaluation
        }
    );
    // Longest name wins, whole words only.
    let r = route_check(
        "is this right?",
        Some("Partly: the cell membrane lets water through"),
        CONCEPTS,
    );
    assert_eq!(
        r,
        Routing::Concept {
            name: "Cell membrane".into(),
            via: Via::Evaluation
        }
    );
    // Of two separate names, the first named: the evaluation leads with what was checked.
    let r = route_check(
        "can you check what I said",
        Some("Correct: osmosis moves water, unlike diffusion"),
        CONCEPTS,
    );
    assert_eq!(
        r,
        Routing::Concept {
            name: "Osmosis".into(),
            via: Via::Evaluation
        }
    );
    // A short noun phrase is a name: it never borrows the evaluation's concept.
    assert_eq!(
        route_check(
            "water movement",
            Some("Correct: osmosis moves water"),
            CONCEPTS
        ),
        Routing::UnmappedTopic {
            topic: "water movement".into()
        }
    );
    // "cells" is not "Cell": no fuzzy match, so it stays evidence.
    let r = route_check("what did I get wrong?", Some("Cells divide."), CONCEPTS);
    assert!(matches!(r, Routing::EvidenceOnly { .. }), "{r:?}");
}

#[test]
fn utterance_topics_never_become_beliefs_in_eight_languages() {
    let topics = [
        "ask me the questions",
        "ok now do the next one",
        "bueno ahora explícame todos los pasos",
        "¿y ahora qué?",
        "erkläre mir das bitte",
        "was ist das",
        "spiegami tutto",
        "dimmi di nuovo",
        "jelaskan lagi dong",
        "tolong bantu saya",
        "explique-moi encore",
        "et maintenant ?",
        "me explica de novo",
        "e agora",
        "اشرح لي مرة أخرى",
        "ماذا بعد",
    ];
    for (i, topic) in topics.iter().enumerate() {
        let r = route_check(topic, Some("Good try, let us continue."), CONCEPTS);
        assert!(
            matches!(r, Routing::EvidenceOnly { .. }),
            "{topic:?} routed to {r:?}"
        );
        let fact = CheckFact {
            episode_id: i as i64,
            at: day(2026, 3, 2),
            verdict: Verdict::Right,
            routing: r,
        };
        assert_eq!(apply_check(None, &fact).unwrap(), None, "{topic:?}");
    }
}

#[test]
fn a_short_noun_phrase_becomes_an_unmapped_topic_but_numbers_do_not() {
    assert_eq!(
        route_check("Krebs cycle", None, CONCEPTS),
        Routing::UnmappedTopic {
            topic: "Krebs cycle".into()
        }
    );
    assert!(matches!(
        route_check("3 x 4", None, CONCEPTS),
        Routing::EvidenceOnly { .. }
    ));
    let fact = check(7, day(2026, 3, 2), Verdict::Wrong, "Krebs cycle");
    let row = apply_check(None, &fact).unwrap().unwrap();
    assert!(row.unmapped);
    assert_eq!(row.subject_key, "krebs cycle");
}

#[test]
fn wrong_then_right_leaves_two_rows_only_the_newer_current() {
    let rows = apply_all(&[
        check(12, day(2026, 3, 2), Verdict::Wrong, "osmosis"),
        check(19, day(2026, 3, 9), Verdict::Right, "Osmosis"),
    ]);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].claim, Claim::StrugglesWith);
    assert_eq!(rows[0].superseded_by, rows[1].id, "older points to newer");
    assert_eq!(rows[1].reason, "check 2026-03-09 right");
    assert_eq!(rows[1].support, vec![12, 19]);
    assert!((rows[1].confidence - 0.5).abs() < 1e-12);
    let now = current(&rows);
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].id, rows[1].id);

    assert_eq!(
        render_history(&rows),
        vec![
            "2026-03-02 struggles with Osmosis (0.33) — check 2026-03-02 wrong [episodes 12]",
            "2026-03-09 is still learning Osmosis (0.50) — check 2026-03-09 right [episodes 12, 19]",
        ]
    );
}

#[test]
fn a_check_on_another_subject_is_refused() {
    let rows = apply_all(&[check(1, day(2026, 3, 2), Verdict::Right, "osmosis")]);
    let other = check(2, day(2026, 3, 3), Verdict::Right, "diffusion");
    assert!(matches!(
        apply_check(Some(&rows[0]), &other),
        Err(Error::SubjectMismatch { .. })
    ));
}

#[test]
fn algebra_like_history_yields_no_belief_and_the_honest_count() {
    let utterances = [
        "what is 3 times 4",
        "ok now do the next one",
        "¿y ahora qué?",
        "can you give me another one",
        "is it 12?",
        "and 7 x 8?",
        "explain again please",
        "y si lo multiplico por 2",
    ];
    // Evaluations of arithmetic name no concept of this (algebra-less) map.
    let concepts = ["Linear equation", "Variable"];
    let facts: Vec<CheckFact> = (0..32)
        .map(|i| {
            RecordedCheck {
                episode_id: i,
                at: day(2026, 5, 1) + chrono::Duration::hours(i),
                verdict: if i % 3 == 0 {
                    Verdict::Wrong
                } else {
                    Verdict::Right
                },
                topic: utterances[i as usize % utterances.len()].to_string(),
                evaluation: Some(format!("Right, {} times 4 is {}.", i, i * 4)),
            }
            .fact(&concepts)
        })
        .collect();
    assert!(apply_all(&facts).is_empty());
    assert!(rederive(&facts).is_empty());
    let counts = CheckCounts::tally(facts.iter().map(|f| &f.routing));
    assert_eq!(
        counts,
        CheckCounts {
            recorded: 32,
            linked: 0,
            evidence_only: 32,
            unmapped: 0
        }
    );
    assert_eq!(
        honest_sentence(&counts).as_deref(),
        Some("32 checks are recorded, but none could yet be linked to a concept in the map.")
    );
}

#[test]
fn honest_sentences_say_only_what_the_counts_say() {
    let c = |recorded, linked, evidence_only, unmapped| CheckCounts {
        recorded,
        linked,
        evidence_only,
        unmapped,
    };
    assert_eq!(honest_sentence(&c(0, 0, 0, 0)), None);
    assert_eq!(
        honest_sentence(&c(32, 20, 12, 0)).as_deref(),
        Some(
            "32 checks are recorded; 20 are linked to concepts in the map, 12 are kept as evidence only."
        )
    );
    assert_eq!(
        honest_sentence(&c(5, 5, 0, 0)).as_deref(),
        Some("5 checks are recorded, all linked to concepts in the map.")
    );
    assert_eq!(
        honest_sentence(&c(4, 0, 3, 1)).as_deref(),
        Some(
            "4 checks are recorded, but none could yet be linked to a concept in the map; \
             1 is about topics outside the map, 3 are kept as evidence only."
        )
    );
}

#[test]
fn rederivation_after_a_rule_change_yields_the_new_beliefs() {
    let recorded = [
        RecordedCheck {
            episode_id: 3,
            at: day(2026, 4, 1),
            verdict: Verdict::Wrong,
            topic: "can you check what I said".into(),
            evaluation: Some("Not quite: osmosis moves water, not salt".into()),
        },
        RecordedCheck {
            episode_id: 8,
            at: day(2026, 4, 2),
            verdict: Verdict::Wrong,
            topic: "osmosis".into(),
            evaluation: None,
        },
    ];
    // Old map: no "Osmosis" yet. The sentence is evidence, the bare word an unmapped topic.
    let old: Vec<CheckFact> = recorded.iter().map(|r| r.fact(&["Diffusion"])).collect();
    let before = rederive(&old);
    assert_eq!(before.len(), 1);
    assert!(before[0].unmapped);
    assert_eq!(before[0].support, vec![8]);

    // Today's map has the concept: both checks now route to it.
    let new: Vec<CheckFact> = recorded.iter().map(|r| r.fact(CONCEPTS)).collect();
    let after = rederive(&new);
    assert_eq!(after.len(), 1);
    let b = &after[0];
    assert_eq!(b.concept.as_deref(), Some("Osmosis"));
    assert!(!b.unmapped);
    assert_eq!(b.support, vec![3, 8]);
    assert_eq!(b.claim, Claim::StrugglesWith);
    assert_eq!(b.reason, format!("re-derived under rules v{RULES_VERSION}"));
    assert_eq!(b.created_at, day(2026, 4, 2));

    // The store's side: retire the old row, point it at the tombstone; old stays readable.
    let mut rows = Vec::new();
    let old_i = insert(&mut rows, None, before[0].clone());
    let tombstone = retire(&rows[old_i], day(2026, 6, 1));
    let tomb = insert(&mut rows, Some(old_i), tombstone);
    insert(&mut rows, None, b.clone());
    assert_eq!(rows[tomb].reason, "retired");
    let now = current(&rows);
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].concept.as_deref(), Some("Osmosis"));
    assert!(render_history(&rows)[1].contains("retired: osmosis"));
}

#[test]
fn decay_takes_exactly_fifteen_percent_after_45_days_and_the_next_check_clears_the_flag() {
    let rows = apply_all(&[
        check(1, day(2026, 1, 1), Verdict::Right, "osmosis"),
        check(2, day(2026, 1, 2), Verdict::Right, "osmosis"),
    ]);
    let b = &rows[1];
    assert_eq!(b.claim, Claim::Understands);
    // 44 days: untouched, but not long enough.
    assert_eq!(
        decay(b, day(2026, 2, 15), DECAY_AFTER_DAYS, DECAY_FACTOR).unwrap(),
        None
    );
    let d = decay(b, day(2026, 2, 16), DECAY_AFTER_DAYS, DECAY_FACTOR)
        .unwrap()
        .unwrap();
    assert!((d.confidence - b.confidence * 0.85).abs() < 1e-12);
    assert!((d.alpha + d.beta - (b.alpha + b.beta)).abs() < 1e-12);
    assert!(d.flagged);
    assert_eq!(d.reason, "decayed");
    assert_eq!(d.support, b.support);
    // Idempotent for the same night.
    assert_eq!(
        decay(&d, day(2026, 2, 16), DECAY_AFTER_DAYS, DECAY_FACTOR).unwrap(),
        None
    );
    let next = apply_check(
        Some(&d),
        &check(5, day(2026, 2, 20), Verdict::Right, "osmosis"),
    )
    .unwrap()
    .unwrap();
    assert!(!next.flagged);
    assert!(next.confidence > d.confidence);
    assert_eq!(next.support, vec![1, 2, 5]);
}

#[test]
fn predicted_mastery_is_the_current_confidence_or_the_prior_mean() {
    assert_eq!(predicted_mastery(None), 0.5);
    let rows = apply_all(&[check(1, day(2026, 1, 1), Verdict::Wrong, "osmosis")]);
    assert!((predicted_mastery(Some(&rows[0])) - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        predicted_mastery(Some(&retire(&rows[0], day(2026, 2, 1)))),
        0.5
    );
}

#[test]
fn an_impossible_stored_posterior_is_an_error_not_a_panic() {
    let mut rows = apply_all(&[check(1, day(2026, 1, 1), Verdict::Wrong, "osmosis")]);
    rows[0].alpha = f64::NAN;
    let next = check(2, day(2026, 1, 2), Verdict::Right, "osmosis");
    assert!(matches!(
        apply_check(Some(&rows[0]), &next),
        Err(Error::BadPosterior { .. })
    ));
}

fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        Just(Verdict::Right),
        Just(Verdict::Wrong),
        Just(Verdict::Partial)
    ]
}

/// Replays verdicts on osmosis, `gap_days` apart (60 days lets decay act between checks).
fn replay(verdicts: &[Verdict], gap_days: i64) -> Option<BeliefRow> {
    let start = day(2026, 1, 1);
    let facts: Vec<CheckFact> = verdicts
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let at = start + chrono::Duration::days(i as i64 * gap_days);
            check(i as i64, at, *v, "osmosis")
        })
        .collect();
    rederive(&facts).into_iter().next()
}

proptest! {
    #[test]
    fn confidence_stays_in_unit_interval_and_rises_with_each_right(
        verdicts in proptest::collection::vec(verdict(), 1..30),
        extra in 1usize..5,
    ) {
        let base = replay(&verdicts, 1).unwrap();
        prop_assert!((0.0..=1.0).contains(&base.confidence));
        let mut last = base.confidence;
        let mut more = verdicts.clone();
        for _ in 0..extra {
            more.push(Verdict::Right);
            let b = replay(&more, 1).unwrap();
            prop_assert!((0.0..=1.0).contains(&b.confidence));
            prop_assert!(b.confidence > last, "{} then {}", last, b.confidence);
            prop_assert_eq!(b.claim, Claim::for_confidence(b.confidence));
            last = b.confidence;
        }
    }
}

proptest! {
    #[test]
    fn decay_between_checks_keeps_confidence_in_unit_interval(
        verdicts in proptest::collection::vec(verdict(), 1..30),
    ) {
        let b = replay(&verdicts, 60).unwrap();
        prop_assert!((0.0..=1.0).contains(&b.confidence));
        prop_assert!(b.alpha > 0.0 && b.beta > 0.0);
        prop_assert!(!b.flagged, "a check always clears the flag");
    }
}

#[test]
fn concept_names_in_every_language_are_not_utterances() {
    // Short topics a learner's check is really about: none may be mistaken for
    // something said, or its belief would be lost as "evidence only".
    let names = [
        "cell membrane",
        "arithmetic mean",
        "T cells",
        "SI units",
        "right angle",
        "membrana celular",
        "el ciclo del agua",
        "die Zellmembran",
        "das Herz",
        "il ciclo di Krebs",
        "i mitocondri",
        "membran sel",
        "la membrane cellulaire",
        "la vitesse du son",
        "fotossíntese e respiração",
        "ciclo do carbono",
        "no núcleo",
        "um processo",
        "a membrana celular",
        "غشاء الخلية",
        "الدالة الخطية",
    ];
    for name in names {
        assert!(!reads_as_utterance(name), "{name:?} reads as an utterance");
        assert_eq!(
            route_check(name, None, &[]),
            Routing::UnmappedTopic { topic: name.into() },
            "{name:?}"
        );
    }
}

#[test]
fn every_language_has_an_utterance_list_of_40_to_120_entries() {
    let files = [
        include_str!("../../data/utterance/en.txt"),
        include_str!("../../data/utterance/es.txt"),
        include_str!("../../data/utterance/de.txt"),
        include_str!("../../data/utterance/it.txt"),
        include_str!("../../data/utterance/id.txt"),
        include_str!("../../data/utterance/fr.txt"),
        include_str!("../../data/utterance/pt.txt"),
        include_str!("../../data/utterance/ar.txt"),
    ];
    assert_eq!(files.len(), crate::lang::LANGS.len());
    for (lang, file) in crate::lang::LANGS.iter().zip(files) {
        let n = crate::lang::entries(file).count();
        assert!((40..=120).contains(&n), "{lang}: {n} entries");
        for e in crate::lang::entries(file) {
            assert!(
                !canonical_key(e).is_empty(),
                "{lang}: {e:?} folds to nothing"
            );
        }
    }
}

#[test]
fn an_alias_routes_to_its_concept_in_the_map() {
    use crate::map::{ConceptMap, ExtractedConcept};
    let mut map = ConceptMap::new();
    map.merge_file(
        "bio.md",
        Some(1),
        &[ExtractedConcept {
            name: "Mitochondrion".into(),
            gist: "Where respiration happens.".into(),
            aliases: vec!["mitochondria".into()],
            ..Default::default()
        }],
        &|_: &str, _: &str| 0.0,
        0.86,
    );
    assert_eq!(
        route_in_map("Mitochondria", None, &map),
        Routing::Concept {
            name: "Mitochondrion".into(),
            via: Via::Topic
        }
    );
    assert_eq!(
        route_in_map(
            "what did we do today?",
            Some("Right: the mitochondria make ATP."),
            &map
        ),
        Routing::Concept {
            name: "Mitochondrion".into(),
            via: Via::Evaluation
        }
    );
}

#[test]
fn a_topic_belief_continues_when_its_concept_joins_the_map() {
    let topic = RecordedCheck {
        episode_id: 1,
        at: day(2026, 1, 1),
        verdict: Verdict::Wrong,
        topic: "Krebs cycle".into(),
        evaluation: None,
    };
    let first = apply_check(None, &topic.fact(CONCEPTS)).unwrap().unwrap();
    assert!(first.unmapped);
    let later = RecordedCheck {
        episode_id: 2,
        at: day(2026, 1, 5),
        verdict: Verdict::Right,
        topic: "krebs cycle".into(),
        evaluation: None,
    };
    let next = apply_check(Some(&first), &later.fact(&["Krebs cycle"]))
        .unwrap()
        .unwrap();
    assert!(!next.unmapped);
    assert_eq!(next.concept.as_deref(), Some("Krebs cycle"));
    assert_eq!(next.support, vec![1, 2]);
}

#[test]
fn a_decay_factor_outside_the_unit_interval_is_refused() {
    let rows = apply_all(&[check(1, day(2026, 1, 1), Verdict::Right, "osmosis")]);
    for factor in [f64::NAN, 1.5, -0.1] {
        assert!(matches!(
            decay(&rows[0], day(2026, 6, 1), DECAY_AFTER_DAYS, factor),
            Err(Error::BadDecayFactor { .. })
        ));
    }
}
