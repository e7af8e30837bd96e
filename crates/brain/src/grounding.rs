//! Memory as citation, through the stores (SPEC §7): which memories an
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
//!   memory, so recall does not offer it as a memory of its own time (SPEC §3:
//!   the brain must not remember that it remembered). Having memories in the
//!   prompt is not enough — nearly every turn has some, and an answer that
//!   did not use them is still a true record of its session.
//!
//! The tracing itself is pure: [`tm_model::grounding`].

use crate::{Brain, Error, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::path::Path;
use tm_model::episodes::Kind;
use tm_model::grounding::{Grounding, Memory, Passage, Source, ground};
use tm_store::{Episode, Store, Subject};

/// Annotation kind holding the ids of the memories recalled for an answer.
pub const RECALLED: &str = "recalled";
/// Annotation kind holding an answer's grounding.
pub const GROUNDING: &str = "grounding";
/// Annotation kind marking an answer that retold recalled memories.
pub const NARRATED: &str = "narrated";

/// The subject's answer episode `id`: [`Error::NotFound`] when the subject
/// has no episode with that id, [`Error::Invalid`] when it is not an answer.
fn answer_episode(store: &Store, subject: &Subject, id: i64) -> Result<Episode> {
    let e = store
        .subject_episodes_by_ids(subject, &[id])?
        .pop()
        .ok_or_else(|| Error::NotFound(format!("subject {} has no episode {id}", subject.key)))?;
    if e.kind != Kind::Answer {
        return Err(Error::Invalid(format!(
            "episode {id} is a {}, not an answer",
            e.kind.as_str()
        )));
    }
    Ok(e)
}

/// The subject's episodes with these ids, in the order given (repeats
/// dropped); [`Error::NotFound`] names any id the subject does not hold.
fn recalled_episodes(store: &Store, subject: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
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
    store: &mut Store,
    subject: &Subject,
    answer_id: i64,
    recalled: &[i64],
    at: DateTime<Utc>,
) -> Result<()> {
    answer_episode(store, subject, answer_id)?;
    let episodes = recalled_episodes(store, subject, recalled)?;
    if episodes.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = episodes.iter().map(|e| e.id).collect();
    let data = serde_json::json!({ "ids": ids });
    store.write(|tx| tx.annotate(answer_id, RECALLED, at, &data))?;
    Ok(())
}

/// Traces the answer's claims to the passages and the recalled memories,
/// saves the result as a `grounding` annotation on the answer (and a
/// `narrated` one when a claim retold a memory) and returns it.
/// Memory labels are dated in the subject's time zone.
pub fn grounding(
    store: &mut Store,
    subject: &Subject,
    answer_id: i64,
    answer_text: &str,
    passages: &[Passage],
    recalled: &[i64],
    at: DateTime<Utc>,
) -> Result<Grounding> {
    answer_episode(store, subject, answer_id)?;
    let tz = Brain::time_zone(subject)?;
    let memories: Vec<Memory> = recalled_episodes(store, subject, recalled)?
        .into_iter()
        .map(|e| Memory {
            id: e.id,
            at: e.at,
            text: e.text,
        })
        .collect();
    let g = ground(answer_text, passages, &memories, at, tz);
    let data = serde_json::to_value(&g)
        .map_err(|e| Error::Invalid(format!("cannot serialise the grounding: {e}")))?;
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
    store.write(|tx| {
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
    })?;
    Ok(g)
}

/// The newest annotation of `kind` on an episode, if any.
fn latest(store: &Store, episode_id: i64, kind: &str) -> Result<Option<serde_json::Value>> {
    Ok(store
        .annotations(episode_id)?
        .into_iter()
        .rfind(|a| a.kind == kind)
        .map(|a| a.data))
}

/// The grounding saved on an answer (the newest), if any.
pub fn saved_grounding(store: &Store, answer_id: i64) -> Result<Option<Grounding>> {
    latest(store, answer_id, GROUNDING)?
        .map(|v| {
            serde_json::from_value(v).map_err(|e| {
                Error::Invalid(format!(
                    "the grounding saved on {answer_id} is unreadable: {e}"
                ))
            })
        })
        .transpose()
}

/// The memory ids saved on an answer (the newest record), empty when none.
pub fn saved_recalled(store: &Store, answer_id: i64) -> Result<Vec<i64>> {
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
/// same path as an imported `tutor` event, so idempotence and the map agree),
/// then saves the recalled memories and the grounding on it.
pub fn answer(
    store: &mut Store,
    subject: &Subject,
    text: &str,
    at: DateTime<Utc>,
    recalled: &[i64],
    passages: &[Passage],
) -> Result<Answered> {
    if text.trim().is_empty() {
        return Err(Error::Invalid("the answer text is empty".into()));
    }
    // Check the memories before anything is written.
    let memories = recalled_episodes(store, subject, recalled)?;
    let tz = Brain::time_zone(subject)?;
    let pre = ground(
        text,
        passages,
        &memories
            .iter()
            .map(|e| Memory {
                id: e.id,
                at: e.at,
                text: e.text.clone(),
            })
            .collect::<Vec<_>>(),
        at,
        tz,
    );
    let versions = store.file_versions(subject)?;
    let mut cites: Vec<(String, usize)> = Vec::new();
    for t in &pre.traces {
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
                    && v.replaced_at.is_none()
                    && v.removed_at.is_none()
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
    let key = &subject.key;
    let head =
        serde_json::json!({"type": "subject", "learner": key.learner, "subject": key.subject});
    let event = serde_json::json!({
        "type": "tutor",
        "at": at.to_rfc3339(),
        "text": text,
        "cites": cites.iter().map(|(f, p)| serde_json::json!({"file": f, "page": p})).collect::<Vec<_>>(),
    });
    let history = format!("{head}\n{event}\n");
    crate::import::import_bytes(
        store,
        "answer",
        history.as_bytes(),
        Path::new("."),
        &mut |_, _| {},
    )?;
    // The episode just written (or, on a repeat, the one already there).
    let episode_id = store
        .episodes_of_kind(subject, Kind::Answer)?
        .into_iter()
        .rfind(|e| e.at == at && e.text == text)
        .map(|e| e.id)
        .ok_or_else(|| Error::Invalid("the recorded answer cannot be found".into()))?;
    record_answer(store, subject, episode_id, recalled, at)?;
    let grounding = grounding(store, subject, episode_id, text, passages, recalled, at)?;
    Ok(Answered {
        episode_id,
        cites,
        grounding,
    })
}

impl Brain {
    /// [`record_answer`] for the subject named `learner/subject`.
    pub fn record_answer(
        &self,
        subject: &str,
        answer_id: i64,
        recalled: &[i64],
        at: DateTime<Utc>,
    ) -> Result<()> {
        let subject = self.subject(subject)?;
        record_answer(&mut *self.store()?, &subject, answer_id, recalled, at)
    }

    /// [`grounding`] for the subject named `learner/subject`.
    pub fn grounding(
        &self,
        subject: &str,
        answer_id: i64,
        answer_text: &str,
        passages: &[Passage],
        recalled: &[i64],
        at: DateTime<Utc>,
    ) -> Result<Grounding> {
        let subject = self.subject(subject)?;
        grounding(
            &mut *self.store()?,
            &subject,
            answer_id,
            answer_text,
            passages,
            recalled,
            at,
        )
    }

    /// [`answer`] for the subject named `learner/subject`.
    pub fn answer(
        &self,
        subject: &str,
        text: &str,
        at: DateTime<Utc>,
        recalled: &[i64],
        passages: &[Passage],
    ) -> Result<Answered> {
        let subject = self.subject(subject)?;
        answer(&mut *self.store()?, &subject, text, at, recalled, passages)
    }
}
