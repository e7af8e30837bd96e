//! The nightly loop (docs/mechanisms.md §8): for every subject active in the 24 hours before
//! the run's instant T, one deterministic cycle with no model calls —
//! consolidate the day, decay untouched beliefs, calibrate predicted mastery,
//! verify a bounded batch of citations, rebuild the working set, recompose the
//! self-model.
//!
//! # Idempotent, and never half-written
//! Each subject's cycle runs in one transaction that ends by recording
//! `(subject, day)` in `nightly_runs`, where `day` is the UTC date of T − 24 h
//! (the day consolidated). The first thing the transaction reads is that
//! record: a second run for the same day writes nothing, and a crash half-way
//! through a subject leaves none of its writes.
//!
//! # Only active subjects
//! A subject is active when it has an episode (other than a consolidation) in
//! (T − 24 h, T]; a quiet subject is not visited at all, so its beliefs decay
//! on the first night after the learner returns (docs/mechanisms.md §8: the
//! night visits each learner's subject that was active in the day before it).
//!
//! # Catching up
//! `since` runs every missed night in day order: T − k·24 h for each k that
//! keeps the instant on or after `since` 00:00 UTC, oldest first, then T.

use crate::{Error, Result};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Serialize;
use serde_json::json;
use tm_model::beliefs::{DECAY_AFTER_DAYS, DECAY_FACTOR, decay};
use tm_model::episodes::{Episode, NewEpisode};
use tm_model::episodes::{Kind, salience};
use tm_model::nightly::calibration::{Prediction, outcome};
use tm_model::nightly::working_set::{self, WsEpisode};
use tm_model::nightly::{
    Citation, DayEpisode, SelfModel, SelfModelInput, Stamp, VersionFacts, WorkingSet, calibrate,
    compose, consolidate, verify,
};
use tm_model::subject::Subject;
use tm_store::{Reader, Store, StoreExt, Tx};

/// Citations verified per subject per night, by default.
pub const DEFAULT_BATCH: usize = 200;
/// Most nights one catch-up may run (ten years): a typo in `--since` should
/// fail, not loop for hours.
pub const MAX_NIGHTS: i64 = 3_660;
/// Annotation kind of a citation verification.
pub const CITATION_ANNOTATION: &str = "citation";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NightlyOptions {
    /// Citations verified per subject per night.
    pub batch: usize,
    /// Catch up every night from this day (UTC) on.
    pub since: Option<NaiveDate>,
}

impl Default for NightlyOptions {
    fn default() -> Self {
        NightlyOptions {
            batch: DEFAULT_BATCH,
            since: None,
        }
    }
}

/// One citation whose verification changed (or was made for the first time
/// and did not hold).
#[derive(Debug, Clone, Serialize)]
pub struct CitationResult {
    pub episode_id: i64,
    pub label: String,
}

/// What one night did to one subject.
#[derive(Debug, Clone, Serialize)]
pub struct SubjectNight {
    pub subject: String,
    /// The night had already run for this subject: nothing was written.
    pub skipped: bool,
    /// Id of the consolidation episode written, if the day was not quiet.
    pub consolidation: Option<i64>,
    /// Concepts whose belief decayed.
    pub decayed: Vec<String>,
    pub verified: usize,
    /// Verifications that found a changed or unverifiable citation for the first time.
    pub citations: Vec<CitationResult>,
    pub calibration: String,
    pub flagged: usize,
    pub stale_citations: usize,
}

/// One night over every active subject.
#[derive(Debug, Clone, Serialize)]
pub struct NightReport {
    pub at: DateTime<Utc>,
    pub day: NaiveDate,
    pub active: usize,
    pub ran: usize,
    pub skipped: usize,
    pub consolidated: usize,
    pub decayed: usize,
    pub verified: usize,
    pub subjects: Vec<SubjectNight>,
    /// Subjects whose night failed: nothing of it was written.
    pub failed: Vec<FailedSubject>,
}

