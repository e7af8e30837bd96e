//! `bench crosslingual`: does a question in one language find what was
//! written in another, by meaning alone? Recall@k of each embedder's vectors
//! (the question embedded as a query, the texts as passages, ranked by
//! cosine; no words, no other signal) on two sets:
//!
//! - **textbook**: the English and Spanish *Precalculus* chapters in
//!   `../shared/data/textbooks/algebra` are parallel texts. Their sections
//!   align by module and by order, so each subsection heading (the question)
//!   has the first paragraph under it in both languages (the target): an
//!   English heading must find the Spanish paragraph among every Spanish one,
//!   and the other way round; Spanish to Spanish and English to English are
//!   the same-language controls. Read at run time; skipped without the data.
//! - **sample**: our own history (`crates/bench/data/crosslingual.json`): 16
//!   tutor answers written in English and in Spanish, and questions about each
//!   in Spanish, German, Italian and Indonesian worded their own way: each
//!   language against the English answers, and Spanish against Spanish.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tm_embed::{Embedder, cosine};

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// The textbook folder (holding `algebra/en_precalculus-2e_ch02_linear-functions.md`
    /// and its Spanish twin); without it only the sample set runs.
    #[cfg_attr(feature = "cli", arg(long, default_value = "../shared/data/textbooks"))]
    pub textbooks: PathBuf,
    /// Embedders to compare, in one run.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_delimiter = ',', default_value = "minilm,e5")
    )]
    pub embedders: Vec<String>,
    /// The k of recall@k.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_delimiter = ',', default_value = "1,5,10")
    )]
    pub k: Vec<usize>,
    #[cfg_attr(feature = "cli", arg(long))]
    pub model_dir: Option<PathBuf>,
}

const SAMPLE: &str = include_str!("../../data/crosslingual.json");
const EN: &str = "algebra/en_precalculus-2e_ch02_linear-functions.md";
const ES: &str = "algebra/es_precalculo-2ed_ch02_funciones-lineales.md";

/// One retrieval task: questions, the corpus, and each question's target.
struct Task {
    name: String,
    questions: Vec<String>,
    corpus: Vec<String>,
    targets: Vec<usize>,
}

/// Each module's subsections as (heading, first paragraph of at least 20
/// words before the next heading), in order.
fn sections(text: &str) -> Vec<Vec<Section>> {
    let mut modules: Vec<Vec<Section>> = Vec::new();
    let mut heading: Option<String> = None;
    let mut para = String::new();
    let mut taken = false;
    let close = |modules: &mut Vec<Vec<Section>>,
                 heading: &mut Option<String>,
                 para: &mut String,
                 taken: &mut bool| {
        if let (Some(h), Some(m)) = (heading.take(), modules.last_mut()) {
            // A heading without a paragraph keeps its place, empty, so the
            // two languages still align by position.
            m.push((h, if *taken { para.clone() } else { String::new() }));
        }
        para.clear();
        *taken = false;
    };
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("<!-- module") {
            close(&mut modules, &mut heading, &mut para, &mut taken);
            modules.push(Vec::new());
        } else if t.starts_with("###") {
            close(&mut modules, &mut heading, &mut para, &mut taken);
            heading = Some(t.trim_start_matches('#').trim().to_string());
        } else if t.starts_with('#') {
            close(&mut modules, &mut heading, &mut para, &mut taken);
        } else if heading.is_some() && !taken {
            if t.is_empty() {
                if para.split_whitespace().count() >= 20 {
                    taken = true;
                } else {
                    para.clear();
                }
            } else if t.starts_with(|c: char| c.is_alphabetic()) {
                if !para.is_empty() {
                    para.push(' ');
                }
                para.push_str(t);
            } else {
                para.clear();
            }
        }
    }
    close(&mut modules, &mut heading, &mut para, &mut taken);
    modules
}

/// A subsection: its heading and its first paragraph.
type Section = (String, String);

/// The aligned (English, Spanish) subsections of the two chapters.
fn textbook_pairs(dir: &Path) -> Result<Option<Vec<[Section; 2]>>> {
    let (en, es) = (dir.join(EN), dir.join(ES));
    if !en.is_file() || !es.is_file() {
        return Ok(None);
    }
    let read =
        |p: &Path| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()));
    let (en, es) = (sections(&read(&en)?), sections(&read(&es)?));
    let mut pairs = Vec::new();
    for (a, b) in en.iter().zip(&es) {
        if a.len() != b.len() {
            continue;
        }
        for (x, y) in a.iter().zip(b) {
            if !x.1.is_empty() && !y.1.is_empty() {
                pairs.push([x.clone(), y.clone()]);
            }
        }
    }
    Ok(Some(pairs))
}

