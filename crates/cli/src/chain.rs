//! The episode log and its chain: `log`, `verify`, `checkpoint`.

use crate::print::{describe, print_log};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tm_brain::Brain;
use tm_model::episodes::{ChainState, Checkpoint};

#[derive(clap::Args)]
pub struct LogArgs {
    #[arg(long)]
    subject: String,
    /// First seq to show.
    #[arg(long, default_value_t = 1)]
    from: u64,
    /// At most this many episodes.
    #[arg(long, default_value_t = 1000)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

pub fn log(brain: &Brain, a: LogArgs) -> Result<ExitCode> {
    let subject = brain.subject(&a.subject)?;
    let episodes = brain.episodes(&subject, a.from, a.limit)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&episodes)?);
    } else {
        print_log(&episodes);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// Only this subject (default: every subject).
    #[arg(long)]
    subject: Option<String>,
    /// Also check the chain still reaches this checkpoint unchanged.
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

/// Verifies each chain; exit 2 when any is broken.
pub fn verify(brain: &Brain, a: VerifyArgs) -> Result<ExitCode> {
    let checkpoint = a.checkpoint.as_deref().map(read_checkpoint).transpose()?;
    let subject = a
        .subject
        .or_else(|| checkpoint.as_ref().map(|cp| cp.subject.clone()));
    let subjects = match subject {
        Some(s) => vec![brain.subject(&s)?],
        None => brain.subjects()?,
    };
    let reports = subjects
        .iter()
        .map(|s| brain.verify(s, checkpoint.as_ref()))
        .collect::<tm_brain::Result<Vec<_>>>()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        for r in &reports {
            println!("{}", describe(r));
        }
        if reports.is_empty() {
            println!("no subjects in {}", brain.location());
        }
    }
    let broken = reports.iter().any(|r| r.state == ChainState::Broken);
    Ok(if broken {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(clap::Args)]
pub struct CheckpointArgs {
    #[arg(long)]
    subject: String,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn checkpoint(brain: &Brain, a: CheckpointArgs) -> Result<ExitCode> {
    let cp = brain.checkpoint(&brain.subject(&a.subject)?)?;
    let text = serde_json::to_string_pretty(&cp)?;
    match a.out {
        Some(p) => {
            std::fs::write(&p, text + "\n").with_context(|| format!("writing {}", p.display()))?
        }
        None => println!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn read_checkpoint(path: &Path) -> Result<Checkpoint> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let cp: Checkpoint = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a checkpoint ({{subject, seq, head_hash}})",
            path.display()
        )
    })?;
    if cp.head_hash.len() != 64 || !cp.head_hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("{}: head_hash must be 64 hex digits", path.display());
    }
    Ok(cp)
}