/// A subject whose night was rolled back, and why.
#[derive(Debug, Clone, Serialize)]
pub struct FailedSubject {
    pub subject: String,
    pub error: String,
}

/// Every night a run covered, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct NightlyReport {
    pub nights: Vec<NightReport>,
}

impl NightlyReport {
    /// Subjects whose night failed, over every night.
    pub fn failures(&self) -> usize {
        self.nights.iter().map(|n| n.failed.len()).sum()
    }
}

/// The instants of the nights to run for `at` and `since`, oldest first.
pub fn nights(at: DateTime<Utc>, since: Option<NaiveDate>) -> Result<Vec<DateTime<Utc>>> {
    let Some(since) = since else {
        return Ok(vec![at]);
    };
    let start = since
        .and_hms_opt(0, 0, 0)
        .map(|d| d.and_utc())
        .ok_or_else(|| Error::OutOfRange(format!("--since {since} is not a day")))?;
    if start > at {
        return Err(Error::OutOfRange(format!(
            "--since {since} is after --at {}",
            at.to_rfc3339()
        )));
    }
    let k = (at - start).num_days();
    if k > MAX_NIGHTS {
        return Err(Error::TooLarge(format!(
            "--since {since} asks for {k} nights; at most {MAX_NIGHTS} are run at once"
        )));
    }
    Ok((0..=k).rev().map(|i| at - Duration::days(i)).collect())
}

/// Runs the night(s) ending at `at`.
pub fn run(
    store: &mut dyn Store,
    at: DateTime<Utc>,
    opts: &NightlyOptions,
) -> Result<NightlyReport> {
    run_with_progress(store, at, opts, &mut |_, _| {})
}

