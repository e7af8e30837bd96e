//! Importing a history file: every event becomes a file version and/or an
//! episode, all in one transaction.
//!
//! Idempotence: each event gets an import key (SHA-256 of its JSON line with
//! sorted keys, plus for a file event the checksum of its bytes); an event
//! whose key the subject already holds is skipped, so re-importing the same
//! history — or a longer version of it — never duplicates anything. An event
//! whose `id` is already used by a different event is an error.

use crate::history::{self, Event, EventBody, FileSource};
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::Path;
use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
use tm_model::beliefs::{
    CheckFact, Routing, apply_check, predicted_mastery, route_in_map, subject_of,
};
use tm_model::episodes::{Evidence, Hash, Kind, one_line, salience};
use tm_model::map::{ConceptMap, TeachOutcome};
use tm_model::teaching::teaching;
use tm_store::{FileAdded, NewEpisode, Store, Subject, Tx};

/// The length of an episode's one-line summary, in characters.
pub const SUMMARY_CHARS: usize = 160;

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    pub subject: String,
    /// Event lines in the file.
    pub events: usize,
    /// Episodes appended.
    pub appended: usize,
    /// Events already in the store, skipped.
    pub skipped: usize,
    /// File versions stored.
    pub file_versions: usize,
    /// True when this exact file was imported before: nothing was done.
    pub already_imported: bool,
}

/// A file event's content, read before the transaction starts.
struct LoadedFile {
    bytes: Vec<u8>,
    format: &'static str,
    pages: Vec<String>,
    /// The concepts it explains; `None` when the subject already holds these
    /// bytes as the file's current version (nothing new to read).
    concepts: Option<Vec<tm_model::map::ExtractedConcept>>,
}

/// Imports a history file from disk. File events with a `path` are read
/// relative to the history file's folder.
pub fn import_file(
    store: &mut Store,
    path: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport> {
    import_file_with(store, path, &OfflineExtractor::default(), None, progress)
}

/// [`import_file`] with a chosen concept extractor (the generative pass, say)
/// and, optionally, merging by embedding similarity.
pub fn import_file_with(
    store: &mut Store,
    path: &Path,
    extractor: &dyn ConceptExtractor,
    similarity: Option<&Similarity<'_>>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    import_bytes_merging(
        store,
        &path.display().to_string(),
        &bytes,
        base,
        extractor,
        similarity,
        progress,
    )
}

