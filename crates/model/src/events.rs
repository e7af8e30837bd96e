//! What happened in a subject, as the world tells it: the v1 events (docs/formats.md)
//! (a file arrived or was removed, the learner wrote, the tutor answered, a
//! check, a quiz) as Rust values. A history file is one producer of them, the
//! HTTP API another, `teach` and the recorded answer of a turn a third; every
//! one of them goes through the same validation here and the same record path
//! in the brain.
//!
//! An event keeps the JSON it arrived as ([`Event::import_json`]): the record
//! path hashes it into the event's import key, so the same event recorded
//! twice (a re-imported history, a retried request) is recognised and skipped.
//! An event built in code hashes its own canonical JSON, written exactly as
//! the history format spells it.

use crate::episodes::{SALT_BYTES, Verdict};
use crate::subject::{SubjectKey, parse_tz};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// The longest learner message, tutor answer, topic or evaluation accepted.
pub const MAX_TEXT_CHARS: usize = 200_000;
/// The longest external id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 200;
/// The longest file name accepted, in bytes.
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// One event, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The caller's reference, unique within the subject, kept on the episode.
    pub id: Option<String>,
    pub at: DateTime<Utc>,
    pub body: EventBody,
    /// The encoding-v2 salt its episode is sealed with: an extension of
    /// docs/formats.md, v1 (`"salt"`, 32 hex digits) that an export writes, so the
    /// re-imported episode has the same digest and chain hash. `None`: the
    /// store draws a fresh one.
    pub salt: Option<[u8; SALT_BYTES]>,
    /// The JSON the event arrived as, when it arrived as JSON.
    received: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    File {
        name: String,
        source: FileSource,
    },
    FileRemoved {
        name: String,
    },
    Learner {
        text: String,
    },
    Tutor {
        text: String,
        cites: Vec<Cite>,
    },
    Check {
        topic: String,
        verdict: Verdict,
        evaluation: Option<String>,
        predicted: Option<f64>,
    },
    Quiz {
        title: String,
        score: f64,
        max: f64,
        concepts: Vec<String>,
    },
}

/// Where a file event's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum FileSource {
    /// A path relative to the history file's folder (history files only).
    Path(String),
    /// Inline text.
    Content(String),
    /// Inline text, one string a page.
    Pages(Vec<String>),
    /// Bytes handed over directly (an upload); not a JSON shape.
    Bytes(Vec<u8>),
}

/// A page of a file an answer cites.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Cite {
    pub file: String,
    #[serde(default)]
    pub page: Option<u32>,
}

/// The first line of a history file: the subject it records.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectLine {
    pub key: SubjectKey,
    pub title: String,
    pub language: Option<String>,
    /// The learner's time zone, an optional extension of docs/formats.md, v1.
    pub timezone: Option<Tz>,
    /// The nights the subject's nightly loop ran, where they fall among the
    /// history's events: an optional extension an export writes, so that a
    /// re-import runs them at the same places and derives the same
    /// consolidations and belief decay. Empty for a plain history.
    pub nights: Vec<Night>,
}

/// One run of the nightly loop, as an export records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Night {
    /// The run's instant T (it covered the 24 hours before).
    pub at: DateTime<Utc>,
    /// How many of the history's events were recorded before it ran.
    pub after: usize,
    /// The salt of the consolidation episode it wrote, if it wrote one.
    pub salt: Option<[u8; SALT_BYTES]>,
}

#[derive(Deserialize)]
struct NightWire {
    at: String,
    after: usize,
    #[serde(default)]
    salt: Option<Value>,
}

/// Why an event (or a subject line) was refused: a message for the person
/// who wrote it; the caller adds where (a line, an event's position).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EventError(pub String);

