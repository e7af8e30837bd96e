//! The report a teacher or learner reads about one subject: readiness of the
//! material (clearly not mastery), teaching order, current beliefs with their
//! history, the checks and what became of them, calibration, stale citations,
//! the questions the files could not answer, and activity by month.
//!
//! The brain gathers a [`Report`]; [`render_text`] prints it. Section labels
//! are read from `data/report/<lang>.txt` (one per language, English for a
//! missing language or label); sentences the belief rules write (the honest
//! check sentence, belief history) are English today.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;

use super::calibration::Calibration;

/// Readiness of one concept's material.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConceptReadiness {
    pub name: String,
    pub readiness: f64,
    pub centrality: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Readiness {
    /// Centrality-weighted readiness of the material, 0–1.
    pub material: f64,
    /// Always says this is about the material, not the learner.
    pub note: String,
    pub concepts: Vec<ConceptReadiness>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BeliefReport {
    pub concept: String,
    pub claim: String,
    pub confidence: f64,
    pub flagged: bool,
    pub unmapped: bool,
    /// The chain of rows, oldest first, one line each.
    pub history: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChecksReport {
    pub recorded: usize,
    pub linked: usize,
    pub unlinked: usize,
    pub evidence_only: usize,
    pub unmapped: usize,
    /// "32 checks are recorded, but none could yet be linked…"; `None` when none is recorded.
    pub sentence: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleCitation {
    pub episode_id: i64,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub summary: String,
    /// `changed: replaced by notes.md v2`, `changed: removed`.
    pub change: String,
    pub checked_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unanswered {
    /// The answer episode whose grounding said "couldn't".
    pub episode_id: i64,
    pub at: DateTime<Utc>,
    /// The learner's question before it, when recorded.
    pub question: Option<String>,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonthActivity {
    /// `2026-03` (UTC); `out of range` for a row stored outside years 0000-9999.
    pub month: String,
    pub episodes: usize,
    pub questions: usize,
    pub checks: usize,
    pub right: usize,
    pub wrong: usize,
    pub partial: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub subject: String,
    pub title: String,
    pub language: Option<String>,
    pub at: DateTime<Utc>,
    pub readiness: Readiness,
    /// Layers of concept names, prerequisites first.
    pub teaching_order: Vec<Vec<String>>,
    pub beliefs: Vec<BeliefReport>,
    pub checks: ChecksReport,
    pub calibration: Calibration,
    pub stale_citations: Vec<StaleCitation>,
    pub couldnt_answer: Vec<Unanswered>,
    pub activity: Vec<MonthActivity>,
}

const LABELS: [(&str, &str); 8] = [
    ("en", include_str!("../../data/report/en.txt")),
    ("es", include_str!("../../data/report/es.txt")),
    ("de", include_str!("../../data/report/de.txt")),
    ("it", include_str!("../../data/report/it.txt")),
    ("id", include_str!("../../data/report/id.txt")),
    ("fr", include_str!("../../data/report/fr.txt")),
    ("pt", include_str!("../../data/report/pt.txt")),
    ("ar", include_str!("../../data/report/ar.txt")),
];

fn table(lang: &str) -> HashMap<&'static str, &'static str> {
    let file = LABELS.iter().find(|(l, _)| *l == lang).map(|(_, f)| *f);
    file.map(|f| {
        crate::lang::entries(f)
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect()
    })
    .unwrap_or_default()
}

/// Report labels for a language, English where it has none.
pub struct Labels {
    own: HashMap<&'static str, &'static str>,
    en: HashMap<&'static str, &'static str>,
}

impl Labels {
    pub fn for_language(lang: Option<&str>) -> Labels {
        let primary = crate::lang::primary_subtag(lang.unwrap_or("en"));
        Labels {
            own: table(&primary),
            en: table("en"),
        }
    }

    /// The label for `key`; the key itself when no file has it.
    pub fn get<'a>(&self, key: &'a str) -> &'a str
    where
        'static: 'a,
    {
        self.own
            .get(key)
            .or_else(|| self.en.get(key))
            .copied()
            .unwrap_or(key)
    }
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{v:.3}"))
}

/// The report as plain text, in the subject's language where labels exist.
pub fn render_text(r: &Report) -> String {
    let l = Labels::for_language(r.language.as_deref());
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "{} — {} ({}, {})",
        l.get("title"),
        r.title,
        r.subject,
        r.at.format("%Y-%m-%d %H:%M UTC")
    ));
    line(String::new());
    line(format!("## {}", l.get("readiness")));
    line(format!(
        "{}: {:.0} % — {}",
        l.get("material"),
        r.readiness.material * 100.0,
        r.readiness.note
    ));
    for c in &r.readiness.concepts {
        line(format!("- {} {:.2}", c.name, c.readiness));
    }
    line(String::new());
    line(format!("## {}", l.get("teaching_order")));
    if r.teaching_order.is_empty() {
        line(format!("({})", l.get("no_map")));
    }
    for (i, layer) in r.teaching_order.iter().enumerate() {
        line(format!("{}. {}", i + 1, layer.join(", ")));
    }
    line(String::new());
    line(format!("## {}", l.get("beliefs")));
    if r.beliefs.is_empty() {
        line(format!("({})", l.get("no_beliefs")));
    }
    for b in &r.beliefs {
        let mut head = format!("- {} {} ({:.2})", b.claim, b.concept, b.confidence);
        if b.flagged {
            head.push_str(&format!(" [{}]", l.get("to_reconfirm")));
        }
        line(head);
        for h in &b.history {
            line(format!("    {h}"));
        }
    }
    line(String::new());
    line(format!("## {}", l.get("checks")));
    line(format!(
        "{}: {}, {}: {}, {}: {}",
        l.get("recorded"),
        r.checks.recorded,
        l.get("linked"),
        r.checks.linked,
        l.get("unlinked"),
        r.checks.unlinked
    ));
    if let Some(s) = &r.checks.sentence {
        line(s.clone());
    }
    line(String::new());
    line(format!("## {}", l.get("calibration")));
    let c = &r.calibration;
    line(format!(
        "n = {}, ECE = {}, Brier = {}, log loss = {} — {}",
        c.n,
        num(c.ece),
        num(c.brier),
        num(c.log_loss),
        c.status.as_str()
    ));
    line(format!(
        "{:<11} {:>3} {:>10} {:>9}",
        l.get("bin"),
        "n",
        l.get("predicted"),
        l.get("observed")
    ));
    for b in c.bins.iter().filter(|b| b.n > 0) {
        line(format!(
            "{:<11} {:>3} {:>10} {:>9}",
            format!("{:.1}–{:.1}", b.lo, b.hi),
            b.n,
            num(b.mean_predicted),
            num(b.mean_outcome)
        ));
    }
    line(String::new());
    line(format!("## {}", l.get("stale")));
    if r.stale_citations.is_empty() {
        line(format!("({})", l.get("none")));
    }
    for s in &r.stale_citations {
        line(format!(
            "- {} {} #{}: {} — {}",
            s.at.format("%Y-%m-%d"),
            s.kind,
            s.episode_id,
            s.summary,
            s.change
        ));
    }
    line(String::new());
    line(format!("## {}", l.get("couldnt")));
    if r.couldnt_answer.is_empty() {
        line(format!("({})", l.get("none")));
    }
    for u in &r.couldnt_answer {
        line(format!(
            "- {} {}",
            u.at.format("%Y-%m-%d"),
            u.question.as_deref().unwrap_or(&u.answer)
        ));
    }
    line(String::new());
    line(format!("## {}", l.get("activity")));
    line(format!(
        "{:<8} {:>8} {:>9} {:>6} {:>5} {:>5} {:>7}",
        l.get("month"),
        l.get("episodes"),
        l.get("questions"),
        l.get("checks_short"),
        l.get("right"),
        l.get("wrong"),
        l.get("partial")
    ));
    for m in &r.activity {
        line(format!(
            "{:<8} {:>8} {:>9} {:>6} {:>5} {:>5} {:>7}",
            m.month, m.episodes, m.questions, m.checks, m.right, m.wrong, m.partial
        ));
    }
    out
}
