//! `demo`: builds the sample subject shipped in `examples/` (compiled into the
//! binary, so the demo runs from anywhere) and shows what the memory holds:
//! the log, the map, recall, four chat turns (dry runs: the demo needs no
//! model) and the nightly loop, all through the brain; then it serves the
//! web report.

use crate::print::{describe, print_log, print_map, print_recall};
use crate::progress::{advance, bar};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tm_brain::Brain;
use tm_brain::nightly::NightlyOptions;
use tm_brain::recall::RecallQuery;
use tm_brain::turn::TurnRequest;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Where the demo's own database goes (recreated on each run).
    #[arg(long, default_value = "tutor-memory-demo.db")]
    demo_db: PathBuf,
    /// Do not serve the web report at the end (for tests and CI).
    #[arg(long)]
    no_serve: bool,
}

fn at(s: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    Ok(chrono::DateTime::parse_from_rfc3339(s)?.with_timezone(&chrono::Utc))
}

fn import(brain: &Brain, history: &std::path::Path) -> Result<tm_brain::record::Recorded> {
    let progress = bar("{msg} [{bar:40}] {pos}/{len}");
    let report = brain.import_file(history, &mut |stage, done, total| {
        progress.set_message(stage);
        advance(&progress, done, total);
    });
    progress.finish_and_clear();
    Ok(report?)
}

pub fn run(g: &crate::Global, a: DemoArgs) -> Result<ExitCode> {
    let db = &a.demo_db;
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", db.display());
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the old demo database {p}")),
        }
    }
    let dir = tempfile::tempdir().context("creating a folder for the sample files")?;
    let history = crate::sample::write(dir.path()).context("writing the sample files")?;
    let brain = crate::brain(&crate::Global {
        db: db.display().to_string(),
        ..g.clone()
    })?;

    println!("== Importing the sample subject into {}", db.display());
    let report = import(&brain, &history)?;
    println!(
        "{}: {} events → {} episodes, {} file versions, embedded with {}",
        report.subject,
        report.events,
        report.appended,
        report.file_versions,
        brain.embedder_name()?
    );
    let again = import(&brain, &history)?;
    println!(
        "importing the same history again: already imported = {}",
        again.already_imported
    );

    let subject = brain.subject(&report.subject)?;
    println!(
        "\n== The episode log of {} (append-only, hash-chained)",
        subject.key
    );
    print_log(&brain.episodes(&subject, 1, usize::MAX)?);

    println!("\n== The concept map built from the files (offline extractor)");
    print_map(&brain.map(&subject)?);

    println!("\n== Files and their versions");
    for v in brain.file_versions(&subject)? {
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
    let turn_at = at("2026-11-20T10:00:00Z")?;
    for question in [
        "How does osmosis work again?",
        "What did we cover in July?",
        "¿Qué vimos en mayo?",
        "what is a cell",
    ] {
        println!(
            "\n== Recall at {} for: {question}",
            turn_at.format("%Y-%m-%d")
        );
        let query = RecallQuery {
            question,
            at: turn_at,
            tz: chrono_tz::UTC,
            limit: 6,
            exclude: None,
        };
        print_recall(&brain.recall(&subject, &query)?, chrono_tz::UTC);
    }

    println!("\n== Verifying the chain");
    let cp = brain.checkpoint(&subject)?;
    println!("{}", describe(&brain.verify(&subject, Some(&cp))?));
    println!("checkpoint: {}", serde_json::to_string(&cp)?);

    // Chat turns through the brain (block under the cap from the memory
    // before the message, the message recorded, passages, the prompt), as
    // dry runs: the demo needs no model.
    let turns = [
        (
            "an ordinary question",
            "2026-11-20T10:00:00Z",
            "How does osmosis work again?",
        ),
        (
            "a question about the record",
            "2026-11-20T10:05:00Z",
            "What have I got wrong so far?",
        ),
        (
            "an empty month",
            "2026-11-20T10:10:00Z",
            "What did we cover in May?",
        ),
        (
            "a July question",
            "2026-11-20T10:15:00Z",
            "What did we cover in July about eukaryotic cells?",
        ),
    ];
    for (what, when, text) in turns {
        println!("\n== Turn ({what}) at {when}: {text}");
        let t = brain.turn(
            &subject,
            TurnRequest {
                text: text.to_string(),
                at: at(when)?,
                id: None,
                budget: None,
                tz: None,
                system: None,
                assessment: None,
            },
        )?;
        let b = &t.block;
        println!("{}", if b.dropped { "(no block)" } else { &b.block });
        let recalled: Vec<String> = b
            .recalled
            .iter()
            .map(|m| {
                m.external_id
                    .clone()
                    .unwrap_or_else(|| format!("#{}", m.id))
            })
            .collect();
        println!(
            "mode {}, {} tokens, {:.1} ms, dropped {}; recalled: {}; {} passages in the prompt (dry run: true)",
            b.mode,
            b.tokens,
            b.elapsed_ms,
            b.dropped,
            if recalled.is_empty() {
                "-".to_string()
            } else {
                recalled.join(", ")
            },
            t.passages.len()
        );
    }

    println!("\n== The nightly loop for the night ending 2026-11-21T03:00:00Z");
    let night = brain.nightly(
        at("2026-11-21T03:00:00Z")?,
        &NightlyOptions::default(),
        &mut |_, _| {},
    )?;
    for n in &night.nights {
        println!(
            "{}: {} active, {} ran, {} consolidated, {} beliefs decayed, {} citations verified",
            n.day, n.active, n.ran, n.consolidated, n.decayed, n.verified
        );
    }

    if a.no_serve {
        println!(
            "\nTry: tutor-memory --db {} report --subject {}   |   tutor-memory --db {} serve",
            db.display(),
            subject.key,
            db.display(),
        );
        return Ok(ExitCode::SUCCESS);
    }
    let key = tm_server::auth::generate().context("reading the system's randomness")?;
    brain.add_api_key("demo", &key.prefix, &key.sha256, true, chrono::Utc::now())?;
    brain.assign_learner(&subject.key.learner, "demo", chrono::Utc::now())?;
    let state = tm_server::AppState::new(Arc::new(brain), tm_server::Config::default())
        .map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("listening on loopback")?;
        let addr = listener.local_addr()?;
        println!(
            "\n== The web report: http://{addr}/subjects/{}?key={}\n   (API at http://{addr}/v1, OpenAPI at /v1/openapi.json; the key above is this demo's; Ctrl-C stops)",
            subject.key, key.secret
        );
        tm_server::serve(listener, state, tm_server::shutdown_signal())
            .await
            .context("serving")
    })?;
    Ok(ExitCode::SUCCESS)
}
