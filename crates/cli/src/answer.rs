//! `answer`: records what the tutor answered on a turn, saves the memories
//! recalled for it, and traces each claim to a file line or a dated memory
//! (SPEC §7), printing the stance and the traces.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tm_model::grounding::Passage;
use tm_model::subject::SubjectKey;

pub(crate) struct Args {
    pub subject: String,
    pub at: String,
    pub recalled: Vec<i64>,
    pub passages: Option<PathBuf>,
    pub json: bool,
    pub text: String,
}

/// Reads a passages file: a JSON array of `{file, version_id, page, line, text}`.
fn read_passages(path: &Path) -> Result<Vec<Passage>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a JSON array of passages {{file, version_id, page, line, text}}",
            path.display()
        )
    })
}

pub(crate) fn run(db: &Path, args: Args) -> Result<ExitCode> {
    let passages = match &args.passages {
        Some(p) => read_passages(p)?,
        None => Vec::new(),
    };
    let at = crate::parse_instant(&args.at)?;
    let mut store = crate::open(db)?;
    let subject = store.require_subject(&SubjectKey::parse(&args.subject)?)?;
    let answered = tm_brain::grounding::answer(
        &mut store,
        &subject,
        &args.text,
        at,
        &args.recalled,
        &passages,
    )?;
    if args.json {
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
