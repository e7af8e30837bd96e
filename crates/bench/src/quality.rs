//! The quality run: import the histories, pre-register the questions (or
//! read them), then — and only then — run each design on each question,
//! assemble the prompt exactly as the host would (system, memory slot, the
//! same passages for every design), and grade it. Answer level runs when a
//! chat endpoint is configured, with the same graders on the model's answer.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tm_brain::Brain;
use tm_brain::block::BlockRequest;
use tm_model::block::{Design, HostSections, assemble_prompt};
use tm_model::recall::collapse_key;
use tm_model::subject::Subject;

use crate::chat::Chat;
use crate::grade::{Graded, Level, Recalled, grade};
use crate::questions::{CATEGORIES, Question};
use crate::{Error, Result, io_err};

/// The host's system prompt in the benchmark (the same for every design).
pub const SYSTEM: &str = "You are a patient tutor. Answer the student's question from the material and from your memory of your work with this student. Say when something happened. If your memory has no record of something, say so plainly.";
/// Passages of the files every design receives.
pub const PASSAGES: usize = 5;
/// Characters of a failing prompt's memory slot shown in the failure list.
pub const EXCERPT_CHARS: usize = 1_600;

/// One graded question under one design at one level.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub question_id: String,
    pub subject: String,
    pub category: String,
    pub question: String,
    pub design: String,
    pub level: &'static str,
    pub passed: bool,
    pub failures: Vec<String>,
    /// The expectation, as in the question file.
    pub expect: serde_json::Value,
    /// For a failure: the memory slot (or the answer) that failed it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
}

/// Passed and total per design and category.
pub type Table = BTreeMap<String, BTreeMap<String, (usize, usize)>>;

/// Everything a quality run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub embedder: String,
    pub budget: usize,
    pub histories: usize,
    pub questions: usize,
    pub designs: Vec<String>,
    pub prompt: Table,
    /// None when no chat endpoint was configured (answer level skipped).
    pub answer: Option<Table>,
    pub answer_model: Option<String>,
    pub outcomes: Vec<Outcome>,
    pub seconds: f64,
}

/// Imports each history file through the brain (recorded and indexed in
/// one transaction each); returns the subjects in file order.
pub fn import(
    brain: &Brain,
    files: &[PathBuf],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Subject>> {
    let mut out = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let report = brain.import_file(f, &mut |_, _, _| {})?;
        out.push(brain.subject(&report.subject)?);
        progress(i + 1, files.len());
    }
    Ok(out)
}

/// Pre-registers the questions of every history: from the history file and
/// the concept map its files made on import, nothing else.
pub fn register(brain: &Brain, files: &[PathBuf], seed: u64) -> Result<Vec<Question>> {
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let bytes = std::fs::read(f).map_err(io_err(f))?;
        let history = tm_brain::history::parse(&f.display().to_string(), &bytes)?;
        let subject = brain.subject(&history.subject.key.to_string())?;
        let map = brain.map(&subject)?;
        out.extend(crate::questions::generate(
            &history,
            &map,
            seed.wrapping_add(i as u64),
        )?);
    }
    Ok(out)
}

/// Each stored episode's external id and the ids of the identical episodes
/// recall would collapse with it.
struct Groups {
    /// episode id → (collapse key, external id, at)
    by_id: HashMap<i64, (String, Option<String>, chrono::DateTime<chrono::Utc>)>,
    by_key: HashMap<String, Vec<(chrono::DateTime<chrono::Utc>, String)>>,
}

impl Groups {
    fn of(brain: &Brain, subject: &Subject) -> Result<Groups> {
        let mut g = Groups {
            by_id: HashMap::new(),
            by_key: HashMap::new(),
        };
        for e in brain.episodes(subject, 1, usize::MAX)? {
            let topic = e.data.get("topic").and_then(|v| v.as_str());
            let verdict = e.data.get("verdict").and_then(|v| v.as_str());
            let key = collapse_key(e.kind.as_str(), &e.text, topic, verdict);
            if let Some(x) = &e.external_id {
                g.by_key
                    .entry(key.clone())
                    .or_default()
                    .push((e.at, x.clone()));
            }
            g.by_id.insert(e.id, (key, e.external_id.clone(), e.at));
        }
        Ok(g)
    }

