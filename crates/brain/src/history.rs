//! Reading a history file (docs/formats.md, "History file", v1): one JSON object a
//! line, the first naming the subject, every later one an event in time order.
//!
//! Parsing checks everything it can before anything is written, and names the
//! line of the first problem. Each line is read by `tm_model::events` (the
//! same rules as every other producer of events); this module adds the
//! file's own: the first line names the subject, and line numbers.

use crate::{Error, Result};
use tm_model::events::{Event, SubjectLine, check_sequence, is_subject_line};

/// The longest line accepted (a file's inline `content` lives on one line).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A parsed, validated history.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub subject: SubjectLine,
    pub events: Vec<Event>,
    /// The 1-based line of each event, parallel to `events`.
    pub lines: Vec<usize>,
}

impl History {
    /// Places an error raised while recording event `index` (0-based) at its
    /// line; faults are left as they are.
    pub fn at_line(&self, source: &str, e: Error) -> Error {
        match e {
            Error::Event { index, message } => Error::History {
                file: source.to_string(),
                line: self
                    .lines
                    .get(index.saturating_sub(1))
                    .copied()
                    .unwrap_or(0),
                message,
            },
            other => other,
        }
    }
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
    let mut lines = Vec::new();
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
        if is_subject_line(&value) {
            if subject.is_some() || !events.is_empty() {
                return Err(bad(line, "only the first line may name the subject".into()));
            }
            subject = Some(SubjectLine::from_json(&value).map_err(|e| bad(line, e.0))?);
            continue;
        }
        let event = Event::from_json(value).map_err(|e| bad(line, e.0))?;
        if subject.is_none() {
            return Err(bad(
                line,
                "the first line must be {\"type\":\"subject\", …}".into(),
            ));
        }
        events.push(event);
        lines.push(line);
        if let Err((i, e)) = check_sequence(&events[events.len().saturating_sub(2)..]) {
            let at = events.len() - 2 + i;
            return Err(bad(lines[at], with_previous_line(&e.0, lines[at - 1])));
        }
    }
    let subject = subject.ok_or_else(|| {
        bad(
            1,
            "the file is empty: its first line must name the subject".into(),
        )
    })?;
    // Ids must be unique across the whole file, not only between neighbours.
    if let Err((i, e)) = check_sequence(&events) {
        return Err(bad(lines[i], e.0));
    }
    Ok(History {
        subject,
        events,
        lines,
    })
}

/// "… before the previous event's …" named by its line, as a history reader expects.
fn with_previous_line(message: &str, prev_line: usize) -> String {
    message.replace("the previous event's", &format!("line {prev_line}'s"))
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
        assert_eq!(h.lines[1], 4);
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
