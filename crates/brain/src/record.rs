//! The one record path: a subject and a list of events in, in one
//! transaction: the episodes appended to the chain, checks routed and
//! beliefs updated, the concept map grown, taught and confirmed, and every
//! index filled (full-text terms and concepts by the store's append, vectors
//! of the new episodes and of the new files' passages here). What it
//! appended comes back, with ids and seqs. History files, the HTTP API,
//! teaching and a tutor's answer all come through here; no face indexes
//! anything by hand.
//!
//! Work that is slow or may fail runs before the transaction, never inside
//! it: files are read and their concepts extracted, and the texts whose
//! episodes are certain are embedded. Inside, only what the store decides
//! (a file episode's text names the version it made) is embedded there.
//!
//! Idempotence: each event gets an import key (SHA-256 of the JSON it
//! arrived as, with sorted keys, plus for a file event the checksum of its
//! bytes); an event whose key the subject already holds is skipped (and
//! reported with the episode it is), so recording the same events twice —
//! a re-imported history, a retried request — never duplicates anything.

use crate::{Error, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use tm_embed::Embedder;
use tm_ingest::extract::ConceptExtractor;
use tm_model::beliefs::{
    CheckFact, Routing, apply_check, predicted_mastery, route_in_map, subject_of,
};
use tm_model::episodes::{
    Evidence, Hash, Kind, NewEpisode, Verdict, VersionRef, one_line, salience,
};
use tm_model::events::{Event, EventBody, FileSource, Night, SubjectLine, check_sequence};
use tm_model::files::FileAdded;
use tm_model::map::{ConceptMap, ExtractedConcept, TeachOutcome};
use tm_model::subject::Subject;
use tm_model::teaching::teaching;
use tm_store::{Owner, Reader, Store, StoreExt, Tx};

/// The length of an episode's one-line summary, in characters.
pub const SUMMARY_CHARS: usize = 160;
/// Texts embedded per call to the embedder.
pub const EMBED_BATCH: usize = 32;
/// The largest file a file event may carry, in bytes.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// What indexing needs: the embedder (its calibration says whether concept
/// names may merge by similarity) and the concept extractor.
#[derive(Clone, Copy)]
pub struct Indexing<'a> {
    pub embedder: &'a dyn Embedder,
    pub extractor: &'a dyn ConceptExtractor,
    /// The most concepts a subject's map may hold: a file that would grow
    /// the map past it is refused ([`Error::TooLarge`]), nothing stored.
    pub max_concepts: usize,
}

/// A subject's concept cap unless the platform sets another (`serve
/// --max-concepts`): a course of fifty textbook chapters fits.
pub const DEFAULT_MAX_CONCEPTS: usize = 2_000;

/// Which subject the events are for.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A subject that exists.
    Subject(&'a Subject),
    /// The subject a history's first line names, created when absent: of
    /// this owner, or (`None`) of the one owner with a live subject of that
    /// name, else the operator's.
    Line(&'a SubjectLine, Option<Owner>),
}

/// A history file being imported: its name and checksum are recorded, and a
/// file imported before is recognised whole.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub sha256: String,
}

/// What recording did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Recorded {
    /// `learner/subject`.
    pub subject: String,
    /// Events given.
    pub events: usize,
    /// Episodes appended.
    pub appended: usize,
    /// Events already recorded (the same event), skipped.
    pub skipped: usize,
    /// File versions stored.
    pub file_versions: usize,
    /// This exact history file was imported before: nothing was done.
    pub already_imported: bool,
    /// The chain's head after the write.
    pub head_seq: u64,
    /// The episode each event is, in the order given (absent when the whole
    /// file was already imported).
    pub episodes: Vec<RecordedEpisode>,
    /// What the caller should know that did not stop the write: a file
    /// whose model-made concept list was refused and the offline
    /// extractor's kept instead.
    pub warnings: Vec<String>,
}

/// The episode one event became (or already was).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordedEpisode {
    pub id: i64,
    pub seq: u64,
    /// False when the event was already recorded.
    pub appended: bool,
}

/// A file event's content, read before the transaction starts.
struct LoadedFile<'e> {
    /// The event's own bytes when it carries them (an upload is not copied).
    bytes: Cow<'e, [u8]>,
    format: &'static str,
    pages: Vec<String>,
    /// The concepts it explains; `None` when the subject already holds these
    /// bytes as the file's current version (nothing new to read).
    concepts: Option<Vec<ExtractedConcept>>,
}