    /// The external ids a recalled line stands for (itself, and when it
    /// counts several, the identical episodes up to the turn).
    fn recalled(
        &self,
        r: &tm_brain::block::RecalledRef,
        turn: chrono::DateTime<chrono::Utc>,
    ) -> Recalled {
        let mut ids: Vec<String> = r.external_id.iter().cloned().collect();
        if r.count > 1
            && let Some((key, _, _)) = self.by_id.get(&r.id)
            && let Some(members) = self.by_key.get(key)
        {
            ids.extend(
                members
                    .iter()
                    .filter(|(at, _)| *at <= turn)
                    .map(|(_, x)| x.clone()),
            );
        }
        Recalled {
            external_ids: ids,
            at: r.at,
        }
    }
}

/// Runs every design on every question and grades the prompts (and the
/// answers, with `chat`).
pub fn run(
    brain: &Brain,
    questions: &[Question],
    designs: &[Design],
    budget: usize,
    chat: Option<&Chat>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report> {
    let started = std::time::Instant::now();
    let mut outcomes = Vec::new();
    let mut groups: HashMap<String, Groups> = HashMap::new();
    let mut subjects: HashMap<String, Subject> = HashMap::new();
    for (i, q) in questions.iter().enumerate() {
        if !subjects.contains_key(&q.subject) {
            let s = brain
                .subject(&q.subject)
                .map_err(|e| Error::Invalid(format!("question {}: {e}", q.id)))?;
            groups.insert(q.subject.clone(), Groups::of(brain, &s)?);
            subjects.insert(q.subject.clone(), s);
        }
        let (Some(subject), Some(group)) = (subjects.get(&q.subject), groups.get(&q.subject))
        else {
            continue;
        };
        let tz = subject.tz();
        // The same passages for every design.
        let passages = brain.passages(subject, &q.question, PASSAGES)?;
        let material = tm_brain::passages::render(&passages);
        for &design in designs {
            let req = BlockRequest {
                design,
                ..BlockRequest::new(q.question.clone(), q.at, tz, budget)
            };
            let block = brain.build_block(subject, &req)?;
            let prompt = assemble_prompt(HostSections {
                system: SYSTEM.to_string(),
                memory_slot: Some(block.block.clone()),
                passages: material.clone(),
                assessment: None,
            });
            let recalled: Vec<Recalled> = block
                .recalled
                .iter()
                .map(|r| group.recalled(r, q.at))
                .collect();
            let window = block.window.as_ref().map(|w| (w.from, w.to, w.empty));
            let mut levels = vec![(Level::Prompt, prompt.clone())];
            if let Some(chat) = chat {
                levels.push((Level::Answer, chat.answer(&prompt, &q.question)?));
            }
            for (level, text) in levels {
                let fails = grade(
                    &q.expect,
                    &Graded {
                        level,
                        text: &text,
                        recalled: &recalled,
                        window,
                    },
                );
                let excerpt = if fails.is_empty() {
                    String::new()
                } else {
                    let shown = match level {
                        Level::Prompt if block.block.is_empty() => {
                            "(empty memory slot)".to_string()
                        }
                        Level::Prompt => block.block.clone(),
                        Level::Answer => text.clone(),
                    };
                    shown.chars().take(EXCERPT_CHARS).collect()
                };
                outcomes.push(Outcome {
                    question_id: q.id.clone(),
                    subject: q.subject.clone(),
                    category: q.category.clone(),
                    question: q.question.clone(),
                    design: design.as_str().to_string(),
                    level: match level {
                        Level::Prompt => "prompt",
                        Level::Answer => "answer",
                    },
                    passed: fails.is_empty(),
                    failures: fails,
                    expect: serde_json::to_value(&q.expect)
                        .map_err(|e| Error::Invalid(e.to_string()))?,
                    excerpt,
                });
            }
        }
        progress(i + 1, questions.len());
    }
    let table = |level: &str| -> Table {
        let mut t: Table = BTreeMap::new();
        for o in outcomes.iter().filter(|o| o.level == level) {
            let cell = t
                .entry(o.design.clone())
                .or_default()
                .entry(o.category.clone())
                .or_default();
            cell.1 += 1;
            if o.passed {
                cell.0 += 1;
            }
        }
        t
    };
    let subjects_n = questions
        .iter()
        .map(|q| q.subject.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    Ok(Report {
        embedder: brain.embedder_name()?,
        budget,
        histories: subjects_n,
        questions: questions.len(),
        designs: designs.iter().map(|d| d.as_str().to_string()).collect(),
        prompt: table("prompt"),
        answer: chat.map(|_| table("answer")),
        answer_model: chat.map(|c| c.model().to_string()),
        outcomes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The categories of a table in display order: the six, then any others.
pub fn categories(t: &Table) -> Vec<String> {
    let mut cats: Vec<String> = CATEGORIES.iter().map(|s| s.to_string()).collect();
    for per in t.values() {
        for c in per.keys() {
            if !cats.contains(c) {
                cats.push(c.clone());
            }
        }
    }
    cats.retain(|c| t.values().any(|per| per.contains_key(c)));
    cats
}

/// (passed, total) of a design over every category.
pub fn overall(t: &Table, design: &str) -> (usize, usize) {
    t.get(design).map_or((0, 0), |per| {
        per.values().fold((0, 0), |(p, n), (a, b)| (p + a, n + b))
    })
}

fn pct(p: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * p as f64 / n as f64
    }
}

/// The table as Markdown: rows categories, columns designs.
pub fn markdown(t: &Table, designs: &[String]) -> String {
    let mut s = format!(
        "| category | {} |\n|---|{}\n",
        designs.join(" | "),
        "---|".repeat(designs.len())
    );
    for c in categories(t) {
        s.push_str(&format!("| {c} |"));
        for d in designs {
            let (p, n) = t
                .get(d)
                .and_then(|per| per.get(&c))
                .copied()
                .unwrap_or((0, 0));
            s.push_str(&format!(" {p}/{n} ({:.0} %) |", pct(p, n)));
        }
        s.push('\n');
    }
    s.push_str("| **overall** |");
    for d in designs {
        let (p, n) = overall(t, d);
        s.push_str(&format!(" **{p}/{n} ({:.1} %)** |", pct(p, n)));
    }
    s.push('\n');
    s
}

/// A grouped bar chart (one group per category and one overall, one bar
/// per design), written by hand as SVG.
pub fn svg(t: &Table, designs: &[String], title: &str) -> String {
    let mut groups = categories(t);
    groups.push("overall".into());
    let colours = [
        "#9e9e9e", "#f2a541", "#4f8fc0", "#2e7d32", "#8e44ad", "#c0392b",
    ];
    let (w, h, left, top, bottom) = (120.0 * groups.len() as f64 + 80.0, 360.0, 50.0, 40.0, 60.0);
    let plot_h = h - top - bottom;
    let bar = 100.0 / (designs.len().max(1) as f64 + 1.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{left}\" y=\"20\" font-size=\"14\">{}</text>\n",
        xml(title)
    );
    for k in 0..=4 {
        let y = top + plot_h * (1.0 - k as f64 / 4.0);
        s.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}%</text>\n",
            w - 20.0,
            left - 4.0,
            y + 4.0,
            k * 25
        ));
    }
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + 10.0 + 120.0 * gi as f64;
        for (di, d) in designs.iter().enumerate() {
            let (p, n) = if g == "overall" {
                overall(t, d)
            } else {
                t.get(d)
                    .and_then(|per| per.get(g))
                    .copied()
                    .unwrap_or((0, 0))
            };
            let v = pct(p, n);
            let bh = plot_h * v / 100.0;
            let x = x0 + bar * di as f64;
            s.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{}\"><title>{} {}: {p}/{n}</title></rect>\n",
                top + plot_h - bh,
                bar - 2.0,
                colours[di % colours.len()],
                xml(d),
                xml(g)
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            x0 + bar * designs.len() as f64 / 2.0,
            top + plot_h + 16.0,
            xml(g)
        ));
    }
    for (di, d) in designs.iter().enumerate() {
        let x = left + 10.0 + 110.0 * di as f64;
        s.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            h - 28.0,
            colours[di % colours.len()],
            x + 16.0,
            h - 18.0,
            xml(d)
        ));
    }
    s.push_str("</svg>\n");
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Every failure, readable: question, expectation, why, and the excerpt.
pub fn failures_text(report: &Report) -> String {
    let mut s = String::new();
    for o in report.outcomes.iter().filter(|o| !o.passed) {
        s.push_str(&format!(
            "## {} [{} · {} · {} level]\nquestion: {}\nexpect: {}\nfailed: {}\n```\n{}\n```\n\n",
            o.question_id,
            o.category,
            o.design,
            o.level,
            o.question,
            o.expect,
            o.failures.join("; "),
            o.excerpt
        ));
    }
    s
}

/// The `*.jsonl` files directly in `dir`, sorted.
pub fn history_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl"))
        .collect();
    v.sort();
    Ok(v)
}
