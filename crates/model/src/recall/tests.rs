use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

use super::*;

fn day(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 10, 0, 0)
        .single()
        .expect("valid date")
}

fn midnight(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0)
        .single()
        .expect("valid date")
}

/// A candidate with no evidence of matching anything, alone in its sitting
/// (its chain place is ten times its id: no other candidate within
/// [`CONTEXT_TURNS`] of it unless a test says so).
fn plain(id: i64, at: DateTime<Utc>) -> Candidate {
    Candidate {
        id,
        seq: 10 * id as u64,
        kind: "question".into(),
        at,
        salience: 0.35,
        collapse_key: format!("unique {id}"),
        lexical: 0.0,
        semantic: 0.1,
        centred: None,
        concept: false,
        narration: false,
        tells_of: None,
        long: false,
    }
}

fn hit(id: i64, at: DateTime<Utc>) -> Candidate {
    Candidate {
        lexical: 1.0,
        semantic: 0.7,
        ..plain(id, at)
    }
}

fn ids(outcome: &RecallOutcome) -> Vec<i64> {
    outcome.ranked.iter().map(|r| r.candidate.id).collect()
}

const P: RecallParams = RecallParams::MINILM;

#[test]
fn recency_halves_every_75_days() {
    let now = day(2026, 9, 15);
    assert!((recency(now, now) - 1.0).abs() < 1e-6);
    assert!((recency(now - Duration::days(75), now) - 0.5).abs() < 1e-6);
    assert!((recency(now - Duration::days(200), now) - 0.1575).abs() < 1e-3);
    assert!((recency(now + Duration::days(3), now) - 1.0).abs() < 1e-6);
}

/// docs/mechanisms.md §3's worked example: by weights alone the fresh irrelevant note would
/// win if relevance decayed with age; the gate discards it instead.
#[test]
fn fresh_irrelevant_note_loses_to_old_exact_match() {
    let now = day(2026, 9, 15);
    let note = Candidate {
        kind: "taught".into(),
        salience: 0.85,
        ..plain(1, now)
    };
    let old = hit(2, now - Duration::days(200));
    // The trap the gate exists for: recency alone beats a decayed match.
    assert!(RECENCY_WEIGHT * recency(note.at, now) > RELEVANCE_WEIGHT * recency(old.at, now));
    let out = recall(vec![note, old], true, None, now, &P, 10);
    assert_eq!(out.basis, Basis::Matched);
    assert_eq!(ids(&out), [2]);
}

#[test]
fn march_match_is_recalled_in_september_under_600_newer_episodes() {
    let now = day(2026, 9, 20);
    let mut pool: Vec<Candidate> = (0..600)
        .map(|i| Candidate {
            salience: 0.85,
            ..plain(1000 + i, now - Duration::hours(i + 1))
        })
        .collect();
    pool.push(Candidate {
        lexical: 1.0,
        ..plain(7, day(2026, 3, 12))
    });
    let out = recall(pool, true, None, now, &P, 8);
    assert_eq!(out.basis, Basis::Matched);
    assert_eq!(ids(&out), [7]);
}

#[test]
fn what_is_a_cell_nine_times_comes_back_once_with_its_count() {
    let now = day(2026, 9, 1);
    let spellings = [
        "what is a cell",
        "What is a cell?",
        "WHAT IS A CELL",
        "what is a cell ?",
    ];
    let mut pool: Vec<Candidate> = (0..9)
        .map(|i| Candidate {
            collapse_key: collapse_key("question", spellings[i % spellings.len()], None, None),
            ..hit(i as i64 + 1, now - Duration::days(10 * i as i64 + 1))
        })
        .collect();
    pool.push(Candidate {
        collapse_key: collapse_key("question", "what is a cell wall", None, None),
        lexical: 0.5,
        ..hit(50, now - Duration::days(2))
    });
    // Same text, another kind: an answer is not a repeat of the question.
    pool.push(Candidate {
        kind: "answer".into(),
        collapse_key: collapse_key("answer", "what is a cell", None, None),
        ..hit(60, now - Duration::days(3))
    });
    let out = recall(pool, true, None, now, &P, 10);
    assert_eq!(out.ranked.len(), 3);
    let cell = &out.ranked[0];
    assert_eq!(cell.count, 9);
    assert_eq!(cell.members, (1..=9).collect::<Vec<i64>>());
    assert_eq!(cell.candidate.id, 1, "the newest stands for the group");
    assert!(out.ranked[1..].iter().all(|r| r.count == 1));
}

#[test]
fn checks_collapse_by_topic_and_verdict() {
    assert_eq!(
        collapse_key(
            "check",
            "Why does water move?",
            Some("Osmosis"),
            Some("missed")
        ),
        collapse_key("check", "Explain osmosis", Some("osmosis"), Some("Missed"))
    );
    assert_ne!(
        collapse_key("check", "q", Some("osmosis"), Some("missed")),
        collapse_key("check", "q", Some("osmosis"), Some("right"))
    );
}

