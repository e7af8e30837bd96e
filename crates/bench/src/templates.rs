//! The utterances a generated history and its questions are written with, per
//! language, read from `data/utterances/<lang>.txt` (format in that folder's
//! README): data, not code.

use std::collections::HashMap;

use crate::{Error, Result};

/// The languages generated learners write in.
pub const LANGS: [&str; 6] = ["en", "es", "de", "it", "id", "ar"];

const FILES: [(&str, &str); 6] = [
    ("en", include_str!("../data/utterances/en.txt")),
    ("es", include_str!("../data/utterances/es.txt")),
    ("de", include_str!("../data/utterances/de.txt")),
    ("it", include_str!("../data/utterances/it.txt")),
    ("id", include_str!("../data/utterances/id.txt")),
    ("ar", include_str!("../data/utterances/ar.txt")),
];

/// One language's utterances.
#[derive(Debug, Clone)]
pub struct Templates {
    pub lang: &'static str,
    entries: HashMap<String, Vec<String>>,
    pub months: Vec<String>,
}

impl Templates {
    /// The templates of `lang` (one of [`LANGS`]).
    pub fn of(lang: &str) -> Result<Templates> {
        let (code, text) = FILES
            .iter()
            .find(|(c, _)| *c == lang)
            .ok_or_else(|| Error::Invalid(format!("no utterances for language {lang:?}")))?;
        let mut entries: HashMap<String, Vec<String>> = HashMap::new();
        for line in tm_model::lang::entries(text) {
            let Some((key, value)) = line.split_once(':') else {
                return Err(Error::Invalid(format!(
                    "data/utterances/{code}.txt: {line:?} has no `key:`"
                )));
            };
            entries
                .entry(key.trim().to_string())
                .or_default()
                .push(value.trim().to_string());
        }
        let months: Vec<String> = entries
            .get("month")
            .and_then(|m| m.first())
            .map(|m| m.split('|').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default();
        if months.len() != 12 {
            return Err(Error::Invalid(format!(
                "data/utterances/{code}.txt: `month:` must list 12 names"
            )));
        }
        let t = Templates {
            lang: code,
            entries,
            months,
        };
        for key in [
            "ask",
            "followup",
            "utterance",
            "teach",
            "nick",
            "narration",
            "q_explain",
            "q_review",
            "q_wrong",
            "q_month",
            "q_taught",
        ] {
            if t.all(key).is_empty() {
                return Err(Error::Invalid(format!(
                    "data/utterances/{code}.txt: no `{key}:` entry"
                )));
            }
        }
        Ok(t)
    }

    /// Every entry under `key`.
    pub fn all(&self, key: &str) -> &[String] {
        self.entries.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first entry under `key` (the benchmark's questions use the first).
    pub fn first(&self, key: &str) -> &str {
        self.all(key).first().map(String::as_str).unwrap_or("")
    }
}

/// Fills `{c}`, `{n}`, `{month}`, `{year}`.
pub fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}