/// Imports a history given as bytes; `base` resolves file paths. Concepts
/// are read with the deterministic offline extractor.
pub fn import_bytes(
    store: &mut Store,
    source: &str,
    bytes: &[u8],
    base: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport> {
    import_bytes_with(
        store,
        source,
        bytes,
        base,
        &OfflineExtractor::default(),
        progress,
    )
}

/// [`import_bytes`] with a chosen concept extractor. Extraction (a model
/// call, perhaps) happens before the write transaction, never inside it.
pub fn import_bytes_with(
    store: &mut Store,
    source: &str,
    bytes: &[u8],
    base: &Path,
    extractor: &dyn ConceptExtractor,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport> {
    import_bytes_merging(store, source, bytes, base, extractor, None, progress)
}

/// How concepts of different files are joined beyond their canonical names:
/// an embedder and the cosine above which two names are one concept (SPEC §4:
/// 0.86 for all-MiniLM-L6-v2).
pub struct Similarity<'a> {
    pub embedder: &'a dyn tm_embed::Embedder,
    pub threshold: f32,
}

/// [`import_bytes_with`], also merging concepts by embedding similarity.
pub fn import_bytes_merging(
    store: &mut Store,
    source: &str,
    bytes: &[u8],
    base: &Path,
    extractor: &dyn ConceptExtractor,
    similarity: Option<&Similarity<'_>>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport> {
    let history = history::parse(source, bytes)?;
    let file_sha = hex::encode(Sha256::digest(bytes));
    let key_str = history.subject.key.to_string();
    if let Some(subject) = store.subject(&history.subject.key)?
        && store.imported(&subject, &file_sha)?
    {
        return Ok(ImportReport {
            subject: key_str,
            events: history.events.len(),
            appended: 0,
            skipped: history.events.len(),
            file_versions: 0,
            already_imported: true,
        });
    }
    // Read every file before writing anything: a missing or broken file fails
    // the import with its line number and leaves the store untouched.
    let held: Vec<(String, String)> = match store.subject(&history.subject.key)? {
        Some(s) => store
            .file_versions(&s)?
            .into_iter()
            .filter(|v| v.replaced_at.is_none() && v.removed_at.is_none())
            .map(|v| (v.name, v.sha256))
            .collect(),
        None => Vec::new(),
    };
    let loaded: Vec<Option<LoadedFile>> =
        history
            .events
            .iter()
            .map(|e| match &e.body {
                EventBody::File {
                    name,
                    source: file_source,
                } => {
                    let mut f = load_file(source, e, name, file_source, base)?;
                    let sha = hex::encode(Sha256::digest(&f.bytes));
                    if !held.iter().any(|(n, h)| n == name && *h == sha) {
                        f.concepts = Some(extractor.extract(name, &f.pages).map_err(|err| {
                            Error::History {
                                file: source.to_string(),
                                line: e.line,
                                message: err.to_string(),
                            }
                        })?);
                    }
                    Ok(Some(f))
                }
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;

    let total = history.events.len();
    let first_at = history
        .events
        .first()
        .map(|e| e.at)
        .unwrap_or(DateTime::<Utc>::MIN_UTC);
    store.write_with(|tx| {
        let subject = tx.ensure_subject(
            &history.subject.key,
            &history.subject.title,
            history.subject.language.as_deref(),
            first_at,
        )?;
        if let Some(tz) = &history.subject.timezone
            && subject.timezone.as_deref() != Some(tz.as_str())
        {
            tx.set_timezone(&subject, tz)?;
        }
        let mut report = ImportReport {
            subject: key_str.clone(),
            events: total,
            appended: 0,
            skipped: 0,
            file_versions: 0,
            already_imported: false,
        };
        let mut map = crate::map::load(tx.latest_map(&subject)?.as_deref())?;
        let mut map_changed = false;
        let names = crate::map::NameVectors::new(similarity.map(|s| s.embedder));
        let threshold = similarity.map_or(f32::INFINITY, |s| s.threshold);
        for (i, (event, file)) in history.events.iter().zip(&loaded).enumerate() {
            let ikey = import_key(event, file.as_ref());
            if tx.has_import_key(&subject, &ikey)? {
                report.skipped += 1;
            } else {
                let mut ctx = Applying {
                    map: &mut map,
                    map_changed: &mut map_changed,
                    report: &mut report,
                    names: &names,
                    threshold,
                };
                apply(tx, &subject, event, file.as_ref(), ikey, &mut ctx)
                    .map_err(|e| e.at_line(source, event.line))?;
            }
            if i % 256 == 0 || i + 1 == total {
                progress(i + 1, total);
            }
        }
        let last_at = history.events.last().map(|e| e.at).unwrap_or(first_at);
        if map_changed {
            tx.save_map(
                &subject,
                last_at,
                &format!("import {source}"),
                &crate::map::to_json(&map)?,
            )?;
        }
        tx.record_import(&subject, &file_sha, source, last_at, total, report.appended)?;
        Ok(report)
    })
}

fn load_file(
    history: &str,
    event: &Event,
    name: &str,
    source: &FileSource,
    base: &Path,
) -> Result<LoadedFile> {
    let at_line = |message: String| Error::History {
        file: history.to_string(),
        line: event.line,
        message,
    };
    let (bytes, pages) = match source {
        FileSource::Path(p) => {
            let full = base.join(p);
            let bytes = std::fs::read(&full)
                .map_err(|e| at_line(format!("cannot read {}: {e}", full.display())))?;
            let pages = tm_ingest::read_pages(name, &bytes).map_err(|e| at_line(e.to_string()))?;
            (bytes, pages)
        }
        FileSource::Content(c) => {
            let pages =
                tm_ingest::read_pages(name, c.as_bytes()).map_err(|e| at_line(e.to_string()))?;
            (c.as_bytes().to_vec(), pages)
        }
        FileSource::Pages(p) => (
            p.join("\u{c}").into_bytes(),
            tm_ingest::pages_from_list(p.clone()),
        ),
    };
    Ok(LoadedFile {
        concepts: None,
        bytes,
        format: pages.format.as_str(),
        pages: pages.pages,
    })
}

fn import_key(event: &Event, file: Option<&LoadedFile>) -> Hash {
    let mut h = Sha256::new();
    // serde_json::Value objects are BTreeMaps: this text is canonical.
    h.update(event.raw.to_string().as_bytes());
    if let Some(f) = file {
        h.update(b"\0file\0");
        h.update(Sha256::digest(&f.bytes));
    }
    h.finalize().into()
}

/// What applying events changes besides the log.
struct Applying<'a> {
    map: &'a mut ConceptMap,
    map_changed: &'a mut bool,
    report: &'a mut ImportReport,
    names: &'a crate::map::NameVectors<'a>,
    threshold: f32,
}

fn apply(
    tx: &mut Tx<'_>,
    subject: &Subject,
    event: &Event,
    file: Option<&LoadedFile>,
    import_key: Hash,
    ctx: &mut Applying<'_>,
) -> Result<()> {
    let report = &mut *ctx.report;
    let mut pending_check = None;
    let mut data = serde_json::Map::new();
    let mut evidence = Vec::new();
    let mut concepts = Vec::new();
    let (kind, verdict, summary, text) = match &event.body {
        EventBody::FileRemoved { name } => {
            // Recorded as a `file` episode too, so the log shows the removal
            // and a re-import recognises it by its import key.
            let v = tx.remove_file(subject, name, event.at)?;
            ctx.map.remove_file(name);
            *ctx.map_changed = true;
            data.insert("file".into(), name.clone().into());
            data.insert("version".into(), v.version.into());
            data.insert("removed".into(), true.into());
            evidence.push(Evidence {
                file: name.clone(),
                version: v.id,
                page: None,
                sha256: v.sha256.clone(),
            });
            let summary = format!("File {name} removed");
            let text = format!("{summary}.");
            (Kind::File, None, summary, text)
        }
        EventBody::File { name, .. } => {
            let f = file.ok_or_else(|| Error::Invalid(format!("file {name:?} was not loaded")))?;
            let added = tx.add_file(subject, name, &f.bytes, f.format, &f.pages, event.at)?;
            let v = added.version();
            if let (FileAdded::New { .. }, Some(concepts)) = (&added, &f.concepts) {
                ctx.map.merge_file(
                    name,
                    Some(v.id),
                    concepts,
                    &|a, b| ctx.names.cosine(a, b),
                    ctx.threshold,
                );
                *ctx.map_changed = true;
            }
            let summary = match &added {
                FileAdded::New {
                    replaced: Some(_), ..
                } => {
                    report.file_versions += 1;
                    format!("File {name} replaced (version {})", v.version)
                }
                FileAdded::New { .. } => {
                    report.file_versions += 1;
                    format!(
                        "File {name} added ({} page{})",
                        v.pages,
                        if v.pages == 1 { "" } else { "s" }
                    )
                }
                FileAdded::Unchanged(_) => format!("File {name} uploaded again, unchanged"),
            };
            data.insert("file".into(), name.clone().into());
            data.insert("version".into(), v.version.into());
            data.insert("pages".into(), v.pages.into());
            evidence.push(Evidence {
                file: name.clone(),
                version: v.id,
                page: None,
                sha256: v.sha256.clone(),
            });
            let text = format!("{summary}.");
            (Kind::File, None, summary, text)
        }
        EventBody::Learner { text } => match teaching(text) {
            Some(t) => {
                data.insert("cue".into(), t.cue.into());
                data.insert("lang".into(), t.lang.into());
                match tm_model::map::teach(ctx.map, text, &t) {
                    TeachOutcome::Attached { name, .. } | TeachOutcome::Created { name, .. } => {
                        concepts.push(name);
                        *ctx.map_changed = true;
                    }
                    TeachOutcome::Unnamed { .. } => {}
                }
                (
                    Kind::Taught,
                    None,
                    one_line(text, SUMMARY_CHARS),
                    text.clone(),
                )
            }
            None => {
                concepts = crate::map::named_in(ctx.map, text);
                (
                    Kind::Question,
                    None,
                    one_line(text, SUMMARY_CHARS),
                    text.clone(),
                )
            }
        },
        EventBody::Tutor { text, cites } => {
            for cite in cites {
                let v = tx
                    .current_version(subject, &cite.file)?
                    .filter(|v| v.removed_at.is_none())
                    .ok_or_else(|| {
                        Error::Invalid(format!(
                            "the answer cites {:?}, which the subject does not hold at that time",
                            cite.file
                        ))
                    })?;
                if let Some(page) = cite.page
                    && (page == 0 || page as usize > v.pages.max(1))
                {
                    return Err(Error::Invalid(format!(
                        "the answer cites page {page} of {:?}, which has {} page(s)",
                        cite.file, v.pages
                    )));
                }
                evidence.push(Evidence {
                    file: cite.file.clone(),
                    version: v.id,
                    page: cite.page,
                    sha256: v.sha256,
                });
            }
            concepts = crate::map::named_in(ctx.map, text);
            (
                Kind::Answer,
                None,
                one_line(text, SUMMARY_CHARS),
                text.clone(),
            )
        }
        EventBody::Check {
            topic,
            verdict,
            evaluation,
            predicted,
        } => {
            data.insert("topic".into(), topic.clone().into());
            data.insert("verdict".into(), verdict.as_str().into());
            if let Some(e) = evaluation {
                data.insert("evaluation".into(), e.clone().into());
            }
            let routing = route_in_map(topic, evaluation.as_deref(), ctx.map);
            // The mastery predicted before the check (SPEC §5, for calibration):
            // the history's, else the current belief's confidence at this instant.
            let current = match subject_of(&routing) {
                Some((about, _, _)) => tx.current_belief(subject, &about)?,
                None => None,
            };
            match predicted {
                Some(p) => {
                    data.insert("predicted".into(), (*p).into());
                }
                None => {
                    data.insert(
                        "predicted".into(),
                        predicted_mastery(current.as_ref()).into(),
                    );
                    data.insert("predicted_from".into(), "belief".into());
                }
            }
            // Concepts touched by this check under today's routing (SPEC §5);
            // beliefs re-route from topic and evaluation, never from this.
            if let Routing::Concept { name, .. } = &routing {
                if *verdict == tm_model::episodes::Verdict::Right && ctx.map.confirm(name) {
                    *ctx.map_changed = true;
                }
                concepts.push(name.clone());
            }
            pending_check = Some((routing, *verdict, current));
            let summary = one_line(
                &format!("Check on {topic}: {}", verdict.as_str()),
                SUMMARY_CHARS,
            );
            let text = match evaluation {
                Some(e) => format!("Check on {topic}: {}. {e}", verdict.as_str()),
                None => format!("Check on {topic}: {}.", verdict.as_str()),
            };
            (Kind::Check, Some(*verdict), summary, text)
        }
        EventBody::Quiz {
            title,
            score,
            max,
            concepts: c,
        } => {
            data.insert("title".into(), title.clone().into());
            data.insert("score".into(), (*score).into());
            data.insert("max".into(), (*max).into());
            concepts = c.clone();
            let summary = one_line(&format!("Quiz \"{title}\": {score}/{max}"), SUMMARY_CHARS);
            let text = if c.is_empty() {
                format!("{summary}.")
            } else {
                format!("{summary} on {}.", c.join(", "))
            };
            (Kind::Quiz, None, summary, text)
        }
    };
    let episode = NewEpisode {
        kind,
        at: event.at,
        salience: salience(kind, verdict),
        summary,
        text,
        concepts,
        evidence,
        data,
        external_id: event.id.clone(),
        import_key: Some(import_key),
    };
    let appended = tx.append(subject, &episode)?;
    report.appended += 1;
    if let Some((routing, verdict, current)) = pending_check {
        let fact = CheckFact {
            episode_id: appended.id,
            at: event.at,
            verdict,
            routing,
        };
        let next =
            apply_check(current.as_ref(), &fact).map_err(|e| Error::Invalid(e.to_string()))?;
        if let Some(b) = next {
            tx.insert_belief(subject, &b, current.and_then(|c| c.id))?;
        }
    }
    Ok(())
}

/// Records one learner message that teaches, through the same path as an
/// imported `learner` event (so the map, the log and idempotence agree).
pub fn teach(
    store: &mut Store,
    key: &tm_model::subject::SubjectKey,
    text: &str,
    at: DateTime<Utc>,
) -> Result<ImportReport> {
    let subject =
        serde_json::json!({"type": "subject", "learner": key.learner, "subject": key.subject});
    let event = serde_json::json!({"type": "learner", "at": at.to_rfc3339(), "text": text});
    let history = format!("{subject}\n{event}\n");
    import_bytes(
        store,
        "teach",
        history.as_bytes(),
        Path::new("."),
        &mut |_, _| {},
    )
}