#[test]
fn july_window_returns_july_first() {
    let now = day(2026, 9, 15);
    let july = (
        day(2026, 7, 1) - Duration::hours(10),
        day(2026, 8, 1) - Duration::hours(10),
    );
    let pool = vec![
        plain(1, day(2026, 6, 30)),
        plain(2, day(2026, 7, 2)),
        plain(3, day(2026, 7, 31)),
        plain(4, day(2026, 8, 1)),
        hit(5, day(2025, 7, 10)), // last year's July
        plain(6, day(2026, 9, 14)),
    ];
    // "what did we cover in July?" has no content once the window words go.
    let out = recall(pool.clone(), false, Some(july), now, &P, 10);
    assert!(!out.window_empty);
    assert_eq!(out.basis, Basis::NoQuestion);
    assert_eq!(ids(&out), [3, 2]);
    assert!(out.ranked.iter().all(|r| !r.outside_window));
    // "what about osmosis in July?" with osmosis only outside July: July's
    // recent past, flagged, and then last year's osmosis, marked as outside.
    let out = recall(pool, true, Some(july), now, &P, 10);
    assert_eq!(out.basis, Basis::NothingMatched);
    assert_eq!(ids(&out), [3, 2, 5]);
    let outside: Vec<bool> = out.ranked.iter().map(|r| r.outside_window).collect();
    assert_eq!(outside, [false, false, true]);
}

#[test]
fn matches_outside_the_window_follow_everything_inside_it() {
    let now = day(2026, 9, 15);
    let july = (day(2026, 7, 1), day(2026, 8, 1));
    let weak = Candidate {
        lexical: 0.1,
        semantic: 0.0,
        ..plain(1, day(2026, 7, 10))
    };
    let narration = Candidate {
        narration: true,
        ..hit(6, day(2026, 8, 20))
    };
    let pool = vec![
        weak,
        plain(2, day(2026, 7, 20)), // in July, matching nothing: discarded
        hit(3, day(2026, 8, 10)),
        Candidate {
            lexical: 0.5,
            ..hit(4, day(2026, 6, 10))
        },
        plain(5, day(2026, 9, 1)), // outside, matching nothing: never shown
        narration,                 // a narration is no record of anything
        hit(7, day(2026, 9, 16)),  // after the turn
    ];
    let out = recall(pool.clone(), true, Some(july), now, &P, 10);
    assert_eq!(out.basis, Basis::Matched);
    // The weak match inside July comes before the strong ones outside it.
    assert_eq!(ids(&out), [1, 3, 4]);
    assert!(!out.ranked[0].outside_window);
    assert!(out.ranked[1..].iter().all(|r| r.outside_window));
    // Without a window nothing is outside, and the strong matches lead
    // (the newer first: a narration is an ordinary answer then).
    let out = recall(pool, true, None, now, &P, 10);
    assert_eq!(ids(&out)[..2], [6, 3]);
    assert!(out.ranked.iter().all(|r| !r.outside_window));
}

#[test]
fn empty_window_is_reported_and_nothing_from_outside_fills_it() {
    let now = day(2026, 9, 15);
    let february = (day(2026, 2, 1), day(2026, 3, 1));
    let pool = vec![
        hit(1, day(2026, 1, 20)),
        hit(2, day(2026, 3, 2)),
        plain(3, day(2026, 9, 1)),
    ];
    let out = recall(pool, true, Some(february), now, &P, 10);
    assert!(out.window_empty);
    assert!(out.ranked.is_empty());
}

/// A turn said after the window that tells of a time inside it is inside it:
/// "I restored a car last year", said in 2023, with the window 2022. It fills
/// a window that would be empty by the time of telling, and ranks with the
/// window's own work; a period that only overlaps the window does not count.
#[test]
fn a_turn_telling_of_the_window_is_inside_it() {
    let now = day(2023, 10, 24);
    let last_year = (day(2022, 1, 1), day(2023, 1, 1));
    let told = Candidate {
        tells_of: Some(last_year),
        lexical: 0.4,
        ..hit(1, day(2023, 10, 23))
    };
    let straddling = Candidate {
        tells_of: Some((day(2022, 12, 26), day(2023, 1, 2))),
        ..hit(2, day(2023, 1, 3))
    };
    let stronger_outside = hit(3, day(2023, 6, 1));
    let pool = vec![told.clone(), straddling, stronger_outside];
    let out = recall(pool.clone(), true, Some(last_year), now, &P, 10);
    assert!(!out.window_empty);
    assert_eq!(out.basis, Basis::Matched);
    assert_eq!(ids(&out)[0], 1);
    let outside: Vec<bool> = out.ranked.iter().map(|r| r.outside_window).collect();
    assert_eq!(outside, [false, true, true]);
    // Without the telling, the window of 2022 holds nothing.
    let untold = Candidate {
        tells_of: None,
        ..told
    };
    let out = recall(vec![untold], true, Some(last_year), now, &P, 10);
    assert!(out.window_empty);
    assert!(out.ranked.is_empty());
}

