//! `bench quality`: the four designs on pre-registered questions (docs/mechanisms.md §9).
//! Histories are generated (or read), imported, the questions written to a
//! file, and only then is any design run; the table, JSON, an SVG chart and
//! every failure are written to the output folder.

use super::Progress;
use crate::quality;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tm_model::block::Design;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// A folder of history files (*.jsonl) to run instead of the generated ones.
    #[cfg_attr(feature = "cli", arg(long))]
    pub histories: Option<PathBuf>,
    /// A question file to run instead of generating one.
    #[cfg_attr(feature = "cli", arg(long))]
    pub questions: Option<PathBuf>,
    /// `all`, or designs separated by commas (plain,window,episodes,full).
    #[cfg_attr(feature = "cli", arg(long, default_value = "all"))]
    pub design: String,
    /// Where histories, questions, results.json, chart.svg and failures.md go.
    #[cfg_attr(feature = "cli", arg(long, default_value = "bench-quality"))]
    pub out: PathBuf,
    /// Token budget of the memory block.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = tm_brain::block::DEFAULT_BUDGET))]
    pub budget: usize,
    /// Histories to generate.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = crate::generate::DEFAULT_COUNT))]
    pub count: usize,
    /// The generator's (and the question picker's) seed.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = crate::generate::DEFAULT_SEED))]
    pub seed: u64,
    /// The embedder (e5, the default; minilm, openai, hash).
    #[cfg_attr(feature = "cli", arg(long, default_value = "e5"))]
    pub embedder: String,
    #[cfg_attr(feature = "cli", arg(long))]
    pub model_dir: Option<PathBuf>,
    /// Grade only this many questions, taken from the categories in turn
    /// (a small answer-level run against a slow model).
    #[cfg_attr(feature = "cli", arg(long))]
    pub limit: Option<usize>,
    /// At most this many tokens in a model's answer (0: no cap is sent).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = crate::chat::DEFAULT_MAX_TOKENS))]
    pub max_tokens: u32,
}

/// At most `n` questions, one category after another in turn (the order
/// each category first appears), each category's in file order.
pub fn take_round_robin(
    questions: Vec<crate::questions::Question>,
    n: usize,
) -> Vec<crate::questions::Question> {
    crate::round_robin(questions.into_iter().map(|q| (q.category.clone(), q)), n)
}

fn designs(s: &str) -> Result<Vec<Design>> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Design::ALL.to_vec());
    }
    s.split(',')
        .map(|d| d.parse::<Design>().map_err(anyhow::Error::from))
        .collect()
}

fn remove_db(db: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", p.display())),
        }
    }
    Ok(())
}

