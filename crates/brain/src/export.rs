//! A learner's data as v1 history files (docs/formats.md) with their files (GDPR
//! Art. 20): what the chain recorded, written back as the events it came
//! from, so `import` of the export into another store gives the same
//! episodes, beliefs and map — and, for a chain written entirely in
//! encoding 2 with portable references, the same head hashes.
//!
//! Each episode becomes its event: a question or teaching note a `learner`
//! line, an answer a `tutor` line with its cites, a check, a quiz, a file (its
//! bytes written beside the history) or a removal. Two extensions of the
//! format carry what a plain history cannot: every event's `salt` (the
//! episode's encoding-2 salt, so the re-imported episode seals the same
//! digest) and, on the subject line, the `nights` the nightly loop ran and
//! where they fell among the events (their consolidations and belief decay
//! are then derived again at the same places). A reader that does not know
//! them imports the same events and loses only the nights.
//!
//! What an export cannot carry back, it says in its manifest
//! (`same_head_on_import` and the counts beside it): erased positions have
//! no content to write; episodes written in encoding 1, or before evidence
//! named a file version by its number, hashed store-local ids.

use crate::{Error, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use tm_model::beliefs::BeliefRow;
use tm_model::episodes::{Episode, Kind, Verdict, VersionRef};
use tm_model::events::{Cite, Event, EventBody, FileSource, Night, SubjectLine};
use tm_model::files::FileVersion;
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;
use tm_store::Reader;

/// The manifest's `format`.
pub const FORMAT: &str = "tutor-memory export v1";
/// The manifest's file name at the export's root.
pub const MANIFEST: &str = "manifest.json";

/// Files to write: each a path relative to the export's root and its bytes.
pub type Files = Vec<(String, Vec<u8>)>;

/// An export: files to write, each at a path relative to the export's root.
#[derive(Debug, Clone)]
pub struct Export {
    pub manifest: Manifest,
    /// `manifest.json` first, then each subject's histories, files, beliefs
    /// and map.
    pub files: Files,
}

/// What an export holds, written as `manifest.json`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Manifest {
    pub format: String,
    /// `subject`, `learner` or `tenant`, and which.
    pub scope: String,
    pub target: String,
    pub exported_at: DateTime<Utc>,
    pub subjects: Vec<ExportedSubject>,
}

/// One subject of an export.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExportedSubject {
    /// `learner/subject`.
    pub subject: String,
    /// The history files to import, in this order (more than one when the
    /// chain went back in time between imports: a history is in time order).
    pub histories: Vec<String>,
    /// Episodes in the chain, and how many of them became events, nights,
    /// or nothing (erased).
    pub episodes: u64,
    pub events: usize,
    pub nights: usize,
    pub erased: u64,
    /// Episodes written in encoding 1, or naming store-local ids in what
    /// their hash covers: re-imported, they get other hashes.
    pub local: u64,
    pub head_seq: u64,
    /// Hex SHA-256 of the head.
    pub head_hash: String,
    /// Importing the histories into a store without this subject gives a
    /// chain with this head (nothing erased, nothing local).
    pub same_head_on_import: bool,
    /// The current beliefs and the concept map, as `beliefs.json` and
    /// `map.json` beside the histories (what is held; import derives them
    /// again from the events).
    pub beliefs: usize,
    pub concepts: usize,
}

/// One item of the chain as an export writes it.
enum Item {
    /// The event, and the id and seq of its episode.
    Event(Box<(Event, i64, u64)>),
    /// A night with a consolidation, at its chain position.
    Night(Night),
}