fn bad(message: impl Into<String>) -> EventError {
    EventError(message.into())
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    Subject {
        learner: String,
        subject: String,
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        language: Option<String>,
        #[serde(default)]
        timezone: Option<String>,
        #[serde(default)]
        nights: Vec<NightWire>,
    },
    File {
        at: String,
        name: String,
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        content: Option<String>,
        #[serde(default)]
        pages: Option<Vec<String>>,
    },
    FileRemoved {
        at: String,
        name: String,
    },
    Learner {
        at: String,
        text: String,
    },
    Tutor {
        at: String,
        text: String,
        #[serde(default)]
        cites: Vec<Cite>,
    },
    Check {
        at: String,
        topic: String,
        verdict: Verdict,
        #[serde(default)]
        evaluation: Option<String>,
        #[serde(default)]
        predicted: Option<f64>,
    },
    Quiz {
        at: String,
        title: String,
        score: f64,
        max: f64,
        #[serde(default)]
        concepts: Vec<String>,
    },
}

fn wire(value: &Value) -> Result<Wire, EventError> {
    if !value.is_object() {
        return Err(bad("expected a JSON object"));
    }
    Wire::deserialize(value).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("unknown variant") && msg.contains("expected one of `subject`") {
            bad(format!(
                "unknown event type ({msg}); expected subject, file, file_removed, learner, tutor, check or quiz"
            ))
        } else {
            bad(msg)
        }
    })
}

/// Whether a JSON object is a subject line (`"type": "subject"`).
pub fn is_subject_line(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("subject")
}

/// Why a client's events were refused: the body's shape, or one event
/// (`index` counts from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEventsError {
    Shape(&'static str),
    Event { index: usize, message: String },
}

/// The events a client sends over the network (HTTP, MCP): one event object
/// or an array of them, each read by [`Event::from_json`], and refused when
/// it is a subject line (the address names the subject), names a file on
/// the server's disk (`path`), or is dated later than `now` and
/// [`crate::instant::FUTURE_SKEW`]. One reader for every face, so they
/// cannot drift apart.
pub fn from_client(body: Value, now: DateTime<Utc>) -> Result<Vec<Event>, ClientEventsError> {
    let values = match body {
        Value::Array(a) => a,
        o @ Value::Object(_) => vec![o],
        _ => {
            return Err(ClientEventsError::Shape(
                "send one event object or an array of them",
            ));
        }
    };
    if values.is_empty() {
        return Err(ClientEventsError::Shape("no events"));
    }
    let bad = |i: usize, message: String| ClientEventsError::Event {
        index: i + 1,
        message,
    };
    let mut events = Vec::with_capacity(values.len());
    for (i, v) in values.into_iter().enumerate() {
        if is_subject_line(&v) {
            return Err(bad(
                i,
                "the subject is named by the address (the URL or the tool's `subject`), not by a subject line".into(),
            ));
        }
        let e = Event::from_json(v).map_err(|e| bad(i, e.0))?;
        if let EventBody::File {
            source: FileSource::Path(_),
            ..
        } = e.body
        {
            return Err(bad(
                i,
                "a file event sent to the service carries `content` or `pages` (or is uploaded to /files); `path` is not accepted".into(),
            ));
        }
        crate::instant::not_future(e.at, now).map_err(|m| bad(i, m))?;
        events.push(e);
    }
    Ok(events)
}