#[test]
fn what_a_text_tells_of_is_read_at_its_own_time() {
    let tz = chrono_tz::UTC;
    let said = day(2023, 10, 23);
    assert_eq!(
        tells_of("I restored a car last year, but I sold it.", said, tz),
        Some((midnight(2022, 1, 1), midnight(2023, 1, 1)))
    );
    assert_eq!(
        tells_of("She gave me this pendant in 2010 in Paris.", said, tz),
        Some((midnight(2010, 1, 1), midnight(2011, 1, 1)))
    );
    // A month without a year is its latest not after the telling.
    assert_eq!(
        tells_of("In November I failed the quiz on osmosis.", said, tz),
        Some((midnight(2022, 11, 1), midnight(2022, 12, 1)))
    );
    assert_eq!(
        tells_of("Osmosis moves water across a membrane.", said, tz),
        None
    );
    // Past its first TELLS_OF_CHARS characters a text is not read.
    let long = format!("{} in 2010.", "Osmosis moves water. ".repeat(200));
    assert_eq!(tells_of(&long, said, tz), None);
    assert!(tells_of(&long[long.len() - 300..], said, tz).is_some());
    // Speaking of the record is not work of that time.
    assert_eq!(tells_of("What did we do in July?", said, tz), None);
    assert_eq!(
        tells_of("In July we covered osmosis and diffusion.", said, tz),
        None
    );
}

#[test]
fn narrations_are_never_evidence_of_a_period() {
    let now = day(2026, 9, 15);
    let july = (day(2026, 7, 1), day(2026, 8, 1));
    let narration = Candidate {
        kind: "answer".into(),
        narration: true,
        ..hit(9, day(2026, 7, 31))
    };
    let september_narration = Candidate {
        narration: true,
        ..hit(10, day(2026, 9, 10))
    };
    let pool = vec![
        narration.clone(),
        september_narration,
        plain(1, day(2026, 7, 5)),
    ];
    let out = recall(pool, true, Some(july), now, &P, 10);
    assert_eq!(ids(&out), [1]);
    // A window holding only narrations holds no record.
    let out = recall(vec![narration.clone()], false, Some(july), now, &P, 10);
    assert!(out.window_empty);
    // Without a window a narration is an ordinary answer.
    let out = recall(vec![narration], true, None, now, &P, 10);
    assert_eq!(ids(&out), [9]);
}

#[test]
fn no_question_ranks_by_recency_then_salience() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(1);
    let pool = vec![
        Candidate {
            salience: 0.35,
            ..plain(1, t)
        },
        Candidate {
            salience: 0.85,
            ..plain(2, t)
        },
        Candidate {
            salience: 0.85,
            ..hit(3, now - Duration::days(30))
        },
        plain(4, now - Duration::hours(1)),
    ];
    let out = recall(pool, false, None, now, &P, 10);
    assert_eq!(out.basis, Basis::NoQuestion);
    assert_eq!(ids(&out), [4, 2, 1, 3]);
}

#[test]
fn nothing_matched_offers_the_recent_past_as_such() {
    let now = day(2026, 9, 15);
    let pool = vec![
        plain(1, now - Duration::days(5)),
        plain(2, now - Duration::days(1)),
    ];
    let out = recall(pool, true, None, now, &P, 10);
    assert_eq!(out.basis, Basis::NothingMatched);
    assert_eq!(ids(&out), [2, 1]);
    assert!(out.ranked.iter().all(|r| !r.matched));
}

#[test]
fn each_signal_alone_is_a_match() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(400);
    let pool = vec![
        Candidate {
            lexical: 0.2,
            ..plain(1, t)
        },
        Candidate {
            concept: true,
            ..plain(2, t)
        },
        Candidate {
            semantic: P.semantic_floor + 0.01,
            ..plain(3, t)
        },
        Candidate {
            semantic: P.semantic_floor - 0.01,
            ..plain(4, t)
        }, // just under MiniLM's floor
        plain(5, now),
    ];
    let out = recall(pool, true, None, now, &P, 10);
    let mut got = ids(&out);
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3]);
    // Concept (0.6) beats a weak lexical hit (0.2) beats a bare semantic one.
    assert_eq!(ids(&out), [2, 1, 3]);
}

#[test]
fn pools_that_found_the_same_episode_merge_their_signals() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(3);
    let from_fts = Candidate {
        lexical: 0.4,
        ..plain(1, t)
    };
    let from_vectors = Candidate {
        semantic: 0.9,
        centred: Some(0.3),
        ..plain(1, t)
    };
    let out = recall(
        vec![from_fts, from_vectors, plain(2, now)],
        true,
        None,
        now,
        &P,
        10,
    );
    assert_eq!(ids(&out), [1]);
    assert_eq!(out.ranked[0].count, 1);
    assert_eq!(out.ranked[0].candidate.centred, Some(0.3));
    // Both signals count: the words' 0.4 and a cosine past paraphrase level
    // (the best centred cosine, under a best raw one past the scale's middle).
    let both = 1.0 - (1.0 - 0.4 * BEST_OF_POOL) * (1.0 - BEST_OF_POOL);
    assert!((out.ranked[0].relevance - both).abs() < 1e-6);
}