/// Exports `subjects` (one consistent view: call it inside a transaction
/// that holds their locks). `scope` and `target` are what the manifest says
/// was asked for.
pub fn export(
    r: &dyn Reader,
    subjects: &[Subject],
    scope: &str,
    target: &str,
    at: DateTime<Utc>,
) -> Result<Export> {
    let mut files: Files = Vec::new();
    let mut listed = Vec::with_capacity(subjects.len());
    for s in subjects {
        let (entry, mut written) = subject(r, s)?;
        listed.push(entry);
        files.append(&mut written);
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        scope: scope.into(),
        target: target.into(),
        exported_at: at,
        subjects: listed,
    };
    files.insert(0, (MANIFEST.into(), pretty(&manifest)?));
    Ok(Export { manifest, files })
}

/// The folder of a subject inside an export: its slug (the learner is the
/// same for every subject of a learner's export; a tenant's export nests
/// learners).
fn folder(s: &Subject) -> String {
    format!("{}/{}", s.key.learner, s.key.subject)
}

/// A file name that is safe in any file system: its letters, digits, dots,
/// dashes and underscores kept, anything else an underscore.
fn safe(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let kept: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let kept = kept.trim_start_matches('.');
    if kept.is_empty() {
        "file".into()
    } else {
        kept.chars().take(80).collect()
    }
}

/// A subject's chain told as events: histories in time order, each with the
/// nights that ran among its events.
pub(crate) struct Chain {
    pub parts: Vec<Part>,
    /// Positions in the chain, erased ones among them.
    pub episodes: u64,
    pub erased: u64,
    /// Episodes whose hash covers store-local ids (see [`is_local`]).
    pub local: u64,
}

/// One history: the subject line's nights and the events, each with the id
/// and seq of the episode it is. A file's bytes are in its event
/// ([`FileSource::Bytes`]) until an export writes them beside the history.
pub(crate) struct Part {
    pub nights: Vec<Night>,
    pub events: Vec<(Event, i64, u64)>,
}

impl Chain {
    /// The subject line of a history of this subject.
    pub fn line(s: &Subject, nights: Vec<Night>) -> SubjectLine {
        SubjectLine {
            key: s.key.clone(),
            title: s.title.clone(),
            language: s.language.clone(),
            timezone: s.timezone,
            nights,
        }
    }
}

/// Reads the subject's chain as events, leaving out the episodes at `skip`
/// (and the erased ones, which have no content).
pub(crate) fn chain(r: &dyn Reader, s: &Subject, skip: &[u64]) -> Result<Chain> {
    let versions = r.file_versions(s)?;
    let mut items: Vec<Item> = Vec::new();
    let (mut erased, mut local, mut episodes) = (0u64, 0u64, 0u64);
    let mut from = 1u64;
    loop {
        let page = r.episodes(s, from, 1000)?;
        let Some(last) = page.last() else { break };
        from = last.seq + 1;
        for e in page {
            episodes += 1;
            if e.erased {
                erased += 1;
                continue;
            }
            if skip.contains(&e.seq) {
                continue;
            }
            let mut own_bytes = true;
            match e.kind {
                Kind::Consolidation => items.push(Item::Night(Night {
                    at: e.at,
                    after: 0,
                    salt: e.salt,
                })),
                _ => {
                    let (event, same) = event_of(r, s, &e, &versions)?;
                    own_bytes = same;
                    items.push(Item::Event(Box::new((event, e.id, e.seq))));
                }
            }
            if is_local(&e) || !own_bytes {
                local += 1;
            }
        }
    }
    let runs = r.nightly_runs(s)?;
    Ok(Chain {
        parts: split(items, &runs),
        episodes,
        erased,
        local,
    })
}

