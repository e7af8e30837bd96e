use super::*;
use crate::episodes::{Evidence, Kind, Verdict, VersionRef};
use chrono::{DateTime, Duration, TimeZone, Utc};

fn t(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0).unwrap()
}

fn ep(seq: u64, kind: Kind, at: DateTime<Utc>, salience: f64, summary: &str) -> DayEpisode {
    DayEpisode {
        seq,
        kind,
        at,
        salience,
        summary: summary.into(),
        verdict: None,
        concepts: Vec::new(),
    }
}

fn pred(p: f64, o: f64) -> Prediction {
    Prediction {
        predicted: p,
        outcome: o,
    }
}

#[test]
fn ece_brier_and_log_loss_match_a_hand_computed_set() {
    // Bins: 0.95 → [0.9,1.0), 0.85 → [0.8,0.9), 0.25 twice → [0.2,0.3), 0.55 → [0.5,0.6).
    // ECE = 1/5·0.05 + 1/5·0.15 + 2/5·|0.25 − 0.5| + 1/5·0.05 = 0.15.
    // Brier = (0.0025 + 0.0225 + 0.0625 + 0.5625 + 0.0025) / 5 = 0.1305.
    // Log loss = −(ln .95 + ln .85 + ln .75 + ln .25 + ½ ln .55 + ½ ln .45) / 5 = 0.517192.
    let c = calibrate(&[
        pred(0.95, 1.0),
        pred(0.85, 1.0),
        pred(0.25, 0.0),
        pred(0.25, 1.0),
        pred(0.55, 0.5),
    ]);
    assert_eq!(c.n, 5);
    assert!((c.ece.unwrap() - 0.15).abs() < 1e-12, "{c:?}");
    assert!((c.brier.unwrap() - 0.1305).abs() < 1e-12, "{c:?}");
    assert!((c.log_loss.unwrap() - 0.517192).abs() < 1e-6, "{c:?}");
    assert_eq!(c.bins.len(), 10);
    assert_eq!(c.bins[2].n, 2);
    assert_eq!(c.bins[2].mean_outcome, Some(0.5));
    assert_eq!(c.bins[0].mean_predicted, None);
    // Five checks but an average miss of 15 points: not calibrated.
    assert_eq!(c.status, Status::Miscalibrated);
}

#[test]
fn calibrated_only_from_five_predicted_checks() {
    let perfect = |n: usize| (0..n).map(|_| pred(1.0, 1.0)).collect::<Vec<_>>();
    let four = calibrate(&perfect(4));
    assert_eq!(four.ece, Some(0.0));
    assert_eq!(four.status, Status::TooFew);
    assert!(!four.calibrated());
    let five = calibrate(&perfect(5));
    assert_eq!(five.status, Status::Calibrated);
    // p = 1 is clamped: the log loss is tiny but finite, and a sure miss is finite too.
    assert!(five.log_loss.unwrap() > 0.0 && five.log_loss.unwrap() < 1e-5);
    let miss = calibrate(&[pred(0.0, 1.0)]);
    assert!((miss.log_loss.unwrap() - 13.815510557964274).abs() < 1e-6);
}

#[test]
fn predictions_outside_zero_one_are_set_aside_not_trusted() {
    let c = calibrate(&[pred(f64::NAN, 1.0), pred(1.5, 1.0), pred(0.5, 0.5)]);
    assert_eq!((c.n, c.ignored), (1, 2));
    assert_eq!(calibrate(&[]).ece, None);
}

#[test]
fn a_quiet_day_consolidates_to_nothing() {
    assert_eq!(consolidate(&[], t(1, 0), t(2, 0)), None);
    // Only an earlier consolidation that day: still quiet.
    let only = [ep(1, Kind::Consolidation, t(1, 5), 0.45, "Day …")];
    assert_eq!(consolidate(&only, t(1, 0), t(2, 0)), None);
    // Outside the window: quiet.
    let old = [ep(2, Kind::Question, t(3, 5), 0.35, "q")];
    assert_eq!(consolidate(&old, t(1, 0), t(2, 0)), None);
}