#[test]
fn future_episodes_and_broken_signals_are_harmless() {
    let now = day(2026, 9, 15);
    let pool = vec![
        hit(1, now + Duration::days(1)),
        Candidate {
            lexical: f32::NAN,
            semantic: f32::NAN,
            salience: f32::INFINITY,
            centred: Some(f32::NAN),
            ..plain(2, now)
        },
        Candidate {
            centred: Some(f32::INFINITY),
            ..plain(3, now - Duration::days(1))
        },
    ];
    let out = recall(pool, true, None, now, &P, 10);
    assert_eq!(out.basis, Basis::NothingMatched);
    assert_eq!(ids(&out), [2, 3]);
    assert!(out.ranked.iter().all(|r| r.score.is_finite()));
}

#[test]
fn limit_counts_groups_not_episodes() {
    let now = day(2026, 9, 15);
    let pool: Vec<Candidate> = (0..6)
        .map(|i| Candidate {
            collapse_key: format!("k{}", i % 3),
            ..hit(i, now - Duration::days(i))
        })
        .collect();
    let out = recall(pool, true, None, now, &P, 2);
    assert_eq!(out.ranked.len(), 2);
    assert_eq!(out.ranked.iter().map(|r| r.count).sum::<usize>(), 4);
}

fn arb_candidate(id: i64) -> impl Strategy<Value = Candidate> {
    (
        // Minutes ago: over 2,000 days, or within the last hour and a half,
        // where neighbours in the chain share a sitting and lend context.
        prop_oneof![0i64..=2000 * 24 * 60, 0i64..=90],
        0.0f32..=1.0,
        prop_oneof![Just(0.0f32), 0.0f32..=1.0],
        -1.0f32..=1.0,
        prop_oneof![Just(None), (-1.0f32..=1.0).prop_map(Some)],
        any::<bool>(),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(
            move |(age_minutes, salience, lexical, semantic, centred, concept, key, long)| {
                Candidate {
                    id,
                    // Next to each other in the chain, so context is lent
                    // wherever two share a sitting.
                    seq: id as u64 + 1,
                    kind: "question".into(),
                    at: day(2026, 9, 15) - Duration::minutes(age_minutes),
                    salience,
                    collapse_key: if key == 0 {
                        String::new()
                    } else {
                        format!("k{key}")
                    },
                    lexical,
                    semantic,
                    centred,
                    concept: concept && key == 1,
                    narration: false,
                    tells_of: None,
                    long,
                }
            },
        )
}

fn arb_pool() -> impl Strategy<Value = Vec<Candidate>> {
    (1usize..40).prop_flat_map(|n| (0..n as i64).map(arb_candidate).collect::<Vec<_>>())
}

proptest! {
    /// Recency never lets a non-match outrank a match: whatever the ages and
    /// saliences, once anything matches, only matches are recalled.
    #[test]
    fn recency_never_lets_a_non_match_outrank_a_match(pool in arb_pool()) {
        let now = day(2026, 9, 15);
        let any_match = pool.iter().any(|c| P.matches(c));
        let out = recall(pool.clone(), true, None, now, &P, usize::MAX);
        if any_match {
            prop_assert_eq!(out.basis, Basis::Matched);
            for r in &out.ranked {
                for id in &r.members {
                    let member = pool.iter().find(|c| c.id == *id).expect("member from the pool");
                    prop_assert!(P.matches(member));
                }
            }
            let recalled: usize = out.ranked.iter().map(|r| r.count).sum();
            prop_assert_eq!(recalled, pool.iter().filter(|c| P.matches(c)).count());
        } else {
            prop_assert_eq!(out.basis, Basis::NothingMatched);
        }
    }

    /// The extreme pair: the freshest, most salient non-match against the
    /// oldest, least salient, weakest match.
    #[test]
    fn the_weakest_oldest_match_beats_the_freshest_non_match(
        age_days in 0i64..=2000, salience in 0.0f32..=1.0, cosine in 0.35f32..=1.0,
    ) {
        let now = day(2026, 9, 15);
        let non_match = Candidate { salience: 1.0, ..plain(1, now) };
        let weak = Candidate { salience, semantic: cosine, ..plain(2, now - Duration::days(age_days)) };
        let out = recall(vec![non_match, weak], true, None, now, &P, usize::MAX);
        prop_assert_eq!(ids(&out), vec![2]);
    }

    /// Collapse loses no episode: counts add up to the survivors of the gate,
    /// and every survivor is a member of exactly one group.
    #[test]
    fn collapse_preserves_the_total_count(pool in arb_pool(), question in any::<bool>()) {
        let now = day(2026, 9, 15);
        let out = recall(pool.clone(), question, None, now, &P, usize::MAX);
        let survivors = if out.basis == Basis::Matched {
            pool.iter().filter(|c| P.matches(c)).count()
        } else {
            pool.len()
        };
        prop_assert_eq!(out.ranked.iter().map(|r| r.count).sum::<usize>(), survivors);
        let mut members: Vec<i64> = out.ranked.iter().flat_map(|r| r.members.clone()).collect();
        members.sort_unstable();
        members.dedup();
        prop_assert_eq!(members.len(), survivors);
        for r in &out.ranked {
            prop_assert_eq!(r.count, r.members.len());
        }
    }

    /// The same pool in any order gives the same answer.
    #[test]
    fn results_are_deterministic(pool in arb_pool(), question in any::<bool>(), seed in any::<u64>()) {
        let now = day(2026, 9, 15);
        let mut shuffled = pool.clone();
        // A seeded rotation and reversal: enough to change the input order.
        let n = shuffled.len();
        shuffled.rotate_left((seed as usize) % n);
        if seed % 2 == 0 {
            shuffled.reverse();
        }
        let a = recall(pool, question, None, now, &P, usize::MAX);
        let b = recall(shuffled, question, None, now, &P, usize::MAX);
        prop_assert_eq!(a, b);
    }

    /// What a sitting lends stays a share: relevance and context lie in
    /// [0, 1], and a match never ranks on less than its own relevance.
    #[test]
    fn context_only_adds_and_stays_a_share(pool in arb_pool()) {
        let now = day(2026, 9, 15);
        let out = recall(pool.clone(), true, None, now, &P, usize::MAX);
        let scale = P.semantic_scale(&pool);
        for r in &out.ranked {
            prop_assert!((0.0..=1.0).contains(&r.context), "{}", r.context);
            prop_assert!((0.0..=1.0).contains(&r.relevance), "{}", r.relevance);
            // A long episode borrows nothing.
            if r.candidate.long {
                prop_assert_eq!(r.context, 0.0);
            }
            if out.basis == Basis::Matched {
                prop_assert!(r.relevance >= P.relevance(&r.candidate, &scale) - 1e-6);
            }
        }
    }

    /// A limit cuts the list, never the counts: the first k groups are the
    /// same, members and all, as without a limit.
    #[test]
    fn a_limit_is_a_prefix_of_the_full_ranking(pool in arb_pool(), question in any::<bool>(), k in 0usize..8) {
        let now = day(2026, 9, 15);
        let full = recall(pool.clone(), question, None, now, &P, usize::MAX);
        let cut = recall(pool, question, None, now, &P, k);
        prop_assert_eq!(&cut.ranked[..], &full.ranked[..k.min(full.ranked.len())]);
    }
}

/// The helpers fit together: terms from the question, overlap and narration
/// flags from episode texts, then the gate, in several languages.
#[test]
fn questions_in_many_languages_recall_their_episodes() {
    let now = day(2026, 9, 20);
    let texts = [
        "La ósmosis es el paso de agua a través de una membrana",
        "Die Zellmembran trennt die Zelle von ihrer Umgebung",
        "La mitosi divide una cellula in due",
        "Fotosintesis terjadi di kloroplas",
        "الخلية هي الوحدة الأساسية للحياة",
        "In July we covered osmosis, mitosis and the cell membrane",
        "Quiz: 7/10 on enzymes",
    ];
    let episodes = |question: &str| -> Vec<Candidate> {
        let terms = distinctive_terms(question);
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| Candidate {
                lexical: lexical_overlap(&terms, text),
                narration: narrates_period(text),
                collapse_key: collapse_key("answer", text, None, None),
                ..plain(i as i64, now - Duration::days(30 * i as i64 + 1))
            })
            .collect()
    };
    for (question, want) in [
        ("¿Qué es la ósmosis? Explícame", 0),
        ("Erkläre mir die Zellmembran", 1),
        ("Spiegami la mitosi", 2),
        ("Jelaskan apa itu fotosintesis", 3),
        ("ما هي الخلية؟", 4),
    ] {
        let out = recall(episodes(question), true, None, now, &P, 5);
        assert_eq!(out.basis, Basis::Matched, "{question}");
        let got = ids(&out);
        assert_eq!(got.first(), Some(&want), "{question}");
        assert!(!got.contains(&6), "the quiz matches nothing: {question}");
    }
    // The narration is flagged, so a window over its day keeps it out.
    let pool = episodes("what did we cover");
    assert!(pool[5].narration && !pool[0].narration);
    let at5 = pool[5].at;
    let out = recall(
        pool,
        false,
        Some((at5 - Duration::days(1), at5 + Duration::days(1))),
        now,
        &P,
        5,
    );
    assert!(out.window_empty);
}