fn textbook_tasks(pairs: &[[Section; 2]]) -> Vec<Task> {
    let cut = |p: &str| p.split_whitespace().take(80).collect::<Vec<_>>().join(" ");
    let langs = ["en", "es"];
    let mut tasks = Vec::new();
    for (q, c) in [(0, 1), (1, 0), (1, 1), (0, 0)] {
        tasks.push(Task {
            name: format!("textbook {} → {}", langs[q], langs[c]),
            questions: pairs.iter().map(|p| p[q].0.clone()).collect(),
            corpus: pairs.iter().map(|p| cut(&p[c].1)).collect(),
            targets: (0..pairs.len()).collect(),
        });
    }
    tasks
}

fn sample_tasks() -> Result<Vec<Task>> {
    let v: Value = serde_json::from_str(SAMPLE)?;
    let episodes = v["episodes"].as_array().context("no episodes")?;
    let ids: Vec<&str> = episodes.iter().filter_map(|e| e["id"].as_str()).collect();
    let texts = |lang: &str| -> Vec<String> {
        episodes
            .iter()
            .map(|e| e[lang].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let questions = v["questions"].as_array().context("no questions")?;
    let targets: Vec<usize> = questions
        .iter()
        .map(|q| {
            let t = q["target"].as_str().unwrap_or_default();
            ids.iter()
                .position(|i| *i == t)
                .context("a question's target is not an episode")
        })
        .collect::<Result<_>>()?;
    let asked = |lang: &str| -> Vec<String> {
        questions
            .iter()
            .map(|q| q[lang].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut tasks = Vec::new();
    for lang in ["es", "de", "it", "id"] {
        tasks.push(Task {
            name: format!("sample {lang} → en"),
            questions: asked(lang),
            corpus: texts("en"),
            targets: targets.clone(),
        });
    }
    tasks.push(Task {
        name: "sample es → es".into(),
        questions: asked("es"),
        corpus: texts("es"),
        targets,
    });
    Ok(tasks)
}

/// Recall@k for each k: the share of questions whose target ranks in the top k.
fn recall(e: &dyn Embedder, t: &Task, ks: &[usize]) -> Result<Vec<f64>> {
    let q: Vec<&str> = t.questions.iter().map(String::as_str).collect();
    let c: Vec<&str> = t.corpus.iter().map(String::as_str).collect();
    let qv = e.embed_queries(&q)?;
    let cv = e.embed(&c)?;
    let mut hits = vec![0usize; ks.len()];
    for (v, &target) in qv.iter().zip(&t.targets) {
        let own = cosine(v, &cv[target]);
        let rank = cv.iter().filter(|x| cosine(v, x) > own).count();
        for (h, k) in hits.iter_mut().zip(ks) {
            if rank < *k {
                *h += 1;
            }
        }
    }
    Ok(hits
        .into_iter()
        .map(|h| h as f64 / t.targets.len().max(1) as f64)
        .collect())
}

pub fn run(o: &Options) -> Result<()> {
    if o.k.is_empty() || o.k.contains(&0) {
        bail!("--k takes positive numbers");
    }
    println!("machine: {}", super::machine());
    let mut tasks = Vec::new();
    match textbook_pairs(&o.textbooks)? {
        Some(pairs) => {
            println!(
                "textbook set: {} aligned subsections of the English and Spanish Precalculus ch. 2 ({})",
                pairs.len(),
                o.textbooks.display()
            );
            tasks.extend(textbook_tasks(&pairs));
        }
        None => println!(
            "skipped: the textbook set needs {} and {} under {}",
            EN,
            ES,
            o.textbooks.display()
        ),
    }
    tasks.extend(sample_tasks()?);
    let header: Vec<String> = o.k.iter().map(|k| format!("recall@{k}")).collect();
    println!(
        "\n| embedder | set | questions | corpus | {} |",
        header.join(" | ")
    );
    println!("|---|---|---|---|{}", "---|".repeat(o.k.len()));
    for name in &o.embedders {
        let e = super::embedder(name, o.model_dir.as_deref())?;
        for t in &tasks {
            let r = recall(&*e, t, &o.k)?;
            let cells: Vec<String> = r.iter().map(|x| format!("{x:.3}")).collect();
            println!(
                "| {} | {} | {} | {} | {} |",
                e.name(),
                t.name,
                t.questions.len(),
                t.corpus.len(),
                cells.join(" | ")
            );
        }
    }
    Ok(())
}
