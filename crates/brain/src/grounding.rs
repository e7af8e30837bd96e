//! Memory as citation, through the stores (docs/mechanisms.md §7): which memories an
//! answer was built with, where each of its claims comes from, and whether
//! it answered.
//!
//! Both facts are learned after the answer episode is written, so both are
//! annotations on it (append-only; a newer one supersedes):
//! - `recalled` — `{"ids": [..]}`, the memories that were in the prompt
//!   (written only when there was at least one).
//! - `grounding` — the [`Grounding`] as JSON: stance (`answered`, `partial`,
//!   `couldnt`), whether the answer said it could not answer, and each claim
//!   with its source (a file line, or a recalled memory labelled with its date).
//! - `narrated` — `{"memories": [..]}`, written with the grounding when at
//!   least one claim was traced to a recalled memory: the answer retold
//!   memory, so recall does not offer it as a memory of its own time (docs/mechanisms.md §3:
//!   the brain must not remember that it remembered). Having memories in the
//!   prompt is not enough — nearly every turn has some, and an answer that
//!   did not use them is still a true record of its session.
//!
//! The tracing itself is pure: [`tm_model::grounding`].

use crate::record::{Indexing, Target};
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use tm_model::episodes::{Episode, Kind};
use tm_model::events::{Cite, Event, EventBody};
use tm_model::grounding::{Grounding, Memory, Passage, Source, ground};
use tm_model::subject::Subject;
use tm_store::{Reader, Store, StoreExt, Tx};

/// Annotation kind holding the ids of the memories recalled for an answer.
pub const RECALLED: &str = "recalled";
/// Annotation kind holding an answer's grounding.
pub const GROUNDING: &str = "grounding";
/// Annotation kind marking an answer that retold recalled memories.
pub const NARRATED: &str = "narrated";

/// The subject's answer episode `id`: [`Error::NotFound`] when the subject
/// has no episode with that id, [`Error::WrongKind`] when it is not an answer.
fn answer_episode(store: &dyn Reader, subject: &Subject, id: i64) -> Result<Episode> {
    let e = store
        .subject_episodes_by_ids(subject, &[id])?
        .pop()
        .ok_or_else(|| Error::NotFound(format!("subject {} has no episode {id}", subject.key)))?;
    if e.kind != Kind::Answer {
        return Err(Error::WrongKind(format!(
            "episode {id} is a {}, not an answer",
            e.kind.as_str()
        )));
    }
    Ok(e)
}

