//! The episode log and its chain: `log`, `verify`, `checkpoint`, `erase`.

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
    // One subject that cannot be checked does not stop the others.
    let results: Vec<_> = subjects
        .iter()
        .map(|s| (s, brain.verify(s, checkpoint.as_ref())))
        .collect();
    if a.json {
        let out: Vec<serde_json::Value> = results
            .iter()
            .map(|(s, r)| match r {
                Ok(report) => serde_json::to_value(report),
                Err(e) => Ok(serde_json::json!({
                    "subject": s.key.to_string(), "state": "error", "error": e.to_string()
                })),
            })
            .collect::<serde_json::Result<_>>()?;
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for (s, r) in &results {
            match r {
                Ok(report) => println!("{}", describe(report)),
                Err(e) => println!("{}: could not be verified: {e}", s.key),
            }
        }
        if results.is_empty() {
            println!("no subjects in {}", brain.location());
        }
    }
    let broken = results
        .iter()
        .any(|(_, r)| matches!(r, Ok(report) if report.state == ChainState::Broken));
    let failed = results.iter().any(|(_, r)| r.is_err());
    Ok(if broken {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("scope").required(true).args(["subject", "learner", "tenant"])))]
pub struct EraseArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Erase only the episode at this seq of `--subject` (a pasted phone
    /// number, a wrong fact); beliefs and map are re-derived without it.
    #[arg(long, requires = "subject")]
    seq: Option<u64>,
    /// Why, for one episode ("a pasted phone number"); never the erased words.
    #[arg(long, default_value = "", requires = "seq")]
    reason: String,
    /// Your reference for the request ("ticket 4711"), kept in the erasure
    /// record. Never the learner's own words.
    #[arg(long, default_value = "")]
    reference: String,
    /// The erasure's instant (RFC 3339; default: now).
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

/// Whose data: one subject, a learner, or a whole tenant.
#[derive(clap::Args)]
pub struct ScopeArgs {
    /// One subject (`learner/subject`).
    #[arg(long)]
    subject: Option<String>,
    /// Every subject of this learner.
    #[arg(long)]
    learner: Option<String>,
    /// Every learner of this tenant.
    #[arg(long)]
    tenant: Option<String>,
}

impl ScopeArgs {
    fn scope(&self, brain: &Brain, what: &str) -> Result<tm_brain::Scope> {
        use tm_brain::Scope;
        Ok(match (&self.subject, &self.learner, &self.tenant) {
            (Some(s), None, None) => Scope::Subject(brain.subject(s)?),
            (None, Some(l), None) => Scope::Learner(l.clone()),
            (None, None, Some(t)) => Scope::Tenant {
                tenant_id: brain
                    .tenant_id(t)?
                    .with_context(|| format!("no tenant named {t:?}"))?,
                name: t.clone(),
            },
            (None, None, None) => bail!("name what to {what}: --subject, --learner or --tenant"),
            _ => bail!("name one of --subject, --learner or --tenant to {what}, not several"),
        })
    }
}

/// Erases what the scope covers, compacts the store, and says what it did.
pub fn erase(brain: &Brain, a: EraseArgs) -> Result<ExitCode> {
    let at = crate::instant_or_now(a.at.as_deref())?;
    let scope = a.scope.scope(brain, "erase")?;
    let erased = match (a.seq, &scope) {
        (Some(seq), tm_brain::Scope::Subject(s)) => {
            brain.erase_episode(s, seq, &a.reason, &a.reference, at)?
        }
        (Some(_), _) => bail!("--seq erases one episode of --subject"),
        (None, _) => brain.erase(&scope, &a.reference, at)?,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&erased)?);
    } else {
        println!(
            "erased {} episodes of {} subject(s) ({}) on {}; erasure #{} kept with reference {:?}",
            erased.erasure.episodes,
            erased.erasure.subjects,
            erased.subjects.join(", "),
            erased.erasure.at.to_rfc3339(),
            erased.erasure.id,
            erased.erasure.reference
        );
        println!("compacted {}: {}", brain.location(), erased.compaction);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// The folder to write (created; refused when it exists and is not empty).
    #[arg(long)]
    out: PathBuf,
    /// The export's instant, written in its manifest (RFC 3339; default: now).
    #[arg(long)]
    at: Option<String>,
    /// Print the manifest as JSON.
    #[arg(long)]
    json: bool,
}

/// Writes what the scope covers as v1 histories (docs/formats.md) with their files, a
/// manifest, and each subject's beliefs and map; `import` of the folder
/// reads it back.
pub fn export(brain: &Brain, a: ExportArgs) -> Result<ExitCode> {
    let at = crate::instant_or_now(a.at.as_deref())?;
    let scope = a.scope.scope(brain, "export")?;
    if a.out.exists()
        && std::fs::read_dir(&a.out)
            .with_context(|| format!("reading {}", a.out.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} exists and is not empty: export into a new folder",
            a.out.display()
        );
    }
    let export = brain.export(&scope, at)?;
    for (path, bytes) in &export.files {
        let full = a.out.join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&full, bytes).with_context(|| format!("writing {}", full.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&export.manifest)?);
    } else {
        for s in &export.manifest.subjects {
            println!(
                "{}: {} events, {} nights, {} erased, head {} at seq {}{} ({})",
                s.subject,
                s.events,
                s.nights,
                s.erased,
                &s.head_hash[..16],
                s.head_seq,
                if s.same_head_on_import {
                    "; importing it gives the same head"
                } else {
                    "; a re-import gets another head (erased or store-local episodes)"
                },
                s.histories.join(", ")
            );
        }
        println!(
            "wrote {} files to {}; `tutor-memory import {}` reads it back",
            export.files.len(),
            a.out.display(),
            a.out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
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