#[test]
fn a_day_is_counted_tallied_and_headlined_without_its_consolidations() {
    let mut eps = vec![
        ep(1, Kind::Question, t(1, 9), 0.35, "What is osmosis?"),
        ep(2, Kind::Answer, t(1, 9), 0.40, "Osmosis is…"),
        ep(3, Kind::Check, t(1, 10), 0.70, "Check on osmosis: wrong"),
        ep(4, Kind::Check, t(1, 11), 0.60, "Check on osmosis: right"),
        ep(
            5,
            Kind::Check,
            t(1, 12),
            0.65,
            "Check on diffusion: partial",
        ),
        ep(6, Kind::Taught, t(1, 13), 0.85, "Remember: mitochondria"),
        ep(7, Kind::Consolidation, t(1, 14), 0.99, "an earlier digest"),
        ep(8, Kind::Question, t(1, 15), 0.35, "And diffusion?"),
    ];
    eps[2].verdict = Some(Verdict::Wrong);
    eps[3].verdict = Some(Verdict::Right);
    eps[4].verdict = Some(Verdict::Partial);
    eps[2].concepts = vec!["Osmosis".into()];
    eps[3].concepts = vec!["Osmosis".into()];
    eps[4].concepts = vec!["Diffusion".into()];
    let c = consolidate(&eps, t(1, 0), t(2, 0)).unwrap();
    assert_eq!(c.total(), 7);
    assert_eq!(c.counts[&Kind::Check], 3);
    assert!(!c.counts.contains_key(&Kind::Consolidation));
    assert_eq!(
        c.checks,
        Tally {
            right: 1,
            wrong: 1,
            partial: 1
        }
    );
    assert_eq!(c.topics, vec!["Osmosis", "Diffusion"]);
    let seqs: Vec<u64> = c.headlines.iter().map(|h| h.seq).collect();
    assert_eq!(seqs, vec![6, 3, 5, 4, 2]);
    assert_eq!(c.external_id(), "consolidation:2026-03-01");
    assert!(
        c.text().contains("Checks: 1 right, 1 wrong, 1 partial."),
        "{}",
        c.text()
    );
    assert!(!c.text().contains("earlier digest"));
}

fn v(id: i64, name: &str, version: i64, removed: bool) -> VersionFacts {
    VersionFacts {
        id,
        name: name.into(),
        version,
        sha256: format!("sha{id}"),
        removed,
    }
}

fn cite(version: i64, file: &str) -> Evidence {
    Evidence {
        file: file.into(),
        version: VersionRef::Id(version),
        page: Some(1),
        sha256: format!("sha{version}"),
    }
}

#[test]
fn citations_hold_change_or_are_unverifiable() {
    let versions = [v(1, "notes.md", 1, false)];
    assert_eq!(verify(&[cite(1, "notes.md")], &versions), Citation::Holds);
    assert_eq!(verify(&[], &versions).label(), "unverifiable");
    let replaced = [v(1, "notes.md", 1, false), v(2, "notes.md", 2, false)];
    assert_eq!(
        verify(&[cite(1, "notes.md")], &replaced).label(),
        "changed: replaced by notes.md v2"
    );
    let removed = [v(1, "notes.md", 1, true)];
    assert_eq!(
        verify(&[cite(1, "notes.md")], &removed).label(),
        "changed: removed"
    );
    // Removed, then added again: the new version replaces what was cited.
    let readded = [v(1, "notes.md", 1, true), v(2, "notes.md", 2, false)];
    assert_eq!(
        verify(&[cite(1, "notes.md")], &readded).label(),
        "changed: replaced by notes.md v2"
    );
    // A version the store does not hold reads as removed, never as holding.
    assert_eq!(
        verify(&[cite(9, "gone.md")], &versions).label(),
        "changed: removed"
    );
    let two = [
        v(1, "a.md", 1, true),
        v(2, "b.md", 1, false),
        v(3, "b.md", 2, false),
    ];
    assert_eq!(
        verify(&[cite(1, "a.md"), cite(2, "b.md")], &two).label(),
        "changed: a.md removed; b.md replaced by b.md v2"
    );
}

