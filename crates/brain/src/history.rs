//! Reading a history file (FORMATS.md, "History file", v1): one JSON object a
//! line, the first naming the subject, every later one an event in time order.
//!
//! Parsing checks everything it can before anything is written, and names the
//! line of the first problem. Unknown fields are ignored (the format grows by
//! new optional fields); an unknown `type` is an error.

use crate::{Error, Result};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::HashSet;
use tm_model::episodes::Verdict;
use tm_model::subject::SubjectKey;

/// The longest line accepted (a file's inline `content` lives on one line).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// The longest learner message, tutor answer, topic or evaluation accepted.
pub const MAX_TEXT_CHARS: usize = 200_000;

/// The first line.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectLine {
    pub key: SubjectKey,
    pub title: String,
    pub language: Option<String>,
    /// The learner's time zone (IANA name), an optional extension of FORMATS v1.
    pub timezone: Option<String>,
}

/// One event line, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// 1-based line number in the file.
    pub line: usize,
    pub id: Option<String>,
    pub at: DateTime<Utc>,
    pub body: EventBody,
    /// The line's JSON, for the import key.
    pub raw: serde_json::Value,
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

#[derive(Debug, Clone, PartialEq)]
pub enum FileSource {
    /// Relative to the history file's folder.
    Path(String),
    Content(String),
    Pages(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Cite {
    pub file: String,
    #[serde(default)]
    pub page: Option<u32>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Subject {
        learner: String,
        subject: String,
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        language: Option<String>,
        #[serde(default)]
        timezone: Option<String>,
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

/// A parsed, validated history.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub subject: SubjectLine,
    pub events: Vec<Event>,
}

/// Parses a whole history file. `source` names it in errors.
pub fn parse(source: &str, bytes: &[u8]) -> Result<History> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::History {
        file: source.to_string(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        message: "the file is not valid UTF-8".into(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bad = |line: usize, message: String| Error::History {
        file: source.to_string(),
        line,
        message,
    };

    let mut subject = None;
    let mut events: Vec<Event> = Vec::new();
    let mut ids = HashSet::new();
    for (i, raw_line) in text.split('\n').enumerate() {
        let line = i + 1;
        let raw_line = raw_line.trim_end_matches('\r');
        if raw_line.trim().is_empty() {
            continue;
        }
        if raw_line.len() > MAX_LINE_BYTES {
            return Err(bad(
                line,
                format!("the line is longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        let value: serde_json::Value = serde_json::from_str(raw_line)
            .map_err(|e| bad(line, format!("not valid JSON: {e}")))?;
        if !value.is_object() {
            return Err(bad(line, "expected a JSON object".into()));
        }
        let id = match value.get("id") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() && s.len() <= 200 => {
                Some(s.clone())
            }
            Some(_) => {
                return Err(bad(
                    line,
                    "\"id\" must be a non-empty string of at most 200 bytes".into(),
                ));
            }
        };
        let parsed: Line =
            serde_json::from_value(value.clone()).map_err(|e| bad(line, describe_serde(&e)))?;
        let at_of = |s: &str| -> Result<DateTime<Utc>> {
            DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|e| bad(line, format!("\"at\" is not an RFC 3339 time ({s:?}): {e}")))
        };
        let (at, body) = match parsed {
            Line::Subject {
                learner,
                subject: slug,
                title,
                language,
                timezone,
            } => {
                if subject.is_some() || !events.is_empty() {
                    return Err(bad(line, "only the first line may name the subject".into()));
                }
                let key = SubjectKey::new(&learner, &slug).map_err(|e| bad(line, e.to_string()))?;
                if let Some(l) = &language
                    && !is_language_tag(l)
                {
                    return Err(bad(
                        line,
                        format!("\"language\" is not a BCP 47 tag: {l:?}"),
                    ));
                }
                if let Some(tz) = &timezone
                    && tz.parse::<chrono_tz::Tz>().is_err()
                {
                    return Err(bad(
                        line,
                        format!(
                            "\"timezone\" is not an IANA time zone name such as Europe/Berlin: {tz:?}"
                        ),
                    ));
                }
                subject = Some(SubjectLine {
                    title: title.unwrap_or_default(),
                    key,
                    language,
                    timezone,
                });
                continue;
            }
            Line::File {
                at,
                name,
                path,
                content,
                pages,
            } => {
                let source = match (path, content, pages) {
                    (Some(p), None, None) => FileSource::Path(p),
                    (None, Some(c), None) => FileSource::Content(c),
                    (None, None, Some(p)) => FileSource::Pages(p),
                    (None, Some(_), Some(p)) => FileSource::Pages(p),
                    _ => {
                        return Err(bad(
                            line,
                            "a file event needs exactly one of \"path\" or \"content\" (or \"pages\")".into(),
                        ));
                    }
                };
                (
                    at_of(&at)?,
                    EventBody::File {
                        name: file_name(line, name, &bad)?,
                        source,
                    },
                )
            }
            Line::FileRemoved { at, name } => (
                at_of(&at)?,
                EventBody::FileRemoved {
                    name: file_name(line, name, &bad)?,
                },
            ),
            Line::Learner { at, text } => (
                at_of(&at)?,
                EventBody::Learner {
                    text: some_text(line, "text", text, &bad)?,
                },
            ),
            Line::Tutor { at, text, cites } => (
                at_of(&at)?,
                EventBody::Tutor {
                    text: some_text(line, "text", text, &bad)?,
                    cites,
                },
            ),
            Line::Check {
                at,
                topic,
                verdict,
                evaluation,
                predicted,
            } => {
                if let Some(p) = predicted
                    && !(0.0..=1.0).contains(&p)
                {
                    return Err(bad(
                        line,
                        format!("\"predicted\" must be between 0 and 1, not {p}"),
                    ));
                }
                let evaluation = match evaluation {
                    Some(e) if !e.trim().is_empty() => {
                        Some(some_text(line, "evaluation", e, &bad)?)
                    }
                    _ => None,
                };
                let topic = some_text(line, "topic", topic, &bad)?;
                (
                    at_of(&at)?,
                    EventBody::Check {
                        topic,
                        verdict,
                        evaluation,
                        predicted,
                    },
                )
            }
            Line::Quiz {
                at,
                title,
                score,
                max,
                concepts,
            } => {
                if !(max > 0.0 && max.is_finite() && (0.0..=max).contains(&score)) {
                    return Err(bad(
                        line,
                        format!("a quiz needs 0 ≤ score ≤ max and max > 0 (got {score}/{max})"),
                    ));
                }
                (
                    at_of(&at)?,
                    EventBody::Quiz {
                        title: some_text(line, "title", title, &bad)?,
                        score,
                        max,
                        concepts,
                    },
                )
            }
        };
        if subject.is_none() {
            return Err(bad(
                line,
                "the first line must be {\"type\":\"subject\", …}".into(),
            ));
        }
        if let Some(prev) = events.last()
            && at < prev.at
        {
            return Err(bad(
                line,
                format!(
                    "events must be in time order: {} is before line {}'s {}",
                    at.to_rfc3339(),
                    prev.line,
                    prev.at.to_rfc3339()
                ),
            ));
        }
        if let Some(id) = &id
            && !ids.insert(id.clone())
        {
            return Err(bad(
                line,
                format!("the id {id:?} is used twice in this file"),
            ));
        }
        events.push(Event {
            line,
            id,
            at,
            body,
            raw: value,
        });
    }
    let subject = subject.ok_or_else(|| {
        bad(
            1,
            "the file is empty: its first line must name the subject".into(),
        )
    })?;
    Ok(History { subject, events })
}

fn describe_serde(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if msg.contains("unknown variant") {
        format!(
            "unknown event type ({msg}); expected subject, file, file_removed, learner, tutor, check or quiz"
        )
    } else {
        msg
    }
}

fn some_text(
    line: usize,
    field: &str,
    text: String,
    bad: &impl Fn(usize, String) -> Error,
) -> Result<String> {
    if text.trim().is_empty() {
        return Err(bad(line, format!("\"{field}\" is empty")));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(bad(
            line,
            format!("\"{field}\" is longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    Ok(text)
}

fn file_name(line: usize, name: String, bad: &impl Fn(usize, String) -> Error) -> Result<String> {
    if name.trim().is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        return Err(bad(line, format!("{name:?} is not a usable file name")));
    }
    Ok(name)
}

fn is_language_tag(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 35
        && s.split('-')
            .all(|p| !p.is_empty() && p.len() <= 8 && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        r#"{"type":"subject","learner":"ana","subject":"cells","title":"Cells","language":"en"}"#;

    fn err_line(text: &str) -> (usize, String) {
        match parse("h.jsonl", text.as_bytes()) {
            Err(Error::History { line, message, .. }) => (line, message),
            other => panic!("expected a history error, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_history_parses() {
        let h = parse(
            "h.jsonl",
            format!(
                "{HEAD}\n{}\n\n{}\n",
                r#"{"id":"e1","type":"learner","at":"2026-03-02T09:10:00Z","text":"What is a cell?","extra":1}"#,
                r#"{"type":"check","at":"2026-03-02T10:10:00+01:00","topic":"cytoplasm","verdict":"partial","predicted":0.5}"#
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(h.subject.key.to_string(), "ana/cells");
        assert_eq!(h.events.len(), 2);
        assert_eq!(h.events[1].line, 4);
        assert_eq!(h.events[0].id.as_deref(), Some("e1"));
    }

    #[test]
    fn malformed_lines_are_named() {
        let cases = [
            (format!("{HEAD}\n{{not json"), 2, "not valid JSON"),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"learner","at":"yesterday","text":"x"}"#
                ),
                2,
                "RFC 3339",
            ),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"dance","at":"2026-01-01T00:00:00Z"}"#
                ),
                2,
                "unknown event type",
            ),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"check","at":"2026-01-01T00:00:00Z","topic":"x","verdict":"maybe"}"#
                ),
                2,
                "unknown variant",
            ),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"check","at":"2026-01-01T00:00:00Z","topic":"x","verdict":"right","predicted":1.5}"#
                ),
                2,
                "predicted",
            ),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"quiz","at":"2026-01-01T00:00:00Z","title":"q","score":11,"max":10}"#
                ),
                2,
                "score",
            ),
            (
                format!(
                    "{HEAD}\n{}\n{}",
                    r#"{"type":"learner","at":"2026-02-01T00:00:00Z","text":"a"}"#,
                    r#"{"type":"learner","at":"2026-01-01T00:00:00Z","text":"b"}"#
                ),
                3,
                "time order",
            ),
            (
                format!(
                    "{HEAD}\n{}\n{}",
                    r#"{"id":"x","type":"learner","at":"2026-01-01T00:00:00Z","text":"a"}"#,
                    r#"{"id":"x","type":"learner","at":"2026-01-01T00:00:00Z","text":"b"}"#
                ),
                3,
                "used twice",
            ),
            (
                r#"{"type":"learner","at":"2026-01-01T00:00:00Z","text":"a"}"#.to_string(),
                1,
                "first line",
            ),
            (format!("{HEAD}\n{HEAD}"), 2, "only the first line"),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"file","at":"2026-01-01T00:00:00Z","name":"a.md"}"#
                ),
                2,
                "exactly one",
            ),
            (
                format!(
                    "{HEAD}\n{}",
                    r#"{"type":"learner","at":"2026-01-01T00:00:00Z","text":"  "}"#
                ),
                2,
                "empty",
            ),
            (format!("{HEAD}\n[1,2]"), 2, "JSON object"),
            (String::new(), 1, "empty"),
        ];
        for (text, line, needle) in cases {
            let (l, m) = err_line(&text);
            assert_eq!(l, line, "{text}: {m}");
            assert!(m.contains(needle), "{m:?} should mention {needle:?}");
        }
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let mut bytes = format!("{HEAD}\n").into_bytes();
        bytes.extend_from_slice(b"{\"type\":\"learner\",\"text\":\"\xff\"}");
        assert!(matches!(
            parse("h", &bytes),
            Err(Error::History { line: 2, .. })
        ));
    }
}
