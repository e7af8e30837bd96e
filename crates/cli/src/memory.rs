//! The commands that record into the memory and read it back: import,
//! recall, block, answer, map, teach, beliefs, rederive, reembed.

use crate::print::{print_map, print_recall};
use crate::progress::{advance, bar};
use crate::{parse_instant, time_zone};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use tm_brain::Brain;
use tm_brain::recall::RecallQuery;
use tm_model::passages::Passage;

#[derive(clap::Args)]
pub struct ImportArgs {
    /// History files (`*.jsonl`), or folders an `export` wrote (their
    /// manifest's histories, in its order).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print the reports as JSON.
    #[arg(long)]
    json: bool,
    /// Let a file event's `path` lead outside the history file's folder
    /// (absolute, `..`, a link). Without it such a path is refused.
    #[arg(long)]
    allow_outside: bool,
}

/// Imports each file, with a progress bar, and says what it did.
pub fn import(brain: &Brain, a: ImportArgs) -> Result<ExitCode> {
    let mut files = Vec::new();
    for f in a.files {
        if f.is_dir() {
            files.extend(exported_histories(&f)?);
        } else {
            files.push(f);
        }
    }
    for file in files {
        let progress = bar("{msg} [{bar:40}] {pos}/{len}");
        let report = brain.import_file_with(&file, a.allow_outside, &mut |stage, done, total| {
            progress.set_message(format!("{} ({stage})", file.display()));
            advance(&progress, done, total);
        });
        progress.finish_and_clear();
        let report = report?;
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        if a.json {
            println!("{}", serde_json::to_string(&report)?);
        } else if report.already_imported {
            println!(
                "{}: {} was already imported; nothing to do",
                report.subject,
                file.display()
            );
        } else {
            println!(
                "{}: {} events, {} episodes appended, {} already present, {} file versions stored",
                report.subject,
                report.events,
                report.appended,
                report.skipped,
                report.file_versions
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct RecallArgs {
    #[arg(long)]
    subject: String,
    /// The turn's instant (RFC 3339); ages and windows count from it.
    #[arg(long)]
    at: String,
    /// The learner's time zone (IANA name; default: the subject's, else UTC).
    #[arg(long)]
    tz: Option<String>,
    /// At most this many memories.
    #[arg(long, default_value_t = 12)]
    limit: usize,
    #[arg(long)]
    json: bool,
    /// The question ("" for none).
    question: String,
}

pub fn recall(brain: &Brain, a: RecallArgs) -> Result<ExitCode> {
    let subject = brain.subject(&a.subject)?;
    let tz = time_zone(a.tz.as_deref(), &subject)?;
    let query = RecallQuery {
        question: &a.question,
        at: parse_instant(&a.at)?,
        tz,
        limit: a.limit,
        exclude: None,
    };
    let result = brain.recall(&subject, &query)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_recall(&result, tz);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct BlockArgs {
    #[arg(long)]
    subject: String,
    /// The turn's instant (RFC 3339).
    #[arg(long)]
    at: String,
    /// Token budget (o200k).
    #[arg(long, default_value_t = tm_brain::block::DEFAULT_BUDGET)]
    budget: usize,
    /// Hard time cap in milliseconds; past it the block is dropped, not awaited.
    #[arg(long, default_value_t = 2500)]
    cap_ms: u64,
    /// The learner's time zone (default: the subject's, else UTC).
    #[arg(long)]
    tz: Option<String>,
    /// Print the block as JSON (docs/formats.md "Block as JSON").
    #[arg(long)]
    json: bool,
    /// Which design fills the slot (docs/mechanisms.md §9): plain, window, episodes or full.
    #[arg(long, default_value = "full")]
    design: tm_model::block::Design,
    /// The learner's question.
    question: String,
}

pub fn block(mut brain: Brain, a: BlockArgs) -> Result<ExitCode> {
    brain.set_cap(std::time::Duration::from_millis(a.cap_ms));
    let subject = brain.subject(&a.subject)?;
    let mut req = brain.block_request(&subject, &a.question, parse_instant(&a.at)?, Some(a.budget));
    req.tz = time_zone(a.tz.as_deref(), &subject)?;
    req.design = a.design;
    let block = brain.block(&subject, req)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&block)?);
    } else if block.dropped {
        println!("(the block was dropped: not built within {} ms)", a.cap_ms);
    } else {
        println!("{}", block.block);
        eprintln!(
            "{} tokens, {:.1} ms, mode {}",
            block.tokens, block.elapsed_ms, block.mode
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct AnswerArgs {
    #[arg(long)]
    subject: String,
    /// When the answer was given (RFC 3339).
    #[arg(long)]
    at: String,
    /// Ids of the memories the turn's block recalled (comma-separated).
    #[arg(long, value_delimiter = ',')]
    recalled: Vec<i64>,
    /// A JSON array of file passages {file, version_id, page, line, text}.
    #[arg(long)]
    passages: Option<PathBuf>,
    #[arg(long)]
    json: bool,
    /// The answer's text.
    text: String,
}

/// Records the tutor's answer, its recalled memories and its grounding, and
/// prints the stance and the traces.
pub fn answer(brain: &Brain, a: AnswerArgs) -> Result<ExitCode> {
    let passages: Vec<Passage> = match &a.passages {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{} is not a JSON array of passages {{file, version_id, page, line, text}}",
                    p.display()
                )
            })?
        }
        None => Vec::new(),
    };
    let subject = brain.subject(&a.subject)?;
    let answered = brain.answer(
        &subject,
        &a.text,
        parse_instant(&a.at)?,
        &a.recalled,
        &passages,
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&answered)?);
        return Ok(ExitCode::SUCCESS);
    }
    let g = &answered.grounding;
    println!(
        "answer recorded as episode {}; stance: {} ({} of {} claims traced{})",
        answered.episode_id,
        g.stance.as_str(),
        g.traced(),
        g.traces.len(),
        if g.says_cannot {
            "; the answer says it cannot answer"
        } else {
            ""
        }
    );
    for t in &g.traces {
        let source = t
            .source
            .as_ref()
            .map(|s| s.label())
            .unwrap_or_else(|| "untraced".into());
        println!("- {} → {source}", t.claim);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct MapArgs {
    #[arg(long)]
    subject: String,
    #[arg(long)]
    json: bool,
}

pub fn map(brain: &Brain, a: MapArgs) -> Result<ExitCode> {
    let map = brain.map(&brain.subject(&a.subject)?)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&map)?);
    } else {
        print_map(&map);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct TeachArgs {
    #[arg(long)]
    subject: String,
    /// When it was said (RFC 3339).
    #[arg(long)]
    at: String,
    /// The learner's message.
    text: String,
}

pub fn teach(brain: &Brain, a: TeachArgs) -> Result<ExitCode> {
    let subject = brain.subject(&a.subject)?;
    let taught = brain.teach(&subject, &a.text, parse_instant(&a.at)?, None)?;
    println!(
        "{}: taught ({} cue {:?}); {} episode appended; concepts now named: {}",
        subject.key,
        taught.lang,
        taught.cue,
        taught.appended,
        if taught.concepts.is_empty() {
            "-".to_string()
        } else {
            taught.concepts.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct BeliefsArgs {
    #[arg(long)]
    subject: String,
    /// Walk the history of the belief about this concept or topic.
    #[arg(long)]
    history: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn beliefs(brain: &Brain, a: BeliefsArgs) -> Result<ExitCode> {
    let subject = brain.subject(&a.subject)?;
    if let Some(about) = a.history {
        let rows = brain.belief_history(&subject, &about)?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else if rows.is_empty() {
            println!("no belief about {about:?} has been recorded");
        } else {
            for line in tm_model::beliefs::render_history(&rows) {
                println!("{line}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let beliefs = brain.beliefs(&subject)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&beliefs)?);
        return Ok(ExitCode::SUCCESS);
    }
    for b in &beliefs.current {
        let about = b.concept.as_deref().unwrap_or(&b.subject_key);
        let marks = match (b.unmapped, b.flagged) {
            (true, true) => " [topic outside the map; decayed, to reconfirm]",
            (true, false) => " [topic outside the map]",
            (false, true) => " [decayed, to reconfirm]",
            _ => "",
        };
        println!(
            "- {} {about} ({:.2}){marks}",
            b.claim.as_str(),
            b.confidence
        );
    }
    if beliefs.current.is_empty() {
        println!("no current beliefs");
    }
    if let Some(s) = &beliefs.checks.sentence {
        println!("{s}");
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct RederiveArgs {
    #[arg(long)]
    subject: String,
    /// When the re-derivation happens (RFC 3339), recorded on the retired rows.
    #[arg(long)]
    at: String,
}

pub fn rederive(brain: &Brain, a: RederiveArgs) -> Result<ExitCode> {
    let subject = brain.subject(&a.subject)?;
    let r = brain.rederive(&subject, parse_instant(&a.at)?)?;
    println!(
        "{}: {} beliefs retired, {} re-derived from {} recorded checks (episodes untouched)",
        subject.key, r.retired, r.derived, r.checks
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ReembedArgs {
    /// Only this subject (default: every subject).
    #[arg(long)]
    subject: Option<String>,
}

/// `named`: the embedder the command line named, if any. A hashing embedder
/// that was not named is a model's fallback, and replacing a store's vectors
/// with it would lose their meaning: refused.
pub fn reembed(brain: &Brain, a: ReembedArgs, named: Option<&str>) -> Result<ExitCode> {
    let hashing = brain.embedder_name()? == tm_embed::HashEmbedder::NAME;
    let named_hash = named.and_then(|n| n.parse().ok()) == Some(tm_embed::EmbedderChoice::Hash);
    if hashing && !named_hash {
        anyhow::bail!(
            "refusing to re-embed with the hashing embedder, which stands in for a model that \
             could not be loaded; name --embedder hash to do it on purpose"
        );
    }
    let subjects = match a.subject {
        Some(s) => vec![brain.subject(&s)?],
        None => brain.subjects()?,
    };
    for s in subjects {
        let progress = bar("embedding [{bar:40}] {pos}/{len} episodes");
        let r = brain.reembed(&s, &mut |done, total| advance(&progress, done, total));
        progress.finish_and_clear();
        let r = r?;
        println!(
            "{}: {} episodes embedded with {}; verified: all {} of its episode vectors are from it, \
             and {} of them embedded again point the same way",
            s.key,
            r.embedded,
            brain.embedder_name()?,
            r.vectors,
            r.compared
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The histories an export's folder holds, in the order its manifest lists
/// them.
fn exported_histories(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let path = dir.join(tm_brain::export::MANIFEST);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "{} is a folder without {}: name its history files",
            dir.display(),
            tm_brain::export::MANIFEST
        )
    })?;
    let manifest: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let listed = manifest["subjects"]
        .as_array()
        .with_context(|| format!("{} lists no subjects", path.display()))?;
    let mut out = Vec::new();
    for s in listed {
        let histories = s["histories"]
            .as_array()
            .with_context(|| format!("{}: a subject without histories", path.display()))?;
        for h in histories {
            let h = h
                .as_str()
                .with_context(|| format!("{}: a history is not a path", path.display()))?;
            let rel = std::path::Path::new(h);
            if !rel
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
            {
                anyhow::bail!(
                    "{}: the history {h:?} is not a path inside the export's folder",
                    path.display()
                );
            }
            out.push(dir.join(rel));
        }
    }
    Ok(out)
}
