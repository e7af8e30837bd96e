//! One day compressed into one `consolidation` episode: how many episodes of
//! each kind, the check tally, the topics touched, and the five most salient
//! headlines. A quiet day gives nothing, and earlier consolidations are never
//! part of the input (a digest never re-summarises digests).

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

use crate::episodes::{Kind, Verdict, one_line};

/// Headlines kept per day (docs/mechanisms.md §8: the five most salient).
pub const HEADLINES: usize = 5;
/// Topics listed at most, most touched first.
pub const TOPICS: usize = 12;
/// Characters of a headline before it is cut.
pub const HEADLINE_CHARS: usize = 120;

/// What the rules need from one episode of the day.
#[derive(Debug, Clone, PartialEq)]
pub struct DayEpisode {
    /// Its position in the subject's chain (the same in every store holding
    /// the chain, unlike a row id).
    pub seq: u64,
    pub kind: Kind,
    pub at: DateTime<Utc>,
    pub salience: f64,
    pub summary: String,
    /// A check's verdict.
    pub verdict: Option<Verdict>,
    /// Concepts the episode touched (display names).
    pub concepts: Vec<String>,
}

/// Right / wrong / partial checks of the day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub right: usize,
    pub wrong: usize,
    pub partial: usize,
}

/// One of the day's most salient episodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub kind: Kind,
    pub summary: String,
}

/// The digest of one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Consolidation {
    /// The day it covers (the date of `from`, UTC).
    pub day: NaiveDate,
    /// Half-open interval (`from`, `to`]: the 24 hours before the run.
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Episodes per kind, kinds in their fixed order.
    pub counts: BTreeMap<Kind, usize>,
    pub checks: Tally,
    /// Concepts touched, most touched first (ties by name).
    pub topics: Vec<String>,
    pub headlines: Vec<Headline>,
    /// First and last chain position consolidated.
    pub first_seq: u64,
    pub last_seq: u64,
}

/// The day's digest, or `None` for a quiet day. Consolidation episodes in
/// `episodes` are ignored, so a digest is never a digest of digests.
pub fn consolidate(
    episodes: &[DayEpisode],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<Consolidation> {
    let day: Vec<&DayEpisode> = episodes
        .iter()
        .filter(|e| e.kind != Kind::Consolidation && e.at > from && e.at <= to)
        .collect();
    if day.is_empty() {
        return None;
    }
    let mut counts = BTreeMap::new();
    let mut checks = Tally::default();
    let mut touched: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &day {
        *counts.entry(e.kind).or_insert(0) += 1;
        if e.kind == Kind::Check {
            match e.verdict {
                Some(Verdict::Right) => checks.right += 1,
                Some(Verdict::Wrong) => checks.wrong += 1,
                Some(Verdict::Partial) => checks.partial += 1,
                None => {}
            }
        }
        for c in &e.concepts {
            *touched.entry(c.as_str()).or_insert(0) += 1;
        }
    }
    let mut topics: Vec<(&str, usize)> = touched.into_iter().collect();
    topics.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut ranked = day.clone();
    // Most salient first; among equals the earlier, then the lower seq: stable
    // across runs, so the same day always gives the same digest.
    ranked.sort_by(|a, b| {
        b.salience
            .total_cmp(&a.salience)
            .then(a.at.cmp(&b.at))
            .then(a.seq.cmp(&b.seq))
    });
    let headlines = ranked
        .iter()
        .take(HEADLINES)
        .map(|e| Headline {
            seq: e.seq,
            at: e.at,
            kind: e.kind,
            summary: one_line(&e.summary, HEADLINE_CHARS),
        })
        .collect();
    Some(Consolidation {
        day: from.date_naive(),
        from,
        to,
        counts,
        checks,
        topics: topics
            .into_iter()
            .take(TOPICS)
            .map(|(t, _)| t.to_string())
            .collect(),
        headlines,
        first_seq: day.iter().map(|e| e.seq).min().unwrap_or_default(),
        last_seq: day.iter().map(|e| e.seq).max().unwrap_or_default(),
    })
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl Consolidation {
    /// Episodes consolidated.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }

    /// External id of the consolidation episode: one per subject and day, so
    /// the store's uniqueness refuses a second digest of the same day.
    pub fn external_id(&self) -> String {
        format!("consolidation:{}", self.day)
    }

    /// The one-line summary.
    pub fn summary(&self) -> String {
        let t = self.checks;
        let mut s = format!("Day {}: {}", self.day, plural(self.total(), "episode"));
        if t.right + t.wrong + t.partial > 0 {
            s.push_str(&format!(
                ", checks {} right, {} wrong, {} partial",
                t.right, t.wrong, t.partial
            ));
        }
        s
    }

    /// The full text: counts, tally, topics, headlines.
    pub fn text(&self) -> String {
        let kinds: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {}", k.as_str()))
            .collect();
        let mut s = format!(
            "Consolidation of {} (UTC): {} ({}).",
            self.day,
            plural(self.total(), "episode"),
            kinds.join(", ")
        );
        let t = self.checks;
        if t.right + t.wrong + t.partial > 0 {
            s.push_str(&format!(
                " Checks: {} right, {} wrong, {} partial.",
                t.right, t.wrong, t.partial
            ));
        }
        if !self.topics.is_empty() {
            s.push_str(&format!(" Topics: {}.", self.topics.join(", ")));
        }
        let heads: Vec<String> = self.headlines.iter().map(|h| h.summary.clone()).collect();
        s.push_str(&format!(" Most salient: {}.", heads.join("; ")));
        s
    }

    /// The episode's data object (sorted keys when serialised).
    pub fn data(&self) -> Map<String, Value> {
        let counts: Map<String, Value> = self
            .counts
            .iter()
            .map(|(k, n)| (k.as_str().to_string(), json!(n)))
            .collect();
        let mut m = Map::new();
        m.insert("day".into(), json!(self.day.to_string()));
        m.insert("from".into(), json!(self.from.to_rfc3339()));
        m.insert("to".into(), json!(self.to.to_rfc3339()));
        m.insert("counts".into(), Value::Object(counts));
        m.insert(
            "checks".into(),
            json!({"right": self.checks.right, "wrong": self.checks.wrong, "partial": self.checks.partial}),
        );
        m.insert("topics".into(), json!(self.topics));
        // Chain positions, never row ids: the stored text (and so the hash)
        // is the same in every store holding the chain. Consolidations
        // written before said row ids under "headlines" and "episodes".
        m.insert(
            "headline_seqs".into(),
            json!(self.headlines.iter().map(|h| h.seq).collect::<Vec<_>>()),
        );
        m.insert("seqs".into(), json!([self.first_seq, self.last_seq]));
        m
    }
}