impl SubjectLine {
    /// Reads and checks a subject line.
    pub fn from_json(value: &Value) -> Result<SubjectLine, EventError> {
        let Wire::Subject {
            learner,
            subject,
            title,
            language,
            timezone,
            nights,
        } = wire(value)?
        else {
            return Err(bad("the first line must be {\"type\":\"subject\", …}"));
        };
        let key = SubjectKey::new(&learner, &subject).map_err(|e| bad(e.to_string()))?;
        if let Some(l) = &language {
            crate::subject::check_language(l).map_err(|e| bad(e.to_string()))?;
        }
        if let Some(t) = &title {
            crate::subject::check_title(t).map_err(|e| bad(e.to_string()))?;
        }
        let timezone = match timezone {
            None => None,
            Some(tz) => Some(parse_tz(&tz).map_err(|_| {
                bad(format!(
                    "\"timezone\" is not an IANA time zone name such as Europe/Berlin: {tz:?}"
                ))
            })?),
        };
        let mut read: Vec<Night> = Vec::with_capacity(nights.len());
        for n in nights {
            let night = Night {
                at: parse_at(&n.at).map_err(|e| bad(format!("\"nights\": {e}")))?,
                after: n.after,
                salt: match &n.salt {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(parse_salt(v)?),
                },
            };
            if let Some(last) = read.last()
                && (night.after, night.at) < (last.after, last.at)
            {
                return Err(bad(
                    "\"nights\" must be in order: each runs after no fewer events and no earlier than the one before",
                ));
            }
            read.push(night);
        }
        Ok(SubjectLine {
            key,
            title: title.unwrap_or_default(),
            language,
            timezone,
            nights: read,
        })
    }

    /// The line as a history file writes it.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("type".into(), "subject".into());
        o.insert("learner".into(), self.key.learner.clone().into());
        o.insert("subject".into(), self.key.subject.clone().into());
        if !self.title.is_empty() {
            o.insert("title".into(), self.title.clone().into());
        }
        if let Some(l) = &self.language {
            o.insert("language".into(), l.clone().into());
        }
        if let Some(tz) = &self.timezone {
            o.insert("timezone".into(), tz.name().into());
        }
        if !self.nights.is_empty() {
            let nights: Vec<Value> = self
                .nights
                .iter()
                .map(|n| {
                    let mut v = json!({"at": n.at.to_rfc3339(), "after": n.after});
                    if let Some(salt) = &n.salt {
                        v["salt"] = hex::encode(salt).into();
                    }
                    v
                })
                .collect();
            o.insert("nights".into(), nights.into());
        }
        Value::Object(o)
    }
}

impl Event {
    /// An event built in code; its import key hashes [`Event::to_json`].
    pub fn new(at: DateTime<Utc>, body: EventBody) -> Event {
        Event {
            id: None,
            at,
            body,
            salt: None,
            received: None,
        }
    }

    /// The same event with an external id.
    pub fn with_id(mut self, id: Option<String>) -> Event {
        self.id = id;
        self.received = None;
        self
    }

    /// The same event sealed with `salt` (a re-import of an export).
    pub fn with_salt(mut self, salt: Option<[u8; SALT_BYTES]>) -> Event {
        self.salt = salt;
        self.received = None;
        self
    }