/// The subject's episodes with these ids, in the order given (repeats
/// dropped); [`Error::NotFound`] names any id the subject does not hold.
fn recalled_episodes(store: &dyn Reader, subject: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
    let mut found = store.subject_episodes_by_ids(subject, ids)?;
    let mut out = Vec::with_capacity(found.len());
    let mut missing = Vec::new();
    for id in ids {
        match found.iter().position(|e| e.id == *id) {
            Some(i) => out.push(found.swap_remove(i)),
            None if out.iter().any(|e: &Episode| e.id == *id) => {}
            None => missing.push(id.to_string()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::NotFound(format!(
            "subject {} has no episode {}",
            subject.key,
            missing.join(", ")
        )));
    }
    Ok(out)
}

/// Saves on the answer the ids of the memories recalled for its turn (the
/// block's `recalled` ids). Nothing is written when none was recalled.
pub fn record_answer(
    store: &mut dyn Store,
    subject: &Subject,
    answer_id: i64,
    recalled: &[i64],
    at: DateTime<Utc>,
) -> Result<()> {
    store.write_with(|tx| {
        answer_episode(&*tx, subject, answer_id)?;
        let episodes = recalled_episodes(&*tx, subject, recalled)?;
        annotate_recalled(tx, answer_id, &episodes, at)
    })
}

fn annotate_recalled(
    tx: &mut dyn Tx,
    answer_id: i64,
    episodes: &[Episode],
    at: DateTime<Utc>,
) -> Result<()> {
    if episodes.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = episodes.iter().map(|e| e.id).collect();
    tx.annotate(answer_id, RECALLED, at, &serde_json::json!({ "ids": ids }))?;
    Ok(())
}

fn memories(episodes: &[Episode]) -> Vec<Memory> {
    episodes
        .iter()
        .map(|e| Memory {
            id: e.id,
            at: e.at,
            text: e.text.clone(),
        })
        .collect()
}

/// Saves a grounding on the answer: the `grounding` annotation, and a
/// `narrated` one when a claim was traced to a memory.
fn annotate_grounding(
    tx: &mut dyn Tx,
    answer_id: i64,
    g: &Grounding,
    at: DateTime<Utc>,
) -> Result<()> {
    let data = serde_json::to_value(g)
        .map_err(|e| Error::Internal(format!("cannot serialise the grounding: {e}")))?;
    let mut narrated: Vec<i64> = g
        .traces
        .iter()
        .filter_map(|t| match &t.source {
            Some(Source::Memory { id, .. }) => Some(*id),
            _ => None,
        })
        .collect();
    narrated.sort_unstable();
    narrated.dedup();
    tx.annotate(answer_id, GROUNDING, at, &data)?;
    if !narrated.is_empty() {
        tx.annotate(
            answer_id,
            NARRATED,
            at,
            &serde_json::json!({ "memories": narrated }),
        )?;
    }
    Ok(())
}

/// Traces the answer's claims to the passages and the recalled memories,
/// saves the result as a `grounding` annotation on the answer (and a
/// `narrated` one when a claim retold a memory) and returns it.
/// Memory labels are dated in the subject's time zone.
pub fn grounding(
    store: &mut dyn Store,
    subject: &Subject,
    answer_id: i64,
    answer_text: &str,
    passages: &[Passage],
    recalled: &[i64],
    at: DateTime<Utc>,
) -> Result<Grounding> {
    store.write_with(|tx| {
        answer_episode(&*tx, subject, answer_id)?;
        let episodes = recalled_episodes(&*tx, subject, recalled)?;
        let g = ground(
            answer_text,
            passages,
            &memories(&episodes),
            at,
            subject.tz(),
        );
        annotate_grounding(tx, answer_id, &g, at)?;
        Ok(g)
    })
}

/// Traces an answer's claims without saving anything.
pub fn trace(
    store: &dyn Reader,
    subject: &Subject,
    answer_text: &str,
    passages: &[Passage],
    recalled: &[i64],
    at: DateTime<Utc>,
) -> Result<Grounding> {
    let episodes = recalled_episodes(store, subject, recalled)?;
    Ok(ground(
        answer_text,
        passages,
        &memories(&episodes),
        at,
        subject.tz(),
    ))
}

/// The newest annotation of `kind` on an episode, if any.
fn latest(store: &dyn Reader, episode_id: i64, kind: &str) -> Result<Option<serde_json::Value>> {
    Ok(store
        .annotations(episode_id)?
        .into_iter()
        .rfind(|a| a.kind == kind)
        .map(|a| a.data))
}

/// The grounding saved on an answer (the newest), if any.
pub fn saved_grounding(store: &dyn Reader, answer_id: i64) -> Result<Option<Grounding>> {
    latest(store, answer_id, GROUNDING)?
        .map(|v| {
            serde_json::from_value(v).map_err(|e| {
                Error::Internal(format!(
                    "the grounding saved on {answer_id} is unreadable: {e}"
                ))
            })
        })
        .transpose()
}

/// The memory ids saved on an answer (the newest record), empty when none.
pub fn saved_recalled(store: &dyn Reader, answer_id: i64) -> Result<Vec<i64>> {
    Ok(latest(store, answer_id, RECALLED)?
        .and_then(|v| v.get("ids").cloned())
        .and_then(|ids| serde_json::from_value(ids).ok())
        .unwrap_or_default())
}

/// What recording one tutor answer did.
#[derive(Debug, Clone, Serialize)]
pub struct Answered {
    /// The answer episode.
    pub episode_id: i64,
    /// The file pages the answer cites: those of traced passages read from
    /// the file's current version (the answer's evidence pins its checksum).
    pub cites: Vec<(String, usize)>,
    pub grounding: Grounding,
}

/// Records a tutor answer given at `at` as an `answer` episode (through the
/// one record path, so idempotence and the map agree), citing the file
/// pages its traced passages came from, and saves the recalled memories and
/// the grounding on it: all in one transaction.
pub fn answer(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    subject: &Subject,
    text: &str,
    at: DateTime<Utc>,
    recalled: &[i64],
    passages: &[Passage],
) -> Result<Answered> {
    if text.trim().is_empty() {
        return Err(Error::Empty("the answer text"));
    }
    // Check the memories before anything is written.
    let episodes = recalled_episodes(&*store, subject, recalled)?;
    let g = ground(text, passages, &memories(&episodes), at, subject.tz());
    let versions = store.file_versions(subject)?;
    let mut cites: Vec<(String, usize)> = Vec::new();
    for t in &g.traces {
        if let Some(Source::File {
            file,
            version_id,
            page,
            ..
        }) = &t.source
        {
            let current = versions.iter().any(|v| {
                v.id == *version_id
                    && &v.name == file
                    // Recording cites the file's current version, so only
                    // a passage read from it can become a citation.
                    && v.is_current()
                    && v.added_at <= at
                    && *page >= 1
                    && *page <= v.pages.max(1)
            });
            let cite = (file.clone(), *page);
            if current && !cites.contains(&cite) {
                cites.push(cite);
            }
        }
    }
    let event = Event::new(
        at,
        EventBody::Tutor {
            text: text.to_string(),
            cites: cites
                .iter()
                .map(|(f, p)| Cite {
                    file: f.clone(),
                    page: u32::try_from(*p).ok(),
                })
                .collect(),
        },
    );
    let events = [event];
    let prepared = crate::record::prepare(
        &*store,
        ix,
        Some(subject),
        &events,
        crate::record::Paths::Refused,
        &mut |_, _, _| {},
    )?;
    let episode_id = store.write_with(|tx| {
        let recorded = crate::record::apply(
            tx,
            ix,
            Target::Subject(subject),
            prepared,
            None,
            &mut |_, _, _| {},
        )?;
        // The episode just written (or, on a repeat, the one already there).
        let e = recorded
            .episodes
            .first()
            .ok_or_else(|| Error::Internal("the recorded answer has no episode".into()))?;
        if e.appended {
            annotate_recalled(tx, e.id, &episodes, at)?;
            annotate_grounding(tx, e.id, &g, at)?;
        }
        Ok::<_, Error>(e.id)
    })?;
    Ok(Answered {
        episode_id,
        cites,
        grounding: g,
    })
}