/// Events read, keyed and embedded, ready for one transaction.
pub struct Prepared<'e> {
    events: &'e [Event],
    files: Vec<Option<LoadedFile<'e>>>,
    keys: Vec<Hash>,
    vectors: HashMap<String, Vec<f32>>,
    warnings: Vec<String>,
}

/// The kind, summary and text an event's episode gets, when the event alone
/// decides them (a file episode's depend on the version the store makes).
fn draft(body: &EventBody) -> Option<(Kind, String, String)> {
    Some(match body {
        EventBody::File { .. } => return None,
        EventBody::FileRemoved { name } => {
            let summary = format!("File {name} removed");
            let text = format!("{summary}.");
            (Kind::File, summary, text)
        }
        EventBody::Learner { text } => {
            let kind = if teaching(text).is_some() {
                Kind::Taught
            } else {
                Kind::Question
            };
            (kind, one_line(text, SUMMARY_CHARS), text.clone())
        }
        EventBody::Tutor { text, .. } => {
            (Kind::Answer, one_line(text, SUMMARY_CHARS), text.clone())
        }
        EventBody::Check {
            topic,
            verdict,
            evaluation,
            ..
        } => {
            let summary = one_line(
                &format!("Check on {topic}: {}", verdict.as_str()),
                SUMMARY_CHARS,
            );
            let text = match evaluation {
                Some(e) => format!("Check on {topic}: {}. {e}", verdict.as_str()),
                None => format!("Check on {topic}: {}.", verdict.as_str()),
            };
            (Kind::Check, summary, text)
        }
        EventBody::Quiz {
            title,
            score,
            max,
            concepts,
        } => {
            let summary = one_line(&format!("Quiz \"{title}\": {score}/{max}"), SUMMARY_CHARS);
            let text = if concepts.is_empty() {
                format!("{summary}.")
            } else {
                format!("{summary} on {}.", concepts.join(", "))
            };
            (Kind::Quiz, summary, text)
        }
    })
}

/// Where a file event's `path` may lead.
#[derive(Clone, Copy, Debug)]
pub enum Paths<'a> {
    /// No folder: a `path` is refused (events sent over HTTP or MCP).
    Refused,
    /// Relative to this folder (a history file's) and confined to it.
    Beside(&'a Path),
    /// Relative to this folder, and anywhere the process may read
    /// (`import --allow-outside`): still a regular file within the size bound.
    Anywhere(&'a Path),
}

impl<'a> From<Option<&'a Path>> for Paths<'a> {
    /// A folder confines paths to it; none refuses them.
    fn from(base: Option<&'a Path>) -> Self {
        base.map_or(Paths::Refused, Paths::Beside)
    }
}