    /// Reads and checks one event from its JSON (docs/formats.md, v1). Unknown fields
    /// are ignored (the format grows by new optional fields); an unknown
    /// `type`, and a subject line, are errors.
    pub fn from_json(value: Value) -> Result<Event, EventError> {
        let id = match value.get("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad_id()),
        };
        let (at, body) = match wire(&value)? {
            Wire::Subject { .. } => {
                return Err(bad(
                    "a subject line names the subject; it is not an event (only the first line of a history may be one)",
                ));
            }
            Wire::File {
                at,
                name,
                path,
                content,
                pages,
            } => {
                let source = match (path, content, pages) {
                    (Some(p), None, None) => FileSource::Path(p),
                    (None, Some(c), None) => FileSource::Content(c),
                    (None, _, Some(p)) => FileSource::Pages(p),
                    _ => {
                        return Err(bad(
                            "a file event needs exactly one of \"path\" or \"content\" (or \"pages\")",
                        ));
                    }
                };
                (at, EventBody::File { name, source })
            }
            Wire::FileRemoved { at, name } => (at, EventBody::FileRemoved { name }),
            Wire::Learner { at, text } => (at, EventBody::Learner { text }),
            Wire::Tutor { at, text, cites } => (at, EventBody::Tutor { text, cites }),
            Wire::Check {
                at,
                topic,
                verdict,
                evaluation,
                predicted,
            } => (
                at,
                EventBody::Check {
                    topic,
                    verdict,
                    // A blank evaluation is no evaluation.
                    evaluation: evaluation.filter(|e| !e.trim().is_empty()),
                    predicted,
                },
            ),
            Wire::Quiz {
                at,
                title,
                score,
                max,
                concepts,
            } => (
                at,
                EventBody::Quiz {
                    title,
                    score,
                    max,
                    concepts,
                },
            ),
        };
        let salt = match value.get("salt") {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_salt(v)?),
        };
        let event = Event {
            id,
            at: parse_at(&at)?,
            body,
            salt,
            received: Some(value),
        };
        event.validate()?;
        Ok(event)
    }

    /// The rules every event keeps, however it was made: an id of at most
    /// [`MAX_ID_BYTES`], usable file names, texts that are not empty and
    /// within [`MAX_TEXT_CHARS`], a prediction in [0, 1], a quiz score
    /// between 0 and its maximum.
    pub fn validate(&self) -> Result<(), EventError> {
        crate::instant::check(self.at).map_err(|e| bad(format!("\"at\": {e}")))?;
        if let Some(id) = &self.id
            && (id.trim().is_empty() || id.len() > MAX_ID_BYTES)
        {
            return Err(bad_id());
        }
        match &self.body {
            EventBody::File { name, .. } | EventBody::FileRemoved { name } => file_name(name),
            EventBody::Learner { text } | EventBody::Tutor { text, .. } => some_text("text", text),
            EventBody::Check {
                topic,
                evaluation,
                predicted,
                ..
            } => {
                if let Some(p) = predicted
                    && !(0.0..=1.0).contains(p)
                {
                    return Err(bad(format!(
                        "\"predicted\" must be between 0 and 1, not {p}"
                    )));
                }
                if let Some(e) = evaluation {
                    some_text("evaluation", e)?;
                }
                some_text("topic", topic)
            }
            EventBody::Quiz {
                title, score, max, ..
            } => {
                if !(*max > 0.0 && max.is_finite() && (0.0..=*max).contains(score)) {
                    return Err(bad(format!(
                        "a quiz needs 0 ≤ score ≤ max and max > 0 (got {score}/{max})"
                    )));
                }
                some_text("title", title)
            }
        }
    }

    /// The event's JSON in the history format. File bytes handed over
    /// directly are not JSON: such an event names its file only.
    pub fn to_json(&self) -> Value {
        // An object built with json! is a BTreeMap: keys come out sorted.
        let mut v = match &self.body {
            EventBody::File { name, source } => {
                let mut v = json!({"type": "file", "name": name});
                match source {
                    FileSource::Path(p) => v["path"] = p.clone().into(),
                    FileSource::Content(c) => v["content"] = c.clone().into(),
                    FileSource::Pages(p) => v["pages"] = json!(p),
                    FileSource::Bytes(_) => {}
                }
                v
            }
            EventBody::FileRemoved { name } => json!({"type": "file_removed", "name": name}),
            EventBody::Learner { text } => json!({"type": "learner", "text": text}),
            EventBody::Tutor { text, cites } => json!({
                "type": "tutor",
                "text": text,
                "cites": cites.iter().map(|c| match c.page {
                    Some(p) => json!({"file": c.file, "page": p}),
                    None => json!({"file": c.file}),
                }).collect::<Vec<_>>(),
            }),
            EventBody::Check {
                topic,
                verdict,
                evaluation,
                predicted,
            } => {
                let mut v = json!({"type": "check", "topic": topic, "verdict": verdict.as_str()});
                if let Some(e) = evaluation {
                    v["evaluation"] = e.clone().into();
                }
                if let Some(p) = predicted {
                    v["predicted"] = (*p).into();
                }
                v
            }
            EventBody::Quiz {
                title,
                score,
                max,
                concepts,
            } => {
                json!({"type": "quiz", "title": title, "score": score, "max": max, "concepts": concepts})
            }
        };
        v["at"] = self.at.to_rfc3339().into();
        if let Some(id) = &self.id {
            v["id"] = id.clone().into();
        }
        if let Some(salt) = &self.salt {
            v["salt"] = hex::encode(salt).into();
        }
        v
    }

    /// The JSON that identifies this event for idempotence: as received, or
    /// [`Event::to_json`] for an event built in code.
    pub fn import_json(&self) -> std::borrow::Cow<'_, Value> {
        match &self.received {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => std::borrow::Cow::Owned(self.to_json()),
        }
    }
}