fn subject(r: &dyn Reader, s: &Subject) -> Result<(ExportedSubject, Files)> {
    let dir = folder(s);
    let (head_seq, head) = r.head(s)?;
    let chain = chain(r, s, &[])?;
    let mut histories: Files = Vec::new();
    let mut out: Files = Vec::new();
    let (mut events, mut nights) = (0, 0);
    for (i, part) in chain.parts.into_iter().enumerate() {
        let name = if i == 0 {
            format!("{dir}/history.jsonl")
        } else {
            format!("{dir}/history-{}.jsonl", i + 1)
        };
        events += part.events.len();
        nights += part.nights.len();
        let mut text = Chain::line(s, part.nights).to_json().to_string();
        text.push('\n');
        for (mut e, _, seq) in part.events {
            // A file's bytes go beside the history, named by its position.
            if let EventBody::File { name, source } = &mut e.body
                && let FileSource::Bytes(bytes) = source
            {
                let path = format!("files/{seq:06}-{}", safe(name));
                out.push((format!("{dir}/{path}"), std::mem::take(bytes)));
                *source = FileSource::Path(path);
            }
            text.push_str(&e.to_json().to_string());
            text.push('\n');
        }
        histories.push((name, text.into_bytes()));
    }
    let beliefs: Vec<BeliefRow> = r.current_beliefs(s)?;
    let map: ConceptMap = r.latest_map(s)?.unwrap_or_default();
    out.push((format!("{dir}/beliefs.json"), pretty(&beliefs)?));
    out.push((format!("{dir}/map.json"), pretty(&map)?));
    let entry = ExportedSubject {
        subject: s.key.to_string(),
        histories: histories.iter().map(|(n, _)| n.clone()).collect(),
        episodes: chain.episodes,
        events,
        nights,
        erased: chain.erased,
        local: chain.local,
        head_seq,
        head_hash: hex::encode(head),
        same_head_on_import: chain.erased == 0 && chain.local == 0,
        beliefs: beliefs.len(),
        concepts: map.nodes().len(),
    };
    histories.append(&mut out);
    Ok((entry, histories))
}

fn pretty<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(v).map_err(|e| Error::Internal(format!("cannot write JSON: {e}")))
}

/// Whether what the episode's hash covers names something only this store
/// knows (so a re-import cannot give the same hash): encoding 1 (no salt),
/// evidence by row id, a consolidation listing row ids.
fn is_local(e: &Episode) -> bool {
    e.salt.is_none()
        || e.evidence
            .iter()
            .any(|v| matches!(v.version, VersionRef::Id(_)))
        || (e.kind == Kind::Consolidation && e.data.contains_key("headlines"))
}

/// The event an episode was recorded from, and whether it carries the
/// file's bytes as stored (false: a file given as pages whose bytes would
/// read back otherwise).
fn event_of(
    r: &dyn Reader,
    s: &Subject,
    e: &Episode,
    versions: &[FileVersion],
) -> Result<(Event, bool)> {
    let corrupt = |what: &str| {
        Error::Internal(format!(
            "{} episode {} (seq {}) cannot be exported: {what}",
            e.kind, e.id, e.seq
        ))
    };
    let text = |k: &str| -> Result<String> {
        e.data
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| corrupt(&format!("its data has no \"{k}\"")))
    };
    let number = |k: &str| -> Result<f64> {
        e.data
            .get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| corrupt(&format!("its data has no number \"{k}\"")))
    };
    let mut same = true;
    let body = match e.kind {
        Kind::Question | Kind::Taught => EventBody::Learner {
            text: e.text.clone(),
        },
        Kind::Answer => EventBody::Tutor {
            text: e.text.clone(),
            cites: e
                .evidence
                .iter()
                .map(|v| Cite {
                    file: v.file.clone(),
                    page: v.page,
                })
                .collect(),
        },
        Kind::Check => {
            let verdict: Verdict = serde_json::from_value(json!(text("verdict")?))
                .map_err(|_| corrupt("its verdict is not right, wrong or partial"))?;
            // A prediction the store derived from the belief is derived
            // again on import; one the event gave is given again.
            let derived = e.data.get("predicted_from").and_then(Value::as_str) == Some("belief");
            EventBody::Check {
                topic: text("topic")?,
                verdict,
                evaluation: e
                    .data
                    .get("evaluation")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                predicted: if derived {
                    None
                } else {
                    e.data.get("predicted").and_then(Value::as_f64)
                },
            }
        }
        Kind::Quiz => EventBody::Quiz {
            title: text("title")?,
            score: number("score")?,
            max: number("max")?,
            concepts: e.concepts.clone(),
        },
        Kind::File if e.data.get("removed").and_then(Value::as_bool) == Some(true) => {
            EventBody::FileRemoved {
                name: text("file")?,
            }
        }
        Kind::File => {
            let name = text("file")?;
            let cited = e
                .evidence
                .first()
                .ok_or_else(|| corrupt("it names no file version"))?;
            let v = versions
                .iter()
                .find(|v| cited.names(v.id, &v.name, v.version))
                .ok_or_else(|| corrupt("the file version it made is not in the store"))?;
            let bytes = r
                .version_bytes(s, v.id)?
                .ok_or_else(|| corrupt("the file version's bytes are not in the store"))?;
            // A file given as a list of pages is given so again when its
            // bytes would not read back into the same pages.
            let pages = r.pages(v.id)?;
            let source = match tm_ingest::read_pages(&name, &bytes) {
                Ok(p) if p.pages == pages => FileSource::Bytes(bytes),
                _ => {
                    same = pages.join("\u{c}").into_bytes() == bytes;
                    FileSource::Pages(pages)
                }
            };
            EventBody::File { name, source }
        }
        Kind::Consolidation => return Err(corrupt("a consolidation is a night, not an event")),
    };
    let event = Event::new(e.at, body)
        .with_id(e.external_id.clone())
        .with_salt(e.salt);
    Ok((event, same))
}