/// Reads the file a history names. Confined (`outside` false) to the
/// history's folder: an absolute path, `..` or a link leading out of it is
/// refused. Anything but a regular file is refused, and no more than
/// [`MAX_FILE_BYTES`] are read.
fn read_beside(base: &Path, path: &str, outside: bool) -> Result<Vec<u8>> {
    use std::io::Read;
    let cannot = |what: &dyn std::fmt::Display, e: &dyn std::fmt::Display| {
        Error::Path(format!("cannot read {what}: {e}"))
    };
    // An empty folder (the parent of a bare file name) is the current one.
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let folder = base
        .canonicalize()
        .map_err(|e| cannot(&base.display(), &e))?;
    let full = folder.join(path);
    let real = full
        .canonicalize()
        .map_err(|e| cannot(&full.display(), &e))?;
    if !outside && !real.starts_with(&folder) {
        return Err(Error::Path(format!(
            "the file path {path:?} leads outside the history's folder ({}): put the file beside the history, or import with --allow-outside",
            folder.display()
        )));
    }
    let file = std::fs::File::open(&real).map_err(|e| cannot(&real.display(), &e))?;
    let meta = file.metadata().map_err(|e| cannot(&real.display(), &e))?;
    if !meta.is_file() {
        return Err(Error::Path(format!("{path:?} is not a regular file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(&real.display(), &e))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Error::TooLarge(format!(
            "{path:?} is larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    Ok(bytes)
}

fn load_file<'e>(name: &str, source: &'e FileSource, paths: Paths<'_>) -> Result<LoadedFile<'e>> {
    let (bytes, pages) = match source {
        FileSource::Path(p) => {
            let bytes = match paths {
                Paths::Refused => return Err(Error::Path(
                    "a file event with a `path` is read relative to a history file; send `content`, `pages` or the bytes"
                        .into(),
                )),
                Paths::Beside(base) => read_beside(base, p, false)?,
                Paths::Anywhere(base) => read_beside(base, p, true)?,
            };
            let pages = tm_ingest::read_pages(name, &bytes)?;
            (Cow::Owned(bytes), pages)
        }
        FileSource::Content(c) => {
            let pages = tm_ingest::read_pages(name, c.as_bytes())?;
            (Cow::Borrowed(c.as_bytes()), pages)
        }
        FileSource::Bytes(b) => {
            let pages = tm_ingest::read_pages(name, b)?;
            (Cow::Borrowed(b.as_slice()), pages)
        }
        FileSource::Pages(p) => {
            // The same page bound as a file read from bytes.
            let limit = tm_ingest::Limits::DEFAULT_MAX_PAGES;
            if p.len() > limit {
                return Err(Error::TooLarge(format!(
                    "{name}: {} pages is more than the limit of {limit} pages",
                    p.len()
                )));
            }
            (
                Cow::Owned(p.join("\u{c}").into_bytes()),
                tm_ingest::pages_from_list(p.clone()),
            )
        }
    };
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Error::TooLarge(format!(
            "{name} is larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    Ok(LoadedFile {
        concepts: None,
        bytes,
        format: pages.format.as_str(),
        pages: pages.pages,
    })
}

fn import_key(event: &Event, file: Option<&LoadedFile<'_>>) -> Hash {
    let mut h = Sha256::new();
    // serde_json::Value objects are BTreeMaps: this text is canonical.
    h.update(event.import_json().to_string().as_bytes());
    if let Some(f) = file {
        h.update(b"\0file\0");
        h.update(Sha256::digest(&f.bytes));
    }
    h.finalize().into()
}

/// The episode the subject already holds for this event: the one with its
/// import key, or — an exported event, carrying its episode's salt — the
/// one sealed with that salt (its import key differs: the export writes
/// files by path and adds the salt).
fn recorded_as(
    r: &dyn Reader,
    s: &Subject,
    key: &Hash,
    event: &Event,
) -> Result<Option<(i64, u64)>> {
    if let Some(found) = r.episode_by_import_key(s, key)? {
        return Ok(Some(found));
    }
    match &event.salt {
        Some(salt) => Ok(r.episode_by_salt(s, salt)?),
        None => Ok(None),
    }
}

/// Embeds `texts` (those not already in `into`) in batches.
fn embed_into(
    embedder: &dyn Embedder,
    texts: Vec<&str>,
    into: &mut HashMap<String, Vec<f32>>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<()> {
    let mut todo: Vec<&str> = texts
        .into_iter()
        .filter(|t| !into.contains_key(*t))
        .collect();
    todo.sort_unstable();
    todo.dedup();
    let total = todo.len();
    for (i, chunk) in todo.chunks(EMBED_BATCH).enumerate() {
        let vs = embedder
            .embed(chunk)
            .map_err(|e| Error::Embed(e.to_string()))?;
        if vs.len() != chunk.len() {
            return Err(Error::Embed(format!(
                "{} vectors for {} texts",
                vs.len(),
                chunk.len()
            )));
        }
        for (t, v) in chunk.iter().zip(vs) {
            into.insert((*t).to_string(), v);
        }
        progress(
            "embedding",
            (i * EMBED_BATCH + chunk.len()).min(total),
            total,
        );
    }
    Ok(())
}

/// Reads, keys, extracts and embeds the events before any write: a file that
/// cannot be read, an extractor or embedder that fails, leaves the store as
/// it was. Errors name the event (0-based positions become 1-based).
pub fn prepare<'e>(
    r: &dyn Reader,
    ix: &Indexing<'_>,
    existing: Option<&Subject>,
    events: &'e [Event],
    paths: Paths<'_>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Prepared<'e>> {
    for (i, e) in events.iter().enumerate() {
        e.validate().map_err(|err| Error::Event {
            index: i + 1,
            message: err.0,
        })?;
    }
    check_sequence(events).map_err(|(i, e)| Error::Event {
        index: i + 1,
        message: e.0,
    })?;
    let held: Vec<(String, String)> = match existing {
        Some(s) => r
            .file_versions(s)?
            .into_iter()
            .filter(|v| v.is_current())
            .map(|v| (v.name, v.sha256))
            .collect(),
        None => Vec::new(),
    };
    let mut files = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        files.push(match &e.body {
            EventBody::File { name, source } => {
                Some(load_file(name, source, paths).map_err(|err| err.at_event(i))?)
            }
            _ => None,
        });
    }
    let keys: Vec<Hash> = events
        .iter()
        .zip(&files)
        .map(|(e, f)| import_key(e, f.as_ref()))
        .collect();
    let mut known = vec![false; events.len()];
    if let Some(s) = existing {
        for (i, (k, e)) in keys.iter().zip(events).enumerate() {
            known[i] = recorded_as(r, s, k, e)?.is_some();
        }
    }
    let mut warnings = Vec::new();
    for (i, (e, f)) in events.iter().zip(files.iter_mut()).enumerate() {
        let (EventBody::File { name, .. }, Some(f)) = (&e.body, f) else {
            continue;
        };
        let sha = hex::encode(Sha256::digest(&f.bytes));
        if !known[i] && !held.iter().any(|(n, h)| n == name && *h == sha) {
            f.concepts = Some(
                ix.extractor
                    .extract_noting(name, &f.pages, &mut warnings)
                    .map_err(|err| Error::Model(err.to_string()))?,
            );
        }
    }
    // The texts of the episodes this will append, and the passages of the
    // file versions it will store: embedded now, outside the transaction.
    let mut texts: Vec<String> = Vec::new();
    for (i, (e, f)) in events.iter().zip(&files).enumerate() {
        if known[i] {
            continue;
        }
        if let Some((_, _, text)) = draft(&e.body) {
            texts.push(text);
        }
        if let Some(f) = f.as_ref().filter(|f| f.concepts.is_some()) {
            for page in &f.pages {
                texts.extend(
                    tm_model::passages::split_page(page)
                        .into_iter()
                        .map(|(_, t)| t),
                );
            }
        }
    }
    let mut vectors = HashMap::new();
    embed_into(
        ix.embedder,
        texts.iter().map(String::as_str).collect(),
        &mut vectors,
        progress,
    )?;
    Ok(Prepared {
        events,
        files,
        keys,
        vectors,
        warnings,
    })
}

/// What applying events changes besides the log.
struct Applying<'a> {
    map: &'a mut ConceptMap,
    map_changed: &'a mut bool,
    file_versions: &'a mut usize,
    names: &'a crate::map::NameVectors<'a>,
    threshold: f32,
    max_concepts: usize,
}

/// Applies prepared events in the caller's transaction: the subject named by
/// `target` (created when it is a history's line), every event appended or
/// found, beliefs, the map, vectors. `source`, when given, is recorded.
pub fn apply(
    tx: &mut dyn Tx,
    ix: &Indexing<'_>,
    target: Target<'_>,
    mut prepared: Prepared<'_>,
    source: Option<&Source>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    let events = prepared.events;
    let subject = match target {
        Target::Subject(s) => s.clone(),
        Target::Line(line, owner) => {
            let first_at = events
                .first()
                .map(|e| e.at)
                .unwrap_or(DateTime::<Utc>::MIN_UTC);
            let owner = match owner {
                Some(o) => o,
                None => live_named(&*tx, &line.key, None)?.map_or(Owner::Operator, |s| s.owner),
            };
            let s = tx.ensure_subject(
                owner,
                &line.key,
                &line.title,
                line.language.as_deref(),
                first_at,
            )?;
            match line.timezone {
                Some(tz) if s.timezone != Some(tz) => {
                    tx.set_timezone(&s, tz)?;
                    Subject {
                        timezone: Some(tz),
                        ..s
                    }
                }
                _ => s,
            }
        }
    };
    // Other writers of the subject (in other processes too) wait from here:
    // the import keys, the map and the beliefs read below stay true.
    tx.lock_subject(&subject)?;
    let mut map = tx.latest_map(&subject)?.unwrap_or_default();
    let mut map_changed = false;
    let mut file_versions = 0;
    let calibration = ix.embedder.calibration();
    let names =
        crate::map::NameVectors::new(calibration.merge_threshold.is_some().then_some(ix.embedder));
    let threshold = calibration.merge_threshold.unwrap_or(f32::INFINITY);
    let mut out = Vec::with_capacity(events.len());
    let mut new_episodes: Vec<(i64, String)> = Vec::new();
    let mut new_versions: Vec<i64> = Vec::new();
    let total = events.len();
    let reason = match source {
        Some(s) => format!("import {}", s.name),
        None => "events".to_string(),
    };
    // The nights an export recorded run where they ran, in this transaction.
    let nights: &[Night] = match target {
        Target::Line(line, _) => &line.nights,
        Target::Subject(_) => &[],
    };
    if let Some(n) = nights.iter().find(|n| n.after > total) {
        return Err(Error::OutOfRange(format!(
            "the subject line's \"nights\" has a night after {} events; the history has {total}",
            n.after
        )));
    }
    let mut next_night = 0;
    let mut run_nights = |tx: &mut dyn Tx,
                          done: usize,
                          map: &ConceptMap,
                          map_changed: &mut bool|
     -> Result<()> {
        while let Some(n) = nights.get(next_night).filter(|n| n.after == done) {
            // The night reads the map as the events so far left it.
            if *map_changed {
                let at = events[..done].last().map_or(n.at, |e| e.at);
                tx.save_map(&subject, at, &reason, map)?;
                *map_changed = false;
            }
            crate::nightly::night_for(tx, &subject, n.at, crate::nightly::DEFAULT_BATCH, n.salt)?;
            next_night += 1;
        }
        Ok(())
    };
    for (i, event) in events.iter().enumerate() {
        run_nights(tx, i, &map, &mut map_changed)?;
        let key = prepared.keys[i];
        if let Some((id, seq)) = recorded_as(&*tx, &subject, &key, event)? {
            out.push(RecordedEpisode {
                id,
                seq,
                appended: false,
            });
        } else {
            let mut ctx = Applying {
                map: &mut map,
                map_changed: &mut map_changed,
                file_versions: &mut file_versions,
                names: &names,
                threshold,
                max_concepts: ix.max_concepts,
            };
            let (appended, text, version) = apply_one(
                tx,
                &subject,
                event,
                prepared.files[i].as_ref(),
                key,
                &mut ctx,
            )
            .map_err(|e| e.at_event(i))?;
            out.push(RecordedEpisode {
                id: appended.id,
                seq: appended.seq,
                appended: true,
            });
            new_episodes.push((appended.id, text));
            new_versions.extend(version);
        }
        if i % 256 == 0 || i + 1 == total {
            progress("recording", i + 1, total);
        }
    }
    run_nights(tx, total, &map, &mut map_changed)?;
    // Vectors: of the new episodes, and of the new versions' passages.
    let mut passages: Vec<(i64, String)> = Vec::new();
    for v in &new_versions {
        passages.extend(
            tx.version_passages(*v)?
                .into_iter()
                .map(|(id, p)| (id, p.text)),
        );
    }
    embed_into(
        ix.embedder,
        new_episodes
            .iter()
            .chain(&passages)
            .map(|(_, t)| t.as_str())
            .collect(),
        &mut prepared.vectors,
        &mut |_, _, _| {},
    )?;
    let model = ix.embedder.name();
    let vector = |text: &str| {
        prepared
            .vectors
            .get(text)
            .cloned()
            .ok_or_else(|| Error::Internal("a text to index lost its vector".into()))
    };
    let episode_vectors: Vec<(i64, Vec<f32>)> = new_episodes
        .iter()
        .map(|(id, t)| Ok((*id, vector(t)?)))
        .collect::<Result<_>>()?;
    tx.put_vectors(&subject, model, &episode_vectors)?;
    let passage_vectors: Vec<(i64, Vec<f32>)> = passages
        .iter()
        .map(|(id, t)| Ok((*id, vector(t)?)))
        .collect::<Result<_>>()?;
    tx.put_passage_vectors(model, &passage_vectors)?;

    let last_at = events.last().map(|e| e.at);
    if map_changed && let Some(at) = last_at {
        tx.save_map(&subject, at, &reason, &map)?;
    }
    let appended = new_episodes.len();
    if let Some(s) = source {
        tx.record_import(
            &subject,
            &s.sha256,
            &s.name,
            last_at.unwrap_or(DateTime::<Utc>::MIN_UTC),
            total,
            appended,
        )?;
    }
    Ok(Recorded {
        subject: subject.key.to_string(),
        events: total,
        appended,
        skipped: total - appended,
        file_versions,
        already_imported: false,
        head_seq: tx.head(&subject)?.0,
        episodes: out,
        warnings: std::mem::take(&mut prepared.warnings),
    })
}

/// Records `events` for the subject `target` names, in one transaction
/// (see the module docs). `paths` says where a file event's `path` may lead
/// (a history file's folder; [`Paths::Refused`] for events sent over a wire).
pub fn record(
    store: &mut dyn Store,
    ix: &Indexing<'_>,
    target: Target<'_>,
    events: &[Event],
    paths: Paths<'_>,
    source: Option<&Source>,
    progress: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Recorded> {
    let existing = match target {
        Target::Subject(s) => Some(s.clone()),
        Target::Line(line, owner) => live_named(&*store, &line.key, owner)?,
    };
    if let (Some(s), Some(src)) = (&existing, source)
        && store.imported(s, &src.sha256)?
    {
        return Ok(Recorded {
            subject: s.key.to_string(),
            events: events.len(),
            appended: 0,
            skipped: events.len(),
            file_versions: 0,
            already_imported: true,
            head_seq: store.head(s)?.0,
            episodes: Vec::new(),
            warnings: Vec::new(),
        });
    }
    let prepared = prepare(&*store, ix, existing.as_ref(), events, paths, progress)?;
    store.write_with(|tx| apply(tx, ix, target, prepared, source, progress))
}

/// The live subject `key` of `owner`, or of whichever owner has one.
fn live_named(
    r: &dyn tm_store::Reader,
    key: &tm_model::subject::SubjectKey,
    owner: Option<Owner>,
) -> Result<Option<Subject>> {
    Ok(tm_store::subject_named(r, owner, key)?.filter(|s| !s.retired))
}

/// Appends one event's episode (and its file version, belief, map change).
/// Returns what was appended, its text (for its vector) and the file version
/// it stored, if a new one.
fn apply_one(
    tx: &mut dyn Tx,
    subject: &Subject,
    event: &Event,
    file: Option<&LoadedFile<'_>>,
    import_key: Hash,
    ctx: &mut Applying<'_>,
) -> Result<(tm_model::episodes::Appended, String, Option<i64>)> {
    let mut pending_check = None;
    let mut data = serde_json::Map::new();
    let mut evidence = Vec::new();
    let mut concepts = Vec::new();
    let mut new_version = None;
    let mut verdict = None;
    let (kind, summary, text) = match &event.body {
        EventBody::FileRemoved { name } => {
            // Recorded as a `file` episode too, so the log shows the removal
            // and a second recording recognises it by its import key.
            let v = tx.remove_file(subject, name, event.at)?;
            ctx.map.remove_file(name);
            *ctx.map_changed = true;
            data.insert("file".into(), name.clone().into());
            data.insert("version".into(), v.version.into());
            data.insert("removed".into(), true.into());
            evidence.push(Evidence {
                file: name.clone(),
                version: VersionRef::Number(v.version),
                page: None,
                sha256: v.sha256.clone(),
            });
            draft(&event.body).ok_or_else(|| Error::Internal("no draft of a removal".into()))?
        }
        EventBody::File { name, .. } => {
            let f = file.ok_or_else(|| Error::Internal(format!("file {name:?} was not loaded")))?;
            let added = tx.add_file(subject, name, &f.bytes, f.format, &f.pages, event.at)?;
            let v = added.version();
            if let (FileAdded::New { .. }, Some(concepts)) = (&added, &f.concepts) {
                let before = ctx.map.nodes().len();
                ctx.map.merge_file(
                    name,
                    Some(v.id),
                    concepts,
                    &|a, b| ctx.names.cosine(a, b),
                    ctx.threshold,
                );
                let after = ctx.map.nodes().len();
                if after > before && after > ctx.max_concepts {
                    return Err(Error::TooLarge(format!(
                        "file {name:?} would grow the subject's concept map to {after} concepts; a subject holds at most {}",
                        ctx.max_concepts
                    )));
                }
                *ctx.map_changed = true;
            }
            let summary = match &added {
                FileAdded::New {
                    replaced: Some(_), ..
                } => format!("File {name} replaced (version {})", v.version),
                FileAdded::New { .. } => format!(
                    "File {name} added ({} page{})",
                    v.pages,
                    if v.pages == 1 { "" } else { "s" }
                ),
                FileAdded::Unchanged(_) => format!("File {name} uploaded again, unchanged"),
            };
            if let FileAdded::New { version, .. } = &added {
                *ctx.file_versions += 1;
                new_version = Some(version.id);
            }
            data.insert("file".into(), name.clone().into());
            data.insert("version".into(), v.version.into());
            data.insert("pages".into(), v.pages.into());
            evidence.push(Evidence {
                file: name.clone(),
                version: VersionRef::Number(v.version),
                page: None,
                sha256: v.sha256.clone(),
            });
            let text = format!("{summary}.");
            (Kind::File, summary, text)
        }
        EventBody::Learner { text } => {
            match teaching(text) {
                Some(t) => {
                    data.insert("cue".into(), t.cue.into());
                    data.insert("lang".into(), t.lang.into());
                    match tm_model::map::teach(ctx.map, text, &t) {
                        TeachOutcome::Attached { name, .. }
                        | TeachOutcome::Created { name, .. } => {
                            concepts.push(name);
                            *ctx.map_changed = true;
                        }
                        TeachOutcome::Unnamed { .. } => {}
                    }
                }
                None => concepts = crate::map::named_in(ctx.map, text),
            }
            draft(&event.body).ok_or_else(|| Error::Internal("no draft of a message".into()))?
        }
        EventBody::Tutor { text, cites } => {
            for cite in cites {
                let v = tx
                    .current_version(subject, &cite.file)?
                    .filter(|v| v.removed_at.is_none())
                    .ok_or_else(|| {
                        Error::BadCitation(format!(
                            "the answer cites {:?}, which the subject does not hold at that time",
                            cite.file
                        ))
                    })?;
                if let Some(page) = cite.page
                    && (page == 0 || page as usize > v.pages.max(1))
                {
                    return Err(Error::BadCitation(format!(
                        "the answer cites page {page} of {:?}, which has {} page(s)",
                        cite.file, v.pages
                    )));
                }
                evidence.push(Evidence {
                    file: cite.file.clone(),
                    version: VersionRef::Number(v.version),
                    page: cite.page,
                    sha256: v.sha256,
                });
            }
            concepts = crate::map::named_in(ctx.map, text);
            draft(&event.body).ok_or_else(|| Error::Internal("no draft of an answer".into()))?
        }
        EventBody::Check {
            topic,
            verdict: v,
            evaluation,
            predicted,
        } => {
            verdict = Some(*v);
            data.insert("topic".into(), topic.clone().into());
            data.insert("verdict".into(), v.as_str().into());
            if let Some(e) = evaluation {
                data.insert("evaluation".into(), e.clone().into());
            }
            let routing = route_in_map(topic, evaluation.as_deref(), ctx.map);
            // The mastery predicted before the check (docs/mechanisms.md §5, for calibration):
            // the event's, else the current belief's confidence at this instant.
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
            // Concepts touched by this check under today's routing (docs/mechanisms.md §5);
            // beliefs re-route from topic and evaluation, never from this.
            if let Routing::Concept { name, .. } = &routing {
                if *v == Verdict::Right && ctx.map.confirm(name) {
                    *ctx.map_changed = true;
                }
                concepts.push(name.clone());
            }
            pending_check = Some((routing, *v, current));
            draft(&event.body).ok_or_else(|| Error::Internal("no draft of a check".into()))?
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
            draft(&event.body).ok_or_else(|| Error::Internal("no draft of a quiz".into()))?
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
        salt: event.salt,
    };
    let appended = tx.append(subject, &episode)?;
    if let Some((routing, verdict, current)) = pending_check {
        let fact = CheckFact {
            episode_id: appended.id,
            at: event.at,
            verdict,
            routing,
        };
        let next = apply_check(current.as_ref(), &fact)
            .map_err(|e| Error::Internal(format!("a belief rule failed: {e}")))?;
        if let Some(b) = next {
            tx.insert_belief(subject, &b, current.and_then(|c| c.id))?;
        }
    }
    Ok((appended, episode.text, new_version))
}
