//! `tutor-memory`: the command line over the embedded store.

mod bench;
mod demo;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tm_model::episodes::Checkpoint;
use tm_model::subject::SubjectKey;
use tm_store::{ChainReport, ChainState, Store};

#[derive(Parser)]
#[command(
    name = "tutor-memory",
    version,
    about = "A tutor's memory of each learner's subject"
)]
struct Cli {
    /// The database file (created when missing).
    #[arg(long, global = true, env = "TUTOR_MEMORY_DB", default_value = tm_store::DEFAULT_DB)]
    db: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import history files (FORMATS v1), each in one transaction.
    Import {
        /// History files (`*.jsonl`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the reports as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a subject's episodes in chain order.
    Log {
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
    },
    /// Recompute hash chains and report the first break of each.
    Verify {
        /// Only this subject (default: every subject).
        #[arg(long)]
        subject: Option<String>,
        /// Also check the chain still reaches this checkpoint unchanged.
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Export a subject's chain head {subject, seq, head_hash} as JSON.
    Checkpoint {
        #[arg(long)]
        subject: String,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Build the sample subject from examples/ and show what the memory holds.
    Demo {
        /// Where the demo's own database goes (recreated on each run).
        #[arg(long, default_value = "tutor-memory-demo.db")]
        demo_db: PathBuf,
    },
    /// Measure throughput (figures for BENCHMARKS.md).
    Bench {
        #[command(subcommand)]
        what: bench::What,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Import { files, json } => {
            let mut store = open(&cli.db)?;
            for file in files {
                let report = import_with_progress(&mut store, &file)?;
                if json {
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
        Command::Log {
            subject,
            from,
            limit,
            json,
        } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let episodes = store.episodes(&subject, from, limit)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&episodes)?);
            } else {
                print_log(&episodes);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify {
            subject,
            checkpoint,
            json,
        } => {
            let store = open(&cli.db)?;
            let checkpoint = checkpoint.map(|p| read_checkpoint(&p)).transpose()?;
            let subject = match (subject, &checkpoint) {
                (Some(s), _) => Some(s),
                (None, Some(cp)) => Some(cp.subject.clone()),
                (None, None) => None,
            };
            let reports = verify(&store, subject.as_deref(), checkpoint.as_ref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&reports)?);
            } else {
                for r in &reports {
                    println!("{}", describe(r));
                }
                if reports.is_empty() {
                    println!("no subjects in {}", cli.db.display());
                }
            }
            let broken = reports.iter().any(|r| r.state == ChainState::Broken);
            Ok(if broken {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Checkpoint { subject, out } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let cp = store.checkpoint(&subject)?;
            let text = serde_json::to_string_pretty(&cp)?;
            match out {
                Some(p) => std::fs::write(&p, text + "\n")
                    .with_context(|| format!("writing {}", p.display()))?,
                None => println!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo { demo_db } => demo::run(&demo_db),
        Command::Bench { what } => bench::run(what),
    }
}

fn open(path: &Path) -> Result<Store> {
    Store::open(path).with_context(|| format!("opening the store {}", path.display()))
}

/// Imports one history file, drawing a progress bar on a terminal.
pub(crate) fn import_with_progress(
    store: &mut Store,
    file: &Path,
) -> Result<tm_brain::import::ImportReport> {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} events")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(file.display().to_string());
    let report = tm_brain::import::import_file(store, file, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    Ok(report?)
}

pub(crate) fn verify(
    store: &Store,
    subject: Option<&str>,
    cp: Option<&Checkpoint>,
) -> Result<Vec<ChainReport>> {
    let subjects = match subject {
        Some(s) => vec![store.require_subject(&SubjectKey::parse(s)?)?],
        None => store.subjects()?,
    };
    subjects
        .iter()
        .map(|s| Ok(store.verify_subject(s, cp)?))
        .collect()
}

pub(crate) fn describe(r: &ChainReport) -> String {
    let cp = if r.checkpoint_checked {
        ", checkpoint reached unchanged"
    } else {
        ""
    };
    match &r.first_break {
        None => format!(
            "{}: intact, {} episodes verified, head seq {} {}{cp}",
            r.subject,
            r.verified,
            r.head_seq,
            &r.head_hash[..16]
        ),
        Some(b) => format!(
            "{}: BROKEN — {b} ({} episodes verified before it)",
            r.subject, r.verified
        ),
    }
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

pub(crate) fn print_log(episodes: &[tm_store::Episode]) {
    for e in episodes {
        let ext = e
            .external_id
            .as_deref()
            .map(|id| format!(" [{id}]"))
            .unwrap_or_default();
        println!(
            "{:>6}  {}  {:<13} {}{ext}",
            e.seq,
            e.at.format("%Y-%m-%d %H:%M"),
            e.kind.as_str(),
            e.summary
        );
    }
}