/// [`run`], calling `progress(done, total)` after each subject of each night.
pub fn run_with_progress(
    store: &mut dyn Store,
    at: DateTime<Utc>,
    opts: &NightlyOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<NightlyReport> {
    if opts.batch == 0 {
        return Err(Error::OutOfRange(
            "the citation batch must be at least 1".into(),
        ));
    }
    let instants = nights(at, opts.since)?;
    let mut plan = Vec::with_capacity(instants.len());
    for t in &instants {
        plan.push((*t, store.active_subjects(*t - Duration::days(1), *t)?));
    }
    let total: usize = plan.iter().map(|(_, s)| s.len()).sum();
    let mut done = 0;
    let mut report = NightlyReport { nights: Vec::new() };
    for (t, subjects) in plan {
        let from = t - Duration::days(1);
        let day = from.date_naive();
        let mut night = NightReport {
            at: t,
            day,
            active: subjects.len(),
            ran: 0,
            skipped: 0,
            consolidated: 0,
            decayed: 0,
            verified: 0,
            subjects: Vec::with_capacity(subjects.len()),
            failed: Vec::new(),
        };
        for subject in &subjects {
            // A subject whose night fails is rolled back and reported; the
            // others still run (one bad row must not cost every learner a night).
            let s = match store.write_with(|tx| night_for(tx, subject, t, opts.batch, None)) {
                Ok(s) => s,
                Err(e) => {
                    night.failed.push(FailedSubject {
                        subject: subject.key.to_string(),
                        error: e.to_string(),
                    });
                    done += 1;
                    progress(done, total);
                    continue;
                }
            };
            if s.skipped {
                night.skipped += 1;
            } else {
                night.ran += 1;
            }
            night.consolidated += s.consolidation.is_some() as usize;
            night.decayed += s.decayed.len();
            night.verified += s.verified;
            night.subjects.push(s);
            done += 1;
            progress(done, total);
        }
        report.nights.push(night);
    }
    Ok(report)
}

fn json_err(e: serde_json::Error) -> Error {
    Error::Internal(format!("cannot serialise a nightly result: {e}"))
}

/// One subject's cycle, inside its transaction. `salt` seals its
/// consolidation (a re-import of an export passes the one it recorded;
/// `None` draws a fresh one).
pub(crate) fn night_for(
    tx: &mut dyn Tx,
    subject: &Subject,
    at: DateTime<Utc>,
    batch: usize,
    salt: Option<[u8; tm_model::episodes::SALT_BYTES]>,
) -> Result<SubjectNight> {
    // One night per subject at a time, whichever process runs it.
    tx.lock_subject(subject)?;
    let from = at - Duration::days(1);
    let day = from.date_naive().to_string();
    let mut out = SubjectNight {
        subject: subject.key.to_string(),
        skipped: false,
        consolidation: None,
        decayed: Vec::new(),
        verified: 0,
        citations: Vec::new(),
        calibration: String::new(),
        flagged: 0,
        stale_citations: 0,
    };
    if tx.nightly_ran(subject, &day)? {
        out.skipped = true;
        return Ok(out);
    }

    // 1. Consolidate the day (consolidations are never part of a digest).
    let day_episodes: Vec<DayEpisode> = tx
        .episodes_between(subject, from, at)?
        .into_iter()
        .filter(|e| e.kind != Kind::Consolidation)
        .map(|e| DayEpisode {
            verdict: crate::beliefs::verdict_of(&e),
            seq: e.seq,
            kind: e.kind,
            at: e.at,
            salience: e.salience,
            summary: e.summary,
            concepts: e.concepts,
        })
        .collect();
    if let Some(c) = consolidate(&day_episodes, from, at) {
        let appended = tx.append(
            subject,
            &NewEpisode {
                kind: Kind::Consolidation,
                at,
                salience: salience(Kind::Consolidation, None),
                summary: c.summary(),
                text: c.text(),
                concepts: c.topics.clone(),
                evidence: Vec::new(),
                data: c.data(),
                external_id: Some(c.external_id()),
                import_key: None,
                salt,
            },
        )?;
        out.consolidation = Some(appended.id);
    }

    // 2. Decay every current belief untouched for 45 days (a new row each).
    let mut current = tx.current_beliefs(subject)?;
    // In the order of what they are about: the rows written do not depend on
    // confidences.
    current.sort_by(|a, b| a.subject_key.cmp(&b.subject_key));
    for b in current {
        if let Some(next) = decay(&b, at, DECAY_AFTER_DAYS, DECAY_FACTOR)
            .map_err(|e| Error::Internal(format!("a belief rule failed: {e}")))?
        {
            tx.insert_belief(subject, &next, b.id)?;
            out.decayed
                .push(b.concept.clone().unwrap_or_else(|| b.subject_key.clone()));
        }
    }

    // 3. Calibrate every predicted check up to T.
    let checks = tx.episodes_of_kind(subject, Kind::Check, at)?;
    let calibration = calibrate(&predictions(&checks));
    out.calibration = calibration.status.as_str().to_string();

    // 4. Verify a bounded batch of citations against the files as they were at T.
    let versions = versions_at(tx, subject, at)?;
    for (episode, last) in tx.citation_batch(subject, at, batch)? {
        let result = verify(&episode.evidence, &versions);
        let label = result.label();
        if last.as_ref().map(|c| c.label.as_str()) != Some(label.as_str()) {
            let mut data = serde_json::to_value(&result).map_err(json_err)?;
            if let Some(m) = data.as_object_mut() {
                m.insert("label".into(), label.clone().into());
            }
            tx.annotate(episode.id, CITATION_ANNOTATION, at, &data)?;
            if result != Citation::Holds {
                out.citations.push(CitationResult {
                    episode_id: episode.id,
                    label: label.clone(),
                });
            }
        }
        tx.record_citation_check(subject, episode.id, at, result.status(), &label)?;
        out.verified += 1;
    }
    let statuses = tx.citation_status_counts(subject)?;
    out.stale_citations = statuses.get("changed").copied().unwrap_or(0);

    // 5. Rebuild the working set from what the next turn will see.
    let beliefs = tx.current_beliefs(subject)?;
    out.flagged = beliefs.iter().filter(|b| b.flagged).count();
    let map = crate::map::load(&*tx, subject)?;
    let all_checks = tx.episodes_of_kind(subject, Kind::Check, DateTime::<Utc>::MAX_UTC)?;
    let counts = crate::beliefs::counts_of(&crate::beliefs::recorded_checks_in(&all_checks), &map);
    let recent: Vec<WsEpisode> = tx
        .episodes_between(subject, at - Duration::days(working_set::SALIENT_DAYS), at)?
        .into_iter()
        .filter(|e| e.salience >= working_set::SALIENT_AT)
        .map(ws_episode)
        .collect();
    let (head_seq, map_id) = tx.subject_stamp(subject)?;
    let ws = working_set::build(
        at,
        Stamp {
            head_seq,
            map: map_id,
        },
        &beliefs,
        &map,
        &recent,
        counts.recorded,
        counts.linked,
        counts.sentence.clone(),
    );
    tx.put_working_set(subject, at, &ws)?;

    // 6. Recompose the self-model.
    let model = compose(&SelfModelInput {
        at,
        episodes: tx.episode_counts(subject, at)?,
        beliefs: beliefs.len(),
        flagged: out.flagged,
        checks_recorded: counts.recorded,
        checks_linked: counts.linked,
        calibration: &calibration,
        stale_citations: out.stale_citations,
        unverifiable: statuses.get("unverifiable").copied().unwrap_or(0),
    });
    tx.put_self_model(subject, at, &model)?;

    tx.record_nightly(
        subject,
        &day,
        at,
        &json!({
            "consolidation": out.consolidation,
            "decayed": out.decayed,
            "verified": out.verified,
            "citations_changed": out.citations.len(),
            "calibration": out.calibration,
        }),
    )?;
    Ok(out)
}

fn ws_episode(e: Episode) -> WsEpisode {
    WsEpisode {
        id: e.id,
        at: e.at,
        kind: e.kind,
        salience: e.salience,
        summary: e.summary,
    }
}

/// Every check's predicted mastery against its verdict.
pub fn predictions(checks: &[Episode]) -> Vec<Prediction> {
    checks
        .iter()
        .filter_map(|e| {
            let predicted = e.data.get("predicted")?.as_f64()?;
            let verdict = crate::beliefs::verdict_of(e)?;
            Some(Prediction {
                predicted,
                outcome: outcome(verdict),
            })
        })
        .collect()
}

/// The subject's file versions as they stood at `at`: versions added later are
/// left out and a removal after `at` has not happened yet.
fn versions_at(tx: &dyn Tx, subject: &Subject, at: DateTime<Utc>) -> Result<Vec<VersionFacts>> {
    Ok(tx
        .file_versions(subject)?
        .iter()
        .filter_map(|v| VersionFacts::as_of(v, at))
        .collect())
}

/// The subject's working set when it still describes the subject (nothing
/// appended and no new map since the night built it); `None` when absent,
/// stale or unreadable — it is a cache, and the caller recomputes.
pub fn fresh_working_set(store: &dyn Reader, subject: &Subject) -> Result<Option<WorkingSet>> {
    fresh_working_set_at(store, subject, store.subject_stamp(subject)?)
}

/// [`fresh_working_set`] under the subject's stamp (`Reader::subject_stamp`),
/// which the caller has read.
pub fn fresh_working_set_at(
    store: &dyn Reader,
    subject: &Subject,
    (head_seq, map): (i64, i64),
) -> Result<Option<WorkingSet>> {
    let Some(ws) = store.working_set(subject)? else {
        return Ok(None);
    };
    Ok(ws.fresh(Stamp { head_seq, map }).then_some(ws))
}

/// The subject's self-model, if a night composed a readable one.
pub fn self_model(store: &dyn Reader, subject: &Subject) -> Result<Option<SelfModel>> {
    Ok(store.self_model(subject)?)
}
