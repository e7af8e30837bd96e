//! The subject report for a teacher or learner, gathered from the stores:
//! readiness of the material (labelled as not mastery), teaching order,
//! current beliefs with their history, the checks and the honest sentence,
//! calibration, stale citations, the questions the files could not answer,
//! and activity by month. [`tm_model::nightly::render_text`] prints it; it
//! serialises as JSON for the service.

use crate::Result;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};
use tm_model::beliefs::render_history;
use tm_model::episodes::Episode;
use tm_model::episodes::Kind;
use tm_model::map::{subject_readiness, teaching_order};
use tm_model::nightly::calibrate;
use tm_model::nightly::report::{
    BeliefReport, ChecksReport, ConceptReadiness, Labels, MonthActivity, Readiness, Report,
    StaleCitation, Unanswered,
};
use tm_model::subject::Subject;
use tm_store::Reader;

/// Annotation kind the grounding step writes on answers (docs/mechanisms.md §7).
pub const GROUNDING_ANNOTATION: &str = "grounding";
/// The stance of an answer the files could not support.
pub const COULDNT: &str = "couldnt";

/// The report on `subject` as of `at`: calibration counts the checks up to
/// `at`; the rest is the stores' current state.
pub fn build(store: &dyn Reader, subject: &Subject, at: DateTime<Utc>) -> Result<Report> {
    let labels = Labels::for_language(subject.language.as_deref());
    let map = crate::map::load(store, subject)?;

    let mut concepts: Vec<ConceptReadiness> = map
        .nodes()
        .iter()
        .map(|n| ConceptReadiness {
            name: n.name.clone(),
            readiness: n.readiness,
            centrality: n.centrality,
        })
        .collect();
    concepts.sort_by(|a, b| {
        b.centrality
            .total_cmp(&a.centrality)
            .then(a.name.cmp(&b.name))
    });
    let names: HashMap<&str, &str> = map
        .nodes()
        .iter()
        .map(|n| (n.key.as_str(), n.name.as_str()))
        .collect();
    let order = teaching_order(&map)
        .layers
        .iter()
        .map(|layer| {
            layer
                .iter()
                .map(|k| names.get(k.as_str()).copied().unwrap_or(k).to_string())
                .collect()
        })
        .collect();

    let mut beliefs = Vec::new();
    for b in store.current_beliefs(subject)? {
        let history = render_history(&store.belief_history(subject, &b.subject_key)?);
        beliefs.push(BeliefReport {
            concept: b.concept.clone().unwrap_or_else(|| b.subject_key.clone()),
            claim: b.claim.as_str().to_string(),
            confidence: b.confidence,
            flagged: b.flagged,
            unmapped: b.unmapped,
            history,
        });
    }

    let checks = store.episodes_of_kind(subject, Kind::Check, DateTime::<Utc>::MAX_UTC)?;
    let counts = crate::beliefs::counts_of(&crate::beliefs::recorded_checks_in(&checks), &map);
    let until: Vec<_> = checks.into_iter().filter(|e| e.at <= at).collect();
    let calibration = calibrate(&crate::nightly::predictions(&until));

    let stale_citations = stale_citations(store, subject)?;

    Ok(Report {
        subject: subject.key.to_string(),
        title: subject.title.clone(),
        language: subject.language.clone(),
        at,
        readiness: Readiness {
            material: subject_readiness(&map),
            note: labels.get("not_mastery").to_string(),
            concepts,
        },
        teaching_order: order,
        beliefs,
        checks: ChecksReport {
            recorded: counts.recorded,
            linked: counts.linked,
            unlinked: counts.recorded - counts.linked,
            evidence_only: counts.evidence_only,
            unmapped: counts.unmapped,
            sentence: counts.sentence,
        },
        calibration,
        stale_citations,
        couldnt_answer: couldnt_answer(store, subject)?,
        activity: activity(store, subject)?,
    })
}

/// Answers whose cited file has changed since they were given (the nightly
/// citation check said "changed").
pub(crate) fn stale_citations(store: &dyn Reader, subject: &Subject) -> Result<Vec<StaleCitation>> {
    let stale_checks = store.citation_checks(subject, "changed")?;
    let ids: Vec<i64> = stale_checks.iter().map(|c| c.episode_id).collect();
    let episodes: HashMap<i64, Episode> = store
        .subject_episodes_by_ids(subject, &ids)?
        .into_iter()
        .map(|e| (e.id, e))
        .collect();
    Ok(stale_checks
        .iter()
        .filter_map(|c| {
            let e = episodes.get(&c.episode_id)?;
            Some(StaleCitation {
                episode_id: e.id,
                at: e.at,
                kind: e.kind.as_str().to_string(),
                summary: e.summary.clone(),
                change: c.label.clone(),
                checked_at: c.checked_at,
            })
        })
        .collect())
}

/// Answers whose latest grounding annotation has stance "couldnt", with the
/// learner's question just before each when there is one.
fn couldnt_answer(store: &dyn Reader, subject: &Subject) -> Result<Vec<Unanswered>> {
    // The newest annotation of an episode supersedes the older ones.
    let mut latest: BTreeMap<i64, serde_json::Value> = BTreeMap::new();
    for a in store.annotations_of_kind(subject, GROUNDING_ANNOTATION)? {
        latest.insert(a.episode_id, a.data);
    }
    let ids: Vec<i64> = latest
        .iter()
        .filter(|(_, d)| {
            // "couldn't" as docs/mechanisms.md §7 spells it in prose is read the same.
            matches!(
                d.get("stance").and_then(|s| s.as_str()),
                Some(COULDNT | "couldn't")
            )
        })
        .map(|(id, _)| *id)
        .collect();
    let mut out = Vec::new();
    for e in store.subject_episodes_by_ids(subject, &ids)? {
        let question = match e.seq.checked_sub(1) {
            Some(seq) if seq > 0 => store
                .episode_at_seq(subject, seq)?
                .filter(|q| q.kind == Kind::Question)
                .map(|q| q.text),
            _ => None,
        };
        out.push(Unanswered {
            episode_id: e.id,
            at: e.at,
            question,
            answer: e.summary,
        });
    }
    out.sort_by_key(|u| (u.at, u.episode_id));
    Ok(out)
}

/// Episodes per month (UTC), consolidations left out: they are the memory's
/// own notes, not the learner's activity.
fn activity(store: &dyn Reader, subject: &Subject) -> Result<Vec<MonthActivity>> {
    let mut months: BTreeMap<String, MonthActivity> = BTreeMap::new();
    for (month, kind, verdict, n) in store.activity_by_month(subject)? {
        if kind == Kind::Consolidation.as_str() {
            continue;
        }
        let m = months.entry(month.clone()).or_insert(MonthActivity {
            month,
            episodes: 0,
            questions: 0,
            checks: 0,
            right: 0,
            wrong: 0,
            partial: 0,
        });
        m.episodes += n;
        if kind == Kind::Question.as_str() {
            m.questions += n;
        }
        if kind == Kind::Check.as_str() {
            m.checks += n;
            match verdict.as_str() {
                "right" => m.right += n,
                "wrong" => m.wrong += n,
                "partial" => m.partial += n,
                _ => {}
            }
        }
    }
    Ok(months.into_values().collect())
}