#[test]
fn routing_by_vector_takes_the_closest_concepts_above_the_floor() {
    let p = RecallParams::MINILM;
    let scored = vec![
        ("osmosis".to_string(), 0.41),
        ("photosynthesis".to_string(), 0.72),
        ("cell membrane".to_string(), 0.55),
        ("mitosis".to_string(), 0.55),
        ("diffusion".to_string(), 0.51),
        ("noise".to_string(), f32::NAN),
    ];
    // Floor 0.5 and at most 3: osmosis (0.41) and the fourth (diffusion) stay out;
    // the tie at 0.55 is broken by key.
    assert_eq!(
        p.route_by_vector(&scored),
        vec!["photosynthesis", "cell membrane", "mitosis"]
    );
    assert!(p.route_by_vector(&[("osmosis".into(), 0.49)]).is_empty());
}

/// Issue 9 (LoCoMo): an episode that matches the question both by its words
/// and by its meaning, each moderately, is better evidence than one that
/// matches by one signal a little more strongly; with the strongest single
/// signal as relevance it ranked below.
#[test]
fn agreeing_signals_outrank_a_single_stronger_one() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(10);
    let both = Candidate {
        lexical: 0.5,
        semantic: 0.3 + 0.5 * 0.5, // rescaled semantic 0.5
        ..plain(1, t)
    };
    let one = Candidate {
        lexical: 0.6,
        ..plain(2, t)
    };
    // A paraphrase in the pool keeps the semantic scale at its default.
    let paraphrase = Candidate {
        semantic: 0.9,
        ..plain(3, t)
    };
    let out = recall(vec![one, both, paraphrase], true, None, now, &P, 10);
    assert_eq!(ids(&out), [3, 1, 2]);
    let b = BEST_OF_POOL;
    assert!((out.ranked[1].relevance - (1.0 - (1.0 - 0.5 * b).powi(2))).abs() < 1e-3);
    // One strong signal alone keeps its value (as a share of the pool's best).
    assert!((out.ranked[2].relevance - 0.6 * b).abs() < 1e-6);
}