/// Places the nights among the events and cuts the chain into histories
/// wherever an event is earlier than the one before it (a history is in time
/// order). A night that consolidated stands where its consolidation is in
/// the chain. One that did not (a quiet day) left no episode: it is placed
/// after the events up to its instant, never before the night that ran
/// before it nor after the one that ran after it, which is where the
/// nightly loop, run day by day or caught up later, puts it.
fn split(items: Vec<Item>, runs: &[DateTime<Utc>]) -> Vec<Part> {
    let mut events: Vec<(Event, i64, u64)> = Vec::new();
    // (position among all events, night)
    let mut placed: Vec<(usize, Night)> = Vec::new();
    for item in items {
        match item {
            Item::Event(e) => events.push(*e),
            Item::Night(n) => placed.push((events.len(), n)),
        }
    }
    for t in runs {
        if placed.iter().any(|(_, n)| n.at == *t) {
            continue;
        }
        let before = placed
            .iter()
            .filter(|(_, n)| n.at < *t)
            .map(|(p, _)| *p)
            .max()
            .unwrap_or(0);
        let after = placed
            .iter()
            .filter(|(_, n)| n.at > *t)
            .map(|(p, _)| *p)
            .min()
            .unwrap_or(events.len());
        let upto = events.iter().take_while(|(e, _, _)| e.at <= *t).count();
        let position = upto.clamp(before, after.max(before));
        placed.push((
            position,
            Night {
                at: *t,
                after: 0,
                salt: None,
            },
        ));
    }
    placed.sort_by_key(|(p, n)| (*p, n.at));
    // Cut at time regressions.
    let mut cuts = vec![0];
    for i in 1..events.len() {
        if events[i].0.at < events[i - 1].0.at {
            cuts.push(i);
        }
    }
    cuts.push(events.len());
    // A night at a cut opens the later history; one after every event
    // closes the last.
    let total = events.len();
    let mut parts = Vec::with_capacity(cuts.len() - 1);
    let mut rest = events.into_iter();
    for w in cuts.windows(2) {
        let (start, end) = (w[0], w[1]);
        let part: Vec<(Event, i64, u64)> = rest.by_ref().take(end - start).collect();
        let nights = placed
            .iter()
            .filter(|(p, _)| (start..end).contains(p) || (end == total && *p == total))
            .map(|(p, n)| Night {
                after: p - start,
                ..*n
            })
            .collect();
        parts.push(Part {
            nights,
            events: part,
        });
    }
    parts
}