/// The rules a list of events must keep together: time order, and no
/// external id twice. On a break, the position (0-based) of the offending
/// event and why.
pub fn check_sequence(events: &[Event]) -> Result<(), (usize, EventError)> {
    let mut ids = HashSet::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 && e.at < events[i - 1].at {
            return Err((
                i,
                bad(format!(
                    "events must be in time order: {} is before the previous event's {}",
                    e.at.to_rfc3339(),
                    events[i - 1].at.to_rfc3339()
                )),
            ));
        }
        if let Some(id) = &e.id
            && !ids.insert(id.as_str())
        {
            return Err((i, bad(format!("the id {id:?} is used twice"))));
        }
    }
    Ok(())
}

/// Reads an event's `"salt"`: 32 hexadecimal digits, the 16 bytes an export
/// wrote.
pub fn parse_salt(v: &Value) -> Result<[u8; SALT_BYTES], EventError> {
    let refuse = || {
        bad(format!(
            "\"salt\" is {} hexadecimal digits (the salt an export wrote)",
            SALT_BYTES * 2
        ))
    };
    let text = v.as_str().ok_or_else(refuse)?;
    let bytes = hex::decode(text).map_err(|_| refuse())?;
    bytes.as_slice().try_into().map_err(|_| refuse())
}

/// Parses an RFC 3339 instant in the accepted range ([`crate::instant`]).
pub fn parse_at(s: &str) -> Result<DateTime<Utc>, EventError> {
    crate::instant::parse(s).map_err(|e| bad(format!("\"at\": {e}")))
}

