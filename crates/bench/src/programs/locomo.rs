//! `bench locomo`: evidence recall of the block on LoCoMo at one or more
//! budgets, per category, by id and by content, and block precision, for the
//! window, episodes and full designs and the BM25-only, vector-only, fused and
//! most-recent baselines, all in one run.

use super::Progress;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Path to the benchmark's file (`locomo10.json`; for `bench longmemeval`
    /// a LongMemEval file).
    #[cfg_attr(feature = "cli", arg(long))]
    pub data: PathBuf,
    /// Token budgets, each measured in the same run (e.g. `500,1000,1500,3000`).
    #[cfg_attr(
        feature = "cli",
        arg(
            long = "budgets",
            alias = "budget",
            value_delimiter = ',',
            default_value = "1500"
        )
    )]
    pub budgets: Vec<usize>,
    /// Also write the figures as JSON here.
    #[cfg_attr(feature = "cli", arg(long))]
    pub out: Option<PathBuf>,
    /// Keep the imported conversations in this database (a rerun skips
    /// the import and the embedding); default: a temporary one.
    #[cfg_attr(feature = "cli", arg(long))]
    pub store: Option<PathBuf>,
    /// The embedder (e5, the default; minilm, openai, hash).
    #[cfg_attr(feature = "cli", arg(long, default_value = "e5"))]
    pub embedder: String,
    #[cfg_attr(feature = "cli", arg(long))]
    pub model_dir: Option<PathBuf>,
    /// The half to read: `dev` (what ranking is tuned on), `test` (what it is
    /// judged on) or `all` (BENCHMARKS.md, "Dev and test halves").
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value = "all"))]
    pub split: crate::split::Split,
    /// Also grade a model's answers (the endpoint at `TUTOR_MEMORY_CHAT_URL`)
    /// to this many questions, the categories in turn, against their
    /// reference answers by normalised containment, for the fusion baseline
    /// and the full design at every budget (0: no answer level).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub answers: usize,
    /// Where the model's answers are kept (a rerun asks only for the missing ones).
    #[cfg_attr(feature = "cli", arg(long, default_value = "bench-answers"))]
    pub answer_cache: PathBuf,
    /// At most this many tokens in a model's answer (0: no cap is sent).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = crate::answers::DEFAULT_MAX_TOKENS))]
    pub max_tokens: u32,
}

pub fn run(o: &Options, progress: Progress) -> Result<()> {
    let convs = crate::locomo::load(&o.data, o.split)?;
    measure(o, &convs, &crate::locomo::LOCOMO, false, progress)
}

/// Imports the conversations (once, into a kept store), measures every
/// design and baseline at each budget, prints the tables and writes the JSON.
/// With `repeated`, the conversations share texts word for word (distractor
/// sessions) and each distinct text is embedded once ([`super::Remembering`]);
/// otherwise every turn is embedded, so the import's time is an ingest's.
pub(crate) fn measure(
    o: &Options,
    convs: &[crate::locomo::Conversation],
    categories: &crate::locomo::Categories,
    repeated: bool,
    progress: Progress,
) -> Result<()> {
    if o.budgets.is_empty() || o.budgets.contains(&0) {
        anyhow::bail!("--budgets takes positive token counts");
    }
    let chat = match o.answers {
        0 => None,
        _ => Some(
            crate::chat::Chat::from_env(o.max_tokens)?
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--answers needs a chat endpoint: set TUTOR_MEMORY_CHAT_URL (and TUTOR_MEMORY_CHAT_MODEL)"
                    )
                })?
                .with_cache(o.answer_cache.clone())?,
        ),
    };
    println!("machine: {}", super::machine());
    let qa: usize = convs.iter().map(|c| c.qa.len()).sum();
    let turns: usize = convs.iter().map(|c| c.turns.len()).sum();
    println!(
        "{} ({} half): {} conversations, {turns} turns, {qa} QA items",
        o.data.display(),
        o.split.as_str(),
        convs.len()
    );
    let mut embedder = super::embedder(&o.embedder, o.model_dir.as_deref())?;
    if repeated {
        embedder = std::sync::Arc::new(super::Remembering::new(embedder));
    }
    // A kept store is imported and embedded once; a rerun finds it done.
    let dir = tempfile::tempdir().context("a folder for the benchmark's store")?;
    let db = o
        .store
        .clone()
        .unwrap_or_else(|| dir.path().join("evidence.db"));
    let brain = super::brain(&db.display().to_string(), embedder)
        .with_context(|| format!("opening {}", db.display()))?;
    let t = Instant::now();
    let mut tick = progress("importing", "conversations");
    let subjects = crate::locomo::import(&brain, convs, &mut |d, n| tick(d, n))?;
    drop(tick);
    println!(
        "imported and embedded with {} in {:.1} s",
        brain.embedder_name()?,
        t.elapsed().as_secs_f64()
    );
    let chosen = crate::locomo::choose(convs, categories, o.answers);
    let answering = chat.as_ref().map(|chat| {
        println!(
            "answer level: {} questions, the categories in turn, answered by {} (at most {} tokens; kept in {})",
            chosen.len(),
            chat.model(),
            o.max_tokens,
            o.answer_cache.display()
        );
        crate::locomo::Answering {
            chat,
            questions: &chosen,
        }
    });
    let mut tick = progress("questions", "");
    let reports = crate::locomo::run(
        &brain,
        convs,
        &subjects,
        &o.budgets,
        categories,
        answering.as_ref(),
        &mut |d, n| tick(d, n),
    )?;
    drop(tick);
    if let Some(chat) = &chat {
        println!("{} answers came from the cache", chat.reused());
    }
    for report in &reports {
        println!(
            "at {} o200k tokens ({} QA items skipped: no evidence turn said by the time of the question; all budgets {:.1} s):\n",
            report.budget, report.skipped, report.seconds
        );
        println!("{}", crate::locomo::markdown(report));
    }
    if let Some(out) = &o.out {
        std::fs::write(out, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}
