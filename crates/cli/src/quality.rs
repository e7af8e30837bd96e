//! `bench quality`: the four designs on pre-registered questions (SPEC §9).
//! Histories are generated (or read), imported, the questions written to a
//! file, and only then is any design run; the table, JSON, an SVG chart and
//! every failure are written to the output folder.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use tm_bench::quality;
use tm_model::block::Design;
use tm_store::Store;

pub struct Args {
    pub histories: Option<PathBuf>,
    pub questions: Option<PathBuf>,
    pub design: String,
    pub out: PathBuf,
    pub budget: usize,
    pub count: usize,
    pub seed: u64,
    pub embedder: String,
    pub model_dir: Option<PathBuf>,
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

pub fn run(a: Args) -> Result<ExitCode> {
    let designs = designs(&a.design)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    println!("machine: {}", crate::bench::machine());
    let t = Instant::now();
    let files = match &a.histories {
        Some(dir) => quality::history_files(dir)?,
        None => {
            let hs = tm_bench::generate::generate(&tm_bench::subjects::shipped(), a.count, a.seed)?;
            let sizes: Vec<usize> = hs.iter().map(|h| h.events).collect();
            println!(
                "generated {} histories (seed {}), {}..{} events, {} in all",
                hs.len(),
                a.seed,
                sizes.iter().min().unwrap_or(&0),
                sizes.iter().max().unwrap_or(&0),
                sizes.iter().sum::<usize>()
            );
            tm_bench::generate::write_all(&hs, &a.out.join("histories"))?
        }
    };
    if files.is_empty() {
        anyhow::bail!("no history files (*.jsonl) to run");
    }
    let recaller = crate::recaller(&a.embedder, a.model_dir.as_deref())?;
    let db = a.out.join("quality.db");
    remove_db(&db)?;
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let bar = crate::progress_bar("importing [{bar:40}] {pos}/{len} histories");
    quality::import(&mut store, &recaller, &files, &mut |d, n| {
        crate::advance(&bar, d, n)
    })?;
    bar.finish_and_clear();
    println!(
        "imported and embedded {} histories with {} in {:.1} s",
        files.len(),
        recaller.embedder().name(),
        t.elapsed().as_secs_f64()
    );
    let questions = match &a.questions {
        Some(f) => tm_bench::questions::read(f)?,
        None => {
            let qs = quality::register(&store, &files, a.seed)?;
            let path = a.out.join("questions.jsonl");
            tm_bench::questions::write(&qs, &path)?;
            println!(
                "{} questions pre-registered in {} before any design ran",
                qs.len(),
                path.display()
            );
            qs
        }
    };
    let chat = tm_bench::chat::Chat::from_env()?;
    match &chat {
        Some(c) => println!("answer level: on, model {}", c.model()),
        None => println!(
            "answer level: SKIPPED — no chat endpoint configured (set TUTOR_MEMORY_CHAT_URL); prompt level only"
        ),
    }
    let t = Instant::now();
    let bar = crate::progress_bar("grading [{bar:40}] {pos}/{len} questions");
    let report = quality::run(
        &store,
        &recaller,
        &questions,
        &designs,
        a.budget,
        chat.as_ref(),
        &mut |d, n| crate::advance(&bar, d, n),
    )?;
    bar.finish_and_clear();
    println!(
        "{} questions × {} designs graded in {:.1} s (budget {} tokens)\n",
        questions.len(),
        designs.len(),
        t.elapsed().as_secs_f64(),
        a.budget
    );
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
    Ok(ExitCode::SUCCESS)
}