/// Issue 17 (LoCoMo `past_budget`): when a question's closest neighbour is
/// far from paraphrase level, the semantic signal is relative to it, as the
/// lexical one is relative to the best full-text hit — so a turn that
/// matches by meaning alone is not outweighed by any turn sharing one word.
#[test]
fn the_semantic_signal_is_relative_to_the_questions_best_neighbour() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(10);
    let near = Candidate {
        semantic: 0.6,
        ..plain(1, t)
    };
    let word = Candidate {
        lexical: 0.3,
        ..plain(2, t)
    };
    let out = recall(vec![word.clone(), near.clone()], true, None, now, &P, 10);
    assert_eq!(ids(&out), [1, 2]);
    assert!((out.ranked[0].relevance - BEST_OF_POOL).abs() < 1e-6);
    assert_eq!(P.semantic_full_for([0.6, 0.2]), 0.6);
    // Never below the middle of the scale (a best neighbour that barely
    // clears the floor is not a close one); above paraphrase level, or with
    // nothing at the floor, the scale is the default.
    let middle = (P.semantic_floor + P.semantic_full) / 2.0;
    assert!(P.semantic_floor < 0.4 && 0.4 < middle);
    assert!((P.semantic_full_for([0.4, 0.2]) - middle).abs() < 1e-6);
    assert_eq!(P.semantic_full_for([0.95]), P.semantic_full);
    assert_eq!(P.semantic_full_for([0.1, f32::NAN]), P.semantic_full);
    assert_eq!(P.semantic_full_for([]), P.semantic_full);
    // The gate does not move: a cosine below the floor matches nothing.
    let faint = Candidate {
        semantic: P.semantic_floor - 0.05,
        ..plain(3, t)
    };
    let out = recall(vec![faint, word], true, None, now, &P, 10);
    assert_eq!(ids(&out), [2]);
}

/// `centred_cosine` from dot products is the cosine of the two difference
/// vectors computed directly.
#[test]
fn the_centred_cosine_is_the_cosine_of_the_differences() {
    fn unit(v: [f32; 4]) -> [f32; 4] {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.map(|x| x / n)
    }
    let dot = |a: &[f32; 4], b: &[f32; 4]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let q = unit([0.9, 0.3, 0.2, 0.1]);
    let m = [0.3, 0.25, 0.0, 0.05];
    for d in [
        unit([0.8, 0.5, 0.0, 0.2]),
        unit([0.1, 0.2, 0.9, 0.3]),
        unit([-0.4, 0.1, 0.2, 0.9]),
    ] {
        let (qm, dm): ([f32; 4], [f32; 4]) = (
            std::array::from_fn(|i| q[i] - m[i]),
            std::array::from_fn(|i| d[i] - m[i]),
        );
        let direct = dot(&qm, &dm) / (dot(&qm, &qm) * dot(&dm, &dm)).sqrt();
        let got = centred_cosine(dot(&q, &d), dot(&q, &m), dot(&d, &m), dot(&m, &m));
        assert!((got - direct).abs() < 1e-5, "{got} against {direct}");
    }
    // With no mean taken it is the cosine itself; a vanishing difference gives 0.
    assert!((centred_cosine(0.42, 0.0, 0.0, 0.0) - 0.42).abs() < 1e-6);
    assert_eq!(centred_cosine(1.0, 1.0, 1.0, 1.0), 0.0);
    assert_eq!(centred_cosine(f32::NAN, 0.0, 0.0, 0.0), 0.0);
}

