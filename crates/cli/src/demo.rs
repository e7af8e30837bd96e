//! `demo`: builds the sample subject shipped in `examples/` (compiled into the
//! binary, so the demo runs from anywhere) and shows what the memory holds.

use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;
use tm_model::subject::SubjectKey;
use tm_store::Store;

/// The sample subject: its history and the files the history names.
pub(crate) const SAMPLE: &[(&str, &str)] = &[
    (
        "history.jsonl",
        include_str!("../../../examples/cell-biology/history.jsonl"),
    ),
    (
        "files/cells.md",
        include_str!("../../../examples/cell-biology/files/cells.md"),
    ),
    (
        "files/cells-v2.md",
        include_str!("../../../examples/cell-biology/files/cells-v2.md"),
    ),
    (
        "files/transport.md",
        include_str!("../../../examples/cell-biology/files/transport.md"),
    ),
    (
        "files/notes.txt",
        include_str!("../../../examples/cell-biology/files/notes.txt"),
    ),
];

pub fn run(db: &Path, embedder: &str, model_dir: Option<&Path>) -> Result<ExitCode> {
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", db.display());
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the old demo database {p}")),
        }
    }
    let dir = tempfile::tempdir().context("creating a folder for the sample files")?;
    for (name, text) in SAMPLE {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    let mut store = Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    let history = dir.path().join("history.jsonl");

    println!("== Importing the sample subject into {}", db.display());
    let recaller = crate::recaller(embedder, model_dir)?;
    let report = crate::import_with_progress(
        &mut store,
        &history,
        &tm_ingest::extract::OfflineExtractor::default(),
        Some(&recaller),
    )?;
    println!(
        "{}: {} events → {} episodes, {} file versions",
        report.subject, report.events, report.appended, report.file_versions
    );
    let again = crate::import_with_progress(
        &mut store,
        &history,
        &tm_ingest::extract::OfflineExtractor::default(),
        Some(&recaller),
    )?;
    println!(
        "importing the same history again: already imported = {}",
        again.already_imported
    );

    let key = SubjectKey::parse(&report.subject)?;
    let subject = store.require_subject(&key)?;
    let embedded = crate::embed_with_progress(&recaller, &mut store, &subject)?;
    println!(
        "{embedded} episodes embedded with {}",
        recaller.embedder().name()
    );
    println!("\n== The episode log of {key} (append-only, hash-chained)");
    crate::print_log(&store.episodes(&subject, 1, usize::MAX)?);

    println!("\n== The concept map built from the files (offline extractor)");
    crate::print_map(&tm_brain::map::load(
        store.latest_map(&subject)?.as_deref(),
    )?);

    println!("\n== Files and their versions");
    for v in store.file_versions(&subject)? {
        let status = match (v.replaced_at, v.removed_at) {
            (_, Some(t)) => format!("removed {}", t.format("%Y-%m-%d")),
            (Some(t), _) => format!("replaced {}", t.format("%Y-%m-%d")),
            _ => "current".to_string(),
        };
        println!(
            "{} v{} ({}, {} page(s)) sha256 {}… added {} — {status}",
            v.name,
            v.version,
            v.format,
            v.pages,
            &v.sha256[..12],
            v.added_at.format("%Y-%m-%d")
        );
    }

    // The turns the demo asks, at a fixed instant so every run shows the same.
    let at =
        chrono::DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z")?.with_timezone(&chrono::Utc);
    for question in [
        "How does osmosis work again?",
        "What did we cover in July?",
        "¿Qué vimos en mayo?",
        "what is a cell",
    ] {
        println!("\n== Recall at {} for: {question}", at.format("%Y-%m-%d"));
        let query = tm_brain::recall::RecallQuery {
            question,
            at,
            tz: chrono_tz::UTC,
            limit: 6,
            exclude: None,
        };
        crate::print_recall(&recaller.recall(&store, &subject, &query)?, chrono_tz::UTC);
    }

    println!("\n== Verifying the chain");
    let cp = store.checkpoint(&subject)?;
    for r in crate::verify(&store, None, Some(&cp))? {
        println!("{}", crate::describe(&r));
    }
    println!("checkpoint: {}", serde_json::to_string(&cp)?);
    println!(
        "\nTry: tutor-memory --db {} log --subject {key}   |   tutor-memory --db {} verify",
        db.display(),
        db.display()
    );
    Ok(ExitCode::SUCCESS)
}