pub fn run(a: &Options, progress: Progress) -> Result<()> {
    let designs = designs(&a.design)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    println!("machine: {}", super::machine());
    let t = Instant::now();
    let files = match &a.histories {
        Some(dir) => quality::history_files(dir)?,
        None => {
            let hs = crate::generate::generate(&crate::subjects::shipped(), a.count, a.seed)?;
            let sizes: Vec<usize> = hs.iter().map(|h| h.events).collect();
            println!(
                "generated {} histories (seed {}), {}..{} events, {} in all",
                hs.len(),
                a.seed,
                sizes.iter().min().unwrap_or(&0),
                sizes.iter().max().unwrap_or(&0),
                sizes.iter().sum::<usize>()
            );
            crate::generate::write_all(&hs, &a.out.join("histories"))?
        }
    };
    if files.is_empty() {
        anyhow::bail!("no history files (*.jsonl) to run");
    }
    let embedder = super::embedder(&a.embedder, a.model_dir.as_deref())?;
    let db = a.out.join("quality.db");
    remove_db(&db)?;
    let brain = super::brain(&db.display().to_string(), embedder)
        .with_context(|| format!("opening {}", db.display()))?;
    let mut tick = progress("importing", "histories");
    quality::import(&brain, &files, &mut |d, n| tick(d, n))?;
    drop(tick);
    println!(
        "imported and embedded {} histories with {} in {:.1} s",
        files.len(),
        brain.embedder_name()?,
        t.elapsed().as_secs_f64()
    );
    let questions = match &a.questions {
        Some(f) => crate::questions::read(f)?,
        None => {
            let qs = quality::register(&brain, &files, a.seed)?;
            let path = a.out.join("questions.jsonl");
            crate::questions::write(&qs, &path)?;
            println!(
                "{} questions pre-registered in {} before any design ran",
                qs.len(),
                path.display()
            );
            qs
        }
    };
    let questions = match a.limit {
        Some(n) => {
            let picked = take_round_robin(questions, n);
            println!(
                "--limit {n}: grading {} questions, the categories in turn",
                picked.len()
            );
            picked
        }
        None => questions,
    };
    let chat = match crate::chat::Chat::from_env(a.max_tokens)? {
        Some(c) => Some(c.with_cache(a.out.join("answers"))?),
        None => None,
    };
    match &chat {
        Some(c) => println!(
            "answer level: on, model {}, answers of at most {} (kept in {}; a rerun asks only for the missing ones)",
            c.model(),
            match a.max_tokens {
                0 => "the endpoint's length".to_string(),
                n => format!("{n} tokens"),
            },
            a.out.join("answers").display()
        ),
        None => println!(
            "answer level: SKIPPED — no chat endpoint configured (set TUTOR_MEMORY_CHAT_URL); prompt level only"
        ),
    }
    let t = Instant::now();
    let mut tick = progress("grading", "questions");
    let report = quality::run(
        &brain,
        &questions,
        &designs,
        a.budget,
        chat.as_ref(),
        &mut |d, n| tick(d, n),
    )?;
    drop(tick);
    println!(
        "{} questions × {} designs graded in {:.1} s (budget {} tokens)\n",
        questions.len(),
        designs.len(),
        t.elapsed().as_secs_f64(),
        a.budget
    );
    if let Some(c) = &chat {
        println!("{} answers came from the cache\n", c.reused());
    }
    let failures = quality::failures_text(&report);
    let failing = report.outcomes.iter().filter(|o| !o.passed).count();
    if failing > 0 {
        println!("# Failures ({failing})\n\n{failures}");
    }
    println!(
        "prompt level:\n{}",
        quality::markdown(&report.prompt, &report.designs)
    );
    if let Some(answer) = &report.answer {
        println!(
            "answer level:\n{}",
            quality::markdown(answer, &report.designs)
        );
    }
    std::fs::write(
        a.out.join("results.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    std::fs::write(
        a.out.join("chart.svg"),
        quality::svg(
            &report.prompt,
            &report.designs,
            &format!(
                "Prompt level, {} questions, budget {}",
                report.questions, report.budget
            ),
        ),
    )?;
    std::fs::write(a.out.join("failures.md"), failures)?;
    println!(
        "wrote {0}/results.json, {0}/chart.svg and {0}/failures.md",
        a.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::questions::{Expect, Question};

    #[test]
    fn a_limit_takes_the_categories_in_turn() {
        let q = |id: &str, category: &str| Question {
            id: id.into(),
            subject: "ana/cells".into(),
            at: chrono::Utc::now(),
            category: category.into(),
            question: "?".into(),
            expect: Expect::default(),
        };
        let all = vec![
            q("1", "a"),
            q("2", "a"),
            q("3", "a"),
            q("4", "b"),
            q("5", "c"),
        ];
        let ids = |v: Vec<Question>| v.into_iter().map(|q| q.id).collect::<Vec<_>>();
        assert_eq!(ids(take_round_robin(all.clone(), 4)), ["1", "4", "5", "2"]);
        assert_eq!(
            ids(take_round_robin(all.clone(), 9)).len(),
            5,
            "no more than there are"
        );
        assert!(take_round_robin(all, 0).is_empty());
    }
}