/// Issue 17 (LoCoMo open-domain, `past_budget`): a greeting close to the
/// question only by what every turn of the subject holds (the speakers'
/// names) has the higher cosine; the turn that answers it has the higher
/// centred one, and ranks first. The gate stays with the cosine: a turn under
/// the floor does not match, whatever its centred cosine.
#[test]
fn a_match_ranks_by_what_sets_it_apart_and_the_gate_stays_with_the_cosine() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(10);
    let greeting = Candidate {
        semantic: 0.6,
        centred: Some(0.2),
        ..plain(1, t)
    };
    let answer = Candidate {
        semantic: 0.52,
        centred: Some(0.4),
        ..plain(2, t - Duration::days(1))
    };
    let faint = Candidate {
        semantic: P.semantic_floor - 0.01,
        centred: Some(0.9),
        ..plain(3, t)
    };
    let pool = vec![greeting, answer, faint];
    let out = recall(pool.clone(), true, None, now, &P, 10);
    assert_eq!(ids(&out), [2, 1]);
    assert!((out.ranked[0].relevance - BEST_OF_POOL).abs() < 1e-6);
    assert!((out.ranked[1].relevance - BEST_OF_POOL * 0.5).abs() < 1e-6);
    // The best centred cosine is over the matches alone.
    assert_eq!(P.semantic_scale(&pool).centred_best, Some(0.4));
    // Without centred cosines the raw ones rank, as before.
    let raw: Vec<Candidate> = pool
        .into_iter()
        .map(|c| Candidate { centred: None, ..c })
        .collect();
    assert_eq!(ids(&recall(raw, true, None, now, &P, 10)), [1, 2]);
}

/// A question whose closest neighbour barely clears the floor keeps its
/// damping with centred cosines: the best of them gets what that neighbour's
/// cosine gets on the raw scale, not full weight.
#[test]
fn a_weak_best_neighbour_stays_weak_when_centred() {
    let t = day(2026, 9, 1);
    let weak = Candidate {
        semantic: 0.4,
        centred: Some(0.3),
        ..plain(1, t)
    };
    let scale = P.semantic_scale([&weak]);
    let middle = (P.semantic_floor + P.semantic_full) / 2.0;
    let top = (0.4 - P.semantic_floor) / (middle - P.semantic_floor);
    assert!((scale.top - top).abs() < 1e-6 && top < 1.0);
    assert!((P.relevance(&weak, &scale) - BEST_OF_POOL * top).abs() < 1e-6);
    // A centred best at or under 0 leaves the raw scale in charge.
    let under = Candidate {
        centred: Some(-0.1),
        ..weak.clone()
    };
    assert_eq!(P.semantic_scale([&under]).centred_best, None);
}

/// Issue 17 (LoCoMo `past_budget`): a turn that matches weakly, by meaning
/// alone, in the sitting where another turn matches the question strongly
/// belongs to that exchange, and outranks an equal match said alone on
/// another day; a turn of another sitting, or one that does not match at
/// all, gets nothing from it.
#[test]
fn a_weak_match_borrows_from_the_strong_matches_of_its_sitting() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(30);
    let strong = Candidate {
        seq: 100,
        lexical: 1.0,
        ..plain(1, t)
    };
    let weak = |id: i64, seq: u64, at: DateTime<Utc>| Candidate {
        seq,
        semantic: 0.5,
        ..plain(id, at)
    };
    // Two turns later, in the same sitting.
    let in_sitting = weak(2, 102, t + Duration::minutes(3));
    // The same signals, said alone and later (it would win the tie).
    let alone = weak(3, 500, now - Duration::days(1));
    // Next to the strong match but not matching: the gate keeps it out.
    let unmatched = Candidate {
        seq: 101,
        ..plain(4, t + Duration::minutes(1))
    };
    // A match three places before the strong one, in the same sitting: too
    // far to lend or borrow.
    let far = Candidate {
        seq: 97,
        lexical: 0.3,
        ..plain(5, t - Duration::minutes(2))
    };
    let pool = vec![
        alone.clone(),
        in_sitting.clone(),
        strong.clone(),
        unmatched,
        far,
    ];
    let out = recall(pool.clone(), true, None, now, &P, 10);
    assert_eq!(ids(&out), [1, 2, 3, 5]);
    let lent = |id: i64| {
        out.ranked
            .iter()
            .find(|r| r.candidate.id == id)
            .map(|r| r.context)
    };
    assert_eq!(lent(3), Some(0.0));
    assert_eq!(lent(5), Some(0.0));
    // Half of the strong match's relevance, joined by the probabilistic OR.
    let own = P.relevance(&in_sitting, &P.semantic_scale(&pool));
    let share = CONTEXT_SHARE * BEST_OF_POOL;
    assert!((lent(2).unwrap() - share).abs() < 1e-6);
    assert!((out.ranked[1].relevance - (1.0 - (1.0 - own) * (1.0 - share))).abs() < 1e-6);
    // The strong match borrows from the weak one in turn.
    assert!(lent(1).unwrap() > 0.0);

    // Two hours later is another sitting: nothing is lent, the newer wins.
    let later = weak(2, 102, t + Duration::hours(2));
    let out = recall(vec![alone, later, strong], true, None, now, &P, 10);
    assert_eq!(ids(&out), [1, 3, 2]);
    assert!(out.ranked.iter().all(|r| r.context == 0.0));
}