#[test]
fn evidence_by_version_number_reads_like_evidence_by_id() {
    let number = |n: i64, file: &str| Evidence {
        version: VersionRef::Number(n),
        ..cite(0, file)
    };
    // Ids from another store (40, 41) do not matter: the number does.
    let replaced = [v(40, "notes.md", 1, false), v(41, "notes.md", 2, false)];
    assert_eq!(
        verify(&[number(1, "notes.md")], &replaced).label(),
        "changed: replaced by notes.md v2"
    );
    let current = [v(40, "notes.md", 1, false), v(41, "notes.md", 2, false)];
    let mut holds = number(2, "notes.md");
    holds.sha256 = "sha41".into();
    assert_eq!(verify(&[holds], &current), Citation::Holds);
    // Number 1 of another file is not this file's version 1.
    assert_eq!(
        verify(&[number(1, "other.md")], &current).label(),
        "changed: removed"
    );
    // The two shapes as stored: a number, or (written before) a row id.
    let json = serde_json::to_string(&number(2, "notes.md")).unwrap();
    assert!(
        json.contains("\"number\":2") && !json.contains("\"version\""),
        "{json}"
    );
    let old: Evidence =
        serde_json::from_str(r#"{"file":"a.md","version":7,"sha256":"ab"}"#).unwrap();
    assert_eq!(old.version, VersionRef::Id(7));
}
#[test]
fn self_model_says_ranking_until_calibrated() {
    let few = calibrate(&[pred(0.5, 1.0)]);
    let input = SelfModelInput {
        at: t(1, 0),
        episodes: Default::default(),
        beliefs: 2,
        flagged: 1,
        checks_recorded: 3,
        checks_linked: 1,
        calibration: &few,
        stale_citations: 11,
        unverifiable: 4,
    };
    let m = compose(&input);
    assert!(!m.calibrated);
    assert!(
        m.how_to_use
            .contains("treat confidence as a ranking, not a probability")
    );
    assert!(
        m.how_to_use
            .contains("1 belief went 45 days without a check")
    );
    assert!(m.how_to_use.contains("11 memories cite a file"));
    assert!(m.how_to_use.contains("2 of 3 checks could not be linked"));
    let good = calibrate(&[pred(0.95, 1.0); 6]);
    let m = compose(&SelfModelInput {
        calibration: &good,
        ..input
    });
    assert!(m.calibrated);
    assert!(!m.how_to_use.contains("ranking"), "{}", m.how_to_use);
}

#[test]
fn working_set_keeps_recent_salient_episodes_and_knows_when_it_is_stale() {
    let at = t(20, 0);
    let recent = vec![
        working_set::WsEpisode {
            id: 1,
            at: at - Duration::days(40),
            kind: Kind::Taught,
            salience: 0.85,
            summary: "old".into(),
        },
        working_set::WsEpisode {
            id: 2,
            at: at - Duration::days(2),
            kind: Kind::Question,
            salience: 0.35,
            summary: "plain".into(),
        },
        working_set::WsEpisode {
            id: 3,
            at: at - Duration::days(1),
            kind: Kind::Check,
            salience: 0.70,
            summary: "miss".into(),
        },
    ];
    let stamp = Stamp {
        head_seq: 3,
        map: 0,
    };
    let ws = working_set::build(
        at,
        stamp,
        &[],
        &crate::map::ConceptMap::new(),
        &recent,
        0,
        0,
        None,
    );
    let ids: Vec<i64> = ws.salient.iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![3]);
    assert!(ws.fresh(stamp));
    assert!(!ws.fresh(Stamp {
        head_seq: 4,
        map: 0
    }));
}

#[test]
fn report_labels_fall_back_to_english() {
    let de = report::Labels::for_language(Some("de-AT"));
    assert_eq!(de.get("activity"), "Aktivität nach Monat");
    let xx = report::Labels::for_language(Some("xx"));
    assert_eq!(xx.get("activity"), "Activity by month");
    assert_eq!(xx.get("no-such-key"), "no-such-key");
    // Every language file has every English key.
    let en = report::Labels::for_language(None);
    for lang in crate::lang::LANGS {
        let l = report::Labels::for_language(Some(lang));
        for key in ["title", "not_mastery", "couldnt", "stale", "calibration"] {
            assert!(
                !l.get(key).is_empty()
                    && (lang == "en" || l.get(key) != en.get(key) || key == "calibration"),
                "{lang} {key}"
            );
        }
    }
}