/// A non-empty text within [`MAX_TEXT_CHARS`].
pub fn some_text(field: &str, text: &str) -> Result<(), EventError> {
    if text.trim().is_empty() {
        return Err(bad(format!("\"{field}\" is empty")));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(bad(format!(
            "\"{field}\" is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    Ok(())
}

/// A usable file name, the one rule for every way a file arrives (a history
/// line, an event over HTTP, an upload): not empty, at most
/// [`MAX_FILE_NAME_BYTES`], no control characters (NUL included), no `/` or
/// `\` (a name, not a path), not `.` or `..`.
pub fn file_name(name: &str) -> Result<(), EventError> {
    let trimmed = name.trim();
    if trimmed.is_empty()
        || name.len() > MAX_FILE_NAME_BYTES
        || name.chars().any(char::is_control)
        || name.contains(['/', '\\'])
        || trimmed == "."
        || trimmed == ".."
    {
        return Err(bad(format!(
            "{name:?} is not a usable file name: at most {MAX_FILE_NAME_BYTES} bytes, no control characters, no / or \\, not . or .."
        )));
    }
    Ok(())
}

fn bad_id() -> EventError {
    bad(format!(
        "\"id\" must be a non-empty string of at most {MAX_ID_BYTES} bytes"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        parse_at(s).unwrap()
    }

    #[test]
    fn an_event_built_in_code_writes_the_history_format() {
        let e = Event::new(
            at("2026-11-20T10:00:00Z"),
            EventBody::Learner {
                text: "Remember that ATP is the cell's currency".into(),
            },
        );
        // The exact JSON `teach` wrote before events were typed: the import
        // key of a taught message is the same as it always was.
        let old = json!({"type": "learner", "at": e.at.to_rfc3339(), "text": "Remember that ATP is the cell's currency"});
        assert_eq!(e.import_json().to_string(), old.to_string());
        let back = Event::from_json(e.to_json()).unwrap();
        assert_eq!(back.body, e.body);
        assert_eq!(back.at, e.at);
    }

    #[test]
    fn a_tutor_answer_keeps_its_cites_in_the_json() {
        let e = Event::new(
            at("2026-11-20T10:01:00Z"),
            EventBody::Tutor {
                text: "Osmosis moves water.".into(),
                cites: vec![Cite {
                    file: "cells.md".into(),
                    page: Some(2),
                }],
            },
        );
        let old = json!({"type": "tutor", "at": e.at.to_rfc3339(), "text": "Osmosis moves water.",
            "cites": [{"file": "cells.md", "page": 2}]});
        assert_eq!(e.import_json().to_string(), old.to_string());
    }

    #[test]
    fn received_json_is_what_identifies_the_event() {
        let v =
            json!({"type": "learner", "at": "2026-03-02T10:10:00+01:00", "text": "hi", "extra": 1});
        let e = Event::from_json(v.clone()).unwrap();
        assert_eq!(*e.import_json(), v);
        assert_eq!(e.at, at("2026-03-02T09:10:00Z"));
    }

    #[test]
    fn bad_events_say_why() {
        let cases = [
            (json!([1]), "JSON object"),
            (
                json!({"type": "learner", "at": "yesterday", "text": "x"}),
                "RFC 3339",
            ),
            (
                json!({"type": "dance", "at": "2026-01-01T00:00:00Z"}),
                "unknown event type",
            ),
            (
                json!({"type": "subject", "learner": "a", "subject": "b"}),
                "not an event",
            ),
            (
                json!({"type": "check", "at": "2026-01-01T00:00:00Z", "topic": "x", "verdict": "maybe"}),
                "unknown variant",
            ),
            (
                json!({"type": "check", "at": "2026-01-01T00:00:00Z", "topic": "x", "verdict": "right", "predicted": 1.5}),
                "predicted",
            ),
            (
                json!({"type": "quiz", "at": "2026-01-01T00:00:00Z", "title": "q", "score": 11, "max": 10}),
                "score",
            ),
            (
                json!({"type": "file", "at": "2026-01-01T00:00:00Z", "name": "a.md"}),
                "exactly one",
            ),
            (
                json!({"type": "file", "at": "2026-01-01T00:00:00Z", "name": "a\u{1}.md", "content": "x"}),
                "file name",
            ),
            (
                json!({"type": "learner", "at": "2026-01-01T00:00:00Z", "text": "  "}),
                "empty",
            ),
            (
                json!({"id": "", "type": "learner", "at": "2026-01-01T00:00:00Z", "text": "x"}),
                "\"id\"",
            ),
        ];
        for (v, needle) in cases {
            let err = Event::from_json(v.clone()).unwrap_err().to_string();
            assert!(
                err.contains(needle),
                "{v}: {err:?} should mention {needle:?}"
            );
        }
    }

    #[test]
    fn a_sequence_keeps_time_order_and_unique_ids() {
        let e = |id: &str, t: &str| {
            Event::new(at(t), EventBody::Learner { text: "x".into() }).with_id(Some(id.into()))
        };
        assert!(
            check_sequence(&[
                e("a", "2026-01-01T00:00:00Z"),
                e("b", "2026-01-02T00:00:00Z")
            ])
            .is_ok()
        );
        let (i, err) = check_sequence(&[
            e("a", "2026-01-02T00:00:00Z"),
            e("b", "2026-01-01T00:00:00Z"),
        ])
        .unwrap_err();
        assert_eq!(i, 1);
        assert!(err.0.contains("time order"));
        let (i, err) = check_sequence(&[
            e("a", "2026-01-01T00:00:00Z"),
            e("a", "2026-01-02T00:00:00Z"),
        ])
        .unwrap_err();
        assert_eq!(i, 1);
        assert!(err.0.contains("used twice"));
    }
}