/// Issue 43 (LongMemEval with distractor sessions, `past_budget`): a long
/// turn (a tutor's paragraph) stands on its own evidence and borrows nothing
/// from its sitting, though it still lends to the short turns beside it. Four
/// such paragraphs around the learner's own short turn that holds the fact
/// used to borrow from each other and from it until two outranked it.
#[test]
fn a_long_turn_borrows_nothing_from_its_sitting_but_still_lends() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(10);
    let paragraph = |id: i64, seq: u64, minutes: i64| Candidate {
        seq,
        kind: "answer".into(),
        salience: 0.40,
        lexical: 0.6,
        semantic: 0.5,
        long: true,
        ..plain(id, t + Duration::minutes(minutes))
    };
    let fact = Candidate {
        seq: 101,
        lexical: 0.7,
        semantic: 0.55,
        ..plain(2, t + Duration::minutes(1))
    };
    let pool = vec![
        paragraph(1, 100, 0),
        fact.clone(),
        paragraph(3, 102, 2),
        paragraph(4, 103, 3),
        paragraph(5, 99, -1),
    ];
    let out = recall(pool.clone(), true, None, now, &P, 10);
    assert_eq!(ids(&out)[0], 2, "the learner's own turn ranks first");
    let scale = P.semantic_scale(&pool);
    for r in &out.ranked {
        let own = P.relevance(&r.candidate, &scale);
        if r.candidate.long {
            assert_eq!(r.context, 0.0);
            assert!((r.relevance - own).abs() < 1e-6);
        } else {
            assert!(
                r.context > 0.0,
                "a short turn still borrows from the paragraphs"
            );
        }
    }

    // The same five as short turns: every one borrows until all stand near
    // relevance 1, and the two paragraphs next to the fact pass it on
    // salience alone.
    let short: Vec<Candidate> = pool
        .iter()
        .map(|c| Candidate {
            long: false,
            ..c.clone()
        })
        .collect();
    let out = recall(short, true, None, now, &P, 10);
    assert!(out.ranked.iter().all(|r| r.context > 0.0));
    assert!(out.ranked.iter().all(|r| r.relevance > 0.93));
    assert_eq!(ids(&out)[..3], [3, 1, 2]);
}

/// Twins (one memory said twice in a sitting) lend each other nothing: a
/// memory is not its own context.
#[test]
fn twins_in_a_sitting_lend_each_other_nothing() {
    let now = day(2026, 9, 15);
    let t = now - Duration::days(3);
    let twin = |id: i64, seq: u64, at: DateTime<Utc>| Candidate {
        seq,
        semantic: 0.5,
        collapse_key: collapse_key("check", "", Some("osmosis"), Some("wrong")),
        ..plain(id, at)
    };
    let out = recall(
        vec![twin(1, 10, t), twin(2, 11, t + Duration::minutes(1))],
        true,
        None,
        now,
        &P,
        10,
    );
    assert_eq!(out.ranked.len(), 1);
    assert_eq!(out.ranked[0].count, 2);
    assert_eq!(out.ranked[0].context, 0.0);
}

/// Issue 17 (LoCoMo `past_budget`): the best of the pool by one signal alone
/// is strong evidence, not proof, so a turn that both signals put at their
/// top outranks one that reached the top by either alone — which all tied at
/// relevance 1 before, and the newer won.
#[test]
fn the_top_of_both_signals_outranks_the_top_of_one() {
    let now = day(2026, 9, 15);
    let by_words = Candidate {
        lexical: 1.0,
        ..plain(1, now - Duration::days(1))
    };
    let by_meaning = Candidate {
        semantic: 0.6,
        ..plain(2, now - Duration::days(2))
    };
    let by_both = Candidate {
        lexical: 0.96,
        semantic: 0.6,
        ..plain(3, now - Duration::days(40))
    };
    let out = recall(vec![by_words, by_meaning, by_both], true, None, now, &P, 10);
    assert_eq!(ids(&out)[0], 3);
    assert!(out.ranked[0].relevance > out.ranked[1].relevance);
    assert!(out.ranked.iter().all(|r| r.relevance < 1.0));
}
